// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel's #GP handler does itself rather than single-step.
 *
 * The kernel's adi_emulate.c is compiled into this test unchanged (with
 * shim/emulate, Makefile), and its decoders, adi_decode_mov(),
 * adi_decode_alu() and adi_decode_vmov(), say which instructions it
 * emulates, how wide and which way.  The few lines that choose between
 * them live in adi_check.c (adi_emulate_user_access()) and adi_uaccess.c
 * (adi_kernel_modrm(), adi_fixup_string()), which need the whole of the
 * kernel: they are restated here, condition by condition, and each says
 * where it comes from.
 */
#include <stdio.h>
#include <stdlib.h>

#include "conf.h"

/*
 * adi_emulate.c's register moves call this; only the decoders run here.
 * As adi_check.c's: register @nr of @regs, in encoding order.
 */
unsigned long *adi_reg(struct pt_regs *regs, unsigned int nr)
{
	(void)regs;
	(void)nr;
	abort();
}

const char *emul_name(enum emul_kind kind)
{
	static const char *const names[] = {
		[EMUL_NONE] = "stepped", [EMUL_MOV] = "mov", [EMUL_ALU] = "alu",
		[EMUL_VMOV] = "vector mov",
	};

	return names[kind];
}

/*
 * The GPR adi_set_reg() writes for a @size-byte result into ModRM.reg
 * @reg: without REX, 4-7 of a byte operand are ah, ch, dh, bh (bits 15:8
 * of rax..rbx, so bits 63:60 stay); a 4- or 8-byte result replaces the
 * whole register.
 */
static void target_gpr(struct insn *insn, unsigned int reg, unsigned int size,
		       struct emul *e)
{
	if (size == 1 && !insn->rex_prefix.nbytes && reg >= 4 && reg < 8) {
		e->gpr = reg - 4;
		e->gpr_top = false;
		return;
	}
	e->gpr = reg;
	e->gpr_top = size >= 4;
}

static bool from_mov(struct insn *insn, unsigned int reg, struct emul *e)
{
	struct adi_mov k;

	if (!adi_decode_mov(insn, reg, &k))
		return false;
	*e = (struct emul){ .kind = EMUL_MOV, .size = k.size, .read = !k.store,
			    .write = k.store, .gpr = -1 };
	if (!k.store)
		target_gpr(insn, reg, k.reg_size, e);
	return true;
}

static bool from_alu(struct insn *insn, unsigned int reg, struct emul *e)
{
	struct adi_alu a;
	bool no_result = false;

	if (!adi_decode_alu(insn, &a))
		return false;
	no_result = a.op == ADI_ALU_CMP || a.op == ADI_ALU_TEST;
	/* adi_emulate_alu(): reads memory, writes the result to reg or memory. */
	*e = (struct emul){ .kind = EMUL_ALU, .size = a.size, .read = true,
			    .write = !no_result && !a.to_reg, .gpr = -1 };
	if (!no_result && a.to_reg)
		target_gpr(insn, reg, a.size, e);
	return true;
}

static bool from_vmov(struct insn *insn, struct emul *e)
{
	struct adi_vmov v;

	if (!adi_decode_vmov(insn, &v))
		return false;
	*e = (struct emul){ .kind = EMUL_VMOV, .size = v.size, .read = !v.store,
			    .write = v.store, .gpr = -1 };
	return true;
}

/*
 * adi_emulate_user_access() (adi_check.c), after the classifier accepted
 * the instruction: a vector move first, whatever its prefixes (f3 is
 * movdqu's own), if its width is the one checked; then, without lock, rep
 * or repne, a mov or an arithmetic instruction of the width checked.
 * Anything else is stepped.
 */
void emul_user(struct insn *insn, const struct adi_mem_op *op, struct emul *e)
{
	unsigned int reg = encoding_modrm_reg(insn);
	int i;

	*e = (struct emul){ .kind = EMUL_NONE, .gpr = -1 };
	if (from_vmov(insn, e)) {
		if (e->size != op->size)
			*e = (struct emul){ .kind = EMUL_NONE, .gpr = -1 };
		return;
	}
	for (i = 0; i < 4 && insn->prefixes.bytes[i]; i++)
		if (insn->prefixes.bytes[i] == 0xf0 || insn->prefixes.bytes[i] == 0xf2 ||
		    insn->prefixes.bytes[i] == 0xf3)
			return;
	if ((from_mov(insn, reg, e) || from_alu(insn, reg, e)) && e->size != op->size)
		*e = (struct emul){ .kind = EMUL_NONE, .gpr = -1 };
}

/*
 * adi_kernel_modrm() (adi_uaccess.c): a ModRM operand adi_decode_modrm()
 * takes (encoding_modrm_ok()), no fs:/gs:, and a move adi_decode_mov()
 * knows, done with its width: nothing else.
 */
void emul_kernel(struct insn *insn, struct emul *e)
{
	*e = (struct emul){ .kind = EMUL_NONE, .gpr = -1 };
	if (!encoding_modrm_ok(insn) || encoding_has_segment(insn))
		return;
	if (!from_mov(insn, encoding_modrm_reg(insn), e))
		*e = (struct emul){ .kind = EMUL_NONE, .gpr = -1 };
}

bool emul_is_string(struct insn *insn)
{
	uint8_t opc = insn->opcode.bytes[0];

	return insn->opcode.nbytes == 1 && !insn->vex_prefix.nbytes &&
	       opc >= 0xa4 && opc <= 0xaf && opc != 0xa8 && opc != 0xa9;
}

/*
 * adi_fixup_string() (adi_check.c) gives up on 32-bit addressing and on a
 * segment base for the rsi side (fs:/gs: on movs, cmps, lods): a plain
 * SIGSEGV.  adi_scan_string() does not take lods, scas or cmps with both
 * repeat prefixes: those are stepped, one element a #GP.
 */
enum string_fate emul_string(struct insn *insn)
{
	uint8_t opc = insn->opcode.bytes[0];
	bool uses_si = opc <= 0xa7 || opc == 0xac || opc == 0xad;
	bool movs_stos = opc == 0xa4 || opc == 0xa5 || opc == 0xaa || opc == 0xab;
	bool repe = false, repne = false;
	int i;

	for (i = 0; i < 4 && insn->prefixes.bytes[i]; i++) {
		repe |= insn->prefixes.bytes[i] == 0xf3;
		repne |= insn->prefixes.bytes[i] == 0xf2;
	}
	if (insn->addr_bytes != 8 || (uses_si && encoding_has_segment(insn)))
		return STR_REFUSED;
	return !movs_stos && repe && repne ? STR_STEPPED : STR_EMULATED;
}

/*
 * The handler's emulation against the CPU: the same bytes, the same way
 * (a store writes, a load and a compare read, arithmetic into memory
 * both), and the same general register written, with its bits 63:60
 * replaced exactly when the CPU replaces them (a 4- or 8-byte result;
 * ah..bh and 8/16-bit results merge).  rsp is the trampoline's: left out.
 * rsi is the address register of every run (a 32-bit address, bits 63:60
 * clear, its low byte 0): a result into it is not judged.
 */
size_t emul_problems(const struct emul *e, const struct measure *m, char *buf, size_t n)
{
	uint16_t want = e->gpr >= 0 ? 1 << e->gpr : 0, got = m->gpr_changed & ~(1 << 4);
	bool read = !m->write || m->read_seen;
	char a[100], b[100];
	size_t k = 0;

	buf[0] = 0;
	if (m->status != MEAS_DONE)
		return snprintf(buf, n, "not measured: %s", m->why);
	if (!m->accesses)
		return snprintf(buf, n, "the CPU accesses no memory, the emulation does");
	if (m->size != e->size)
		k += snprintf(buf + k, n - k, "%sthe emulation accesses %u B, the CPU %u B",
			      k ? "; " : "", e->size, m->size);
	if (read != e->read || m->write != e->write) {
		describe_access(a, sizeof(a), e->size, e->read, e->write);
		describe_access(b, sizeof(b), m->size, read, m->write);
		k += snprintf(buf + k, n - k, "%sdirection: the emulation does %s, the CPU %s",
			      k ? "; " : "", a, b);
	}
	if (!m->data_runs || e->gpr == 6)
		return k;
	got &= ~(1 << 6);
	if (got != want) {
		describe_regs(a, sizeof(a), want);
		describe_regs(b, sizeof(b), got);
		k += snprintf(buf + k, n - k, "%sthe emulation writes GPR %s, the CPU changed %s",
			      k ? "; " : "", a, b);
	}
	if (e->gpr >= 0 && !!(m->gpr_top_changed & want) != e->gpr_top)
		k += snprintf(buf + k, n - k, "%sbits 63:60 of %s: the emulation %s them, the CPU %s",
			      k ? "; " : "", gpr_name[e->gpr], e->gpr_top ? "replaces" : "keeps",
			      e->gpr_top ? "kept them" : "replaced them");
	return k;
}
