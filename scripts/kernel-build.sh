#!/bin/bash
# Configure and build the guest kernel from build/linux.
#
# Usage: scripts/kernel-build.sh [default|debug|noadi]
#
# The .config is allnoconfig plus every fragment in kernel/config/ (the
# debug variant adds debug.config, the noadi variant noadi.config: the same
# kernel without CONFIG_X86_ADI, for the benchmark) merged with
# merge_config.sh.  After the
# merge every option a fragment asks for is checked, since merge_config
# silently drops options whose dependencies are not met.  The build goes to
# build/obj (or build/obj-debug, build/obj-noadi); the patched uapi headers are exported to
# <objdir>/usr/include for the tests and tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:-default}
case "$variant" in
default|debug|noadi) ;;
-h|--help) usage_from_header "$0"; exit 0 ;;
*) die "unknown variant '$variant' (default, debug or noadi)" ;;
esac
obj=$(kobj "$variant")
setup_ccache

fragments=()
for f in "$KCONFIGS"/*.config; do
	case "$(basename "$f")" in debug.config|noadi.config) continue ;; esac
	fragments+=("$f")
done
[ "$variant" = default ] || fragments+=("$KCONFIGS/$variant.config")

# Rebuild the .config only when a fragment changed (or the tree did).
mkdir -p "$obj"
stamp=$(cat "${fragments[@]}" "$KSRC/.git/lk417-series-id" | sha256sum | cut -d' ' -f1)
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.lk417-config-id" 2>/dev/null)" != "$stamp" ]; then
	say "configuring the $variant kernel: allnoconfig + ${#fragments[@]} fragment(s)"
	(cd "$KSRC" && ./scripts/kconfig/merge_config.sh -n -Q -O "$obj" "${fragments[@]}") \
		>"$obj/merge_config.log" 2>&1 ||
		{ tail -20 "$obj/merge_config.log"; die "merge_config.sh failed"; }
	# A later fragment may override an earlier one (debug.config sets its
	# own LOCALVERSION): check the last value asked for each option.
	declare -A want=()
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) want[${line%%=*}]=$line ;;
		"# CONFIG_"*" is not set") opt=${line#\# }; want[${opt%% *}]=$line ;;
		esac
	done < <(cat "${fragments[@]}")
	missing=()
	for opt in "${!want[@]}"; do
		line=${want[$opt]}
		case "$line" in
		CONFIG_*)
			grep -qxF -- "$line" "$obj/.config" ||
				missing+=("$line (have: $(grep -E "^(# )?$opt[= ]" "$obj/.config" || echo unset))")
			;;
		*)
			! grep -q "^$opt=" "$obj/.config" || missing+=("$line")
			;;
		esac
	done
	if [ ${#missing[@]} -gt 0 ]; then
		printf '  %s\n' "${missing[@]}" >&2
		die "the merged .config lacks ${#missing[@]} option(s) the fragments ask for (unmet dependencies?)"
	fi
	echo "$stamp" >"$obj/.lk417-config-id"
fi

say "building the $variant kernel in ${obj#$REPO/} ($(nproc) jobs, CC=$KCC)"
start=$(date +%s)
if ! make -C "$KSRC" O="$obj" -j"$(nproc)" CC="$KCC" HOSTCC="$KCC" LOCALVERSION= bzImage headers \
	>"$obj/build.log" 2>&1; then
	grep -E 'error|Error' "$obj/build.log" | head -30 >&2
	die "kernel build failed, see ${obj#$REPO/}/build.log"
fi
warnings=$(grep -c 'warning:' "$obj/build.log" || true)
say "kernel built in $(( $(date +%s) - start )) s: $(make -s -C "$KSRC" O="$obj" LOCALVERSION= kernelrelease 2>/dev/null), $warnings compiler warning(s)"
[ "$warnings" -eq 0 ] || grep 'warning:' "$obj/build.log" | sort -u | head -20 >&2
