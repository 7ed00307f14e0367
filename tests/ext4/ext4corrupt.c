// SPDX-License-Identifier: GPL-2.0
/*
 * ext4corrupt: make the crafted images of the ext4 corpus.
 *
 *   ext4corrupt list                 names of all crafted images, one a line
 *   ext4corrupt base NAME            which base image NAME starts from
 *   ext4corrupt make NAME IN OUTDIR  write OUTDIR/NAME.img and NAME.exp
 *   ext4corrupt doc                  the table of IMAGES.md (markdown)
 *
 * Each image breaks exactly one thing that one of the 4.17 ext4 hardening
 * checks (or its 6.12 successor) looks at, starting from a clean base image
 * made by mkcorpus.sh with mke2fs and debugfs.  The table below is the one
 * place that says what each image is and how the kernel must respond; the
 * .exp file carries that to the guest as shell variables:
 *
 *   DESC  what was corrupted
 *   RW    result of a read-write mount: ok, or the errno name it fails with
 *   RO    result of a read-only mount
 *   MSG   text the kernel log must show (mount or exercise), or empty
 *   OPS   operations for ext4ex on each successful mount, with the expected
 *         result: "op=RESULT ..." (RESULT is OK, a number or an errno name)
 *   MOPTS extra mount options (noblock_validity for two images)
 *   ERRS  ext4:ext4_error events for one mount attempt plus its OPS: "N",
 *         "N+" (at least N), or "RW/RO" when rw and ro mounts differ
 *
 * On a read-write mount with errors=remount-ro, 6.12 shuts the file system
 * down at the first error: that error is the only event, later operations
 * give their usual result or EIO, and writes fail with EIO.  ext4ex applies
 * that rule itself, so the table gives the errors=continue responses.
 *
 * The base images have no metadata_csum (except the "csum" base), so that
 * a damaged field reaches the structural check it targets instead of being
 * stopped by a checksum first.
 */
#include <errno.h>
#include "ext4img.h"

static struct img im;

static void die(const char *m)
{
	fprintf(stderr, "ext4corrupt: %s\n", m);
	exit(2);
}

static uint8_t *must_inode(const char *path)
{
	uint32_t ino = path_lookup(&im, path);
	uint8_t *in = ino ? inode(&im, ino) : NULL;

	if (!in)
		die("base image lacks a file the corruption needs");
	return in;
}

/* The xattr area under attack: entries, the base value offsets count from, end. */
struct xarea {
	uint8_t *hdr;   /* magic (in-inode) or block header */
	uint8_t *first; /* first entry */
	uint8_t *vbase; /* e_value_offs is relative to this */
	uint8_t *end;
};

static struct xarea xa_inode(void)
{
	struct xarea a;
	uint8_t *in = must_inode("/xin");

	a.hdr = ibody_xattr(&im, in, &a.end);
	if (!a.hdr || get32(a.hdr) != XATTR_MAGIC)
		die("/xin has no in-inode xattrs");
	a.first = a.vbase = a.hdr + 4;
	return a;
}

static struct xarea xa_block(void)
{
	struct xarea a;
	uint8_t *in = must_inode("/xblk");

	a.hdr = blk(&im, inode_xattr_block(in));
	if (!inode_xattr_block(in) || !a.hdr || get32(a.hdr) != XATTR_MAGIC)
		die("/xblk has no xattr block");
	a.first = a.hdr + 32;
	a.vbase = a.hdr;
	a.end = a.hdr + im.bs;
	return a;
}

/*
 * Names run past the end: replace the terminating zero word and
 * everything after it with 'x'.  Each fake entry then has e_name_len 0x78
 * and a name without a NUL, so the name walk steps 136 bytes at a time
 * until the next entry would start past the end of the area.
 */
static void x_name_oob(struct xarea a)
{
	uint8_t *e = a.first;

	while (!xe_last(e))
		e += xe_len(e);
	memset(e, 'x', a.end - e);
}

/* A NUL inside the first name: e_name_len no longer matches strnlen(). */
static void x_name_len(struct xarea a) { a.first[XE_NAME] = 0; }

/* A value offset past the end of the area. */
static void x_value_oob(struct xarea a) { put16(a.first + XE_VALUE_OFFS, 0xfffc); }

/* A value that starts on top of the entry table. */
static void x_value_overlap(struct xarea a)
{
	put16(a.first + XE_VALUE_OFFS, (uint16_t)(a.first - a.vbase));
}

/* A value size above EXT4_XATTR_SIZE_MAX (16 MiB), the successor of 4.17's INT_MAX cap. */
static void x_value_size(struct xarea a) { put32(a.first + XE_VALUE_SIZE, (1u << 24) + 1); }

static void x_magic(struct xarea a) { put32(a.hdr, XATTR_MAGIC + 1); }

/* One bit of a value changes: only the block checksum can tell. */
static void x_csum(struct xarea a) { a.vbase[get16(a.first + XE_VALUE_OFFS)] ^= 1; }

static void c_none(void) {}
static void c_root_unalloc(void) { put16(inode(&im, EXT4_ROOT_INO) + 26, 0); }
static void c_bb_range(void) { gd_set(&im, 0, GD_BBITMAP, im.blocks + 100); }
static void c_ib_range(void) { gd_set(&im, 0, GD_IBITMAP, im.blocks + 100); }
static void c_it_range(void) { gd_set(&im, 0, GD_ITABLE, im.blocks - 2); }
static void c_bb_sb(void) { gd_set(&im, 0, GD_BBITMAP, im.first_data); }
static void c_ib_sb(void) { gd_set(&im, 0, GD_IBITMAP, im.first_data); }
static void c_it_sb(void) { gd_set(&im, 0, GD_ITABLE, im.first_data); }
static void c_bb_gdt(void) { gd_set(&im, 0, GD_BBITMAP, gdt_block(&im)); }
static void c_ib_gdt(void) { gd_set(&im, 0, GD_IBITMAP, gdt_block(&im)); }
static void c_it_gdt(void) { gd_set(&im, 0, GD_ITABLE, gdt_block(&im)); }
static void c_xb_magic(void) { x_magic(xa_block()); }
static void c_xb_csum(void) { x_csum(xa_block()); }
static void c_xb_name_oob(void) { x_name_oob(xa_block()); }
static void c_xb_name_len(void) { x_name_len(xa_block()); }
static void c_xb_value_oob(void) { x_value_oob(xa_block()); }
static void c_xb_value_overlap(void) { x_value_overlap(xa_block()); }
static void c_xb_value_size(void) { x_value_size(xa_block()); }
static void c_xi_magic(void) { x_magic(xa_inode()); }
static void c_xi_name_oob(void) { x_name_oob(xa_inode()); }
static void c_xi_name_len(void) { x_name_len(xa_inode()); }
static void c_xi_value_oob(void) { x_value_oob(xa_inode()); }
static void c_xi_value_overlap(void) { x_value_overlap(xa_inode()); }
static void c_xi_value_size(void) { x_value_size(xa_inode()); }

/*
 * /big spans several blocks of a linear directory.  In its second block,
 * the third entry's rec_len becomes 2 bytes longer: no longer a multiple
 * of 4, which ext4_check_dir_entry() rejects.  readdir reports the error
 * and skips to the next block, so the rest of that block is not listed.
 */
static void c_dir_reclen(void)
{
	uint8_t *in = must_inode("/big");
	uint8_t *b = blk(&im, inode_bmap(&im, in, 1));
	uint32_t off = 0;

	if (!b || !inode_bmap(&im, in, 1))
		die("/big has no second block");
	for (int i = 0; i < 2; i++)
		off += get16(b + off + 4);
	put16(b + off + 4, get16(b + off + 4) + 2);
}

/* Operations every mounted image runs, before its own ones. */
#define WALK "walk=OK"
/* The seekdir/telldir revalidation check on the clean /big directory. */
#define SEEK "seekdir:/big=OK"
#define XOK "get:/xin:user.small=2 get:/xblk:user.big1=150 list:/xblk=2 list:/xin=2"

static const struct corruption {
	const char *name, *base, *desc, *rw, *ro, *msg, *ops, *errs;
	void (*fn)(void);
	const char *mopts; /* extra mount options, or NULL */
} table[] = {
	{ "control", "plain", "none: the clean image (1 KiB blocks, no journal, no metadata_csum)",
	  "ok", "ok", "", WALK " " SEEK " " XOK " dirscan:/big=102 fsmap=OK", "0", c_none, NULL },
	{ "control-csum", "csum", "none: the clean image with metadata_csum and dir_index",
	  "ok", "ok", "", WALK " " XOK " fsmap=OK", "0", c_none, NULL },
	{ "root-unallocated", "plain", "root inode 2 has i_links_count 0",
	  "EUCLEAN", "EUCLEAN", "iget: special inode unallocated", "", "1", c_root_unalloc, NULL },
	{ "bbitmap-range", "plain", "group 0 block bitmap number past the end of the fs",
	  "EUCLEAN", "EUCLEAN", "Block bitmap for group 0 not in group", "", "0", c_bb_range, NULL },
	{ "ibitmap-range", "plain", "group 0 inode bitmap number past the end of the fs",
	  "EUCLEAN", "EUCLEAN", "Inode bitmap for group 0 not in group", "", "0", c_ib_range, NULL },
	{ "itable-range", "plain", "group 0 inode table runs past the end of the fs",
	  "EUCLEAN", "EUCLEAN", "Inode table for group 0 not in group", "", "0", c_it_range, NULL },
	{ "bbitmap-sb", "plain", "group 0 block bitmap at the superblock block (ro: "
	  "block_validity refuses the overlap)",
	  "EUCLEAN", "EUCLEAN", "Block bitmap for group 0 overlaps superblock", "", "0", c_bb_sb, NULL },
	/* Without block_validity a ro mount gets past the mount checks and
	 * GETFSMAP meets the runtime bitmap block check of 4.17. */
	{ "bbitmap-sb-nbv", "plain", "as bbitmap-sb, mounted with noblock_validity (ro: "
	  "GETFSMAP meets ext4_read_block_bitmap_nowait: Invalid block bitmap block 1)",
	  "EUCLEAN", "ok", "Block bitmap for group 0 overlaps superblock",
	  WALK " " XOK " fsmap=EUCLEAN", "0/1", c_bb_sb, "noblock_validity" },
	{ "ibitmap-sb", "plain", "group 0 inode bitmap at the superblock block (ro: "
	  "block_validity refuses the overlap)",
	  "EUCLEAN", "EUCLEAN", "Inode bitmap for group 0 overlaps superblock", "", "0", c_ib_sb, NULL },
	{ "ibitmap-sb-nbv", "plain", "as ibitmap-sb, mounted with noblock_validity (a ro mount "
	  "never reads the inode bitmap)",
	  "EUCLEAN", "ok", "Inode bitmap for group 0 overlaps superblock",
	  WALK " " XOK " fsmap=OK", "0", c_ib_sb, "noblock_validity" },
	{ "itable-sb", "plain", "group 0 inode table at the superblock block (ro: root inode "
	  "read fails the runtime inode table check)",
	  "EUCLEAN", "EUCLEAN", "Inode table for group 0 overlaps superblock", "", "0/1", c_it_sb, NULL },
	{ "bbitmap-gdt", "plain", "group 0 block bitmap at the group descriptor block (ro: "
	  "block_validity refuses the overlap)",
	  "EUCLEAN", "EUCLEAN", "Block bitmap for group 0 overlaps block group descriptors",
	  "", "0", c_bb_gdt, NULL },
	{ "ibitmap-gdt", "plain", "group 0 inode bitmap at the group descriptor block (ro: "
	  "block_validity refuses the overlap)",
	  "EUCLEAN", "EUCLEAN", "Inode bitmap for group 0 overlaps block group descriptors",
	  "", "0", c_ib_gdt, NULL },
	{ "itable-gdt", "plain", "group 0 inode table at the group descriptor block (ro: the "
	  "root inode read from it is unallocated)",
	  "EUCLEAN", "EUCLEAN", "Inode table for group 0 overlaps block group descriptors",
	  "", "0/1", c_it_gdt, NULL },
	{ "xblock-magic", "plain", "xattr block of /xblk: h_magic wrong",
	  "ok", "ok", "corrupted xattr block", "stat:/xblk=OK list:/xblk=EUCLEAN "
	  "get:/xblk:user.big1=EUCLEAN get:/xin:user.small=2", "2", c_xb_magic, NULL },
	{ "xblock-csum", "csum", "xattr block of /xblk: one value bit flipped (checksum fails)",
	  "ok", "ok", "invalid checksum", "stat:/xblk=OK list:/xblk=EBADMSG "
	  "get:/xblk:user.big1=EBADMSG get:/xin:user.small=2", "2", c_xb_csum, NULL },
	{ "xblock-name-oob", "plain", "xattr block of /xblk: entry names run past the block",
	  "ok", "ok", "e_name out of bounds", "stat:/xblk=OK list:/xblk=EUCLEAN "
	  "get:/xblk:user.big1=EUCLEAN", "2", c_xb_name_oob, NULL },
	{ "xblock-name-len", "plain", "xattr block of /xblk: NUL inside an entry name",
	  "ok", "ok", "bad e_name length", "stat:/xblk=OK list:/xblk=EUCLEAN "
	  "get:/xblk:user.big1=EUCLEAN", "2", c_xb_name_len, NULL },
	{ "xblock-value-oob", "plain", "xattr block of /xblk: e_value_offs past the block",
	  "ok", "ok", "e_value out of bounds", "stat:/xblk=OK list:/xblk=EUCLEAN "
	  "get:/xblk:user.big1=EUCLEAN", "2", c_xb_value_oob, NULL },
	{ "xblock-value-overlap", "plain", "xattr block of /xblk: a value on top of the entries",
	  "ok", "ok", "overlapping e_value", "stat:/xblk=OK list:/xblk=EUCLEAN "
	  "get:/xblk:user.big1=EUCLEAN", "2", c_xb_value_overlap, NULL },
	{ "xblock-value-size", "plain", "xattr block of /xblk: e_value_size 16 MiB + 1",
	  "ok", "ok", "e_value size too large", "stat:/xblk=OK list:/xblk=EUCLEAN "
	  "get:/xblk:user.big1=EUCLEAN", "2", c_xb_value_size, NULL },
	{ "xinode-magic", "plain", "in-inode xattrs of /xin: magic wrong (area ignored, no error)",
	  "ok", "ok", "", "stat:/xin=OK list:/xin=0 get:/xin:user.small=ENODATA", "0", c_xi_magic, NULL },
	{ "xinode-name-oob", "plain", "in-inode xattrs of /xin: entry names run past the inode",
	  "ok", "ok", "corrupted in-inode xattr: e_name out of bounds",
	  "stat:/xin=EUCLEAN get:/xin:user.small=EUCLEAN stat:/xblk=OK", "2", c_xi_name_oob, NULL },
	{ "xinode-name-len", "plain", "in-inode xattrs of /xin: NUL inside an entry name",
	  "ok", "ok", "corrupted in-inode xattr: bad e_name length",
	  "stat:/xin=EUCLEAN get:/xin:user.small=EUCLEAN stat:/xblk=OK", "2", c_xi_name_len, NULL },
	{ "xinode-value-oob", "plain", "in-inode xattrs of /xin: e_value_offs past the inode",
	  "ok", "ok", "corrupted in-inode xattr: e_value out of bounds",
	  "stat:/xin=EUCLEAN get:/xin:user.small=EUCLEAN stat:/xblk=OK", "2", c_xi_value_oob, NULL },
	{ "xinode-value-overlap", "plain", "in-inode xattrs of /xin: a value on top of the entries",
	  "ok", "ok", "corrupted in-inode xattr: overlapping e_value",
	  "stat:/xin=EUCLEAN get:/xin:user.small=EUCLEAN stat:/xblk=OK", "2", c_xi_value_overlap, NULL },
	{ "xinode-value-size", "plain", "in-inode xattrs of /xin: e_value_size 16 MiB + 1",
	  "ok", "ok", "corrupted in-inode xattr: e_value size too large",
	  "stat:/xin=EUCLEAN get:/xin:user.small=EUCLEAN stat:/xblk=OK", "2", c_xi_value_size, NULL },
	{ "dir-reclen", "plain", "/big, 2nd block: rec_len of an entry not a multiple of 4",
	  "ok", "ok", "rec_len % 4 != 0", "dirscan:/big=72 seekblock:/big:1=39 "
	  "seekblock:/big:2=37 seekdir:/big=OK", "2+", c_dir_reclen, NULL },
};

static const struct corruption *find(const char *name)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	die("no such image");
	return NULL;
}

int main(int argc, char **argv)
{
	const struct corruption *c;
	char path[4096];
	FILE *f;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			printf("%s\n", table[i].name);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "doc")) {
		printf("| image | base | corruption | rw mount | ro mount | kernel log | "
		       "operations and results | ext4_error events | mount options |\n"
		       "|---|---|---|---|---|---|---|---|---|\n");
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
			c = &table[i];
			printf("| `%s` | %s | %s | %s | %s | %s%s%s | %s%s%s | %s | %s |\n", c->name,
			       c->base, c->desc, c->rw, c->ro, *c->msg ? "`" : "", c->msg,
			       *c->msg ? "`" : "", *c->ops ? "`" : "", c->ops,
			       *c->ops ? "`" : "", c->errs, c->mopts ? c->mopts : "");
		}
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "base")) {
		printf("%s\n", find(argv[2])->base);
		return 0;
	}
	if (argc != 5 || strcmp(argv[1], "make")) {
		fprintf(stderr, "usage: ext4corrupt list|doc|base NAME|make NAME IN OUTDIR\n");
		return 2;
	}
	c = find(argv[2]);
	if (strchr(c->desc, '\'') || strchr(c->msg, '\'') || strchr(c->ops, '\''))
		die("a quote in the table would break the .exp file");
	if (img_load(&im, argv[3]))
		die("cannot load the base image");
	c->fn();
	snprintf(path, sizeof(path), "%s/%s.img", argv[4], c->name);
	if (img_save(&im, path))
		die("cannot write the image");
	snprintf(path, sizeof(path), "%s/%s.exp", argv[4], c->name);
	f = fopen(path, "w");
	if (!f)
		die("cannot write the expectations");
	/* Single quotes are safe: no table string contains one. */
	fprintf(f, "DESC='%s'\nRW=%s\nRO=%s\nMSG='%s'\nOPS='%s'\nERRS=%s\nMOPTS='%s'\n", c->desc,
		c->rw, c->ro, c->msg, c->ops, c->errs, c->mopts ? c->mopts : "");
	return fclose(f) ? 2 : 0;
}
