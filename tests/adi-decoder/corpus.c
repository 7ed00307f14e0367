// SPDX-License-Identifier: GPL-2.0
/*
 * The corpus: every instruction with a ModRM memory operand in libc's
 * functions (insn_source.c), decoded by the kernel's decoder, classified
 * by the kernel's adi_classify_insn(), and grouped into classes.
 *
 * Functions may overlap (aliases, an entry point inside another
 * function): an instruction is counted once, by its address, with the
 * origins of every function that holds it.
 *
 * What a selected function runs is more than its symbol: glibc's variants
 * share tails (wmemset enters memset's body, mempcpy memmove's, and the
 * non-erms memset body is a symbol of its own).  So from each selected
 * entry point, direct jumps and calls are followed too, as long as they
 * stay inside selected or sibling variants (not into __chk_fail and from
 * there into all of libc), and whatever they reach counts as run by that
 * function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define HASH_SIZE (1U << 14)	/* class table: at most half full */

struct builder {
	struct corpus *cp;
	size_t cap_insts, cap_classes;
	int32_t *inst_at;	/* .text offset -> instance index + 1 */
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
	b->hash[i] = ++cp->nclasses;
	return cp->nclasses - 1;
}

/*
 * Can a version reach this operand?  What the kernel's adi_decode_modrm()
 * and adi_fixup_modrm() accept: 64-bit addressing, not RIP-relative, a
 * base or an index register.
 */
static bool operand_reachable(struct insn *insn)
{
	unsigned int mod = X86_MODRM_MOD(insn->modrm.value), rm = X86_MODRM_RM(insn->modrm.value);

	if (insn->addr_bytes != 8)
		return false;
	if (rm == 4) {
		uint8_t sib = insn->sib.value;
		uint8_t rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
		bool x = insn->vex_prefix.nbytes ? !X86_VEX_X(insn->vex_prefix.bytes[1]) :
						   X86_REX_X(rex);
		bool has_index = X86_SIB_INDEX(sib) != 4 || x;

		return has_index || !(X86_SIB_BASE(sib) == 5 && mod == 0);
	}
	return !(rm == 5 && mod == 0);
}

/*
 * Record the memory instruction at @addr: @origin and @sel (bits of
 * corpus.sel) add to what is known of it.
 */
static void add_inst(struct builder *b, uint64_t addr, struct insn *insn,
		     const uint8_t *raw, unsigned int origin, uint64_t sel)
{
	struct corpus *cp = b->cp;
	uint32_t off = addr - cp->src.text_addr;
	struct adi_mem_op op;
	struct inst *in;
	struct cls *c;
	int rc, rank;

	if (b->inst_at[off]) {
		in = &cp->insts[b->inst_at[off] - 1];
	} else {
		if (cp->ninsts == b->cap_insts)
			cp->insts = grow(cp->insts, &b->cap_insts, 65536, sizeof(*cp->insts));
		in = &cp->insts[cp->ninsts];
		*in = (struct inst){ .off = off, .reachable = operand_reachable(insn) };
		in->cls = class_of(b, insn, raw);
		b->inst_at[off] = ++cp->ninsts;
		c = &cp->classes[in->cls];
		rc = adi_classify_insn(insn, &op);
		if (rc != c->rc || (!rc && (op.size != c->op.size || op.read != c->op.read ||
					    op.write != c->op.write)))
			c->inconsistent = true;
	}
	in->origin |= origin;
	in->sel_mask |= sel;
	c = &cp->classes[in->cls];
	/*
	 * The class's example: one that this host's string functions run, else
	 * one whose address can carry a version, else the first.
	 */
	rank = !in->reachable ? 0 : (origin & ORIGIN_SELECTED) ? 2 : 1;
	if (rank > c->rep_rank) {
		memcpy(c->raw, raw, insn->length);
		c->len = insn->length;
		c->rep_rank = rank;
	}
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

static void decode_functions(struct builder *b)
{
	struct corpus *cp = b->cp;
	const uint64_t end = cp->src.text_addr + cp->src.text_size;
	size_t fi;

	for (fi = 0; fi < cp->src.nfuncs; fi++) {
		struct func *f = &cp->src.funcs[fi];
		uint64_t a = f->start;

		while (a < f->start + f->size) {
			const uint8_t *p = cp->src.text + (a - cp->src.text_addr);
			struct insn insn;

			if (conf_decode(&insn, p, end - a)) {
				cp->undecodable++;
				a++;
				continue;
			}
			cp->decoded++;
			if (has_memory_operand(&insn))
				add_inst(b, a, &insn, p, f->origin,
					 f->origin & ORIGIN_SELECTED ? sel_bit(cp, fi) : 0);
			a += insn.length;
		}
	}
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
 * @family: 1 for the bytes of selected and sibling variants, 2 for bytes
 * of no function (the padding a variant falls through into the next:
 * __memmove_chk_* does), 0 for the rest of libc.
 */
static void mark_family(struct corpus *cp, uint8_t *family)
{
	size_t i;
	int pass;

	memset(family, 2, cp->src.text_size);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < cp->src.nfuncs; i++) {
			const struct func *f = &cp->src.funcs[i];
			bool fam = f->origin & (ORIGIN_SELECTED | ORIGIN_SIBLING);

			if (pass == fam)
				memset(family + (f->start - cp->src.text_addr), pass, f->size);
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
	const uint64_t lo = cp->src.text_addr, hi = lo + cp->src.text_size;
	size_t nwork = 0, cap = cp->src.text_size;

	memset(seen, 0, cp->src.text_size);
	work[nwork++] = cp->src.funcs[cp->sel[o]].start;
	while (nwork) {
		uint64_t a = work[--nwork], target;
		bool more = true;

		while (more && a >= lo && a < hi && family[a - lo] && !seen[a - lo]) {
			const uint8_t *p = cp->src.text + (a - lo);
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
	}
	free(moved);
}

int corpus_build(struct corpus *cp, char *err, size_t errlen)
{
	struct builder b = { .cp = cp };
	uint8_t *family, *seen;
	uint64_t *work;
	size_t i;

	memset(cp, 0, sizeof(*cp));
	if (source_load_libc(&cp->src, err, errlen))
		return -1;
	b.inst_at = calloc(cp->src.text_size, sizeof(*b.inst_at));
	b.hash = calloc(HASH_SIZE, sizeof(*b.hash));
	if (!b.inst_at || !b.hash) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < cp->src.nfuncs; i++) {
		if (!(cp->src.funcs[i].origin & ORIGIN_SELECTED))
			continue;
		if (cp->nsel == MAX_SELECTED) {
			snprintf(err, errlen, "more than %d functions selected by IFUNC", MAX_SELECTED);
			return -1;
		}
		cp->sel[cp->nsel++] = i;
	}
	decode_functions(&b);
	family = malloc(cp->src.text_size);
	seen = malloc(cp->src.text_size);
	work = malloc(cp->src.text_size * sizeof(*work));
	if (!family || !seen || !work) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	mark_family(cp, family);
	for (i = 0; i < cp->nsel; i++)
		follow_selected(&b, i, family, seen, work);
	free(family);
	free(seen);
	free(work);
	free(b.inst_at);
	free(b.hash);
	sort_and_count(cp);
	for (i = 0; i < cp->nclasses; i++) {
		struct cls *c = &cp->classes[i];
		struct insn insn;

		/* The claim for the example itself: BMI's vvvv differs per instance. */
		conf_decode(&insn, c->raw, c->len);
		c->rc = adi_classify_insn(&insn, &c->op);
		class_label(&c->key, c->label, sizeof(c->label));
	}
	return 0;
}
