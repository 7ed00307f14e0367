// SPDX-License-Identifier: GPL-2.0
/*
 * The memory operand of a decoded instruction: the class it belongs to,
 * whether it may be run here, and the same instruction re-encoded so that
 * its operand is exactly (%rsi).
 */
#include <stdio.h>
#include <string.h>

#include "conf.h"

static bool is_evex(struct insn *insn)
{
	return insn->vex_prefix.nbytes == 4;
}

static bool is_vex(struct insn *insn)
{
	return insn->vex_prefix.nbytes == 2 || insn->vex_prefix.nbytes == 3;
}

/* The opcode map: 1 for 0f, 2 for 0f 38, 3 for 0f 3a, 0 for one byte. */
static unsigned int opcode_map(struct insn *insn)
{
	if (insn->vex_prefix.nbytes)
		return insn_vex_m_bits(insn);
	if (insn->opcode.nbytes == 1)
		return 0;
	if (insn->opcode.nbytes == 2)
		return 1;
	return insn->opcode.bytes[1] == 0x38 ? 2 : 3;
}

/* The opcode byte that follows the map's escape bytes. */
static uint8_t opcode_last(struct insn *insn)
{
	return insn->opcode.bytes[insn->opcode.nbytes - 1];
}

static uint8_t rex_byte(struct insn *insn)
{
	return insn->rex_prefix.nbytes == 1 ? insn->rex_prefix.bytes[0] : 0;
}

void class_key_of(struct insn *insn, struct class_key *key)
{
	uint8_t *b = key->b, flags = 0;
	unsigned int i, n = 0;

	/* Legacy prefixes that select an operation or a size; not segments. */
	for (i = 0; i < 4 && insn->prefixes.bytes[i]; i++) {
		switch (insn->prefixes.bytes[i]) {
		case 0x66: flags |= 1; break;
		case 0x67: flags |= 2; break;
		case 0xf0: flags |= 4; break;
		case 0xf2: flags |= 8; break;
		case 0xf3: flags |= 16; break;
		}
	}
	b[n++] = is_evex(insn) ? 2 : is_vex(insn) ? 1 : 0;
	b[n++] = flags;
	b[n++] = insn_last_prefix_id(insn);
	b[n++] = is_vex(insn) || is_evex(insn) ? !!insn_vex_w_bit(insn) :
						 !!X86_REX_W(rex_byte(insn));
	b[n++] = opcode_map(insn);
	b[n++] = opcode_last(insn);
	b[n++] = X86_MODRM_REG(insn->modrm.value);
	if (is_vex(insn)) {
		b[n++] = !!X86_VEX_L(insn->vex_prefix.bytes[insn->vex_prefix.nbytes - 1]);
	} else if (is_evex(insn)) {
		uint8_t p2 = insn->vex_prefix.bytes[3];

		b[n++] = (p2 >> 5) & 3;		/* L'L: vector length */
		b[n++] = (p2 >> 4) & 1;		/* b: broadcast from memory */
		b[n++] = (p2 & 7) != 0;		/* aaa: masked */
		b[n++] = p2 >> 7;		/* z: zeroing */
	}
	if (opcode_map(insn) == 1 && opcode_last(insn) == 0x0f && !insn->vex_prefix.nbytes)
		b[n++] = insn->immediate.bytes[0];	/* 3DNow!: imm8 is the opcode */
	key->len = n;
}

unsigned int encoding_modrm_reg(struct insn *insn)
{
	unsigned int reg = X86_MODRM_REG(insn->modrm.value);

	if (insn->vex_prefix.nbytes)	/* VEX/EVEX R is stored inverted */
		return reg | (X86_VEX_R(insn->vex_prefix.bytes[1]) ? 0 : 8);
	return reg | (X86_REX_R(rex_byte(insn)) ? 8 : 0);
}

int encoding_vvvv(struct insn *insn)
{
	if (is_vex(insn))
		return ~X86_VEX_V(insn->vex_prefix.bytes[insn->vex_prefix.nbytes - 1]) & 0xf;
	if (is_evex(insn))
		return ~X86_VEX_V(insn->vex_prefix.bytes[2]) & 0xf;
	return -1;
}

/*
 * Does the kernel's adi_decode_modrm() take this operand: a ModRM memory
 * operand with 64-bit addressing, not RIP-relative?
 */
bool encoding_modrm_ok(struct insn *insn)
{
	unsigned int mod = X86_MODRM_MOD(insn->modrm.value), rm = X86_MODRM_RM(insn->modrm.value);

	return insn->modrm.nbytes && mod != 3 && insn->addr_bytes == 8 && !(rm == 5 && mod == 0);
}

/*
 * Can a version reach this operand?  What adi_fixup_modrm() takes on top
 * of that: a base register, or an index register scaled by 1, that the
 * step can take the version out of.
 */
bool encoding_reachable(struct insn *insn)
{
	unsigned int mod = X86_MODRM_MOD(insn->modrm.value), rm = X86_MODRM_RM(insn->modrm.value);
	uint8_t sib = insn->sib.value;
	bool x;

	if (!encoding_modrm_ok(insn))
		return false;
	if (rm != 4)
		return true;
	x = insn->vex_prefix.nbytes ? !X86_VEX_X(insn->vex_prefix.bytes[1]) : X86_REX_X(rex_byte(insn));
	if (!(X86_SIB_BASE(sib) == 5 && mod == 0))
		return true;		/* a base */
	return (X86_SIB_INDEX(sib) != 4 || x) && X86_SIB_SCALE(sib) == 0;
}

/*
 * AMD's XOP (8f with a map of 8 or more; no CPU since Bulldozer has it):
 * the kernel's decoder takes 8f for pop, and its length, and everything
 * after it, would be wrong.  The real length, from the VEX-like layout
 * (8f, two bytes, opcode, ModRM, SIB, displacement; imm8 in map 8, imm32
 * in map 0A), or 0 when @insn is not XOP.  *@mem: a memory operand;
 * *@reachable: one a version can reach (see encoding_reachable()).
 */
int encoding_xop(struct insn *insn, const uint8_t *raw, size_t avail, bool *mem,
		 bool *reachable)
{
	unsigned int at = insn->prefixes.nbytes, n = at + 5, map, mod, rm;
	uint8_t p1, modrm;

	if (insn->opcode.nbytes != 1 || insn->opcode.bytes[0] != 0x8f ||
	    insn->rex_prefix.nbytes || insn->vex_prefix.nbytes || avail < n)
		return 0;
	p1 = raw[at + 1];
	map = p1 & 0x1f;
	if (map < 8)
		return 0;
	modrm = raw[at + 4];
	mod = modrm >> 6;
	rm = modrm & 7;
	*mem = mod != 3;
	*reachable = *mem && insn->addr_bytes == 8 && !(mod == 0 && rm == 5);
	if (*mem && rm == 4 && n < avail) {
		uint8_t sib = raw[n++];
		bool no_base = mod == 0 && (sib & 7) == 5;

		/* A base, or an index (VEX-style inverted X) scaled by 1. */
		*reachable = insn->addr_bytes == 8 &&
			     (!no_base || ((((sib >> 3) & 7) != 4 || !(p1 & 0x40)) && !(sib >> 6)));
		n += no_base ? 4 : 0;
	} else if (*mem && mod == 0 && rm == 5) {
		n += 4;
	}
	n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	n += map == 8 ? 1 : map == 0xa ? 4 : 0;
	return n <= avail ? (int)n : 0;
}

/* fs: or gs: (the kernel's handler takes neither on its own accesses). */
bool encoding_has_segment(struct insn *insn)
{
	int i;

	for (i = 0; i < 4 && insn->prefixes.bytes[i]; i++)
		if (insn->prefixes.bytes[i] == 0x64 || insn->prefixes.bytes[i] == 0x65)
			return true;
	return false;
}

bool encoding_is_branch(struct insn *insn)
{
	unsigned int reg = X86_MODRM_REG(insn->modrm.value);

	return !insn->vex_prefix.nbytes && insn->opcode.nbytes == 1 &&
	       insn->opcode.bytes[0] == 0xff && (reg == 2 || reg == 4);
}

const char *encoding_skip_reason(struct insn *insn)
{
	unsigned int map = opcode_map(insn), reg = X86_MODRM_REG(insn->modrm.value);
	unsigned int pfx = insn_last_prefix_id(insn);
	uint8_t op = opcode_last(insn);

	if (insn->rex_prefix.nbytes == 2)
		return "REX2 (APX): no CPU here has it";
	if (is_evex(insn)) {
		if (map == 2 && ((op >= 0x90 && op <= 0x93) || (op >= 0xa0 && op <= 0xa3) ||
				 op == 0xc6 || op == 0xc7))
			return "gather/scatter: VSIB, one address per element";
		return NULL;
	}
	if (is_vex(insn)) {
		if (map == 2 && op >= 0x90 && op <= 0x93)
			return "gather: VSIB, one address per element";
		if (map == 2 && ((op >= 0x2c && op <= 0x2f) || op == 0x8c || op == 0x8e))
			return "vmaskmov/vpmaskmov: the bytes accessed depend on a vector register's mask";
		if (map == 1 && op == 0xae && reg == 2)
			return "vldmxcsr: faults on reserved bits of the data";
		if (map == 2 && (op == 0x49 || op == 0x4b))
			return "AMX tile load/store";
		return NULL;
	}
	if (map == 0) {
		if (op == 0x8e || (op == 0xff && (reg == 3 || reg == 5)))
			return "segment register load (mov sreg, far call/jmp)";
		if (op == 0x8f && reg)
			return "XOP";
		return NULL;
	}
	if (map == 1) {
		switch (op) {
		case 0x00: case 0x01: case 0x02: case 0x03:
			return "system instruction (descriptor tables, selectors; UMIP)";
		case 0x0f:
			return "3DNow! (no current CPU has it)";
		case 0x0b: case 0xb9: case 0xff:
			return "undefined opcode (ud0/ud1/ud2)";
		case 0x78: case 0x79:
			return pfx ? NULL : "VMX (vmread/vmwrite)";
		case 0xa3: case 0xab: case 0xb3: case 0xbb:
			return "bt/bts/btr/btc with a register: the address depends on its value";
		case 0xb2: case 0xb4: case 0xb5:
			return "segment register load (lss/lfs/lgs)";
		case 0xae:
			if (pfx == INAT_PFX_REPE)
				return "F3 0F AE: ptwrite/shadow stack";
			if (reg == 1 || reg == 2 || reg == 5)
				return "state load (fxrstor/ldmxcsr/xrstor): faults on invalid data";
			if (!pfx && (reg == 4 || reg == 6))
				return "xsave/xsaveopt: the size depends on EDX:EAX and XCR0";
			return NULL;
		case 0xc7:
			return reg == 1 ? NULL :
				"0F C7 group: xsavec/xsaves/xrstors (size from EDX:EAX) or VMX";
		}
		return NULL;
	}
	if (map == 2) {
		if (pfx == INAT_PFX_OPNDSZ && op >= 0x80 && op <= 0x82)
			return "system instruction (invept/invvpid/invpcid)";
		if ((op == 0xf5 && pfx == INAT_PFX_OPNDSZ) || (op == 0xf6 && !pfx))
			return "shadow-stack store (wrss/wruss)";
		if (op == 0xf8)
			return "movdir64b/enqcmd: the destination address is in a register";
	}
	return NULL;
}

/* vpcompress/vpexpand: the bytes accessed are the mask's popcount. */
static bool is_compress_expand(struct insn *insn)
{
	uint8_t op = opcode_last(insn);

	return is_evex(insn) && opcode_map(insn) == 2 &&
	       (op == 0x8a || op == 0x8b || op == 0x62 || op == 0x63 || op == 0x88 || op == 0x89);
}

bool encoding_is_masked(struct insn *insn)
{
	return is_evex(insn) && !is_compress_expand(insn) && (insn->vex_prefix.bytes[3] & 7);
}

const char *encoding_mask_note(struct insn *insn)
{
	if (is_compress_expand(insn))
		return "compress/expand: the bytes accessed are the mask's popcount";
	if (encoding_is_masked(insn))
		return "masked: the bytes accessed depend on the mask";
	return NULL;
}

int encoding_rebase(struct insn *insn, const uint8_t *raw, int imm_fill,
		    uint8_t out[16])
{
	int off_rex = insn->prefixes.nbytes;
	int off_vex = off_rex + insn->rex_prefix.nbytes;
	int off_op = off_vex + insn->vex_prefix.nbytes;
	int off_modrm = off_op + insn->opcode.nbytes;
	int off_imm = off_modrm + insn->modrm.nbytes + insn->sib.nbytes +
		      insn->displacement.nbytes;
	int i, n = 0;

	if (!insn->modrm.nbytes || X86_MODRM_MOD(insn->modrm.value) == 3)
		return -1;
	/* fs:/gs: would add a segment base we do not control: dropped. */
	for (i = 0; i < off_rex; i++)
		if (raw[i] != 0x64 && raw[i] != 0x65)
			out[n++] = raw[i];
	if (insn->rex_prefix.nbytes == 1)
		out[n++] = raw[off_rex] & ~3;	/* REX.X = REX.B = 0 */
	for (i = off_vex; i < off_op; i++)
		out[n++] = raw[i];
	/* VEX3/EVEX byte 1 holds ~X and ~B in bits 6 and 5: set = not extended. */
	if (insn->vex_prefix.nbytes >= 3)
		out[n - insn->vex_prefix.nbytes + 1] |= 0x60;
	for (i = off_op; i < off_modrm; i++)
		out[n++] = raw[i];
	out[n++] = (X86_MODRM_REG(insn->modrm.value) << 3) | 6;	/* (%rsi) */
	for (i = off_imm; i < insn->length; i++)
		out[n++] = imm_fill >= 0 ? (uint8_t)imm_fill : raw[i];
	return n;
}

void class_label(const struct class_key *key, char *buf, size_t n)
{
	static const char *const pp[] = { "NP", "66", "F3", "F2" };
	static const char *const maps[] = { "", "0F", "0F38", "0F3A", "M4", "M5", "M6", "M7" };
	static const char *const vl[] = { "128", "256", "512", "LIG" };
	const uint8_t *k = key->b;	/* laid out by class_key_of() */
	uint8_t map = k[4], op = k[5], reg = k[6];

	if (k[0] == 0)
		snprintf(buf, n, "%s%s%s%s%s%s%s%s%02x /%u", k[1] & 4 ? "lock " : "",
			 k[1] & 2 ? "67 " : "", k[1] & 1 ? "66 " : "", k[1] & 8 ? "F2 " : "",
			 k[1] & 16 ? "F3 " : "", k[3] ? "REX.W " : "", maps[map & 7],
			 map ? " " : "", op, reg);
	else if (k[0] == 1)
		snprintf(buf, n, "VEX.%s.%s.%s.W%u %02x /%u", k[7] ? "256" : "128",
			 pp[k[2] & 3], maps[map & 7], k[3], op, reg);
	else
		snprintf(buf, n, "EVEX.%s.%s.%s.W%u %02x /%u%s%s%s", vl[k[7] & 3],
			 pp[k[2] & 3], maps[map & 7], k[3], op, reg, k[8] ? " {bcst}" : "",
			 k[9] ? " {k}" : "", k[10] ? "{z}" : "");
}
