#!/bin/bash
# Check that scripts/deps.sh installs every external command and library the
# build, the runner, the test suites and the benchmarks use, so that a fresh
# Debian 12 machine (apt-get --no-install-recommends, nothing else) has them.
# A base image that happens to ship a tool (jq, ...) hides a missing entry
# from every other check: this one reads the sources instead.
#
# Usage: scripts/check-deps.sh [-v]   (-v: also print where each one is used)
#
# What is read (tracked files, plus new ones git does not ignore, so a script
# is checked before its first commit):
#   - shell: every *.sh, every */run, tests/*/suite.conf; the first word of
#     each simple command (also after env/timeout/xargs/exec/..., inside
#     $(...), `...`, <(...), bash -c '...', eval '...', trap '...', after
#     the project's own functions that run "$@", and the "-- COMMAND" of its
#     own programs, as qemu-run.sh takes);
#   - make: Makefiles and *.mk, recipe lines and $(shell ...), with $(CC)-like
#     variables expanded; -l<lib> flags;
#   - C: commands run through system()/popen() (string literals, or the
#     snprintf() format that fills the buffer passed to them) and exec*p();
#     the system headers of #include <...>.
# Each command is resolved on this machine (type -P, readlink -f, dpkg -S),
# each -l<lib> with gcc -print-file-name, each header in gcc's (g++'s)
# search path.  A package is allowed when scripts/deps.sh lists it, when a
# listed package depends on it (recursively, Depends and Pre-Depends only:
# deps.sh installs without recommends), or when Debian installs it everywhere
# (Essential: yes or Priority: required).  Anything else, and any command not
# found on this machine at all, is MISSING: exit 1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

verbose=0
case "${1:-}" in
-v) verbose=1 ;;
"") ;;
-h|--help) usage_from_header "$0"; exit 0 ;;
*) die "unknown option '$1' (try --help)" ;;
esac

# Resolve commands the way the scripts find them: root's PATH, as the guest
# has it (guest/init.sh), so that /sbin tools resolve for any caller.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
cd "$REPO"

# Words the tokenizer takes for commands that are not, and that no rule can
# tell apart from real ones: [word]="why it is not a command".  Empty today:
# every false positive seen so far was fixed in the tokenizer instead (case
# patterns, here-documents, [[ ]], arrays, awk/sed/jq/python programs in
# quotes, snprintf() buffers reused for non-commands).  Keep it that way
# where a rule can do it; print with -v to see where a word comes from.
declare -A IGNORE=(
)

# ---- the files ---------------------------------------------------------------
sh_files=() mk_files=() c_files=()
while IFS= read -r f; do
	[ -f "$f" ] || continue
	case "$f" in
	kernel/*) ;;	# the patch series: kernel code, built by the kernel's make
	tests/check-deps/fixtures/*) ;;	# the tokenizer's test input, never run
	*.sh|run|*/run|tests/*/suite.conf) sh_files+=("$f") ;;
	Makefile|*/Makefile|*.mk) mk_files+=("$f") ;;
	*.c|*.h|*.cc) c_files+=("$f") ;;
	esac
done < <(git ls-files --cached --others --exclude-standard | sort -u)

# ---- the tokenizer -----------------------------------------------------------
# scripts/check-deps-tokens.pl (its header says what it prints).  Not in
# the scan below: it is Perl, which perl-base (Essential) runs.

uses=$(CD_BUILTINS=$(compgen -b | tr '\n' ' ') CD_KEYWORDS=$(compgen -k | tr '\n' ' ') \
	perl "$REPO/scripts/check-deps-tokens.pl" "${sh_files[@]/#/sh:}" "${mk_files[@]/#/mk:}" "${c_files[@]/#/c:}")

# ---- the allowed packages ----------------------------------------------------
declare -A allowed=()	# package -> why it is there
mapfile -t listed < <("$REPO/scripts/deps.sh" --list)
[ ${#listed[@]} -gt 0 ] || die "scripts/deps.sh --list printed no package"
for p in "${listed[@]}"; do allowed[$p]=listed; done
# What apt installs with them: Depends and Pre-Depends, recursively.
# apt-cache prints every package of the closure at the start of a line
# (virtual ones in <>).
while read -r p; do
	p=${p#<}; p=${p%>}; p=${p%:any}
	[ -n "${allowed[$p]:-}" ] || allowed[$p]=dependency
done < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances "${listed[@]}" | grep -v '^ ')
# What every Debian system has.
while read -r st p ess prio; do
	[ "$st" = ii ] || continue
	p=${p%%:*}
	if [ "$ess" = yes ]; then allowed[$p]=${allowed[$p]:-essential}
	elif [ "$prio" = required ]; then allowed[$p]=${allowed[$p]:-required}
	fi
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package} ${Essential} ${Priority}\n')

# ---- resolving ---------------------------------------------------------------
# Debian 12 has merged /usr, but dpkg knows each file under the path its
# package ships (/bin/bash, /usr/bin/jq): try a path with and without /usr.
twin() { case $1 in /usr/*) echo "${1#/usr}" ;; *) echo "/usr$1" ;; esac; }

declare -A cand=()	# "kind name" -> candidate paths, best first
declare -A where=()	# "kind name" -> its uses
declare -A note=()	# "kind name" -> why it has no package
keys=()
hdr_dirs() { # gcc|g++ language: the <...> search path
	echo | "$1" -x"$2" -E -v - 2>&1 >/dev/null |
		sed -n '/#include <\.\.\.> search starts here:/,/End of search list\./{s/^ //p}' |
		grep '^/'
}
mapfile -t cdirs < <(hdr_dirs gcc c)
mapfile -t cxxdirs < <(hdr_dirs g++ c++)
khdr=$(kobj default)/usr/include

while IFS=$'\t' read -r kind name uses_at lang; do
	[ -n "$kind" ] || continue
	key="$kind $name"
	keys+=("$key")
	where[$key]=$uses_at
	paths=()
	case $kind in
	cmd)
		[ -z "${IGNORE[$name]:-}" ] || continue
		# type -P: command -v restricted to PATH (no function of this
		# script, no builtin answers for a program).
		if [[ $name == /* ]]; then p=$name; else p=$(type -P -- "$name" || true); fi
		if [ -z "$p" ] || [ ! -e "$p" ]; then note[$key]="not found on this machine"; continue; fi
		r=$(readlink -f -- "$p")
		# The path itself first (/usr/bin/python3 is python3-minimal's), then
		# what it points to (/usr/bin/cc, an alternative, is gcc-12's compiler).
		paths=("$p" "$(twin "$p")" "$r" "$(twin "$r")")
		;;
	lib)
		p=$(gcc -print-file-name="lib$name.so")
		[[ $p == /* ]] || p=$(gcc -print-file-name="lib$name.a")
		if [[ $p != /* ]]; then note[$key]="gcc finds neither lib$name.so nor lib$name.a"; continue; fi
		# Normalise the directory only: the .so link belongs to the -dev package.
		p=$(readlink -f -- "$(dirname "$p")")/$(basename "$p")
		paths=("$p" "$(twin "$p")")
		;;
	hdr)
		dirs=("${cdirs[@]}")
		[[ $lang == *c++* ]] && dirs+=("${cxxdirs[@]}")
		p=""
		for d in "${dirs[@]}"; do
			[ -e "$d/$name" ] && { p=$d/$name; break; }
		done
		if [ -z "$p" ]; then
			# Ours: the patched kernel's exported uapi headers, or the repo.
			if [ -e "$khdr/$name" ] ||
			   grep -qsx -- "+++ b/\(arch/x86/\)\?include/uapi/$name" "$KPATCHES"/*.patch; then
				note[$key]=local:kernel-headers
			elif git ls-files | grep -qE -- "(^|/)$name\$"; then
				note[$key]=local:repo
			else
				note[$key]="not found in gcc's include path"
			fi
			continue
		fi
		r=$(readlink -f -- "$p")
		paths=("$p" "$(twin "$p")" "$r" "$(twin "$r")")
		;;
	esac
	cand[$key]=${paths[*]}
done <<<"$uses"

# One dpkg -S for every candidate path: "pkg[:arch][, pkg...]: /path".
declare -A owner=()
mapfile -t all_paths < <(printf '%s\n' "${cand[@]}" | tr ' ' '\n' | grep . | sort -u)
if [ ${#all_paths[@]} -gt 0 ]; then
	while IFS= read -r l; do
		case "$l" in diversion*) continue ;; esac
		pkg=${l%%: /*} path=/${l#*: /}
		pkg=${pkg%%,*}
		owner[$path]=${pkg%%:*}
	done < <(dpkg -S "${all_paths[@]}" 2>/dev/null || true)
fi

# ---- report ------------------------------------------------------------------
missing=0 counted=0
declare -A count=()
line() { printf '  %-8s %-30s %-24s %s\n' "$@"; }
for section in cmd lib hdr; do
	case $section in
	cmd) echo "commands:" ;;
	lib) echo "libraries (-l):" ;;
	hdr) echo "system headers (#include <...>):" ;;
	esac
	for key in "${keys[@]}"; do
		kind=${key%% *} name=${key#* }
		[ "$kind" = "$section" ] || continue
		shown=$name
		[ "$kind" = lib ] && shown=-l$name
		[ "$kind" = hdr ] && shown="<$name>"
		at=""
		[ $verbose = 1 ] && at="  (${where[$key]})"
		if [ "$kind" = cmd ] && [ -n "${IGNORE[$name]:-}" ]; then
			line ignored "$shown" - "${IGNORE[$name]}$at"
			continue
		fi
		count[$kind]=$(( ${count[$kind]:-0} + 1 ))
		counted=$((counted + 1))
		case "${note[$key]:-}" in
		local:*)
			line ok "$shown" "(${note[$key]#local:})" "ours$at"
			continue ;;
		?*)
			line MISSING "$shown" - "${note[$key]}; used in ${where[$key]}"
			missing=$((missing + 1))
			continue ;;
		esac
		pkg=""
		for p in ${cand[$key]}; do
			[ -n "${owner[$p]:-}" ] && { pkg=${owner[$p]}; break; }
		done
		if [ -z "$pkg" ]; then
			line MISSING "$shown" - "$(echo "${cand[$key]}" | cut -d' ' -f1) is in no Debian package; used in ${where[$key]}"
			missing=$((missing + 1))
		elif [ -n "${allowed[$pkg]:-}" ]; then
			line ok "$shown" "$pkg" "${allowed[$pkg]}$at"
		else
			line MISSING "$shown" "$pkg" "not installed by scripts/deps.sh; used in ${where[$key]}"
			missing=$((missing + 1))
		fi
	done
done
summary="${count[cmd]:-0} commands, ${count[lib]:-0} libraries, ${count[hdr]:-0} headers"
if [ $missing -eq 0 ]; then
	echo "check-deps: $summary: all provided by scripts/deps.sh"
else
	echo "check-deps: $summary: $missing MISSING (add the packages to the list in scripts/deps.sh)"
	exit 1
fi
