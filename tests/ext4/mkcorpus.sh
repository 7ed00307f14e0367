#!/bin/bash
# Build the crafted ext4 corpus on the host: two clean base images made with
# Debian's mke2fs and filled by debugfs (our own content, no e2fsprogs test
# images), then one damaged copy per hardening check (ext4corrupt).
#
# Usage: mkcorpus.sh OUTDIR EXT4CORRUPT
# Writes OUTDIR/base-plain.img, base-csum.img, base-rich.img (the random
# mode's third base, checked by checkbase.sh), and NAME.img + NAME.exp for
# every name of "ext4corrupt list".
set -euo pipefail
out=$1 corrupt=$2
PATH=$PATH:/sbin:/usr/sbin
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Fixed times, UUID and hash seed: the same sources give the same images.
export E2FSPROGS_FAKE_TIME=1700000000
uuid=4c4b3431-372d-6578-7434-2d636f727075

# A 3 KiB file (three 1 KiB blocks) with recognisable content.
for i in $(seq 1 60); do printf 'lk417 ext4 corpus line %02d ....................\n' "$i"; done >"$work/file1"
printf 'hello\n' >"$work/small"

{
	echo "write $work/file1 file1"
	echo "mkdir dir"
	echo "mkdir dir/sub"
	echo "write $work/small dir/sub/leaf"
	echo "symlink link file1"
	# In-inode xattrs only: two short values fit the 92 bytes after the
	# 32-byte extra inode fields of a 256-byte inode.
	echo "write $work/small xin"
	echo "ea_set xin user.small v1"
	echo "ea_set xin user.s2 hello"
	# Values too big for the inode: both land in one xattr block.
	echo "write $work/small xblk"
	echo "ea_set xblk user.big1 $(printf 'A%.0s' $(seq 150))"
	echo "ea_set xblk user.big2 $(printf 'B%.0s' $(seq 110))"
	# A linear directory of four 1 KiB blocks: 100 fifos, 32-byte entries.
	echo "mkdir big"
	echo "cd big"
	for i in $(seq -w 0 99); do echo "mknod entry-$i-abcdefghijkl p"; done
	echo "cd /"
} >"$work/populate"

# The rich base's extra content.  /deep: twelve 1 KiB data blocks with a
# hole after each; debugfs keeps the holes, so twelve extents, more than
# the inode's four slots: the tree gets an index block (depth 1).  /inl: a
# file small enough for inline data.  /htree: 200 entries (about ten 1 KiB
# blocks), indexed by the e2fsck -D below.
for i in $(seq 0 11); do
	printf 'lk417 extent %02d\n' "$i" |
		dd of="$work/sparse" bs=1024 seek=$((i * 2)) conv=notrunc status=none
done
printf 'lk417 inline data\n' >"$work/inline"
{
	echo "write $work/sparse deep"
	echo "write $work/inline inl"
	echo "mkdir htree"
	echo "cd htree"
	for i in $(seq -w 0 199); do echo "mknod name-$i-abcdefghijklmnopqrstuvwxyz p"; done
	echo "cd /"
} >"$work/populate-rich"

mkbase() { # name features size populate-scripts...
	local img=$out/base-$1.img feat=$2 size=$3 script
	shift 3
	rm -f "$img"
	mke2fs -q -F -t ext4 -b 1024 -I 256 -O "$feat" -L lk417 -U "$uuid" \
		-E lazy_itable_init=0,root_owner=0:0,hash_seed=$uuid ${MKE2FS_EXTRA:--N 256} "$img" "$size"
	for script; do
		debugfs -w -f "$script" "$img" >"$work/debugfs.log" 2>&1 ||
			{ cat "$work/debugfs.log" >&2; exit 1; }
	done
	# debugfs does not index directories: e2fsck -D does (any directory
	# over one block; exit 1: it changed the image).  The plain and csum
	# bases keep /big linear, so they skip this.
	if [ -n "${INDEX_DIRS:-}" ]; then
		e2fsck -fyD "$img" >"$work/fsck.log" 2>&1 || [ $? = 1 ] ||
			{ cat "$work/fsck.log" >&2; exit 1; }
	fi
	# A base image that e2fsck does not pass would make every verdict moot.
	e2fsck -fn "$img" >"$work/fsck.log" 2>&1 || { cat "$work/fsck.log" >&2; exit 1; }
}
# No journal: the corruptions target metadata the mount reads, not replay.
# No metadata_csum in "plain", so damage reaches the structural checks;
# no dir_index there either, so /big is read linearly by byte offset
# (seekdir positions are offsets in the block, as the 4.17 fix assumes).
mkbase plain ^has_journal,^metadata_csum,^dir_index 2M "$work/populate"
mkbase csum ^has_journal,metadata_csum,dir_index 2M "$work/populate"
# The rich base, for the random mode only: what a real ext4 has and the
# others lack.  A 1 MiB journal (the smallest mke2fs makes), six groups of
# 1024 blocks, metadata_csum, inline_data, and the extra content above.
MKE2FS_EXTRA="-N 512 -g 1024 -J size=1" INDEX_DIRS=1 \
	mkbase rich has_journal,metadata_csum,dir_index,inline_data 6M \
	"$work/populate" "$work/populate-rich"
# Prove it has them, with e2fsprogs' own readers.
for claim in journal groups depth inline htree; do
	"$(dirname "$0")/checkbase.sh" "$claim" "$out/base-rich.img" ||
		{ echo "mkcorpus.sh: base-rich.img fails its $claim claim" >&2; exit 1; }
done

for name in $("$corrupt" list); do
	"$corrupt" make "$name" "$out/base-$("$corrupt" base "$name").img" "$out"
done
