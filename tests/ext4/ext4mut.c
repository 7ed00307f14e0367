// SPDX-License-Identifier: GPL-2.0
/*
 * ext4mut: the seeded random mode of the ext4 suite.
 *
 *   ext4mut [-f|-s] [-r|-m] SEED [FIRST+]COUNT WORKDIR MNT IMAGE...
 *
 * Mutant i (0 <= i < COUNT) starts from IMAGE[i % nimages] and is damaged
 * by a PRNG seeded from (SEED, i), one of two ways:
 *
 *  - bytes (default): 1-8 bytes flipped inside the image's metadata blocks
 *    (superblock, group descriptors, both bitmaps, the used part of the
 *    inode table, the xattr block, every directory block);
 *  - fields (-f): one field of one structure (superblock, a group
 *    descriptor, an inode, an extent tree block, an htree root, a
 *    directory entry, an xattr block) set to a hostile value (0, all ones,
 *    one off its value, a limit such as the block count or the block size,
 *    one past it), then every checksum covering it recomputed with
 *    libext2fs, so that a metadata_csum image's mutant gets past the
 *    checksum to the checks behind it.  -s does the same and leaves the
 *    checksums stale: the proof that -f is what gets mutants past them.
 *
 * Each mutant is attached to a loop device and mounted (rw or ro,
 * errors=continue or remount-ro, by i % 4), walked, written to when
 * writable, mapped with GETFSMAP, readdir'ed with seekdir, then unmounted
 * and detached.
 *
 * The kernel may refuse a mutant or report errors: only a splat (found by
 * the runner in the kernel log) or a hang is a failure.  The exercise runs
 * in a child with an alarm, so that a stuck process is reported with the
 * mutant's number; "ext4mut SEED I+1 ..." (same options) replays mutant I
 * alone (the mutant depends only on SEED, I, the mode and the images).
 *
 * But a run where (nearly) every mutant is refused tests nothing, so each
 * base image's mutants are counted and held to a floor: in byte mode the
 * share that mounted and was exercised, in field mode the share that was
 * not stopped by a checksum (refusals are printed by errno).
 *
 * -r adds the repair round of xfstests' fuzzers to every mutant that
 * mounted: e2fsck -fy on the unmounted image, e2fsck -fn to see whether
 * it says the result is clean (xfstests' re-check after repair), then a
 * rw mount again.  When e2fsck says clean, that mount must succeed, every
 * file and directory must read back, a new file must be writable, and the
 * kernel must log no "EXT4-fs error".  A mutant e2fsck does not get clean
 * in one pass (or gives up on) only counts as left broken, and an xattr
 * that is listed but cannot be read (entries out of order, which e2fsck
 * does not check) is counted, not failed; so is a kernel error that is a
 * known gap of e2fsck (known_gaps[], each shown on the host).
 *
 * -m only makes the mutants, WORKDIR/mutant-I.img, and mounts nothing:
 * for looking at one with e2fsprogs (on the host too: the image is a file).
 *
 * Prints TAP: 1. no hang or failed unmount; 2. the floor; 3. (with -r) the
 * repair round; diagnostics per mutant and per base image.
 */
#include <getopt.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <ext2fs/ext2fs.h>
#include "ext4img.h"
#include "exercise.h"

#include "splitmix64.h"

#define MAX_META 256
#define MAX_TARGETS 64
#define EXERCISE_SECONDS 60
#define FSCK_SECONDS 120
/*
 * Byte mode: at least BYTES_FLOOR_PCT % of each base image's mutants must
 * mount and be exercised.  Measured (6.12, seed 417, 100 mutants per
 * base): control 100 mounted, control-csum 88 (12 EBADMSG: each flipped a
 * superblock byte, which fails its checksum).  70 % leaves room for other
 * seeds (at 88 % and 100 mutants a seed's count varies by about 3) and for
 * kernels that check more, while a mutator or kernel that gets most
 * mutants refused fails.
 *
 * Field mode: at least FIELDS_FLOOR_PCT % of each base's mutants must get
 * past the checksums (see stopped_by_csum()).  Measured (6.12, seed 417,
 * 100 mutants per base): see README; with stale checksums (-s) most are
 * stopped, so the floor fails, as the suite checks.
 *
 * Below FLOOR_MIN mutants of a base (a replay of a few mutants) the share
 * means little and the floor is not applied.
 */
#define BYTES_FLOOR_PCT 70
#define FIELDS_FLOOR_PCT 70
#define FLOOR_MIN 20
#define MAX_REASONS 16

enum mode { M_BYTES, M_FIELDS, M_STALE };

/* How a field's hostile "limit" is found: what the field counts. */
enum kind { K_BLK, K_INO, K_LEN, K_CNT, K_FLAGS, K_SHIFT };

struct field {
	const char *name;
	uint16_t off;
	uint8_t width, kind;
};

/* The structures a field mutation can hit. */
enum tkind { T_SB, T_GD, T_INODE, T_EXTENT, T_DX, T_DIRENT, T_XATTR, T_KINDS };
static const char *const tkind_name[T_KINDS] = {
	"superblock", "group descriptor", "inode", "extent block", "htree root",
	"directory entry", "xattr block",
};

struct target {
	uint32_t ino, g;  /* owner inode (checksum seed), group of a descriptor */
	uint64_t blk;     /* block of an extent, htree, directory or xattr block */
	char what[40];    /* the file it belongs to, for the log */
};

struct base {
	const char *path;
	struct img im;
	/* byte mode: the metadata blocks */
	uint64_t meta[MAX_META];
	int nmeta;
	/* field modes: the clean image opened by libext2fs, the targets */
	ext2_filsys fs;
	struct target t[T_KINDS][MAX_TARGETS];
	int nt[T_KINDS];
	/* mutants made, mounted and exercised to the end, stopped by a
	 * checksum, checksums libext2fs could not recompute; refusals by errno */
	int made, exercised, by_csum, no_csum, nreasons;
	struct { char name[16]; int n; } reasons[MAX_REASONS];
	/* repair round: clean already, repaired, left broken by e2fsck (and
	 * of those, still refused), said clean with xattrs listed but
	 * unreadable, said clean but a known e2fsck gap left, failed */
	int r_clean, r_fixed, r_left, r_left_refused, r_xattr, r_known, r_failed;
};

static void refused_by(struct base *b, const char *name)
{
	int r;

	for (r = 0; r < b->nreasons && strcmp(b->reasons[r].name, name); r++)
		;
	if (r == b->nreasons) {
		if (r == MAX_REASONS) /* more reasons than room: the last counts the rest */
			name = "other", r--;
		else
			b->nreasons++;
		snprintf(b->reasons[r].name, sizeof(b->reasons[r].name), "%s", name);
	}
	b->reasons[r].n++;
}

/* ---- byte mode: the metadata blocks of a base ------------------------- */

static void add_meta(struct base *b, uint64_t blk_nr)
{
	if (!blk_nr || (blk_nr + 1) * b->im.bs > b->im.size || b->nmeta == MAX_META)
		return;
	for (int i = 0; i < b->nmeta; i++)
		if (b->meta[i] == blk_nr)
			return;
	b->meta[b->nmeta++] = blk_nr;
}

static void add_dir_blocks(struct base *b, uint32_t ino)
{
	const uint8_t *in = inode(&b->im, ino);

	if (!in)
		return;
	for (uint32_t l = 0; (uint64_t)l * b->im.bs < inode_size(in) && l < 64; l++)
		add_meta(b, inode_bmap(&b->im, in, l));
}

/* Collect the metadata blocks of a clean image made by mkcorpus.sh. */
static int load_meta(struct base *b)
{
	const char *dirs[] = { "/", "/dir", "/dir/sub", "/big", "/htree" };
	struct img *im = &b->im;
	uint8_t *sb = im->p + SB_OFF;
	uint32_t used;

	b->nmeta = 0;
	add_meta(b, im->first_data ? im->first_data : 0);
	if (!im->first_data) /* 4 KiB blocks: the superblock is inside block 0 */
		b->meta[b->nmeta++] = 0;
	add_meta(b, gdt_block(im));
	for (uint32_t g = 0; g < im->groups; g++) {
		add_meta(b, gd_get(im, g, GD_BBITMAP));
		add_meta(b, gd_get(im, g, GD_IBITMAP));
	}
	/* The inode table up to the last used inode of group 0. */
	used = get32(sb + 0) - get32(sb + 16);
	for (uint64_t t = 0; t * im->bs < (uint64_t)(used + 16) * im->isz && t * im->bs < (uint64_t)im->ipg * im->isz; t++)
		add_meta(b, gd_get(im, 0, GD_ITABLE) + t);
	add_meta(b, inode_xattr_block(inode(im, path_lookup(im, "/xblk"))));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		add_dir_blocks(b, !strcmp(dirs[i], "/") ? EXT4_ROOT_INO : path_lookup(im, dirs[i]));
	return b->nmeta > 4 ? 0 : -1;
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
	return splitmix64(&rng_state);
}

/* Flip 1-8 bytes of the metadata blocks; describe them in DESC. */
static void mutate_bytes(const struct base *b, struct img *m, char *desc, size_t n)
{
	/* Half plain bit-flipping noise, half values parsers trip on. */
	static const uint8_t special[] = { 0x00, 0xff, 0x80, 0x7f, 0x01, 0xfe };
	int nflip = 1 + rnd() % 8;
	size_t fl = snprintf(desc, n, "flips (block:offset=value)");

	for (int f = 0; f < nflip; f++) {
		uint64_t bn = b->meta[rnd() % b->nmeta];
		uint32_t off = rnd() % m->bs;
		uint64_t r = rnd();
		uint8_t *p = m->p + bn * m->bs + off, v;

		v = (r & 1) ? special[(r >> 1) % sizeof(special)] : (uint8_t)(*p ^ (1u << ((r >> 1) % 8)));
		*p = v;
		if (fl < n)
			fl += snprintf(desc + fl, n - fl, " %llu:%u=%02x", (unsigned long long)bn, off, v);
	}
}

/* ---- field mode: the fields ------------------------------------------- */

#define SBF(f, k) { #f, offsetof(struct ext2_super_block, f), \
		    sizeof(((struct ext2_super_block *)0)->f), k }
static const struct field sb_fields[] = {
	SBF(s_inodes_count, K_INO), SBF(s_blocks_count, K_BLK),
	SBF(s_r_blocks_count, K_BLK), SBF(s_free_blocks_count, K_BLK),
	SBF(s_free_inodes_count, K_INO), SBF(s_first_data_block, K_BLK),
	SBF(s_log_block_size, K_SHIFT), SBF(s_log_cluster_size, K_SHIFT),
	SBF(s_blocks_per_group, K_CNT), SBF(s_clusters_per_group, K_CNT),
	SBF(s_inodes_per_group, K_CNT), SBF(s_state, K_FLAGS), SBF(s_errors, K_CNT),
	SBF(s_rev_level, K_CNT), SBF(s_first_ino, K_INO), SBF(s_inode_size, K_LEN),
	SBF(s_feature_compat, K_FLAGS), SBF(s_feature_incompat, K_FLAGS),
	SBF(s_feature_ro_compat, K_FLAGS), SBF(s_journal_inum, K_INO),
	SBF(s_reserved_gdt_blocks, K_CNT), SBF(s_desc_size, K_LEN),
	SBF(s_first_meta_bg, K_CNT), SBF(s_min_extra_isize, K_LEN),
	SBF(s_want_extra_isize, K_LEN), SBF(s_flags, K_FLAGS),
	SBF(s_log_groups_per_flex, K_SHIFT), SBF(s_def_hash_version, K_CNT),
	SBF(s_last_orphan, K_INO), SBF(s_checksum_type, K_CNT), SBF(s_encoding, K_CNT),
	SBF(s_usr_quota_inum, K_INO), SBF(s_overhead_clusters, K_BLK),
	SBF(s_blocks_count_hi, K_CNT), SBF(s_orphan_file_inum, K_INO), SBF(s_lpf_ino, K_INO),
};

#define GDF(f, k) { #f, offsetof(struct ext4_group_desc, f), \
		    sizeof(((struct ext4_group_desc *)0)->f), k }
static const struct field gd_fields[] = {
	GDF(bg_block_bitmap, K_BLK), GDF(bg_inode_bitmap, K_BLK), GDF(bg_inode_table, K_BLK),
	GDF(bg_free_blocks_count, K_BLK), GDF(bg_free_inodes_count, K_INO),
	GDF(bg_used_dirs_count, K_INO), GDF(bg_flags, K_FLAGS),
	GDF(bg_block_bitmap_csum_lo, K_CNT), GDF(bg_inode_bitmap_csum_lo, K_CNT),
	GDF(bg_itable_unused, K_INO),
	/* The 64-bit halves: only with a 64-byte descriptor (64bit). */
	GDF(bg_block_bitmap_hi, K_CNT), GDF(bg_inode_bitmap_hi, K_CNT),
	GDF(bg_inode_table_hi, K_CNT), GDF(bg_block_bitmap_csum_hi, K_CNT),
	GDF(bg_inode_bitmap_csum_hi, K_CNT),
};
#define GD_FIELDS_32 10

/* i_block holds an extent header and four extents (or an index). */
static const struct field inode_fields[] = {
	{ "i_mode", 0, 2, K_FLAGS }, { "i_size", 4, 4, K_LEN }, { "i_dtime", 20, 4, K_CNT },
	{ "i_links_count", 26, 2, K_CNT }, { "i_blocks", 28, 4, K_BLK },
	{ "i_flags", 32, 4, K_FLAGS }, { "eh_magic", 40, 2, K_CNT },
	{ "eh_entries", 42, 2, K_CNT }, { "eh_max", 44, 2, K_CNT }, { "eh_depth", 46, 2, K_CNT },
	{ "ee_block[0]", 52, 4, K_BLK }, { "ee_len[0]/ei_leaf", 56, 2, K_CNT },
	{ "ee_start_hi[0]", 58, 2, K_CNT }, { "ee_start_lo[0]", 60, 4, K_BLK },
	{ "ee_start_lo[1]", 72, 4, K_BLK }, { "i_generation", 100, 4, K_CNT },
	{ "i_file_acl", 104, 4, K_BLK }, { "i_size_high", 108, 4, K_CNT },
	{ "i_blocks_high", 116, 2, K_CNT }, { "i_file_acl_high", 118, 2, K_CNT },
	{ "i_extra_isize", 128, 2, K_LEN },
};

/* Offsets of entry fields: added to the entry's offset. */
static const struct field extent_hdr_fields[] = {
	{ "eh_magic", 0, 2, K_CNT }, { "eh_entries", 2, 2, K_CNT },
	{ "eh_max", 4, 2, K_CNT }, { "eh_depth", 6, 2, K_CNT },
};
static const struct field extent_fields[] = {
	{ "ee_block", 0, 4, K_BLK }, { "ee_len", 4, 2, K_CNT },
	{ "ee_start_hi", 6, 2, K_CNT }, { "ee_start_lo", 8, 4, K_BLK },
};
/* dx_root: "." and ".." entries, then dx_root_info at 24, the entries at 32. */
static const struct field dx_fields[] = {
	{ "dot.rec_len", 4, 2, K_LEN }, { "dotdot.rec_len", 16, 2, K_LEN },
	{ "reserved_zero", 24, 4, K_CNT }, { "hash_version", 28, 1, K_CNT },
	{ "info_length", 29, 1, K_LEN }, { "indirect_levels", 30, 1, K_CNT },
	{ "unused_flags", 31, 1, K_FLAGS }, { "limit", 32, 2, K_CNT },
	{ "count", 34, 2, K_CNT }, { "block[0]", 36, 4, K_CNT },
	{ "hash[1]", 40, 4, K_CNT }, { "block[1]", 44, 4, K_CNT },
};
static const struct field dirent_fields[] = {
	{ "inode", 0, 4, K_INO }, { "rec_len", 4, 2, K_LEN },
	{ "name_len", 6, 1, K_LEN }, { "file_type", 7, 1, K_CNT },
};
static const struct field xattr_fields[] = {
	{ "h_magic", 0, 4, K_CNT }, { "h_refcount", 4, 4, K_CNT }, { "h_blocks", 8, 4, K_CNT },
	{ "h_hash", 12, 4, K_CNT }, { "e_name_len[0]", 32, 1, K_LEN },
	{ "e_name_index[0]", 33, 1, K_CNT }, { "e_value_offs[0]", 34, 2, K_LEN },
	{ "e_value_inum[0]", 36, 4, K_INO }, { "e_value_size[0]", 40, 4, K_LEN },
	{ "e_hash[0]", 44, 4, K_CNT },
};
#define NF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- field mode: the targets of a base -------------------------------- */

static void add_target(struct base *b, enum tkind k, uint32_t ino, uint64_t blk, const char *what)
{
	struct target *t;

	if (b->nt[k] == MAX_TARGETS)
		return;
	t = &b->t[k][b->nt[k]++];
	t->ino = ino;
	t->g = 0;
	t->blk = blk;
	snprintf(t->what, sizeof(t->what), "%s", what);
}

/* A directory's first blocks: the htree root (indexed) or leaves. */
static void add_dir_targets(struct base *b, uint32_t ino, const struct ext2_inode *in, const char *path)
{
	uint64_t nblk = EXT2_I_SIZE(in) / b->fs->blocksize;

	for (uint64_t l = 0; l < nblk && l < 4; l++) {
		blk64_t p = 0;

		if (ext2fs_bmap2(b->fs, ino, NULL, NULL, 0, l, NULL, &p) || !p)
			continue;
		add_target(b, l == 0 && (in->i_flags & EXT2_INDEX_FL) ? T_DX : T_DIRENT, ino, p, path);
	}
}

/* An extent tree of depth >= 1: its first leaf block. */
static void add_extent_target(struct base *b, uint32_t ino, const struct ext2_inode *in, const char *path)
{
	const uint8_t *eh = (const uint8_t *)in->i_block;

	if (!(in->i_flags & EXT4_EXTENTS_FL) || get16(eh) != EXT3_EXT_MAGIC || !get16(eh + 6))
		return;
	add_target(b, T_EXTENT, ino, get32(eh + 16) | (uint64_t)get16(eh + 20) << 32, path);
}

/* Open a clean base with libext2fs and list what field mode can hit. */
static int load_targets(struct base *b)
{
	static const char *const paths[] = {
		"/", "/lost+found", "/file1", "/dir", "/dir/sub", "/dir/sub/leaf", "/link",
		"/xin", "/xblk", "/big", "/deep", "/inl", "/htree",
	};
	errcode_t err = ext2fs_open2(b->path, NULL, EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &b->fs);

	if (err) {
		printf("# ext2fs_open2 %s: %s\n", b->path, error_message(err));
		return -1;
	}
	add_target(b, T_SB, 0, 0, "");
	for (dgrp_t g = 0; g < b->fs->group_desc_count; g++) {
		add_target(b, T_GD, 0, 0, "");
		b->t[T_GD][b->nt[T_GD] - 1].g = g;
	}
	if (b->fs->super->s_journal_inum)
		add_target(b, T_INODE, b->fs->super->s_journal_inum, 0, "journal");
	for (size_t i = 0; i < NF(paths); i++) {
		struct ext2_inode in;
		ext2_ino_t ino;

		if (ext2fs_namei(b->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, paths[i], &ino) ||
		    ext2fs_read_inode(b->fs, ino, &in))
			continue;
		add_target(b, T_INODE, ino, 0, paths[i]);
		if (ext2fs_file_acl_block(b->fs, &in))
			add_target(b, T_XATTR, ino, ext2fs_file_acl_block(b->fs, &in), paths[i]);
		if (LINUX_S_ISDIR(in.i_mode) && !(in.i_flags & EXT4_INLINE_DATA_FL))
			add_dir_targets(b, ino, &in, paths[i]);
		add_extent_target(b, ino, &in, paths[i]);
	}
	return b->nt[T_INODE] > 4 ? 0 : -1;
}

/* ---- field mode: one mutation ------------------------------------------ */

static uint64_t getv(const uint8_t *p, int width)
{
	uint64_t v = 0;

	for (int i = width - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void putv(uint8_t *p, int width, uint64_t v)
{
	for (int i = 0; i < width; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/*
 * A hostile value for field F holding ORIG: 0, all ones, ORIG +- 1, or a
 * limit (the block count for a block number, the inode count for an inode
 * number, the block size for a length, the largest valid shift, the sign
 * bit for a count) or one past it; a flag field may also get one bit flipped.
 */
static uint64_t hostile(const struct base *b, const struct field *f, uint64_t orig,
			const char **how)
{
	uint64_t mask = f->width >= 8 ? ~0ull : (1ull << (8 * f->width)) - 1, lim, v = orig;
	struct ext2_super_block *sb = b->fs->super;

	switch (f->kind) {
	case K_BLK: lim = ext2fs_blocks_count(sb); break;
	case K_INO: lim = sb->s_inodes_count; break;
	case K_LEN: lim = b->fs->blocksize; break;
	case K_SHIFT: lim = 6; break; /* log2(64 KiB / 1 KiB): the largest block */
	default: lim = 1ull << (8 * f->width - 1); break;
	}
	for (int tries = 0; tries < 8 && v == orig; tries++) {
		switch (rnd() % (f->kind == K_FLAGS ? 8 : 6)) {
		case 0: v = 0, *how = "zero"; break;
		case 1: v = mask, *how = "all ones"; break;
		case 2: v = orig + 1, *how = "one more"; break;
		case 3: v = orig - 1, *how = "one less"; break;
		case 4: v = lim, *how = "the limit"; break;
		case 5: v = lim + 1, *how = "one past the limit"; break;
		default: v = orig ^ (1ull << (rnd() % (8 * f->width))), *how = "one bit flipped"; break;
		}
		v &= mask;
	}
	if (v == orig)
		v = orig ^ 1, *how = "one bit flipped";
	return v;
}

/* Byte offset in the image of a target's structure. */
static uint8_t *target_at(const struct base *b, struct img *m, enum tkind k, const struct target *t)
{
	ext2_filsys fs = b->fs;

	switch (k) {
	case T_SB:
		return m->p + SB_OFF;
	case T_GD:
		return m->p + (uint64_t)(fs->super->s_first_data_block + 1) * fs->blocksize +
		       (uint64_t)t->g * EXT2_DESC_SIZE(fs->super);
	case T_INODE: {
		uint32_t g = (t->ino - 1) / fs->super->s_inodes_per_group;
		uint32_t i = (t->ino - 1) % fs->super->s_inodes_per_group;

		return m->p + ext2fs_inode_table_loc(fs, g) * fs->blocksize +
		       (uint64_t)i * EXT2_INODE_SIZE(fs->super);
	}
	default:
		return m->p + t->blk * fs->blocksize;
	}
}

/*
 * Which field of structure S of kind K to hit, with the offset of the
 * entry it belongs to in *base: an entry of an extent block, htree root or
 * directory block is picked among those of the clean block.
 */
static const struct field *pick_field(const struct base *b, enum tkind k, const uint8_t *s,
				      uint32_t *base, int *entry)
{
	*base = 0;
	*entry = -1;
	switch (k) {
	case T_SB:
		return &sb_fields[rnd() % NF(sb_fields)];
	case T_GD:
		return &gd_fields[rnd() % (EXT2_DESC_SIZE(b->fs->super) >= 64 ? NF(gd_fields) : GD_FIELDS_32)];
	case T_INODE:
		return &inode_fields[rnd() % NF(inode_fields)];
	case T_EXTENT:
		if (rnd() % 3 == 0 || !get16(s + 2))
			return &extent_hdr_fields[rnd() % NF(extent_hdr_fields)];
		*entry = rnd() % get16(s + 2);
		*base = 12 + 12 * *entry;
		return &extent_fields[rnd() % NF(extent_fields)];
	case T_DX:
		return &dx_fields[rnd() % NF(dx_fields)];
	case T_DIRENT: {
		uint32_t offs[128], n = 0;

		for (uint32_t o = 0; o + 8 <= b->fs->blocksize && n < 128 && get16(s + o + 4) >= 8; o += get16(s + o + 4))
			offs[n++] = o;
		*entry = n ? rnd() % n : 0;
		*base = n ? offs[*entry] : 0;
		return &dirent_fields[rnd() % NF(dirent_fields)];
	}
	default:
		return &xattr_fields[rnd() % NF(xattr_fields)];
	}
}

/*
 * Recompute the checksum(s) covering structure S (of kind K) in the
 * mutant, with the clean base's libext2fs handle for the seed.  A group
 * descriptor's checksum is computed from the handle's own copy, so the
 * mutated descriptor goes there for the call and back out after.
 */
static errcode_t fix_csum(const struct base *b, enum tkind k, const struct target *t, uint8_t *s)
{
	ext2_filsys fs = b->fs;

	switch (k) {
	case T_SB:
		return ext2fs_superblock_csum_set(fs, (struct ext2_super_block *)s);
	case T_GD: {
		uint8_t *d = (uint8_t *)ext2fs_group_desc(fs, fs->group_desc, t->g), save[128];
		size_t n = EXT2_DESC_SIZE(fs->super);

		memcpy(save, d, n);
		memcpy(d, s, n);
		ext2fs_group_desc_csum_set(fs, t->g);
		memcpy(s, d, n);
		memcpy(d, save, n);
		return 0;
	}
	case T_INODE:
		return ext2fs_inode_csum_set(fs, t->ino, (struct ext2_inode_large *)s);
	case T_EXTENT:
		return ext2fs_extent_block_csum_set(fs, t->ino, (struct ext3_extent_header *)s);
	case T_DX:
	case T_DIRENT:
		return ext2fs_dir_block_csum_set(fs, t->ino, (struct ext2_dir_entry *)s);
	default:
		return ext2fs_ext_attr_block_csum_set(fs, t->ino, t->blk, (struct ext2_ext_attr_header *)s);
	}
}

/* One field of one structure to a hostile value; checksums fixed unless STALE. */
static void mutate_field(struct base *b, struct img *m, int stale, char *desc, size_t n)
{
	enum tkind kinds[T_KINDS], k;
	int nk = 0, entry;
	const struct target *t;
	const struct field *f;
	const char *how = "";
	uint32_t base;
	uint64_t orig, v;
	uint8_t *s;
	errcode_t err = 0;
	size_t l;

	/* A kind first, then one of its targets: the superblock is hit as
	 * often as all inodes together. */
	for (int i = 0; i < T_KINDS; i++)
		if (b->nt[i])
			kinds[nk++] = i;
	k = kinds[rnd() % nk];
	t = &b->t[k][rnd() % b->nt[k]];
	s = target_at(b, m, k, t);
	f = pick_field(b, k, s, &base, &entry);
	orig = getv(s + base + f->off, f->width);
	v = hostile(b, f, orig, &how);
	putv(s + base + f->off, f->width, v);
	if (!stale)
		err = fix_csum(b, k, t, s);
	l = snprintf(desc, n, "field %s", tkind_name[k]);
	if (k == T_GD)
		l += snprintf(desc + l, n - l, " %u", t->g);
	else if (k == T_INODE)
		l += snprintf(desc + l, n - l, " %u (%s)", t->ino, t->what);
	else if (k != T_SB)
		l += snprintf(desc + l, n - l, " %llu (%s)", (unsigned long long)t->blk, t->what);
	if (entry >= 0)
		l += snprintf(desc + l, n - l, " entry %d", entry);
	l += snprintf(desc + l, n - l, " %s: %#llx -> %#llx (%s)%s", f->name, (unsigned long long)orig,
		      (unsigned long long)v, how, stale ? ", checksum left stale" : "");
	if (err) {
		snprintf(desc + l, n - l, ", checksum not recomputed: %s", error_message(err));
		b->no_csum++;
	}
}

/* ---- one mutant: mount and exercise ------------------------------------ */

/*
 * The exercise, in a child: a stuck child is killed by its alarm and
 * reported.  Exit status 0, or 4 when a checksum stopped an operation.
 */
static void exercise(const char *mnt, int rw)
{
	char path[4096], bad[256];
	int rewinds = 0, badcrc = 0;
	struct walk w;

	alarm(EXERCISE_SECONDS);
	op_walk(mnt, &w);
	badcrc += w.badcrc;
	if (rw) {
		snprintf(path, sizeof(path), "%s/mutant-write", mnt);
		badcrc += op_write(path) == EBADMSG;
		snprintf(path, sizeof(path), "%s/dir/mutant-dir", mnt);
		badcrc += mkdir(path, 0755) && errno == EBADMSG;
	}
	badcrc += op_fsmap(mnt) == EBADMSG;
	snprintf(path, sizeof(path), "%s/big", mnt);
	badcrc += op_seekdir(path, bad, sizeof(bad), &rewinds) == EBADMSG;
	op_walk(mnt, &w);
	badcrc += w.badcrc;
	_exit(badcrc ? 4 : 0);
}

/*
 * After e2fsck, in a child: every file must read back and a new one be
 * written.  Exit status 0; 6 when only xattr reads failed; 5 otherwise,
 * with the failure printed.
 */
static void exercise_repaired(const char *mnt, unsigned long i)
{
	char path[4096];
	struct walk w;
	int e;

	alarm(EXERCISE_SECONDS);
	if (op_walk(mnt, &w)) {
		printf("# mutant %lu: after e2fsck: walk: %d errors (%d of xattrs), first %s\n", i,
		       w.errors, w.xerrors, errname(w.first_err));
		if (w.errors > w.xerrors)
			_exit(5);
	}
	snprintf(path, sizeof(path), "%s/repaired-write", mnt);
	e = op_write(path);
	if (e) {
		printf("# mutant %lu: after e2fsck: write: %s\n", i, errname(e));
		_exit(5);
	}
	_exit(w.errors ? 6 : 0);
}

/* Run FN(MNT, ARG) in a child; its exit status, or -1 (and why in *why). */
static int in_child(void (*fn)(const char *, unsigned long), const char *mnt, unsigned long arg,
		    char *why, size_t n)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		fn(mnt, arg);
	if (pid < 0 || waitpid(pid, &st, 0) < 0) {
		snprintf(why, n, "fork/wait: %s", strerror(errno));
		return -1;
	}
	if (WIFSIGNALED(st)) {
		snprintf(why, n, "signal %d", WTERMSIG(st));
		return -1;
	}
	return WEXITSTATUS(st);
}

static void exercise_fn(const char *mnt, unsigned long rw) { exercise(mnt, (int)rw); }

/*
 * Kernel errors after e2fsck said clean that are gaps of e2fsck, not of
 * the kernel: each seen with e2fsprogs 1.47.0 (Debian 12's) and shown on
 * the host without a kernel (e2fsck -fy, e2fsck -fn clean, debugfs shows
 * what is left).  A mutant whose only errors are these is counted and
 * printed as a known gap, not failed.
 */
static const struct { const char *msg, *why; } known_gaps[] = {
	/* Field mutant 193 of seed 417: i_flags of /dir/sub/leaf all ones;
	 * e2fsck clears five flags and keeps 0xbff7c7ff. */
	{ "unexpected EA_INODE flag",
	  "e2fsck keeps EXT4_EA_INODE_FL on a file that a directory links to" },
	/* Field mutants 33 and 113 of seed 20261207 (rich base): eh_depth of
	 * /deep's leaf extent block 429 set to 0x8000 and 0xffff, checksum
	 * recomputed; e2fsck -fn and -fy exit 0 and debugfs dumps the file,
	 * since libext2fs descends by the parent's depth. */
	{ "unexpected eh_depth",
	  "e2fsck does not check that an extent block's depth is its parent's minus one" },
};

static const char *known_gap(const char *line, size_t len)
{
	for (size_t k = 0; k < sizeof(known_gaps) / sizeof(known_gaps[0]); k++)
		if (memmem(line, len, known_gaps[k].msg, strlen(known_gaps[k].msg)))
			return known_gaps[k].why;
	return NULL;
}

/*
 * "EXT4-fs error" lines of a kernel log window, each printed; returns
 * their number, and in *unknown those that are no known e2fsck gap.
 */
static int ext4_errors(const char *log, unsigned long i, int *unknown)
{
	int n = 0;

	*unknown = 0;
	for (const char *p = log; (p = strstr(p, "EXT4-fs error")); p++, n++) {
		size_t len = strcspn(p, "\n");
		const char *why = known_gap(p, len);

		*unknown += !why;
		printf("# mutant %lu: after e2fsck: %.*s%s%s\n", i, (int)len, p,
		       why ? " -- known e2fsck gap: " : "", why ? why : "");
	}
	return n;
}

/* What a mount of one image gave. */
struct outcome {
	int mounted, err, done, badcrc, xattr, failed;
};

/*
 * Attach IMG, mount it with FLAGS/OPTS, exercise it with FN in a child,
 * unmount, detach.  *LOG gets the kernel log of it all (malloc'ed).
 */
static void mount_once(const char *img, const char *mnt, unsigned long flags, const char *opts,
		       void (*fn)(const char *, unsigned long), unsigned long arg, unsigned long i,
		       struct outcome *o, char **log)
{
	char dev[64], why[128];
	int lfd, kfd = klog_open(), st;

	memset(o, 0, sizeof(*o));
	*log = NULL;
	lfd = loop_attach(img, dev, sizeof(dev));
	if (lfd < 0) {
		printf("# mutant %lu: loop device: %s\n", i, strerror(errno));
		o->failed = 1;
		goto out;
	}
	if (mount(dev, mnt, "ext4", flags, opts)) {
		o->err = errno;
	} else {
		o->mounted = 1;
		st = in_child(fn, mnt, arg, why, sizeof(why));
		if (st == 0 || st == 4 || st == 6) {
			o->done = 1;
			o->badcrc = st == 4;
			o->xattr = st == 6;
		} else if (st != 5) {
			printf("# mutant %lu: exercise did not finish (%s%s%d)\n", i, st < 0 ? why : "status",
			       st < 0 ? "" : " ", st < 0 ? 0 : st);
			o->failed = 1;
		}
		if (umount2(mnt, 0)) {
			printf("# mutant %lu: umount: %s\n", i, strerror(errno));
			o->failed = 1;
			umount2(mnt, MNT_DETACH);
		}
	}
	if (ioctl(lfd, LOOP_CLR_FD, 0))
		printf("# mutant %lu: LOOP_CLR_FD: %s\n", i, strerror(errno));
	close(lfd);
out:
	if (kfd >= 0) {
		*log = klog_read(kfd);
		close(kfd);
	}
}

/*
 * Was the mutant stopped by a checksum?  Refused with EBADMSG, an
 * operation that got EBADMSG, or a kernel message about a checksum (a bad
 * descriptor checksum refuses a rw mount with EUCLEAN, and an extent
 * block's is reported as corruption).
 */
static int stopped_by_csum(const struct outcome *o, const char *log)
{
	return o->err == EBADMSG || o->badcrc ||
	       (log && (strcasestr(log, "checksum") || strcasestr(log, "csum")));
}

/* e2fsck OPT IMG, its output in WORK/fsck.log; exit status, or -1 on a hang. */
static int fsck(const char *opt, const char *img, const char *work, unsigned long i)
{
	char logp[4096];
	pid_t pid;
	int st;

	snprintf(logp, sizeof(logp), "%s/fsck.log", work);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		alarm(FSCK_SECONDS); /* kept across exec */
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("e2fsck", "e2fsck", opt, img, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) {
		printf("# mutant %lu: e2fsck %s did not finish (%s)\n", i, opt,
		       pid < 0 ? "fork" : WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "wait");
		return -1;
	}
	return WEXITSTATUS(st);
}

static void repaired_fn(const char *mnt, unsigned long i) { exercise_repaired(mnt, i); }

/*
 * The repair round of one mutant that mounted: e2fsck -fy, e2fsck -fn,
 * then a rw mount that must be clean when e2fsck -fn says so.  Returns 1
 * on a failure.
 */
static int repair(struct base *b, const char *img, const char *work, const char *mnt, unsigned long i)
{
	struct outcome o;
	char *log;
	int fix = fsck("-fy", img, work, i), chk = -1, nerr, unknown = 0;

	/* Exit 8: e2fsck gave up (it printed "aborted"); otherwise it has
	 * repaired what it could, and -fn says whether that is all. */
	if (fix >= 0 && fix < 8)
		chk = fsck("-fn", img, work, i);
	if (fix < 0 || (fix < 8 && chk < 0)) {
		b->r_failed++; /* a hang */
		return 1;
	}
	mount_once(img, mnt, 0, "errors=continue", repaired_fn, i, i, &o, &log);
	if (chk != 0) {
		b->r_left++;
		b->r_left_refused += !o.mounted;
		printf("# mutant %lu: repair: e2fsck -fy exit %d, %s, then mount %s\n", i, fix,
		       chk < 0 ? "gave up" : "e2fsck -fn still finds errors", errname(o.err));
		free(log);
		return o.failed;
	}
	nerr = log ? ext4_errors(log, i, &unknown) : -1; /* -1: the log could not be read */
	free(log);
	/* Errors that are all known e2fsck gaps: the walk may fail with them. */
	if (o.mounted && !o.failed && nerr > 0 && !unknown) {
		b->r_known++;
		printf("# mutant %lu: repair: e2fsck -fy exit %d, -fn clean, then %d kernel error(s), "
		       "all a known e2fsck gap\n", i, fix, nerr);
		return 0;
	}
	if (!o.mounted || !o.done || o.failed || nerr) {
		b->r_failed++;
		printf("# mutant %lu: repair FAILED: e2fsck -fy exit %d, -fn clean, then mount %s, %s, "
		       "%d EXT4-fs error(s)\n", i, fix, errname(o.err),
		       o.done ? "files read back" : "files did not read back", nerr);
		return 1;
	}
	b->r_xattr += o.xattr;
	fix ? b->r_fixed++ : b->r_clean++;
	printf("# mutant %lu: repair: e2fsck -fy exit %d, -fn clean, mounted clean, files read back%s\n",
	       i, fix, o.xattr ? " (xattrs listed but not readable)" : "");
	return 0;
}

/* ---- the run ----------------------------------------------------------- */

static int load_base(struct base *b, const char *path, enum mode mode)
{
	b->path = path;
	if (img_load(&b->im, path))
		return -1;
	return mode == M_BYTES ? load_meta(b) : load_targets(b);
}

/* Make mutant I of base B in IMG; returns 0 and describes it in DESC. */
static int make_mutant(struct base *b, enum mode mode, const char *img, char *desc, size_t n)
{
	struct img m = b->im;
	int r;

	m.p = malloc(m.size);
	if (!m.p)
		return -1;
	memcpy(m.p, b->im.p, m.size);
	if (mode == M_BYTES)
		mutate_bytes(b, &m, desc, n);
	else
		mutate_field(b, &m, mode == M_STALE, desc, n);
	r = img_save(&m, img);
	free(m.p);
	return r;
}

/* The per-base counts and the floor (TAP test 2); returns bases short of it. */
static int report_bases(struct base *bases, int nb, enum mode mode, char *got, size_t n)
{
	int pct = mode == M_BYTES ? BYTES_FLOOR_PCT : FIELDS_FLOOR_PCT, short_of = 0;
	size_t g = 0;

	for (int k = 0; k < nb; k++) {
		struct base *b = &bases[k];
		/* ceil(pct % of the mutants made from this base) */
		int want = b->made < FLOOR_MIN ? 0 : (b->made * pct + 99) / 100, nref = 0;
		int have = mode == M_BYTES ? b->exercised : b->made - b->by_csum;
		char why[256] = "";
		size_t w = 0;

		for (int r = 0; r < b->nreasons; r++) {
			nref += b->reasons[r].n;
			if (w < sizeof(why))
				w += snprintf(why + w, sizeof(why) - w, " %s=%d",
					      b->reasons[r].name, b->reasons[r].n);
		}
		printf("# ext4mut: base %d (%s): %d mutants, %d mounted and exercised, %d refused%s; "
		       "%d stopped by a checksum", k, b->path, b->made, b->exercised, nref, why, b->by_csum);
		if (mode != M_BYTES)
			printf(", %d checksums libext2fs could not recompute", b->no_csum);
		printf("\n");
		short_of += have < want;
		if (g < n)
			g += snprintf(got + g, n - g, "%sbase %d got %d, want >= %d", k ? "; " : "", k, have, want);
	}
	return short_of;
}

/* The repair round's counts (TAP test 3); returns the failures. */
static int report_repair(struct base *bases, int nb, char *got, size_t n)
{
	int failed = 0;
	size_t g = 0;

	for (int k = 0; k < nb; k++) {
		struct base *b = &bases[k];

		printf("# ext4mut: repair, base %d: %d clean already, %d repaired (%d of these two "
		       "with xattrs listed but not readable), %d left with errors by e2fsck (%d of "
		       "them still refused), %d said clean with a known e2fsck gap left, %d failed\n",
		       k, b->r_clean, b->r_fixed, b->r_xattr, b->r_left, b->r_left_refused, b->r_known,
		       b->r_failed);
		failed += b->r_failed;
		if (g < n)
			g += snprintf(got + g, n - g, "%sbase %d: %d clean, %d repaired, %d left, "
				      "%d known gaps, %d failed", k ? "; " : "", k, b->r_clean, b->r_fixed,
				      b->r_left, b->r_known, b->r_failed);
	}
	return failed;
}

static void usage(void)
{
	fprintf(stderr, "usage: ext4mut [-f|-s] [-r|-m] SEED [FIRST+]COUNT WORKDIR MNT IMAGE...(up to 4)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *const mode_name[] = { "byte flips", "fields, checksums recomputed",
						 "fields, checksums stale" };
	static struct base bases[4];
	enum mode mode = M_BYTES;
	int nb, failed = 0, mounted = 0, refused = 0, short_of, do_repair = 0, rfail = 0, c;
	int make_only = 0;
	char floor_got[512] = "", repair_got[512] = "", img[4096], *plus;
	unsigned long seed, count, first = 0;
	const char *work, *mnt;
	time_t t0 = time(NULL);

	setvbuf(stdout, NULL, _IOLBF, 0);
	initialize_ext2_error_table(); /* error_message() of libext2fs' codes */
	while ((c = getopt(argc, argv, "fsrm")) != -1) {
		if (c == 'f' || c == 's')
			mode = c == 'f' ? M_FIELDS : M_STALE;
		else if (c == 'r')
			do_repair = 1;
		else if (c == 'm')
			make_only = 1;
		else
			usage();
	}
	argv += optind - 1;
	argc -= optind - 1;
	nb = argc - 5;
	if (argc < 6 || nb > 4)
		usage();
	seed = strtoul(argv[1], NULL, 0);
	count = strtoul(argv[2], &plus, 0);
	if (*plus == '+') {
		first = count;
		count = strtoul(plus + 1, NULL, 0);
	}
	work = argv[3];
	mnt = argv[4];
	if (!make_only)
		printf("1..%d\n", do_repair ? 3 : 2);
	printf("# ext4mut: %s, seed %lu, %lu mutants (replay: LK417_EXT4_SEED=%lu)\n",
	       mode_name[mode], seed, count, seed);
	for (int i = 0; i < nb; i++)
		if (load_base(&bases[i], argv[5 + i], mode)) {
			printf("not ok 1 - cannot parse control image %s\nnot ok 2 - no run\n", argv[5 + i]);
			return 1;
		}
	snprintf(img, sizeof(img), "%s/mutant.img", work);
	for (unsigned long i = first; i < first + count; i++) {
		struct base *b = &bases[i % nb];
		int rw = (i % 4) < 2;
		const char *opts = (i % 2) ? "errors=remount-ro" : "errors=continue";
		char desc[512];
		struct outcome o;
		char *log;

		rng_state = seed * 0x100000001b3ull + i;
		if (make_only)
			snprintf(img, sizeof(img), "%s/mutant-%lu.img", work, i);
		if (make_mutant(b, mode, img, desc, sizeof(desc))) {
			printf("not ok 1 - cannot write %s\nnot ok 2 - no run\n", img);
			return 1;
		}
		b->made++;
		printf("# mutant %lu: base %d, %s,%s, %s\n", i, (int)(i % nb), rw ? "rw" : "ro", opts, desc);
		if (make_only)
			continue;
		mount_once(img, mnt, rw ? 0 : MS_RDONLY, opts, exercise_fn, rw, i, &o, &log);
		failed += o.failed;
		if (stopped_by_csum(&o, log)) {
			b->by_csum++;
			printf("# mutant %lu: stopped by a checksum\n", i);
		}
		free(log);
		if (!o.mounted) {
			printf("# mutant %lu: mount refused: %s\n", i, errname(o.err));
			refused_by(b, errname(o.err));
			refused += !o.failed;
			continue;
		}
		mounted++;
		b->exercised += o.done;
		if (do_repair && !o.failed)
			rfail += repair(b, img, work, mnt, i);
	}
	if (make_only)
		return 0;
	printf("# ext4mut: %d mounted, %d refused, %d failed, %ld s\n", mounted, refused, failed,
	       (long)(time(NULL) - t0));
	short_of = report_bases(bases, nb, mode, floor_got, sizeof(floor_got));
	if (do_repair)
		rfail = report_repair(bases, nb, repair_got, sizeof(repair_got));
	printf("%sok 1 - %lu mutants of seed %lu mounted or refused, exercised and unmounted "
	       "without a hang (%d mounted, %d refused)\n", failed ? "not " : "", count, seed,
	       mounted, refused);
	if (mode == M_BYTES)
		printf("%sok 2 - at least %d%% of each base image's mutants mounted and exercised (%s)\n",
		       short_of ? "not " : "", BYTES_FLOOR_PCT, floor_got);
	else
		printf("%sok 2 - at least %d%% of each base image's mutants got past the checksums (%s)\n",
		       short_of ? "not " : "", FIELDS_FLOOR_PCT, floor_got);
	if (do_repair)
		printf("%sok 3 - repair round: every mutant that mounted and that e2fsck -fy repaired "
		       "(e2fsck -fn clean) mounts again rw, reads back and logs no EXT4-fs error (%s)\n",
		       rfail ? "not " : "", repair_got);
	return failed || short_of || rfail ? 1 : 0;
}
