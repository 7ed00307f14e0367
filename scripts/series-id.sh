# series_id: identity of what build/linux should contain (the source
# package version plus every patch file of the series).  Sourced.
series_id() {
	{
		dpkg-query -W -f='${Version}\n' "$SOURCE_PKG"
		cat "$KPATCHES/series"
		while read -r p; do
			case "$p" in ''|'#'*) continue ;; esac
			cat "$KPATCHES/$p"
		done <"$KPATCHES/series"
	} | sha256sum | cut -d' ' -f1
}
