/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the ext4 on-disk format to find and damage metadata in a
 * small image made by mke2fs/debugfs: superblock, group descriptors, inodes,
 * depth-0 extent trees, linear directories and xattr areas.
 *
 * The whole image lives in memory (the corpus images are 2 MiB), so every
 * helper is a pointer computation into that buffer.  Nothing here trusts
 * the image beyond bounds-checking its own reads: the mutator parses the
 * control image only, but the helpers must not crash on odd input either.
 */
#ifndef LK417_EXT4IMG_H
#define LK417_EXT4IMG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SB_OFF 1024
#define EXT4_SUPER_MAGIC 0xEF53
#define XATTR_MAGIC 0xEA020000u
#define EXT4_ROOT_INO 2
#define INCOMPAT_64BIT 0x80
#ifndef EXT4_EXTENTS_FL /* also in <ext2fs/ext2_fs.h> */
#define EXT4_EXTENTS_FL 0x80000
#endif
#define EXT4_EXT_MAGIC 0xF30A

struct img {
	uint8_t *p;
	size_t size;
	uint32_t bs;           /* block size */
	uint64_t blocks;       /* s_blocks_count */
	uint32_t first_data;   /* s_first_data_block: 1 for 1 KiB blocks */
	uint32_t ipg;          /* inodes per group */
	uint32_t isz;          /* inode size */
	uint32_t desc_size;    /* group descriptor size */
	uint32_t groups;
	int is64;
};

static inline uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static inline uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}

static inline int img_load(struct img *im, const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	memset(im, 0, sizeof(*im));
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 4096 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	im->size = n;
	im->p = malloc(n);
	if (!im->p || fread(im->p, 1, n, f) != (size_t)n) {
		fclose(f);
		return -1;
	}
	fclose(f);
	uint8_t *sb = im->p + SB_OFF;
	if (get16(sb + 56) != EXT4_SUPER_MAGIC)
		return -1;
	im->bs = 1024u << get32(sb + 24);
	im->blocks = get32(sb + 4);
	im->first_data = get32(sb + 20);
	im->ipg = get32(sb + 40);
	im->isz = get16(sb + 88);
	im->is64 = !!(get32(sb + 96) & INCOMPAT_64BIT);
	im->desc_size = im->is64 ? get16(sb + 254) : 32;
	if (im->desc_size < 32)
		im->desc_size = 32;
	uint32_t bpg = get32(sb + 32);
	im->groups = bpg ? (im->blocks - im->first_data + bpg - 1) / bpg : 0;
	if (im->bs > 65536 || !im->ipg || im->isz < 128 || !im->groups)
		return -1;
	return 0;
}

static inline int img_save(const struct img *im, const char *path)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (fwrite(im->p, 1, im->size, f) != im->size) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* Pointer to block b, or NULL when it lies outside the image. */
static inline uint8_t *blk(const struct img *im, uint64_t b)
{
	if ((b + 1) * im->bs > im->size)
		return NULL;
	return im->p + b * im->bs;
}

/* The primary group descriptor table starts in the block after the superblock. */
static inline uint64_t gdt_block(const struct img *im) { return im->first_data + 1; }

static inline uint8_t *gd(const struct img *im, uint32_t g)
{
	uint8_t *t = blk(im, gdt_block(im));

	return t ? t + (size_t)g * im->desc_size : NULL;
}

/* Field at lo offset, with the high half at hi when the fs is 64-bit. */
static inline uint64_t gd_get(const struct img *im, uint32_t g, int lo, int hi)
{
	uint8_t *d = gd(im, g);
	uint64_t v = get32(d + lo);

	if (im->is64 && im->desc_size >= 64)
		v |= (uint64_t)get32(d + hi) << 32;
	return v;
}

static inline void gd_set(const struct img *im, uint32_t g, int lo, int hi, uint64_t v)
{
	uint8_t *d = gd(im, g);

	put32(d + lo, (uint32_t)v);
	if (im->is64 && im->desc_size >= 64)
		put32(d + hi, (uint32_t)(v >> 32));
}

#define GD_BBITMAP 0x00, 0x20
#define GD_IBITMAP 0x04, 0x24
#define GD_ITABLE 0x08, 0x28

static inline uint8_t *inode(const struct img *im, uint32_t ino)
{
	uint32_t g = (ino - 1) / im->ipg, i = (ino - 1) % im->ipg;
	uint64_t t;

	if (!ino || g >= im->groups)
		return NULL;
	t = gd_get(im, g, GD_ITABLE);
	if ((t * im->bs) + (uint64_t)(i + 1) * im->isz > im->size)
		return NULL;
	return im->p + t * im->bs + (size_t)i * im->isz;
}

/*
 * Physical block of logical block lblk of an inode with a depth-0 extent
 * tree (all our small files and directories), or 0.
 */
static inline uint64_t inode_bmap(const struct img *im, const uint8_t *in, uint32_t lblk)
{
	const uint8_t *eh = in + 40;

	if (!(get32(in + 32) & EXT4_EXTENTS_FL) || get16(eh) != EXT4_EXT_MAGIC ||
	    get16(eh + 6) != 0)
		return 0;
	for (int i = 0; i < get16(eh + 2) && i < 4; i++) {
		const uint8_t *ex = eh + 12 + 12 * i;
		uint32_t first = get32(ex), len = get16(ex + 4);

		if (len > 32768)
			len -= 32768; /* unwritten extent */
		if (lblk >= first && lblk < first + len)
			return ((uint64_t)get16(ex + 6) << 32 | get32(ex + 8)) + lblk - first;
	}
	(void)im;
	return 0;
}

static inline uint64_t inode_size(const uint8_t *in)
{
	return get32(in + 4) | (uint64_t)get32(in + 108) << 32;
}

/* Inode number of NAME in the linear directory DIR, or 0. */
static inline uint32_t dir_lookup(const struct img *im, uint32_t dir, const char *name)
{
	const uint8_t *in = inode(im, dir);
	size_t nl = strlen(name);

	if (!in)
		return 0;
	for (uint32_t l = 0; (uint64_t)l * im->bs < inode_size(in); l++) {
		const uint8_t *b = blk(im, inode_bmap(im, in, l));

		if (!b || !inode_bmap(im, in, l))
			return 0;
		for (uint32_t off = 0; off + 8 <= im->bs;) {
			uint16_t rl = get16(b + off + 4);

			if (rl < 8 || off + rl > im->bs)
				break;
			if (get32(b + off) && b[off + 6] == nl && !memcmp(b + off + 8, name, nl))
				return get32(b + off);
			off += rl;
		}
	}
	return 0;
}

/* Inode of an absolute path such as "/dir/sub", or 0. */
static inline uint32_t path_lookup(const struct img *im, const char *path)
{
	char buf[256], *save = NULL, *c;
	uint32_t ino = EXT4_ROOT_INO;

	snprintf(buf, sizeof(buf), "%s", path);
	for (c = strtok_r(buf, "/", &save); c && ino; c = strtok_r(NULL, "/", &save))
		ino = dir_lookup(im, ino, c);
	return ino;
}

/* xattr entry layout (struct ext4_xattr_entry): */
#define XE_NAME_LEN 0
#define XE_NAME_INDEX 1
#define XE_VALUE_OFFS 2
#define XE_VALUE_INUM 4
#define XE_VALUE_SIZE 8
#define XE_HASH 12
#define XE_NAME 16
static inline uint32_t xe_len(const uint8_t *e) { return (16 + e[0] + 3) & ~3u; }
static inline int xe_last(const uint8_t *e) { return get32(e) == 0; }

/* The in-inode xattr area: magic, first entry and end. */
static inline uint8_t *ibody_xattr(const struct img *im, uint8_t *in, uint8_t **end)
{
	uint32_t extra = get16(in + 128);

	if (im->isz <= 128 || 128 + extra + 8 > im->isz)
		return NULL;
	*end = in + im->isz;
	return in + 128 + extra;
}

static inline uint64_t inode_xattr_block(const uint8_t *in)
{
	return get32(in + 104) | (uint64_t)get16(in + 116 + 2) << 32;
}

#endif
