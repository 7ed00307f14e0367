#!/bin/bash
# Build the crafted ext4 corpus on the host: two clean base images made with
# Debian's mke2fs and filled by debugfs (our own content, no e2fsprogs test
# images), then one damaged copy per hardening check (ext4corrupt).
#
# Usage: mkcorpus.sh OUTDIR EXT4CORRUPT
# Writes OUTDIR/base-plain.img, base-csum.img, and NAME.img + NAME.exp for
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

mkbase() { # name features
	local img=$out/base-$1.img
	rm -f "$img"
	mke2fs -q -F -t ext4 -b 1024 -I 256 -N 256 -O "$2" -L lk417 -U "$uuid" \
		-E lazy_itable_init=0,root_owner=0:0,hash_seed=$uuid "$img" 2M
	debugfs -w -f "$work/populate" "$img" >"$work/debugfs.log" 2>&1 ||
		{ cat "$work/debugfs.log" >&2; exit 1; }
	# A base image that e2fsck does not pass would make every verdict moot.
	e2fsck -fn "$img" >"$work/fsck.log" 2>&1 || { cat "$work/fsck.log" >&2; exit 1; }
}
# No journal: the corruptions target metadata the mount reads, not replay.
# No metadata_csum in "plain", so damage reaches the structural checks;
# no dir_index there either, so /big is read linearly by byte offset
# (seekdir positions are offsets in the block, as the 4.17 fix assumes).
mkbase plain ^has_journal,^metadata_csum,^dir_index
mkbase csum ^has_journal,metadata_csum,dir_index

for name in $("$corrupt" list); do
	"$corrupt" make "$name" "$out/base-$("$corrupt" base "$name").img" "$out"
done
