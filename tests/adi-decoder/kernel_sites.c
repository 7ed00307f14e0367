// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own accesses through user pointers: vmlinux's exception
 * table, read from the file (nothing is loaded into any kernel).
 *
 * adi_handle_kernel_fault() (adi_uaccess.c) takes a #GP in kernel mode at
 * an instruction whose exception-table entry has a user-access fixup
 * (EX_TYPE_UACCESS, EX_TYPE_IMM_REG and so EX_TYPE_EFAULT_REG,
 * EX_TYPE_UCOPY_LEN) and emulates it when it is rep movs or rep stos, or a
 * move adi_decode_mov() knows through a ModRM operand.  Instructions that
 * cannot be checked one access at a time have their range checked before
 * they run and get a plain pointer (adi_check_user_range(): XSAVE and
 * XRSTOR on a signal frame, the futex atomics).  Every such site here is
 * one of: handled (emulated), pre-checked, without a memory operand (a
 * segment register load, a call or jmp that an alternative replaces), or
 * excluded with the reason (kernel_exclusions[]); any other is a failure.
 *
 * An entry's address may hold an alternative (.altinstructions): the
 * instruction the CPU runs is then the original or a replacement, and
 * every one of them is judged.  The moves the handler emulates are run on
 * this CPU, class by class, and adi_decode_mov()'s width and direction
 * compared with what the CPU does.
 *
 * Layouts: struct exception_table_entry { int insn, fixup, data; }, each
 * relative to its own field but data, whose low byte is the type
 * (asm/extable.h, asm/extable_fixup_types.h); struct alt_instr { s32
 * instr_offset, repl_offset; u32 ft_flags; u8 instrlen, replacementlen; }
 * __packed, 14 bytes (asm/alternative.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define EX_TYPE_UACCESS		3
#define EX_TYPE_FAULT_MCE_SAFE	15
#define EX_TYPE_IMM_REG		17
#define EX_TYPE_UCOPY_LEN	19
#define EX_ENTRY_SIZE		12
#define ALT_ENTRY_SIZE		14
#define MAX_FORMS		8

/*
 * From the best to the worst: a site is as good as its worst form (an
 * alternative's call that goes elsewhere makes no access at the site).
 */
enum site_fate {
	SITE_NO_OPERAND,	/* no memory operand: no ADI #GP here */
	SITE_STRING,		/* rep movs/stos: adi_kernel_string() */
	SITE_MOV,		/* adi_kernel_modrm(): adi_decode_mov() */
	SITE_PRECHECKED,	/* adi_check_user_range() before it runs */
	SITE_NO_VERSION,	/* RIP-relative or absolute: no pointer */
	SITE_EXCLUDED,		/* kernel_exclusions[] */
	SITE_NEITHER,
	NR_FATES
};

static const char *const fate_name[NR_FATES] = {
	"no memory operand", "emulated (rep movs/stos)", "emulated (mov)", "pre-checked",
	"no register in the address", "excluded", "neither",
};

/* One instruction a site may run: the original, or an alternative's. */
struct form {
	uint8_t raw[16], len;
	bool replacement;
	enum site_fate fate;
	const char *why;	/* SITE_EXCLUDED: the reason */
	char text[80];		/* objdump */
};

struct site {
	uint64_t addr;
	int data;		/* the entry's data word: type, register, imm */
	char where[128];	/* symbol+offset */
	const char *func;	/* the symbol's name ("" if none) */
	struct form forms[MAX_FORMS];
	int nforms;
	/* Not all it may run could be judged (MAX_FORMS, inside an alternative). */
	const char *unjudged;
	enum site_fate fate;	/* the worst of its forms */
};

/* A class of the moves the handler emulates: run once on the CPU. */
struct kclass {
	struct class_key key;
	uint8_t raw[16], len;
	struct emul emul;
	struct measure m;
	unsigned int sites;
	char text[80];
};

static struct {
	char path[256];
	char why[400];		/* not read: why */
	struct elf elf;
	struct elf_syms syms;
	struct site *sites;
	size_t nsites, nentries, nalts;
	unsigned int mce_xstate_user, mce_xstate_other;
	struct kclass *classes;
	size_t nclasses;
	unsigned int count[NR_FATES];
} ks;

static int32_t rd32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

static bool is_uaccess_type(int data)
{
	int type = data & 0xff;

	return type == EX_TYPE_UACCESS || type == EX_TYPE_IMM_REG || type == EX_TYPE_UCOPY_LEN;
}

static const char *type_name(int data)
{
	switch (data & 0xff) {
	case EX_TYPE_UACCESS:
		return "EX_TYPE_UACCESS";
	case EX_TYPE_UCOPY_LEN:
		return "EX_TYPE_UCOPY_LEN";
	}
	/* IMM_REG's immediate is the top 16 bits, signed: -EFAULT is EFAULT_REG. */
	return (data >> 16) == -14 ? "EX_TYPE_EFAULT_REG" : (data >> 16) == 0 ?
	       "EX_TYPE_ZERO_REG" : "EX_TYPE_IMM_REG";
}

/* @len bytes of the file at link-time address @addr, or NULL. */
static const uint8_t *bytes_at(uint64_t addr, uint64_t len)
{
	const Elf64_Shdr *s = elf_section_at(&ks.elf, addr, len);

	return s ? ks.elf.map + s->sh_offset + (addr - s->sh_addr) : NULL;
}

static void add_form(struct site *s, const uint8_t *p, size_t avail, bool replacement)
{
	struct form *f;

	if (s->nforms == MAX_FORMS) {
		s->unjudged = "more alternatives than this test judges (MAX_FORMS)";
		return;
	}
	f = &s->forms[s->nforms++];
	memset(f, 0, sizeof(*f));
	f->len = avail < 16 ? avail : 16;
	memcpy(f->raw, p, f->len);
	f->replacement = replacement;
}

/* Alternatives patched in at @s->addr: each replacement is a form too. */
static void add_alternatives(struct site *s, const Elf64_Shdr *alt)
{
	size_t i;

	for (i = 0; alt && i < alt->sh_size / ALT_ENTRY_SIZE; i++) {
		const uint8_t *e = ks.elf.map + alt->sh_offset + i * ALT_ENTRY_SIZE;
		uint64_t at = alt->sh_addr + i * ALT_ENTRY_SIZE;
		uint64_t instr = at + rd32(e), repl = at + 4 + rd32(e + 4);
		uint8_t repllen = e[13];
		static const uint8_t nop = 0x90;
		const uint8_t *p;

		/* Inside an alternative: what the replacement has there is unknown. */
		if (s->addr > instr && s->addr < instr + e[12])
			s->unjudged = "inside an alternative, whose replacement is not judged";
		if (instr != s->addr)
			continue;
		if (!repllen) {		/* patched to NOPs */
			add_form(s, &nop, 1, true);
			continue;
		}
		p = bytes_at(repl, repllen);
		if (p)
			add_form(s, p, repllen, true);
	}
}

/* Is the form an xsave/xrstor/fxsave/fxrstor/fnsave/frstor (any width)? */
static bool is_xstate_op(struct insn *insn)
{
	unsigned int reg = X86_MODRM_REG(insn->modrm.value);
	uint8_t op0 = insn->opcode.bytes[0], op1 = insn->opcode.bytes[1];

	if (insn->vex_prefix.nbytes)
		return false;
	if (insn->opcode.nbytes == 1)
		return op0 == 0xdd && (reg == 4 || reg == 6);		/* frstor, fnsave */
	if (insn->opcode.nbytes == 2 && op0 == 0x0f && op1 == 0xae)
		return reg <= 1 || reg == 4 || reg == 5 || reg == 6;	/* fx*, xsave, xrstor, xsaveopt */
	if (insn->opcode.nbytes == 2 && op0 == 0x0f && op1 == 0xc7)
		return reg >= 3 && reg <= 5;				/* xrstors, xsavec, xsaves */
	return false;
}

/* xchg, lock cmpxchg or lock xadd of 4 bytes: the futex atomics. */
static bool is_futex_op(struct insn *insn)
{
	uint8_t op0 = insn->opcode.bytes[0], op1 = insn->opcode.bytes[1];

	if (insn->vex_prefix.nbytes || insn->opnd_bytes != 4)
		return false;
	return (insn->opcode.nbytes == 1 && op0 == 0x87) ||
	       (insn->opcode.nbytes == 2 && op0 == 0x0f && (op1 == 0xb1 || op1 == 0xc1));
}

/*
 * Pre-checked: asm/futex.h's atomics (arch_futex_atomic_op_inuser(),
 * futex_atomic_cmpxchg_inatomic(), inlined into kernel/futex/) and the
 * signal frame's XSAVE/XRSTOR (fpu/signal.c, fpu/xstate.h).  Both call
 * adi_check_user_range() first; matched by the function they are in.
 */
static bool is_prechecked(struct insn *insn, const char *func)
{
	if (is_futex_op(insn) && strstr(func, "futex"))
		return true;
	return is_xstate_op(insn) && (strstr(func, "sigframe") || strstr(func, "fpu_restore_sig"));
}

/*
 * Sites that are neither emulated nor pre-checked, and why no versioned
 * user pointer reaches them: the function (its exact name), the
 * instructions there the reason covers, the reason.
 */
static const struct {
	const char *func;
	bool (*insn)(struct insn *insn);
	const char *why;
} kernel_exclusions[] = {
	{ "save_fpregs_to_fpstate", is_xstate_op,
	  "XSAVE into the task's own fpstate (os_xsave()): a kernel buffer, never a user pointer" },
};

static const char *excluded(struct insn *insn, const char *func)
{
	size_t i;

	for (i = 0; i < sizeof(kernel_exclusions) / sizeof(kernel_exclusions[0]); i++)
		if (!strcmp(func, kernel_exclusions[i].func) && kernel_exclusions[i].insn(insn))
			return kernel_exclusions[i].why;
	return NULL;
}

/* What adi_handle_kernel_fault() does with one form. */
static enum site_fate judge_form(struct form *f, const char *func)
{
	struct insn insn;
	struct emul e;

	if (conf_decode(&insn, f->raw, f->len))
		return SITE_NEITHER;
	if (emul_is_string(&insn)) {
		uint8_t opc = insn.opcode.bytes[0];

		/* adi_kernel_string(): movs and stos only, 64-bit, no fs/gs. */
		if ((opc == 0xa4 || opc == 0xa5 || opc == 0xaa || opc == 0xab) &&
		    insn.addr_bytes == 8 && !encoding_has_segment(&insn))
			return SITE_STRING;
		return SITE_NEITHER;
	}
	if (!insn.modrm.nbytes || X86_MODRM_MOD(insn.modrm.value) == 3)
		return SITE_NO_OPERAND;
	emul_kernel(&insn, &e);
	if (e.kind == EMUL_MOV)
		return SITE_MOV;
	if (is_prechecked(&insn, func))
		return SITE_PRECHECKED;
	/* RIP-relative: no pointer in it (32-bit addressing is neither). */
	if (!encoding_modrm_ok(&insn) && insn.addr_bytes == 8)
		return SITE_NO_VERSION;
	f->why = excluded(&insn, func);
	return f->why ? SITE_EXCLUDED : SITE_NEITHER;
}

/* The class of a handled move, found or added, with one site more. */
static void count_kclass(const struct form *f)
{
	struct class_key k;
	struct insn insn;
	size_t i;

	conf_decode(&insn, f->raw, f->len);
	class_key_of(&insn, &k);
	for (i = 0; i < ks.nclasses; i++)
		if (ks.classes[i].key.len == k.len && !memcmp(ks.classes[i].key.b, k.b, k.len))
			break;
	if (i == ks.nclasses) {
		struct kclass *c;

		ks.classes = realloc(ks.classes, (i + 1) * sizeof(*ks.classes));
		if (!ks.classes) {
			printf("Bail out! out of memory\n");
			exit(2);
		}
		c = &ks.classes[ks.nclasses++];
		memset(c, 0, sizeof(*c));
		c->key = k;
		c->len = insn.length;
		memcpy(c->raw, f->raw, insn.length);
		emul_kernel(&insn, &c->emul);
	}
	ks.classes[i].sites++;
}

static void name_site(struct site *s)
{
	const struct elf_fsym *sym = elf_symbol_at(&ks.syms, s->addr);

	s->func = sym ? sym->name : "";
	if (sym)
		snprintf(s->where, sizeof(s->where), "%s+%#lx", sym->name,
			 (unsigned long)(s->addr - sym->addr));
	else
		snprintf(s->where, sizeof(s->where), "%#lx", (unsigned long)s->addr);
}

/* One exception-table entry of a user-access type: its forms, judged. */
static void add_site(uint64_t addr, int data, const Elf64_Shdr *alt)
{
	struct site *s = &ks.sites[ks.nsites];
	const uint8_t *p = bytes_at(addr, 1);
	const Elf64_Shdr *sec = elf_section_at(&ks.elf, addr, 1);
	int i;

	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->data = data;
	name_site(s);
	if (p)
		add_form(s, p, sec->sh_addr + sec->sh_size - addr, false);
	add_alternatives(s, alt);
	s->fate = s->nforms ? SITE_NO_OPERAND : SITE_NEITHER;
	for (i = 0; i < s->nforms; i++) {
		struct form *f = &s->forms[i];

		f->fate = judge_form(f, s->func);
		if (f->fate == SITE_MOV)
			count_kclass(f);
		/* A site is as good as its worst form (the enum is in that order). */
		if (f->fate > s->fate)
			s->fate = f->fate;
	}
	if (s->unjudged)
		s->fate = SITE_NEITHER;
	ks.count[s->fate]++;
	ks.nsites++;
}

/*
 * Entries of EX_TYPE_FAULT_MCE_SAFE, which the handler does not take: the
 * XSAVE family there is either the signal frame's (pre-checked) or the
 * kernel's own buffers.  Counted for the report.
 */
static void count_mce_safe(uint64_t addr, int data)
{
	const uint8_t *p = bytes_at(addr, 1);
	const Elf64_Shdr *sec = elf_section_at(&ks.elf, addr, 1);
	const struct elf_fsym *sym;
	struct insn insn;

	if ((data & 0xff) != EX_TYPE_FAULT_MCE_SAFE || !p ||
	    conf_decode(&insn, p, sec->sh_addr + sec->sh_size - addr) || !is_xstate_op(&insn))
		return;
	sym = elf_symbol_at(&ks.syms, addr);
	if (sym && (strstr(sym->name, "sigframe") || strstr(sym->name, "fpu_restore_sig")))
		ks.mce_xstate_user++;
	else
		ks.mce_xstate_other++;
}

int ksites_load(void)
{
	const char *path = getenv("ADI_DECODER_VMLINUX");
	const Elf64_Shdr *ex, *alt;
	size_t i;

	snprintf(ks.path, sizeof(ks.path), "%s", path && *path ? path : ADI_VMLINUX);
	if (elf_open(&ks.elf, ks.path)) {
		snprintf(ks.why, sizeof(ks.why), "no vmlinux at %s (make kernel builds it)", ks.path);
		return -1;
	}
	ex = elf_section(&ks.elf, "__ex_table");
	alt = elf_section(&ks.elf, ".altinstructions");
	if (!ex || ex->sh_offset + ex->sh_size > ks.elf.len || elf_function_symbols(&ks.elf, &ks.syms)) {
		snprintf(ks.why, sizeof(ks.why), "%s: no __ex_table or no symbols", ks.path);
		return -1;
	}
	if (alt && alt->sh_offset + alt->sh_size > ks.elf.len)
		alt = NULL;
	ks.nalts = alt ? alt->sh_size / ALT_ENTRY_SIZE : 0;
	ks.nentries = ex->sh_size / EX_ENTRY_SIZE;
	ks.sites = calloc(ks.nentries, sizeof(*ks.sites));
	if (!ks.sites) {
		snprintf(ks.why, sizeof(ks.why), "out of memory");
		return -1;
	}
	for (i = 0; i < ks.nentries; i++) {
		const uint8_t *e = ks.elf.map + ex->sh_offset + i * EX_ENTRY_SIZE;
		uint64_t at = ex->sh_addr + i * EX_ENTRY_SIZE;
		int data = rd32(e + 8);

		if (is_uaccess_type(data))
			add_site(at + rd32(e), data, alt);
		else
			count_mce_safe(at + rd32(e), data);
	}
	return 0;
}

/* ---- on the CPU, and the report ---- */

/* objdump's text of every form and class example. */
static void disassemble(void)
{
	size_t n = 0, i, k = 0;
	uint8_t (*bytes)[16];
	uint8_t *lens;
	char (*texts)[80];
	int j;

	for (i = 0; i < ks.nsites; i++)
		n += ks.sites[i].nforms;
	n += ks.nclasses;
	bytes = calloc(n + 1, sizeof(*bytes));
	lens = calloc(n + 1, 1);
	texts = calloc(n + 1, sizeof(*texts));
	if (!bytes || !lens || !texts) {
		printf("Bail out! out of memory\n");
		exit(2);
	}
	for (i = 0; i < ks.nsites; i++)
		for (j = 0; j < ks.sites[i].nforms; j++, k++) {
			struct form *f = &ks.sites[i].forms[j];
			struct insn insn;

			/* One instruction each, however many bytes follow it. */
			lens[k] = conf_decode(&insn, f->raw, f->len) ? f->len : insn.length;
			memcpy(bytes[k], f->raw, lens[k]);
		}
	for (i = 0; i < ks.nclasses; i++, k++) {
		memcpy(bytes[k], ks.classes[i].raw, ks.classes[i].len);
		lens[k] = ks.classes[i].len;
	}
	disasm_many(n, (const uint8_t (*)[16])bytes, lens, texts);
	for (i = 0, k = 0; i < ks.nsites; i++)
		for (j = 0; j < ks.sites[i].nforms; j++, k++)
			memcpy(ks.sites[i].forms[j].text, texts[k], sizeof(texts[k]));
	for (i = 0; i < ks.nclasses; i++, k++)
		memcpy(ks.classes[i].text, texts[k], sizeof(texts[k]));
	free(bytes);
	free(lens);
	free(texts);
}

void ksites_measure(const struct cpu_caps *caps)
{
	size_t i;

	if (ks.why[0])
		return;
	disassemble();
	for (i = 0; i < ks.nclasses; i++) {
		struct insn insn;

		conf_decode(&insn, ks.classes[i].raw, ks.classes[i].len);
		executor_measure(caps, &insn, ks.classes[i].raw, &ks.classes[i].m);
	}
}

size_t ksites_ntests(void)
{
	if (ks.why[0])
		return 1;
	return ks.nclasses + (ks.count[SITE_NEITHER] ? ks.count[SITE_NEITHER] : 1);
}

/* "mov %r12w,0x10(%rax) / rep movsb (alternative)": every form of a site. */
static void forms_str(const struct site *s, char *buf, size_t n)
{
	size_t k = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < s->nforms && k < n; i++) {
		const struct form *f = &s->forms[i];
		struct insn insn;

		k += snprintf(buf + k, n - k, "%s%s", i ? " / " : "", f->text);
		/* objdump does not know it (lkgs): the bytes say what it is. */
		if (strstr(f->text, "(bad)") && !conf_decode(&insn, f->raw, f->len) && k < n)
			k += snprintf(buf + k, n - k, " [%02x %02x %02x %02x%s]", f->raw[0],
				      f->raw[1], f->raw[2], f->raw[3], insn.length > 4 ? " ..." : "");
		if (f->replacement && k < n)
			k += snprintf(buf + k, n - k, " (alternative)");
	}
}

static void report_class(const struct kclass *c)
{
	char claim[64], problems[300], cpu[260];

	describe_access(claim, sizeof(claim), c->emul.size, c->emul.read, c->emul.write);
	describe_cpu(&c->m, cpu, sizeof(cpu));
	if (c->m.status == MEAS_SKIPPED || c->m.status == MEAS_NO_CPU) {
		tap_result(1, c->m.why, NULL, "vmlinux: the handler emulates %s [%u sites] as %s,"
			   " not run", c->text, c->sites, claim);
		return;
	}
	if (!emul_problems(&c->emul, &c->m, problems, sizeof(problems))) {
		tap_result(1, NULL, NULL, "vmlinux: the handler emulates %s [%u sites] as %s,"
			   " CPU did %s", c->text, c->sites, claim, cpu);
		return;
	}
	tap_result(0, NULL, NULL, "vmlinux: the handler emulates %s [%u sites] as %s, CPU did %s",
		   c->text, c->sites, claim, cpu);
	printf("#   problem: %s\n", problems);
}

/* The sites of one fate as comment lines (neither: failures too). */
static void report_sites(enum site_fate fate)
{
	char forms[400];
	size_t i;

	for (i = 0; i < ks.nsites; i++) {
		const struct site *s = &ks.sites[i];

		if (s->fate != fate)
			continue;
		forms_str(s, forms, sizeof(forms));
		if (fate == SITE_NEITHER)
			tap_result(0, NULL, NULL, "vmlinux: %s (%s) [%s]: neither emulated by"
				   " adi_handle_kernel_fault() nor pre-checked%s%s", s->where, forms,
				   type_name(s->data), s->unjudged ? ": " : "",
				   s->unjudged ? s->unjudged : "");
		else
			printf("#   %-34s %-44s %s%s%s\n", s->where, forms, type_name(s->data),
			       fate == SITE_EXCLUDED ? ": " : "",
			       fate == SITE_EXCLUDED ? s->forms[0].why : "");
	}
}

void ksites_report(void)
{
	size_t i;
	int f;

	printf("# part 5: vmlinux's user-access sites against adi_handle_kernel_fault()\n");
	if (ks.why[0]) {
		tap_result(1, ks.why, NULL, "vmlinux: the kernel's user-access sites");
		return;
	}
	printf("# vmlinux: %s; __ex_table: %zu entries, %zu of types UACCESS, IMM_REG"
	       " (EFAULT_REG, ZERO_REG), UCOPY_LEN; %zu alternatives\n", ks.path, ks.nentries,
	       ks.nsites, ks.nalts);
	printf("# sites:");
	for (f = 0; f < NR_FATES; f++)
		printf("%s %u %s", f ? "," : "", ks.count[f], fate_name[f]);
	printf("\n");
	printf("# not of those types (the handler does not take them): %u XSAVE-family"
	       " EX_TYPE_FAULT_MCE_SAFE sites in the signal-frame functions (pre-checked),"
	       " %u on kernel buffers\n", ks.mce_xstate_user, ks.mce_xstate_other);
	for (f = 0; f < SITE_NEITHER; f++) {
		if (!ks.count[f] || f == SITE_STRING || f == SITE_MOV)
			continue;
		printf("# %s:\n", fate_name[f]);
		report_sites(f);
	}
	for (i = 0; i < ks.nclasses; i++)
		report_class(&ks.classes[i]);
	if (ks.count[SITE_NEITHER])
		report_sites(SITE_NEITHER);
	else
		tap_result(1, NULL, NULL, "vmlinux: all %zu user-access sites are emulated,"
			   " pre-checked, without a memory operand or excluded with a reason",
			   ks.nsites);
}
