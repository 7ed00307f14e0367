#!/bin/bash
# Check that a base image has what IMAGES.md says it has, with e2fsprogs'
# own readers (dumpe2fs, debugfs) rather than our parser, so a mke2fs or
# debugfs that silently left a feature out cannot pass.
#
# Usage: checkbase.sh CLAIM IMAGE
#   journal  has_journal, and the journal inode (8) holds blocks
#   groups   at least 4 block groups
#   depth    /deep has an extent tree of depth >= 1 (an index block)
#   inline   /inl keeps its data in the inode (INLINE_DATA_FL, inline size)
#   htree    /htree is an indexed directory (INDEX_FL, a dx root, >= 2 leaves)
# Prints "# CLAIM: got ..., want ..." and exits 0 when the claim holds.
set -uo pipefail
PATH=$PATH:/sbin:/usr/sbin
claim=$1 img=$2

dfs() { debugfs -R "$1" "$img" 2>/dev/null; }
# "Flags: 0x10081000" of debugfs' stat, as a number.
iflags() { dfs "stat $1" | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p' | head -1; }
verdict() { # got want ok
	echo "# $claim: got $1, want $2"
	[ "$3" = 1 ]
}

case $claim in
journal)
	feat=$(dumpe2fs -h "$img" 2>/dev/null | grep -c '^Filesystem features:.* has_journal')
	size=$(dfs "stat <8>" | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -1)
	verdict "has_journal=$feat, journal inode size ${size:-none}" \
		"has_journal=1, size > 0" "$((feat == 1 && ${size:-0} > 0))"
	;;
groups)
	n=$(dumpe2fs "$img" 2>/dev/null | grep -c '^Group [0-9]')
	verdict "$n groups" ">= 4" "$((n >= 4))"
	;;
depth)
	# "dump_extents" lines read "LEVEL/MAX ..."; MAX is the tree depth.
	d=$(dfs "ex /deep" | awk 'NR == 2 { print $2 }')
	verdict "depth ${d:-none}" ">= 1" "$((${d:-0} >= 1))"
	;;
inline)
	f=$(iflags /inl)
	sz=$(dfs "stat /inl" | sed -n 's/^Size of inline data: \([0-9]*\).*/\1/p')
	verdict "flags ${f:-none}, inline size ${sz:-none}" "INLINE_DATA_FL (0x10000000), size > 0" \
		"$(((${f:-0} & 0x10000000) != 0 && ${sz:-0} > 0))"
	;;
htree)
	f=$(iflags /htree)
	n=$(dfs "htree /htree" | sed -n 's/^Number of entries (count): \([0-9]*\).*/\1/p' | head -1)
	verdict "flags ${f:-none}, dx root with ${n:-no} entries" "INDEX_FL (0x1000), >= 2 entries" \
		"$(((${f:-0} & 0x1000) != 0 && ${n:-0} >= 2))"
	;;
*)
	echo "checkbase.sh: unknown claim '$claim'" >&2
	exit 2
	;;
esac
