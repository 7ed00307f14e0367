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
