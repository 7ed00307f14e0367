// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * READ or WRITE for a report.  The kernel's SIGSEGV for an ADI mismatch
 * says where, not which way, so we look at the faulting instruction: a
 * short table of the opcodes that write to their memory operand (mov
 * stores, read-modify-write ALU ops, string stores, SSE/AVX stores).
 * Anything else is called a read, and an opcode we do not recognise at all
 * is "unknown" rather than a guess.
 */
#include "internal.h"

static bool is_legacy_prefix(uint8_t b)
{
	return b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 ||
	       b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65 || b == 0x66 ||
	       b == 0x67;
}

/* Opcodes of map 0F (legacy or VEX) that store to their r/m operand. */
static bool map0f_stores(uint8_t op)
{
	switch (op) {
	case 0x11: case 0x13: case 0x17: case 0x29: case 0x2b: case 0x7e:
	case 0x7f: case 0xd6: case 0xe7: case 0xc3:	/* movnti */
	case 0xb0: case 0xb1: case 0xc0: case 0xc1:	/* cmpxchg, xadd */
	case 0xab: case 0xb3: case 0xbb:		/* bts, btr, btc */
		return true;
	}
	return op >= 0x90 && op <= 0x9f;		/* setcc */
}

enum am_dir am_insn_direction(const uint8_t *ip, uintptr_t fault,
			      uintptr_t rdi, uintptr_t rsi, unsigned int *size)
{
	bool opsize16 = false, rexw = false;
	int i = 0;
	uint8_t op, reg;

	*size = 0;
	while (i < 14 && is_legacy_prefix(ip[i])) {
		opsize16 |= ip[i] == 0x66;
		i++;
	}
	if ((ip[i] & 0xf0) == 0x40) {
		rexw = ip[i] & 8;
		i++;
	}
	if (ip[i] == 0xc5 || ip[i] == 0xc4) {
		unsigned int map = ip[i] == 0xc5 ? 1 : (ip[i + 1] & 0x1f);

		op = ip[i] == 0xc5 ? ip[i + 2] : ip[i + 3];
		if (map == 1)
			return map0f_stores(op) ? AM_DIR_WRITE : AM_DIR_READ;
		if (map == 3 && (op == 0x14 || op == 0x15 || op == 0x16 ||
				 op == 0x17 || op == 0x19 || op == 0x39 || op == 0x1d))
			return AM_DIR_WRITE;		/* vpextr*, vextract* */
		return AM_DIR_READ;
	}
	op = ip[i];
	reg = (ip[i + 1] >> 3) & 7;
	if (op == 0x0f) {
		op = ip[i + 1];
		if (op == 0x3a)
			return (ip[i + 2] >= 0x14 && ip[i + 2] <= 0x17) ?
				AM_DIR_WRITE : AM_DIR_READ;
		if (op == 0xba)				/* bt/bts/btr/btc imm */
			return ((ip[i + 2] >> 3) & 7) == 4 ? AM_DIR_READ : AM_DIR_WRITE;
		if (op == 0xb6 || op == 0xbe)
			*size = 1;
		if (op == 0xb7 || op == 0xbf)
			*size = 2;
		return map0f_stores(op) ? AM_DIR_WRITE : AM_DIR_READ;
	}
	switch (op) {
	case 0x88: case 0xc6:
		*size = 1;
		return AM_DIR_WRITE;
	case 0x89: case 0xc7:
		*size = rexw ? 8 : opsize16 ? 2 : 4;
		return AM_DIR_WRITE;
	case 0x8a:
		*size = 1;
		return AM_DIR_READ;
	case 0x8b:
		*size = rexw ? 8 : opsize16 ? 2 : 4;
		return AM_DIR_READ;
	case 0xa4: case 0xa5: {	/* movs: whichever side is nearer the fault */
		uintptr_t f = am_strip((void *)fault), d = am_strip((void *)rdi);
		uintptr_t s = am_strip((void *)rsi);
		uintptr_t dd = f >= d ? f - d : UINTPTR_MAX;
		uintptr_t ds = f >= s ? f - s : UINTPTR_MAX;

		return dd <= ds ? AM_DIR_WRITE : AM_DIR_READ;
	}
	case 0xaa: case 0xab:
		return AM_DIR_WRITE;
	case 0x80: case 0x81: case 0x83:
		return reg == 7 ? AM_DIR_READ : AM_DIR_WRITE;
	case 0x86: case 0x87: case 0x8f:
	case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		return AM_DIR_WRITE;
	case 0xf6: case 0xf7:
		return (reg == 2 || reg == 3) ? AM_DIR_WRITE : AM_DIR_READ;
	case 0xfe: case 0xff:
		return reg <= 1 ? AM_DIR_WRITE : AM_DIR_READ;
	case 0x84: case 0x85: case 0xac: case 0xad: case 0xa6: case 0xa7:
	case 0xae: case 0xaf:
		return AM_DIR_READ;
	}
	if (op < 0x40 && (op & 7) < 4) {
		/* ALU: r/m is the destination for xx0/xx1, except cmp. */
		if ((op & 7) < 2)
			return (op & 0xf8) == 0x38 ? AM_DIR_READ : AM_DIR_WRITE;
		return AM_DIR_READ;
	}
	return AM_DIR_UNKNOWN;
}
