// SPDX-License-Identifier: GPL-2.0
/*
 * The corpus: every instruction with a ModRM memory operand in the
 * functions of libc and the other binaries (insn_source.c), decoded by
 * the kernel's decoder, classified by the kernel's adi_classify_insn(),
 * and grouped into classes shared by all binaries, with each binary's
 * count.  String instructions are counted on the side: the #GP handler
 * emulates them without the classifier.
 *
 * Functions may overlap (aliases, an entry point inside another
 * function): an instruction is counted once, by its address, with the
 * origins of every function that holds it.
 *
 * What a selected function of libc runs is more than its symbol: glibc's
 * variants share tails (wmemset enters memset's body, mempcpy memmove's,
 * and the non-erms memset body is a symbol of its own).  So from each
 * selected entry point, direct jumps and calls are followed too, as long
 * as they stay inside selected or sibling variants (not into __chk_fail
 * and from there into all of libc), and whatever they reach counts as run
 * by that function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define HASH_SIZE (1U << 15)	/* class table: at most half full */

struct builder {
	struct corpus *cp;
	size_t cap_insts, cap_classes;
	int32_t *inst_at;	/* libc: .text offset -> instance index + 1 */
	uint8_t *seen;		/* the binary being decoded: instruction counted */
	uint8_t *in_func;	/* ... its bytes that some function covers */
	uint64_t *work;		/* ... addresses outside them to decode from */
	size_t nwork, cap_work;
	int32_t *hash;		/* class key -> class index + 1 */
};

static void *grow(void *p, size_t *cap, size_t first, size_t elem)
{
	*cap = *cap ? 2 * *cap : first;
	p = realloc(p, *cap * elem);
	if (!p) {
		printf("Bail out! out of memory\n");
		exit(2);
	}
	return p;
}

static uint32_t key_hash(const struct class_key *k)
{
	uint32_t h = 2166136261u;
	int i;

	for (i = 0; i < k->len; i++)
		h = (h ^ k->b[i]) * 16777619u;
	return h;
}

static uint32_t class_of(struct builder *b, struct insn *insn, const uint8_t *raw)
{
	struct corpus *cp = b->cp;
	struct class_key k;
	struct cls *c;
	uint32_t i;

	class_key_of(insn, &k);
	for (i = key_hash(&k) & (HASH_SIZE - 1); b->hash[i]; i = (i + 1) & (HASH_SIZE - 1)) {
		c = &cp->classes[b->hash[i] - 1];
		if (c->key.len == k.len && !memcmp(c->key.b, k.b, k.len))
			return b->hash[i] - 1;
	}
	if (2 * cp->nclasses >= HASH_SIZE) {
		printf("Bail out! more than %u instruction classes\n", HASH_SIZE / 2);
		exit(2);
	}
	if (cp->nclasses == b->cap_classes)
		cp->classes = grow(cp->classes, &b->cap_classes, 1024, sizeof(*cp->classes));
	c = &cp->classes[cp->nclasses];
	memset(c, 0, sizeof(*c));
	c->key = k;
	c->first = cp->nclasses;
	memcpy(c->raw, raw, insn->length);
	c->len = insn->length;
	c->rc = adi_classify_insn(insn, &c->op);
	if (!c->rc)
		emul_user(insn, &c->op, &c->emul);
	b->hash[i] = ++cp->nclasses;
	return cp->nclasses - 1;
}

/* Does this instance classify (and emulate) as its class's example does? */
static void check_consistent(struct cls *c, struct insn *insn)
{
	struct adi_mem_op op;
	struct emul e;
	int rc = adi_classify_insn(insn, &op);

	if (rc != c->rc || (!rc && (op.size != c->op.size || op.read != c->op.read ||
				    op.write != c->op.write)))
		c->inconsistent = true;
	if (!rc && !c->rc) {
		emul_user(insn, &op, &e);
		if (e.kind != c->emul.kind || e.size != c->emul.size)
			c->emul_inconsistent = true;
	}
}

/*
 * The class's example: one that this host's string functions run, else
 * one whose address can carry a version, else the first (libc's first).
 */
static void offer_example(struct cls *c, struct insn *insn, const uint8_t *raw,
			  int rank, enum bin bin)
{
	if (rank > c->rep_rank) {
		memcpy(c->raw, raw, insn->length);
		c->len = insn->length;
		c->rep_rank = rank;
		c->rep_bin = bin;
	}
}

/*
 * Record libc's memory instruction at @addr: @origin and @sel (bits of
 * corpus.sel) add to what is known of it.
 */
static void add_inst(struct builder *b, uint64_t addr, struct insn *insn,
		     const uint8_t *raw, unsigned int origin, uint64_t sel)
{
	struct corpus *cp = b->cp;
	uint32_t off = addr - cp->src[BIN_LIBC].text_addr;
	struct inst *in;
	struct cls *c;

	if (b->inst_at[off]) {
		in = &cp->insts[b->inst_at[off] - 1];
	} else {
		if (cp->ninsts == b->cap_insts)
			cp->insts = grow(cp->insts, &b->cap_insts, 65536, sizeof(*cp->insts));
		in = &cp->insts[cp->ninsts];
		*in = (struct inst){ .off = off, .reachable = encoding_reachable(insn) };
		in->cls = class_of(b, insn, raw);
		b->inst_at[off] = ++cp->ninsts;
		check_consistent(&cp->classes[in->cls], insn);
	}
	in->origin |= origin;
	in->sel_mask |= sel;
	c = &cp->classes[in->cls];
	offer_example(c, insn, raw, !in->reachable ? 0 : (origin & ORIGIN_SELECTED) ? 2 : 1,
		      BIN_LIBC);
}

/* Another binary's memory instruction: counted in its class, once. */
static void count_inst(struct builder *b, enum bin bin, struct insn *insn,
		       const uint8_t *raw, bool reachable)
{
	uint32_t ci = class_of(b, insn, raw);	/* may move cp->classes */
	struct cls *c = &b->cp->classes[ci];

	check_consistent(c, insn);
	c->nbin[bin]++;
	c->nbin_reach[bin] += reachable;
	offer_example(c, insn, raw, reachable, bin);
}

static bool has_memory_operand(struct insn *insn)
{
	return insn->modrm.nbytes && X86_MODRM_MOD(insn->modrm.value) != 3;
}

/* Bit of selected function @fi in inst.sel_mask. */
static uint64_t sel_bit(struct corpus *cp, size_t fi)
{
	size_t o;

	for (o = 0; o < cp->nsel; o++)
		if (cp->sel[o] == fi)
			return 1ULL << o;
	return 0;
}

static void count_string(struct corpus *cp, enum bin bin, struct insn *insn)
{
	cp->strings[bin].n[emul_string(insn)]++;
}

/*
 * Where a decoded instruction goes next: its direct jump/call target in
 * @target (0 if none); returns whether execution may fall through.
 */
static bool control_flow(struct insn *insn, uint64_t addr, uint64_t *target)
{
	uint8_t op0 = insn->opcode.bytes[0], op1 = insn->opcode.bytes[1];
	uint64_t next = addr + insn->length;
	unsigned int reg = X86_MODRM_REG(insn->modrm.value);

	*target = 0;
	if (insn->vex_prefix.nbytes)
		return true;
	if (insn->opcode.nbytes == 1) {
		switch (op0) {
		case 0x70 ... 0x7f: case 0xe0 ... 0xe3:	/* jcc, loop, jrcxz */
		case 0xe8:				/* call */
			*target = next + insn->immediate.value;
			return true;
		case 0xe9: case 0xeb:			/* jmp */
			*target = next + insn->immediate.value;
			return false;
		case 0xc2: case 0xc3: case 0xca: case 0xcb: case 0xcf:	/* ret, iret */
		case 0xcc: case 0xf4:			/* int3, hlt */
			return false;
		case 0xff:				/* jmp *, ljmp *: unknown target */
			return reg != 4 && reg != 5;
		}
		return true;
	}
	if (insn->opcode.nbytes == 2 && op0 == 0x0f) {
		if (op1 >= 0x80 && op1 <= 0x8f) {	/* jcc rel32 */
			*target = next + insn->immediate.value;
			return true;
		}
		return op1 != 0x0b && op1 != 0xb9 && op1 != 0xff;	/* ud2, ud1, ud0 */
	}
	return true;
}

/*
 * The instruction at @a of binary @bin, decoded into @insn, of functions
 * of @origin (libc: run by the selected functions @sel): counted where
 * it belongs.  Returns its length.  An XOP instruction is counted in the
 * class the kernel's decoder gives it (the classifier refuses it) and
 * skipped by its real length.
 */
static unsigned int record(struct builder *b, enum bin bin, unsigned int origin, uint64_t sel,
			   uint64_t a, struct insn *insn, const uint8_t *p, size_t avail)
{
	const struct source *src = &b->cp->src[bin];
	bool first = !b->seen[a - src->text_addr], mem = has_memory_operand(insn);
	bool reachable = mem && encoding_reachable(insn);
	int xop = encoding_xop(insn, p, avail, &mem, &reachable);

	b->seen[a - src->text_addr] = 1;
	if (mem && bin == BIN_LIBC)
		add_inst(b, a, insn, p, origin, sel);
	else if (mem && first)
		count_inst(b, bin, insn, p, reachable);
	else if (first && emul_is_string(insn))
		count_string(b->cp, bin, insn);
	return xop ? (unsigned int)xop : insn->length;
}

/* A direct jump or call from @insn at @a into code of no function: to visit. */
static void note_gap_target(struct builder *b, const struct source *src, struct insn *insn,
			    uint64_t a)
{
	uint64_t target;

	control_flow(insn, a, &target);
	if (!b->in_func || target < src->text_addr || target >= src->text_addr + src->text_size ||
	    b->in_func[target - src->text_addr])
		return;
	if (b->nwork == b->cap_work)
		b->work = grow(b->work, &b->cap_work, 4096, sizeof(*b->work));
	b->work[b->nwork++] = target;
}

/*
 * Every function of binary @bin, instruction by instruction.  An address
 * is counted once however many functions hold it; libc's instances are
 * kept (add_inst() merges their origins), the others' only counted.
 */
static void decode_functions(struct builder *b, enum bin bin)
{
	struct corpus *cp = b->cp;
	const struct source *src = &cp->src[bin];
	const uint64_t end = src->text_addr + src->text_size;
	size_t fi;

	for (fi = 0; fi < src->nfuncs; fi++) {
		const struct func *f = &src->funcs[fi];
		uint64_t a = f->start, sel = f->origin & ORIGIN_SELECTED ? sel_bit(cp, fi) : 0;

		while (a < f->start + f->size) {
			const uint8_t *p = src->text + (a - src->text_addr);
			struct insn insn;

			if (conf_decode(&insn, p, end - a)) {
				if (!cp->undecodable[bin]++)
					cp->first_undecodable[bin] = a;
				a++;
				continue;
			}
			cp->decoded[bin]++;
			note_gap_target(b, src, &insn, a);
			a += record(b, bin, f->origin, sel, a, &insn, p, end - a);
		}
	}
}

/*
 * Code in no function: assembly without unwind entries or exported
 * symbols (OpenSSL's perlasm has much of it, local to the library).  It
 * is decoded from where the functions' direct calls and jumps land, and
 * on from there the same way, up to a ret or jmp; the data between
 * functions (constant tables) is no such target and stays undecoded.
 */
static void follow_gaps(struct builder *b, enum bin bin)
{
	struct corpus *cp = b->cp;
	struct source *src = &cp->src[bin];
	const uint64_t lo = src->text_addr, hi = lo + src->text_size;
	uint64_t target;

	while (b->nwork) {
		uint64_t a = b->work[--b->nwork];
		bool more = true;

		while (more && a >= lo && a < hi && !b->in_func[a - lo] && !b->seen[a - lo]) {
			const uint8_t *p = src->text + (a - lo);
			struct insn insn;
			unsigned int len;

			if (conf_decode(&insn, p, hi - a))
				break;
			cp->decoded[bin]++;
			note_gap_target(b, src, &insn, a);
			more = control_flow(&insn, a, &target);
			len = record(b, bin, ORIGIN_OTHER, 0, a, &insn, p, hi - a);
			src->gap_code += len;
			a += len;
		}
	}
}

/*
 * @family: 1 for the bytes of selected and sibling variants, 2 for bytes
 * of no function (the padding a variant falls through into the next:
 * __memmove_chk_* does), 0 for the rest of libc.
 */
static void mark_family(const struct source *src, uint8_t *family)
{
	size_t i;
	int pass;

	memset(family, 2, src->text_size);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < src->nfuncs; i++) {
			const struct func *f = &src->funcs[i];
			bool fam = f->origin & (ORIGIN_SELECTED | ORIGIN_SIBLING);

			if (pass == fam)
				memset(family + (f->start - src->text_addr), pass, f->size);
		}
	}
}

/*
 * Everything selected function number @o reaches by direct jumps and calls
 * from its entry point, inside the string-function variants (@family).
 */
static void follow_selected(struct builder *b, size_t o, const uint8_t *family,
			    uint8_t *seen, uint64_t *work)
{
	struct corpus *cp = b->cp;
	const struct source *src = &cp->src[BIN_LIBC];
	const uint64_t lo = src->text_addr, hi = lo + src->text_size;
	size_t nwork = 0, cap = src->text_size;

	memset(seen, 0, src->text_size);
	work[nwork++] = src->funcs[cp->sel[o]].start;
	while (nwork) {
		uint64_t a = work[--nwork], target;
		bool more = true;

		while (more && a >= lo && a < hi && family[a - lo] && !seen[a - lo]) {
			const uint8_t *p = src->text + (a - lo);
			struct insn insn;

			seen[a - lo] = 1;
			if (conf_decode(&insn, p, hi - a))
				break;
			if (has_memory_operand(&insn))
				add_inst(b, a, &insn, p, ORIGIN_SELECTED, 1ULL << o);
			more = control_flow(&insn, a, &target);
			if (target >= lo && target < hi && !seen[target - lo] && nwork < cap)
				work[nwork++] = target;
			a += insn.length;
		}
	}
}

/* Report order: legacy, VEX, EVEX; then map, opcode, ModRM.reg, prefixes. */
static int cmp_class(const void *a, const void *b)
{
	static const int order[] = { 0, 4, 5, 6, 2, 1, 3 };	/* see class_key_of() */
	const struct cls *x = a, *y = b;
	int i, n = x->key.len < y->key.len ? x->key.len : y->key.len;

	for (i = 0; i < 7 && i < n; i++)
		if (x->key.b[order[i]] != y->key.b[order[i]])
			return x->key.b[order[i]] - y->key.b[order[i]];
	if (x->key.len != y->key.len)
		return x->key.len - y->key.len;
	return memcmp(x->key.b, y->key.b, x->key.len);
}

static void sort_and_count(struct corpus *cp)
{
	uint32_t *moved = calloc(cp->nclasses, sizeof(*moved));
	size_t i;

	if (!moved) {
		printf("Bail out! out of memory\n");
		exit(2);
	}
	qsort(cp->classes, cp->nclasses, sizeof(*cp->classes), cmp_class);
	for (i = 0; i < cp->nclasses; i++)
		moved[cp->classes[i].first] = i;
	for (i = 0; i < cp->ninsts; i++) {
		struct inst *in = &cp->insts[i];
		struct cls *c;

		in->cls = moved[in->cls];
		c = &cp->classes[in->cls];
		if (in->origin & ORIGIN_SELECTED)
			c->n[0]++;
		else if (in->origin & ORIGIN_SIBLING)
			c->n[1]++;
		else
			c->n[2]++;
		c->n_reach += in->reachable;
		c->n_sel_reach += in->reachable && (in->origin & ORIGIN_SELECTED);
		c->nbin[BIN_LIBC]++;
		c->nbin_reach[BIN_LIBC] += in->reachable;
	}
	free(moved);
}

/* libc: every function, then what the selected ones reach. */
static int build_libc(struct builder *b, char *err, size_t errlen)
{
	struct corpus *cp = b->cp;
	const struct source *src = &cp->src[BIN_LIBC];
	uint8_t *family, *seen;
	uint64_t *work;
	size_t i;

	for (i = 0; i < src->nfuncs; i++) {
		if (!(src->funcs[i].origin & ORIGIN_SELECTED))
			continue;
		if (cp->nsel == MAX_SELECTED) {
			snprintf(err, errlen, "more than %d functions selected by IFUNC", MAX_SELECTED);
			return -1;
		}
		cp->sel[cp->nsel++] = i;
	}
	b->inst_at = calloc(src->text_size, sizeof(*b->inst_at));
	b->seen = calloc(src->text_size, 1);
	family = malloc(src->text_size);
	seen = malloc(src->text_size);
	work = malloc(src->text_size * sizeof(*work));
	if (!b->inst_at || !b->seen || !family || !seen || !work) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	decode_functions(b, BIN_LIBC);
	mark_family(src, family);
	for (i = 0; i < cp->nsel; i++)
		follow_selected(b, i, family, seen, work);
	free(family);
	free(seen);
	free(work);
	free(b->inst_at);
	free(b->seen);
	return 0;
}

static void mark_functions(const struct source *src, uint8_t *in_func)
{
	size_t i;

	for (i = 0; i < src->nfuncs; i++)
		memset(in_func + (src->funcs[i].start - src->text_addr), 1, src->funcs[i].size);
}

/* Another binary: found, read and decoded, or cp->why[bin] says why not. */
static void build_other(struct builder *b, enum bin bin)
{
	struct corpus *cp = b->cp;

	if (source_load_lib(&cp->src[bin], bin, cp->why[bin], sizeof(cp->why[bin])))
		return;
	b->seen = calloc(cp->src[bin].text_size, 1);
	b->in_func = calloc(cp->src[bin].text_size, 1);
	if (!b->seen || !b->in_func) {
		snprintf(cp->why[bin], sizeof(cp->why[bin]), "out of memory");
		return;
	}
	mark_functions(&cp->src[bin], b->in_func);
	decode_functions(b, bin);
	follow_gaps(b, bin);
	free(b->seen);
	free(b->in_func);
	b->in_func = NULL;
	cp->loaded[bin] = true;
}

bool cls_accesses(const struct cls *c)
{
	return !(c->m.status == MEAS_DONE && !c->m.accesses && !c->m.traps_versioned);
}

int corpus_build(struct corpus *cp, bool libc_only, char *err, size_t errlen)
{
	struct builder b = { .cp = cp };
	size_t i;
	int bin;

	memset(cp, 0, sizeof(*cp));
	if (source_load_libc(&cp->src[BIN_LIBC], err, errlen))
		return -1;
	cp->loaded[BIN_LIBC] = true;
	b.hash = calloc(HASH_SIZE, sizeof(*b.hash));
	if (!b.hash || build_libc(&b, err, errlen))
		return -1;
	for (bin = BIN_LIBC + 1; bin < NBIN; bin++) {
		cp->src[bin].label = bin_specs[bin].soname;
		if (libc_only)
			snprintf(cp->why[bin], sizeof(cp->why[bin]), "libc only");
		else
			build_other(&b, bin);
	}
	free(b.hash);
	free(b.work);
	sort_and_count(cp);
	for (i = 0; i < cp->nclasses; i++) {
		struct cls *c = &cp->classes[i];
		struct insn insn;

		/* The claim for the example itself: BMI's vvvv differs per instance. */
		conf_decode(&insn, c->raw, c->len);
		c->rc = adi_classify_insn(&insn, &c->op);
		memset(&c->emul, 0, sizeof(c->emul));
		if (!c->rc)
			emul_user(&insn, &c->op, &c->emul);
		class_label(&c->key, c->label, sizeof(c->label));
	}
	return 0;
}
