#!/bin/bash
# Build the patched kernel the way a user who never saw our small
# configuration would: x86_64 defconfig + kvm_guest.config, plus the
# options our suites need (kernel/config/*.config except base.config,
# debug.config and noadi.config), with CONFIG_X86_ADI=y; once as defconfig has it (with
# IA32_EMULATION, so the 32-bit vDSO includes our headers) and once
# without IA32_EMULATION.  Each build must end with no error and no
# compiler warning.  Then every ADI header is compiled on its own (included
# first in an empty file), so that each includes what it uses.
#
# Usage: scripts/check-defconfig.sh [ia32|noia32|headers]...
#   (default: all three).  Objects in build/obj-defconfig and
#   build/obj-defconfig-noia32; the first boots with
#   scripts/qemu-run.sh --kernel build/obj-defconfig/arch/x86/boot/bzImage
set -euo pipefail
. "$(dirname "$0")/lib.sh"
setup_ccache
[ -d "$KSRC/.git" ] || die "no work tree (make tree)"

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(ia32 noia32 headers)

# Our fragments that make sense on top of defconfig: not base.config
# (written for allnoconfig), not debug.config and not noadi.config (the
# variant without ADI: it switches X86_ADI off).
fragments=()
for f in "$KCONFIGS"/*.config; do
	case "$(basename "$f")" in base.config|debug.config|noadi.config) continue ;; esac
	fragments+=("$f")
done

build() {
	local name=$1 ia32=$2 obj=$BUILD/obj-$1 start w
	mkdir -p "$obj"
	say "configuring $name: defconfig + kvm_guest.config + ${#fragments[@]} fragment(s), IA32_EMULATION=$ia32"
	make -C "$KSRC" O="$obj" defconfig kvm_guest.config >"$obj/config.log" 2>&1 ||
		{ tail -20 "$obj/config.log"; die "defconfig failed"; }
	(cd "$KSRC" && ./scripts/kconfig/merge_config.sh -m -Q -O "$obj" \
		"$obj/.config" "${fragments[@]}") >>"$obj/config.log" 2>&1 ||
		{ tail -20 "$obj/config.log"; die "merge_config.sh failed"; }
	"$KSRC/scripts/config" --file "$obj/.config" --set-str LOCALVERSION "-lk417-defconfig" \
		"$([ "$ia32" = y ] && echo -e || echo -d)" IA32_EMULATION
	make -C "$KSRC" O="$obj" olddefconfig >>"$obj/config.log" 2>&1
	grep -qx 'CONFIG_X86_ADI=y' "$obj/.config" ||
		die "$name: CONFIG_X86_ADI did not survive olddefconfig (see $obj/.config)"
	grep -q "^CONFIG_IA32_EMULATION=y" "$obj/.config" && have=y || have=n
	[ "$have" = "$ia32" ] || die "$name: IA32_EMULATION is $have, wanted $ia32"
	say "building $name in ${obj#$REPO/} ($(nproc) jobs, CC=$KCC)"
	start=$(date +%s)
	if ! make -C "$KSRC" O="$obj" -j"$(nproc)" CC="$KCC" HOSTCC="$KCC" bzImage \
		>"$obj/build.log" 2>&1; then
		grep -E 'error' "$obj/build.log" | head -20 >&2
		die "$name: build failed, see ${obj#$REPO/}/build.log"
	fi
	w=$(grep -c 'warning:' "$obj/build.log" || true)
	say "$name: built in $(( $(date +%s) - start )) s, $w compiler warning(s)"
	[ "$w" -eq 0 ] || { grep 'warning:' "$obj/build.log" | sort -u | head -20 >&2; return 1; }
}

# Each ADI header, included first and alone, in the first build's tree.
headers() {
	local obj=$BUILD/obj-defconfig h bad=0 src
	[ -f "$obj/.config" ] || obj=$(kobj default)
	[ -f "$obj/include/generated/autoconf.h" ] || die "headers: build a kernel first"
	for h in $(cd "$KSRC" && git ls-files 'arch/x86/include/asm/adi*.h' 'arch/x86/kernel/adi*.h'); do
		src=$obj/hdrcheck.c
		printf '#include "%s"\n' "$KSRC/$h" >"$src"
		if (cd "$obj" && gcc -fsyntax-only -nostdinc -D__KERNEL__ -std=gnu11 -fcf-protection=branch \
			-Wall -Werror -I"$KSRC/arch/x86/include" \
			-I./arch/x86/include/generated -I"$KSRC/include" -I./include \
			-I"$KSRC/arch/x86/include/uapi" -I./arch/x86/include/generated/uapi \
			-I"$KSRC/include/uapi" -I./include/generated/uapi \
			-include "$KSRC/include/linux/compiler-version.h" \
			-include "$KSRC/include/linux/kconfig.h" \
			-include "$KSRC/include/linux/compiler_types.h" \
			"$src") 2>"$obj/hdrcheck.log"; then
			say "header $h: compiles on its own"
		else
			say "header $h: does NOT compile on its own"
			head -5 "$obj/hdrcheck.log" >&2
			bad=1
		fi
	done
	rm -f "$obj/hdrcheck.c"
	return $bad
}

fail=0
for w in "${what[@]}"; do
	case "$w" in
	ia32) build defconfig y || fail=1 ;;
	noia32) build defconfig-noia32 n || fail=1 ;;
	headers) headers || fail=1 ;;
	*) die "unknown part '$w' (ia32, noia32 or headers)" ;;
	esac
done
[ $fail = 0 ] && say "check-defconfig: clean" || say "check-defconfig: PROBLEMS"
exit $fail
