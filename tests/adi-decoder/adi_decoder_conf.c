// SPDX-License-Identifier: GPL-2.0
/*
 * adi_decoder_conf: does the kernel's ADI classifier, adi_classify_insn(),
 * say what the host CPU does?
 *
 * Every instruction with a ModRM memory operand in this host's libc.so.6,
 * ld-linux-x86-64.so.2, libstdc++.so.6, libpython3.11.so and
 * libcrypto.so.3 is decoded with the kernel's decoder and classified by
 * the kernel's adi_insn.c.  Instructions fall into classes (conf.h, struct
 * class_key), shared by the binaries; each class is run on the CPU once
 * (executor.c) and the classifier's size, direction and register effects
 * are compared with what the CPU did, and so is the access of the #GP
 * handler's own emulation (adi_emulate.c's decoders) where it emulates.
 *
 * TAP:
 *   0. the executor on instructions whose accesses the SDM states; one
 *      line per binary read
 *   1. classes the classifier supports: its claim against the CPU
 *   2. classes it refuses that this host's selected glibc string functions
 *      execute through an address that can carry a version: under ADI
 *      each such access is a plain SIGSEGV, so each is "not ok" (README)
 *   3. classes it refuses elsewhere: SKIP, with what the CPU did
 *   4. adirun's GLIBC_TUNABLES setting (libadi.h): with it glibc selects
 *      no function that runs a refused class, and libadi sees its choice
 *   5. vmlinux's user-access sites against adi_handle_kernel_fault()
 *      (kernel_sites.c)
 * then the refused classes by mnemonic, the per-binary coverage table and
 * "N passed, N failed" on a line of its own.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "libadi.h"

static struct corpus corpus;

/* Which selected functions run reachable instances of class @ci, with counts. */
static void where_selected(size_t ci, char *buf, size_t n)
{
	unsigned int count[MAX_SELECTED] = { 0 };
	size_t i, o, k = 0;

	buf[0] = 0;
	for (i = 0; i < corpus.ninsts; i++)
		if (corpus.insts[i].cls == ci && corpus.insts[i].reachable)
			for (o = 0; o < corpus.nsel; o++)
				count[o] += (corpus.insts[i].sel_mask >> o) & 1;
	for (o = 0; o < corpus.nsel; o++)
		if (count[o] && k < n)
			k += snprintf(buf + k, n - k, "%s%s x%u", k ? ", " : "",
				      corpus.src[BIN_LIBC].funcs[corpus.sel[o]].name, count[o]);
}

/* ---- TAP ---- */

static unsigned int notes;

/*
 * A known gap, named by ADI_DECODER_KNOWN_GAP: part 2's failures are then
 * "not ok ... # TODO gap", still printed and counted, but not failures.
 * Unset, they fail.
 */
static const char *known_gap;

#define tap(ok, skip, ...)	tap_result(ok, skip, NULL, __VA_ARGS__)

/* "libc: selected 1, variants 0, rest 12; libstdc++ 4": instances per binary. */
static void counts_str(const struct cls *c, char *buf, size_t n)
{
	size_t k = 0;
	int b;

	buf[0] = 0;
	if (c->nbin[BIN_LIBC])
		k += snprintf(buf, n, "libc: selected %u, variants %u, rest %u", c->n[0], c->n[1],
			      c->n[2]);
	for (b = BIN_LIBC + 1; b < NBIN && k < n; b++)
		if (c->nbin[b])
			k += snprintf(buf + k, n - k, "%s%s %u", k ? "; " : "", bin_specs[b].tag,
				      c->nbin[b]);
}

static unsigned int total_reach(const struct cls *c)
{
	unsigned int t = 0;
	int b;

	for (b = 0; b < NBIN; b++)
		t += c->nbin_reach[b];
	return t;
}

/*
 * The displacement objdump prints for the example ("-0x40(%rsi,...)"):
 * an independent decoder's reading of an EVEX disp8*N.  False when the
 * text has no memory operand.
 */
static bool text_displacement(const char *text, long *disp)
{
	const char *paren = strstr(text, "(%"), *p = paren;

	if (!paren)
		return false;
	while (p > text && (isxdigit((unsigned char)p[-1]) || p[-1] == 'x' || p[-1] == '-'))
		p--;
	*disp = p == paren ? 0 : strtol(p, NULL, 0);
	return true;
}

/* What the classifier claims of EVEX operands: "; k1 selects 1 B elements; disp8*64". */
static void evex_claim_str(const struct adi_mem_op *op, char *buf, size_t n)
{
	size_t k = 0;

	buf[0] = 0;
	if (op->mask_reg && op->mask_elem)
		k += snprintf(buf + k, n - k, ", k%u selects %u B elements", op->mask_reg,
			      op->mask_elem);
	else if (op->mask_reg)
		k += snprintf(buf + k, n - k, ", whole whatever k%u", op->mask_reg);
	if (op->disp8_scale > 1)
		snprintf(buf + k, n - k, ", disp8*%u", op->disp8_scale);
}

/* EVEX: the opmask and disp8*N claims against the CPU and objdump. */
static size_t evex_problems(const struct cls *c, struct insn *insn, char *buf, size_t n)
{
	const struct measure *m = &c->m;
	unsigned int want1 = c->op.mask_elem ? c->op.mask_elem : c->op.size;
	size_t k = 0;
	long disp;

	if (m->mask_measured && !c->op.mask_reg)
		k += snprintf(buf + k, n - k, "; masked, but no mask_reg claimed");
	if (m->mask_measured && m->size_mask1 && m->size_mask1 != want1)
		k += snprintf(buf + k, n - k,
			      "; with element 0 alone the CPU accesses %u B, the check covers %u",
			      m->size_mask1, want1);
	if (m->mask_measured && c->op.mask_elem && m->mask0_accesses)
		k += snprintf(buf + k, n - k,
			      "; with no element selected the CPU accesses memory, the kernel checks none");
	if (insn->vex_prefix.nbytes == 4 && insn->displacement.nbytes == 1 &&
	    text_displacement(c->text, &disp) &&
	    (long)insn->displacement.value * (c->op.disp8_scale ? c->op.disp8_scale : 1) != disp)
		k += snprintf(buf + k, n - k, "; disp8 %d * %u, objdump says %ld",
			      insn->displacement.value, c->op.disp8_scale ? c->op.disp8_scale : 1,
			      disp);
	return k;
}

/* "; emulated (mov)": what the #GP handler does with a supported class. */
static void emulation_str(const struct cls *c, char *buf, size_t n)
{
	char a[64];

	if (c->emul.kind == EMUL_NONE) {
		snprintf(buf, n, "; stepped");
		return;
	}
	describe_access(a, sizeof(a), c->emul.size, c->emul.read, c->emul.write);
	snprintf(buf, n, "; emulated (%s, %s%s%s)", emul_name(c->emul.kind), a,
		 c->emul.gpr >= 0 ? " into " : "", c->emul.gpr >= 0 ? gpr_name[c->emul.gpr] : "");
}

/* The handler's own emulation of the class (adi_emulate.c) against the CPU. */
static size_t emulation_problems(const struct cls *c, char *buf, size_t n)
{
	char ep[300];
	size_t k = 0;

	if (c->emul_inconsistent)
		k += snprintf(buf + k, n - k, "; instances of this class are emulated differently");
	if (c->emul.kind != EMUL_NONE && emul_problems(&c->emul, &c->m, ep, sizeof(ep)))
		k += snprintf(buf + k, n - k, "; emulated (%s): %s", emul_name(c->emul.kind), ep);
	return k;
}

/* Part 1: a class the classifier supports. */
static void check_supported(struct cls *c)
{
	const struct measure *m = &c->m;
	struct insn insn;
	char claim[128], cpu[260], counts[160], problems[900] = "", a[100], b[100];
	char emul[320] = "";
	uint16_t claim_w, claim_r64, keeps, mask = ~((1 << 4) | (1 << 6));
	size_t k = 0;

	conf_decode(&insn, c->raw, c->len);
	claim_w = c->op.implicit_writes | (c->op.writes_reg ? 1 << encoding_modrm_reg(&insn) : 0);
	claim_r64 = c->op.implicit_reads64 | (c->op.reads_reg64 ? 1 << encoding_modrm_reg(&insn) : 0);
	describe_access(claim, sizeof(claim), c->op.size, c->op.read, c->op.write);
	evex_claim_str(&c->op, claim + strlen(claim), sizeof(claim) - strlen(claim));
	describe_cpu(m, cpu, sizeof(cpu));
	counts_str(c, counts, sizeof(counts));

	if (m->status == MEAS_SKIPPED || m->status == MEAS_NO_CPU) {
		tap(1, m->why, "%s (%s) [%s]: classifier says %s, not run", c->label, c->text,
		    counts, claim);
		return;
	}
	if (m->status != MEAS_DONE) {
		tap(0, NULL, "%s (%s) [%s]: classifier says %s, CPU: %s", c->label, c->text,
		    counts, claim, cpu);
		return;
	}
	if (c->inconsistent)
		k += snprintf(problems + k, sizeof(problems) - k,
			      "; instances of this class are classified differently");
	if (!m->accesses)
		k += snprintf(problems + k, sizeof(problems) - k, "; the CPU accesses no memory");
	else {
		bool read = !m->write || m->read_seen;

		if (m->size != c->op.size)
			k += snprintf(problems + k, sizeof(problems) - k, "; size %u, not %u",
				      m->size, c->op.size);
		if (read != c->op.read || m->write != c->op.write)
			k += snprintf(problems + k, sizeof(problems) - k, "; direction");
		if (m->below)
			k += snprintf(problems + k, sizeof(problems) - k,
				      "; it also touches bytes below the address");
		k += evex_problems(c, &insn, problems + k, sizeof(problems) - k);
	}
	/*
	 * After a step the kernel gives the address register its version
	 * back unless the classifier says the instruction replaces that
	 * register's bits 63:60 (a 32- or 64-bit result); an 8- or 16-bit
	 * result merges under them.  So what must match is which registers'
	 * bits 63:60 the CPU replaced, not which it changed at all.
	 */
	if (m->gpr_top_changed & mask & ~claim_w) {
		describe_regs(a, sizeof(a), m->gpr_top_changed & mask & ~claim_w);
		k += snprintf(problems + k, sizeof(problems) - k,
			      "; replaces bits 63:60 of %s, not in writes_reg/implicit_writes", a);
	}
	/*
	 * The other way round: claimed replaced, but the CPU kept bits 63:60
	 * (an 8/16-bit result claimed as a full one).  The step would drop
	 * that register's version.  A register also claimed as a 64-bit input
	 * is exempt: the kernel refuses the step when it is the address
	 * register (a cmov whose condition was false in these runs).
	 */
	keeps = claim_w & ~m->gpr_top_changed & ~claim_r64 & mask;
	if (m->data_runs && keeps) {
		describe_regs(a, sizeof(a), keeps);
		k += snprintf(problems + k, sizeof(problems) - k,
			      "; claims it replaces bits 63:60 of %s, which the CPU kept", a);
	}
	if (m->gpr_top_used & ~claim_r64 & mask) {
		describe_regs(a, sizeof(a), m->gpr_top_used & ~claim_r64 & mask);
		k += snprintf(problems + k, sizeof(problems) - k,
			      "; a result depends on bits 63:60 of %s, not in reads_reg64/implicit_reads64", a);
	}
	k += emulation_problems(c, problems + k, sizeof(problems) - k);
	emulation_str(c, emul, sizeof(emul));
	if (!k) {
		tap(1, NULL, "%s (%s) [%s]: classifier says %s, CPU did %s%s", c->label, c->text,
		    counts, claim, cpu, emul);
		keeps = claim_w & ~m->gpr_top_changed & claim_r64 & mask;
		if (m->data_runs && keeps) {
			describe_regs(a, sizeof(a), keeps);
			printf("#   note: claims it replaces bits 63:60 of %s, which these runs"
			       " kept (also a 64-bit input: refused when it is the address"
			       " register)\n", a);
			notes++;
		}
		return;
	}
	tap(0, NULL, "%s (%s) [%s]: classifier says %s, CPU did %s%s", c->label, c->text,
	    counts, claim, cpu, emul);
	printf("#   problem: %s\n", problems + 2);
	printf("#   example: from %s\n", bin_specs[c->rep_bin].soname);
	describe_regs(a, sizeof(a), claim_w);
	describe_regs(b, sizeof(b), claim_r64);
	printf("#   got:  %s; GPRs written %s; 64-bit GPR inputs %s\n", claim, a, b);
	describe_regs(a, sizeof(a), m->gpr_changed);
	describe_regs(b, sizeof(b), m->gpr_top_used & mask);
	printf("#   want: %s; GPRs written %s; GPRs whose bits 63:60 changed a result %s"
	       " (of all but rsp and the address register, rsi)\n", cpu, a, b);
}

/* Part 2: refused, and run by this host's selected string functions. */
static bool check_refused_selected(size_t ci)
{
	struct cls *c = &corpus.classes[ci];
	char cpu[200], where[1024];

	if (c->rc == 0 || !c->n_sel_reach)
		return false;
	describe_cpu(&c->m, cpu, sizeof(cpu));
	where_selected(ci, where, sizeof(where));
	if (c->m.status == MEAS_DONE && (!c->m.accesses || !c->m.traps_versioned)) {
		tap(1, NULL, "%s (%s): refused, and selected functions run it (%s), but it never traps"
		    " under ADI: CPU %s", c->label, c->text, where, cpu);
		return true;
	}
	tap_result(0, NULL, known_gap, "%s (%s): refused by adi_classify_insn(), but this host's"
		   " selected glibc functions run it %u times: %s", c->label, c->text,
		   c->n_sel_reach, where);
	printf("#   got:  refused (-EOPNOTSUPP): under ADI a plain SIGSEGV\n");
	printf("#   want: %s\n", cpu);
	return true;
}

/* Part 3: refused, not in a selected function of libc. */
static void check_refused_other(struct cls *c)
{
	char cpu[200], counts[160];

	describe_cpu(&c->m, cpu, sizeof(cpu));
	counts_str(c, counts, sizeof(counts));
	if (c->m.status == MEAS_DONE && !c->m.accesses && !c->m.traps_versioned) {
		tap(1, NULL, "%s (%s) [%s]: refused; CPU: %s", c->label, c->text, counts, cpu);
		return;
	}
	tap(1, total_reach(c) ? "refused (a plain SIGSEGV under ADI), not run by a selected glibc"
				" function" : "refused, only RIP-relative here (never versioned)",
	    "%s (%s) [%s]: refused; CPU: %s", c->label, c->text, counts, cpu);
}

/* Part 0: the executor on instructions whose access is known. */
static void check_selftests(const struct cpu_caps *caps)
{
	size_t i;

	for (i = 0; i < nselftests; i++) {
		const struct selftest *t = &selftests[i];
		char want[64], got[200], regs[100];
		struct measure m;
		struct insn insn;
		bool ok;

		if (conf_decode(&insn, t->bytes, t->len) || insn.length != t->len) {
			tap(0, NULL, "executor: %s does not decode", t->name);
			continue;
		}
		executor_measure(caps, &insn, t->bytes, &m);
		if (m.status == MEAS_SKIPPED || m.status == MEAS_NO_CPU) {
			tap(1, m.why, "executor: %s", t->name);
			continue;
		}
		describe_access(want, sizeof(want), t->size, t->read, t->write);
		describe_cpu(&m, got, sizeof(got));
		describe_regs(regs, sizeof(regs), m.gpr_changed);
		if (!t->size)
			ok = m.status == MEAS_DONE && !m.accesses;
		else
			ok = m.status == MEAS_DONE && m.accesses && m.size == t->size &&
			     (!m.write || m.read_seen) == t->read && m.write == t->write &&
			     m.traps_versioned && m.gpr_changed == t->writes;
		tap(ok, NULL, "executor: %s measured as %s, GPRs written %s", t->name, got, regs);
		if (!ok) {
			describe_regs(regs, sizeof(regs), t->writes);
			printf("#   want: %s, GPRs written %s\n", t->size ? want : "no memory access", regs);
		}
	}
}

/* Part 2's failures: refused, run by selected functions, trapping under ADI. */
static bool refused_selected_fails(const struct cls *c)
{
	return c->rc && c->n_sel_reach &&
	       !(c->m.status == MEAS_DONE && (!c->m.accesses || !c->m.traps_versioned));
}

/* "EVEX 0F 6f": the opcode of a class without lengths, prefixes and ModRM.reg. */
static void opcode_str(const struct cls *c, char *buf, size_t n)
{
	static const char *const kind[] = { "", "VEX ", "EVEX " };
	static const char *const maps[] = { "", "0F ", "0F38 ", "0F3A ", "M4 ", "M5 ", "M6 ", "M7 " };

	snprintf(buf, n, "%s%s%02x", kind[c->key.b[0] % 3], maps[c->key.b[4] & 7], c->key.b[5]);
}

/* objdump's mnemonic, past prefixes it prints as words ("lock", "rep", "data16"). */
static void mnemonic_of(const char *text, char *out, size_t n)
{
	static const char *const prefixes[] = {
		"lock", "rep", "repz", "repe", "repnz", "repne", "notrack", "bnd", "data16",
		"addr32", "cs", "ds", "es", "fs", "gs", "ss", "xacquire", "xrelease",
	};
	char word[32];
	size_t i;
	int used;

	snprintf(out, n, "?");
	while (sscanf(text, "%31s%n", word, &used) == 1) {
		bool prefix = !strncmp(word, "rex", 3);

		for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			prefix |= !strcmp(word, prefixes[i]);
		snprintf(out, n, "%s", word);
		if (!prefix)
			return;
		text += used;
	}
}

/* Part 2's failures counted by mnemonic, with their opcodes. */
static void summary_refused_selected(void)
{
	char *done = calloc(corpus.nclasses, 1);
	size_t i, j;

	if (!done)
		return;
	printf("# refused by adi_classify_insn() but executed by this host's selected glibc"
	       " string functions, by mnemonic (instances whose address can carry a version):\n");
	for (i = 0; i < corpus.nclasses; i++) {
		char mn[32], ops[128] = "", op[24];
		unsigned int total = 0, ncls = 0;

		if (done[i] || !refused_selected_fails(&corpus.classes[i]))
			continue;
		mnemonic_of(corpus.classes[i].text, mn, sizeof(mn));
		for (j = i; j < corpus.nclasses; j++) {
			char mn2[32];

			if (done[j] || !refused_selected_fails(&corpus.classes[j]))
				continue;
			mnemonic_of(corpus.classes[j].text, mn2, sizeof(mn2));
			if (strcmp(mn, mn2))
				continue;
			done[j] = 1;
			total += corpus.classes[j].n_sel_reach;
			ncls++;
			opcode_str(&corpus.classes[j], op, sizeof(op));
			if (!strstr(ops, op) && strlen(ops) + strlen(op) + 3 < sizeof(ops))
				snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s",
					 ops[0] ? ", " : "", op);
		}
		printf("#   %-14s %-26s %5u instances, %2u classes\n", mn, ops, total, ncls);
	}
	free(done);
}

/* The numbers the README quotes. */
static void summary_counts(void)
{
	unsigned int sup = 0, ref = 0, ref_sel = 0, ref_sel_insts = 0, nhit = 0;
	uint64_t hit = 0;
	size_t i;

	for (i = 0; i < corpus.nclasses; i++) {
		if (!corpus.classes[i].rc) {
			sup++;
			continue;
		}
		ref++;
		if (refused_selected_fails(&corpus.classes[i])) {
			ref_sel++;
			ref_sel_insts += corpus.classes[i].n_sel_reach;
		}
	}
	for (i = 0; i < corpus.ninsts; i++)
		if (corpus.insts[i].reachable &&
		    refused_selected_fails(&corpus.classes[corpus.insts[i].cls]))
			hit |= corpus.insts[i].sel_mask;
	for (i = 0; i < corpus.nsel; i++)
		nhit += (hit >> i) & 1;
	printf("# classes: %zu (%u supported by adi_classify_insn(), %u refused); libc's instances: %zu\n",
	       corpus.nclasses, sup, ref, corpus.ninsts);
	printf("# refused, trapping under ADI and run by selected functions: %u classes, %u instances,"
	       " in %u of the %zu selected functions:\n", ref_sel, ref_sel_insts, nhit, corpus.nsel);
	for (i = 0; i < corpus.nsel; i++)
		if ((hit >> i) & 1)
			printf("#   %s (%s)\n", corpus.src[BIN_LIBC].funcs[corpus.sel[i]].name,
			       corpus.src[BIN_LIBC].funcs[corpus.sel[i]].ifuncs);
}

/* A refused class that touches memory: under ADI a plain SIGSEGV. */
static bool refused_access(const struct cls *c)
{
	return c->rc && cls_accesses(c);
}

/*
 * Every refused class that touches memory, by mnemonic: its opcodes and
 * its instances in each binary (and, after the slash, those whose
 * address can carry a version).
 */
static void summary_refused_all(void)
{
	char *done = calloc(corpus.nclasses, 1);
	size_t i, j;

	if (!done)
		return;
	printf("# refused by adi_classify_insn(), by mnemonic: instances per binary"
	       " (all/whose address can carry a version):\n");
	for (i = 0; i < corpus.nclasses; i++) {
		char mn[32], ops[128] = "", op[24], counts[300] = "";
		unsigned int n[NBIN] = { 0 }, r[NBIN] = { 0 };
		size_t k = 0;
		int b;

		if (done[i] || !refused_access(&corpus.classes[i]))
			continue;
		mnemonic_of(corpus.classes[i].text, mn, sizeof(mn));
		for (j = i; j < corpus.nclasses; j++) {
			const struct cls *c = &corpus.classes[j];
			char mn2[32];

			if (done[j] || !refused_access(c))
				continue;
			mnemonic_of(c->text, mn2, sizeof(mn2));
			if (strcmp(mn, mn2))
				continue;
			done[j] = 1;
			for (b = 0; b < NBIN; b++) {
				n[b] += c->nbin[b];
				r[b] += c->nbin_reach[b];
			}
			opcode_str(c, op, sizeof(op));
			if (!strstr(ops, op) && strlen(ops) + strlen(op) + 3 < sizeof(ops))
				snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s",
					 ops[0] ? ", " : "", op);
		}
		for (b = 0; b < NBIN && k < sizeof(counts); b++)
			if (n[b])
				k += snprintf(counts + k, sizeof(counts) - k, "%s%s %u/%u",
					      k ? ", " : "", bin_specs[b].tag, n[b], r[b]);
		printf("#   %-12s %-24s %s\n", mn, ops, counts);
	}
	free(done);
}

/* A binary's instructions, by what the #GP handler does with them. */
struct coverage {
	unsigned long mem, classified, emulated, stepped, refused, no_version, no_access;
};

static void coverage_of(int b, struct coverage *cv)
{
	const struct strings *st = &corpus.strings[b];
	size_t i;

	memset(cv, 0, sizeof(*cv));
	for (i = 0; i < corpus.nclasses; i++) {
		const struct cls *c = &corpus.classes[i];
		unsigned int n = c->nbin[b];

		if (!cls_accesses(c)) {
			cv->no_access += n;
			continue;
		}
		cv->mem += n;
		cv->no_version += n - c->nbin_reach[b];
		if (c->rc) {
			cv->refused += n;
			continue;
		}
		cv->classified += n;
		if (c->emul.kind != EMUL_NONE)
			cv->emulated += n;
		else
			cv->stepped += n;
	}
	cv->mem += st->n[STR_EMULATED] + st->n[STR_STEPPED] + st->n[STR_REFUSED];
	cv->emulated += st->n[STR_EMULATED];
	cv->stepped += st->n[STR_STEPPED];
	cv->refused += st->n[STR_REFUSED];
}

/*
 * The per-binary table (README): instructions that access memory through
 * a ModRM operand or as string instructions; classified by
 * adi_classify_insn() (string instructions are not its business);
 * emulated by the handler, stepped, or refused (a plain SIGSEGV under
 * ADI).  emulated + stepped + refused = insns-with-mem.  no-version: of
 * those, RIP-relative or absolute, never versioned.
 */
static void summary_coverage(void)
{
	struct coverage cv, sum = { 0 };
	int b;

	printf("# coverage, per binary (instances; lea, nop and prefetch, which never access"
	       " memory, not counted):\n");
	printf("# %-22s %14s %10s %9s %8s %8s %10s %9s\n", "binary", "insns-with-mem",
	       "classified", "emulated", "stepped", "refused", "no-version", "no-access");
	for (b = 0; b < NBIN; b++) {
		if (!corpus.loaded[b])
			continue;
		coverage_of(b, &cv);
		printf("# %-22s %14lu %10lu %9lu %8lu %8lu %10lu %9lu\n", bin_specs[b].soname,
		       cv.mem, cv.classified, cv.emulated, cv.stepped, cv.refused, cv.no_version,
		       cv.no_access);
		sum.mem += cv.mem;
		sum.classified += cv.classified;
		sum.emulated += cv.emulated;
		sum.stepped += cv.stepped;
		sum.refused += cv.refused;
		sum.no_version += cv.no_version;
		sum.no_access += cv.no_access;
	}
	printf("# %-22s %14lu %10lu %9lu %8lu %8lu %10lu %9lu\n", "all", sum.mem,
	       sum.classified, sum.emulated, sum.stepped, sum.refused, sum.no_version,
	       sum.no_access);
	printf("# of which string instructions (movs, stos, lods, scas, cmps; adi_fixup_string(),"
	       " no classifier), emulated/stepped/refused:");
	for (b = 0; b < NBIN; b++)
		if (corpus.loaded[b])
			printf(" %s %u/%u/%u", bin_specs[b].tag, corpus.strings[b].n[STR_EMULATED],
			       corpus.strings[b].n[STR_STEPPED], corpus.strings[b].n[STR_REFUSED]);
	printf("\n");
}

/*
 * Part 4.  glibc resolves its IFUNCs once, at start-up, from CPUID masked
 * by GLIBC_TUNABLES: each setting is judged in a child of this program
 * started with it ("--steering-child"), which prints what libadi says and
 * how many refused classes the functions glibc selected there run.
 */
#define STEERING_CHILD "--steering-child"
#define STEERING_CHECKS 3

static int steering_child(void)
{
	struct cpu_caps caps;
	char err[300];
	size_t i, refused = 0;

	if (corpus_build(&corpus, true, err, sizeof(err))) {
		printf("error %s\n", err);
		return 2;
	}
	executor_caps(&caps);
	for (i = 0; i < corpus.nclasses; i++) {
		struct cls *c = &corpus.classes[i];
		struct insn insn;

		if (!c->rc || !c->n_sel_reach)
			continue;
		/* As part 2 judges: one that never traps under ADI is harmless. */
		conf_decode(&insn, c->raw, c->len);
		executor_measure(&caps, &insn, c->raw, &c->m);
		refused += refused_selected_fails(c);
	}
	printf("%d %zu\n", adi_libc_uses_avx512(), refused);
	return 0;
}

/* Run the child with GLIBC_TUNABLES=@tunables (NULL: unset); 0 on success. */
static int steering_run(const char *tunables, int *uses, size_t *refused)
{
	char self[4096], line[400] = "";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd[2], status;
	FILE *f;
	pid_t pid;

	if (n < 0 || pipe(fd))
		return -1;
	self[n] = 0;
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		if (tunables)
			setenv("GLIBC_TUNABLES", tunables, 1);
		else
			unsetenv("GLIBC_TUNABLES");
		unsetenv("ADI_TEST_LIBC_AVX512");
		execl(self, self, STEERING_CHILD, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	if (f && !fgets(line, sizeof(line), f))
		line[0] = 0;
	if (f)
		fclose(f);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || sscanf(line, "%d %zu", uses, refused) != 2) {
		printf("# steering child (GLIBC_TUNABLES=%s) failed: %s", tunables ? tunables : "unset",
		       line[0] ? line : "no output\n");
		return -1;
	}
	return 0;
}

static void check_steering(const struct cpu_caps *caps)
{
	const char *adirun = ADI_GLIBC_HWCAPS ADI_GLIBC_HWCAPS_NO_AVX512;
	size_t refused = 0;
	int uses = -1, rc;

	rc = steering_run(NULL, &uses, &refused);
	tap(!rc && uses == caps->avx512_any, NULL, "without GLIBC_TUNABLES, libadi's"
	    " adi_libc_uses_avx512() follows the CPU: got %d, want %d", uses, caps->avx512_any);
	rc = steering_run(adirun, &uses, &refused);
	tap(!rc && uses == 0, NULL, "with adirun's GLIBC_TUNABLES=%s, adi_libc_uses_avx512():"
	    " got %d, want 0", adirun, uses);
	tap(!rc && refused == 0, NULL, "with it, glibc's selected functions run no class"
	    " adi_classify_insn() refuses: got %zu classes, want 0", refused);
}

/* What was read: libc's functions and IFUNC choices, the other binaries. */
static void print_header(const struct cpu_caps *caps)
{
	const struct source *libc = &corpus.src[BIN_LIBC];
	size_t i, nsel = 0, nsib = 0;

	for (i = 0; i < libc->nfuncs; i++) {
		nsel += !!(libc->funcs[i].origin & ORIGIN_SELECTED);
		nsib += !!(libc->funcs[i].origin & ORIGIN_SIBLING);
	}
	printf("# adi_decoder_conf: the kernel's adi_classify_insn() against this CPU\n");
	printf("# libc: %s; functions from %s: %zu, %zu selected by IFUNC here, %zu sibling variants\n",
	       libc->path, libc->symfile, libc->nfuncs, nsel, nsib);
	printf("# CPU: XSAVE %s, AVX %s, AVX-512 (F+BW+VL) %s\n", caps->xsave ? "yes" : "no",
	       caps->avx ? "yes" : "no", caps->avx512 ? "yes" : "no");
	printf("# %zu classes of instructions with a ModRM memory operand, in all binaries\n",
	       corpus.nclasses);
	for (i = 0; i < libc->nfuncs; i++)
		if (libc->funcs[i].origin & ORIGIN_SELECTED)
			printf("# selected: %-40s for %s\n", libc->funcs[i].name, libc->funcs[i].ifuncs);
}

/* Part 0 too: one result per binary, read or not (and why). */
static void check_binaries(void)
{
	int b;

	for (b = 0; b < NBIN; b++) {
		const struct source *src = &corpus.src[b];
		unsigned long mem = 0;
		size_t i;

		if (!corpus.loaded[b]) {
			tap(1, corpus.why[b], "corpus: %s", bin_specs[b].soname);
			continue;
		}
		for (i = 0; i < corpus.nclasses; i++)
			mem += corpus.classes[i].nbin[b];
		tap(corpus.decoded[b] > 0 && !corpus.undecodable[b], NULL, "corpus: %s (%s): %zu"
		    " functions from %s; %lu instructions decoded, %lu bytes undecodable, %lu with"
		    " a ModRM memory operand; %lu of %lu bytes of .text in no function, %lu of"
		    " them code reached by direct calls and jumps",
		    src->label, src->path, src->nfuncs, src->symfile, corpus.decoded[b],
		    corpus.undecodable[b], mem, (unsigned long)src->gap_bytes,
		    (unsigned long)src->text_size, (unsigned long)src->gap_code);
		if (corpus.undecodable[b])
			printf("#   the kernel's decoder fails first at %#lx: what the #GP handler"
			       " cannot decode is a plain SIGSEGV under ADI\n",
			       (unsigned long)corpus.first_undecodable[b]);
	}
}

/* Every class on the CPU, with objdump's text of its example. */
static void measure_classes(const struct cpu_caps *caps)
{
	uint8_t (*bytes)[16] = calloc(corpus.nclasses + 1, sizeof(*bytes));
	uint8_t *lens = calloc(corpus.nclasses + 1, 1);
	char (*texts)[80] = calloc(corpus.nclasses + 1, sizeof(*texts));
	size_t i;

	if (!bytes || !lens || !texts) {
		printf("Bail out! out of memory\n");
		exit(2);
	}
	for (i = 0; i < corpus.nclasses; i++) {
		memcpy(bytes[i], corpus.classes[i].raw, corpus.classes[i].len);
		lens[i] = corpus.classes[i].len;
	}
	disasm_many(corpus.nclasses, (const uint8_t (*)[16])bytes, lens, texts);
	for (i = 0; i < corpus.nclasses; i++) {
		struct insn insn;

		memcpy(corpus.classes[i].text, texts[i], sizeof(corpus.classes[i].text));
		conf_decode(&insn, corpus.classes[i].raw, corpus.classes[i].len);
		executor_measure(caps, &insn, corpus.classes[i].raw, &corpus.classes[i].m);
	}
	free(bytes);
	free(lens);
	free(texts);
}

int main(int argc, char **argv)
{
	struct cpu_caps caps;
	char err[300];
	time_t t0 = time(NULL);
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], STEERING_CHILD))
		return steering_child();
	if (argc != 1) {
		fprintf(stderr, "usage: %s (no arguments; see tests/adi-decoder/README.md)\n", argv[0]);
		return 2;
	}
	executor_caps(&caps);
	if (corpus_build(&corpus, false, err, sizeof(err))) {
		printf("Bail out! %s\n", err);
		return 2;
	}
	print_header(&caps);
	measure_classes(&caps);
	ksites_load();
	ksites_measure(&caps);
	printf("# measured %zu classes on the CPU in %ld s\n", corpus.nclasses, (long)(time(NULL) - t0));

	known_gap = getenv("ADI_DECODER_KNOWN_GAP");
	if (known_gap && !*known_gap)
		known_gap = NULL;
	printf("1..%zu\n", nselftests + NBIN + corpus.nclasses + STEERING_CHECKS + ksites_ntests());
	printf("# part 0: the executor on instructions whose accesses the SDM states; the binaries read\n");
	check_selftests(&caps);
	check_binaries();
	printf("# part 1: classes adi_classify_insn() supports, its claim against the CPU\n");
	for (i = 0; i < corpus.nclasses; i++)
		if (!corpus.classes[i].rc)
			check_supported(&corpus.classes[i]);
	printf("# part 2: refused, but executed by this host's selected glibc string functions\n");
	for (i = 0; i < corpus.nclasses; i++)
		check_refused_selected(i);
	printf("# part 3: refused, elsewhere (the rest of libc, the other binaries)\n");
	for (i = 0; i < corpus.nclasses; i++)
		if (corpus.classes[i].rc && !corpus.classes[i].n_sel_reach)
			check_refused_other(&corpus.classes[i]);
	printf("# part 4: adirun's GLIBC_TUNABLES keeps glibc off what is refused\n");
	check_steering(&caps);
	ksites_report();
	summary_refused_selected();
	summary_refused_all();
	summary_counts();
	summary_coverage();
	printf("# %u skipped, %u notes, %u known failures (TODO), %ld s\n", tap_counts.skip, notes,
	       tap_counts.todo, (long)(time(NULL) - t0));
	printf("%u passed, %u failed\n", tap_counts.pass, tap_counts.fail);
	return tap_counts.fail ? 1 : 0;
}
