#!/bin/bash
# Build the patched kernel with Debian's own amd64 configuration, as a user
# who runs Debian on a real machine would: config.amd64_none_amd64 from
# linux-config-6.12, plus kernel/config/distro/distro.config (CONFIG_X86_ADI
# and the few changes it names and justifies), with Debian's modules
# trimmed by `make localmodconfig` to kernel/config/distro/modules.list.
# bzImage (vDSO included), the modules and the uapi headers; any compiler
# warning fails the build and is printed with its count.
#
# Usage: scripts/check-distro.sh [--config-only]
#   Objects in build/distro/obj, the log in build/distro/obj/build.log.
#   DISTRO_MODULES=all     build every Debian module (for a real machine;
#                          hours on 2 cores) instead of the list
#   DISTRO_DEBUG_INFO=1    keep Debian's debug info (DWARF; BTF if pahole
#                          is installed)
# `make deb` (scripts/distro-deb.sh) packages this build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
setup_ccache

config_only=0
case "${1:-}" in
--config-only) config_only=1 ;;
"") ;;
-h|--help) usage_from_header "$0"; exit 0 ;;
*) die "unknown option '$1' (try --help)" ;;
esac
[ -d "$KSRC/.git" ] || die "no work tree in ${KSRC#$REPO/} (make tree)"
debconf=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
[ -f "$debconf" ] || die "$debconf not found: install linux-config-6.12 (scripts/deps.sh)"
modules=${DISTRO_MODULES:-trimmed}
case "$modules" in trimmed|all) ;; *) die "DISTRO_MODULES must be 'trimmed' or 'all'" ;; esac
debug_info=${DISTRO_DEBUG_INFO:-0}

obj=$BUILD/distro/obj
fragment=$KCONFIGS/distro/distro.config
modlist=$KCONFIGS/distro/modules.list
mkdir -p "$obj"

# The fragment as this build uses it: without DEBUG_INFO_NONE when
# Debian's debug info is kept.
frag=$obj/distro.config
if [ "$debug_info" = 1 ]; then
	grep -v '^CONFIG_DEBUG_INFO_NONE=' "$fragment" >"$frag"
else
	cp "$fragment" "$frag"
fi

# Reconfigure only when an input changed: a fresh .config of the same
# content would still make kbuild re-check everything.
stamp=$( { xzcat "$debconf"; cat "$frag" "$KSRC/.git/lk417-series-id"; echo "$modules";
	[ "$modules" = all ] || cat "$modlist"; } | sha256sum | cut -d' ' -f1)
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/.lk417-config-id" 2>/dev/null)" != "$stamp" ]; then
	say "configuring: Debian's config.amd64_none_amd64 ($(dpkg-query -W -f='${Version}' linux-config-6.12)) + ${fragment#$REPO/}, modules: $modules"
	xzcat "$debconf" >"$obj/.config"
	{
		(cd "$KSRC" && ./scripts/kconfig/merge_config.sh -m -Q -O "$obj" "$obj/.config" "$frag")
		make -C "$KSRC" O="$obj" LOCALVERSION= olddefconfig
	} >"$obj/config.log" 2>&1 || { tail -20 "$obj/config.log"; die "configuring failed, see ${obj#$REPO/}/config.log"; }
	if [ "$modules" = trimmed ]; then
		# localmodconfig turns every module not in the list (or needed by
		# one in it) off; built-in options stay as Debian has them.
		grep -v '^#' "$modlist" >"$obj/lsmod.list"
		make -C "$KSRC" O="$obj" LOCALVERSION= LSMOD="$obj/lsmod.list" localmodconfig \
			>>"$obj/config.log" 2>&1 || { tail -20 "$obj/config.log"; die "localmodconfig failed"; }
		! grep -q 'config not found' "$obj/config.log" ||
			die "localmodconfig does not know module(s) of ${modlist#$REPO/}: $(grep 'config not found' "$obj/config.log" | tr '\n' ' ')"
	fi
	# Every option the fragment asks for must have survived.
	missing=()
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qxF -- "$line" "$obj/.config" ||
			missing+=("$line (have: $(grep -E "^(# )?${line%%=*}[= ]" "$obj/.config" || echo unset))") ;;
		esac
	done <"$frag"
	if [ ${#missing[@]} -gt 0 ]; then
		printf '  %s\n' "${missing[@]}" >&2
		die "the .config lacks ${#missing[@]} option(s) of ${fragment#$REPO/}"
	fi
	echo "$stamp" >"$obj/.lk417-config-id"
fi
say "config: $(grep -c '=m$' "$obj/.config") modules, $(grep -c '=y$' "$obj/.config") built-in options; $(grep -E '^CONFIG_(PREEMPT_DYNAMIC|MITIGATION_PAGE_TABLE_ISOLATION|RANDOMIZE_BASE|STACKPROTECTOR_STRONG|X86_USER_SHADOW_STACK|X86_5LEVEL|IA32_EMULATION|SECURITY_LOCKDOWN_LSM|MODULE_SIG)=y' "$obj/.config" | sed 's/CONFIG_//; s/=y//' | tr '\n' ' ')"
[ $config_only = 0 ] || exit 0

say "building ${obj#$REPO/}: bzImage modules headers ($(nproc) jobs, CC=$KCC)"
start=$(date +%s)
# LOCALVERSION= (set, empty): the release is exactly 6.12.N-lk417-adi,
# with no "+" for the git work tree.
if ! make -C "$KSRC" O="$obj" -j"$(nproc)" CC="$KCC" HOSTCC="$KCC" LOCALVERSION= \
	bzImage modules headers >"$obj/build.log" 2>&1; then
	grep -E 'error' "$obj/build.log" | head -30 >&2
	die "build failed, see ${obj#$REPO/}/build.log"
fi
secs=$(( $(date +%s) - start ))
release=$(cat "$obj/include/config/kernel.release")
echo "$secs" >"$obj/build-seconds"
# Compiler, objtool and modpost warnings alike.
warnings=$(grep -ci 'warning:' "$obj/build.log" || true)
say "built $release in $secs s ($(grep -c '=m$' "$obj/.config") modules; vDSO: $(ls "$obj"/arch/x86/entry/vdso/vdso*.so 2>/dev/null | wc -l) images), $warnings warning(s)"
if [ "$warnings" -gt 0 ]; then
	# Say which warnings are in files our series touches.
	ours=$(git -C "$KSRC" diff --name-only lk417-base HEAD)
	grep -i 'warning:' "$obj/build.log" | sort -u | while IFS= read -r w; do
		f=${w%%:*}; f=${f#"$KSRC/"}; f=${f#./}
		if grep -qxF -- "$f" <<<"$ours"; then echo "  [series] $w"; else echo "  $w"; fi
	done | head -40 >&2
	die "check-distro: $warnings warning(s) in the build (see ${obj#$REPO/}/build.log)"
fi
say "check-distro: clean"
