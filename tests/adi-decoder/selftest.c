// SPDX-License-Identifier: GPL-2.0
/*
 * Instructions whose access the SDM states, measured before anything else:
 * if the executor got one of these wrong, its verdicts on the binaries'
 * classes would mean nothing.  Each is hand-encoded with its operand at (%rsi).
 */
#include "conf.h"

#define RAX (1 << 0)
#define RCX (1 << 1)
#define RDX (1 << 2)
#define RSP (1 << 4)

const struct selftest selftests[] = {
	{ "mov (%rsi),%eax", { 0x8b, 0x06 }, 2, 4, true, false, RAX },
	{ "mov %eax,(%rsi)", { 0x89, 0x06 }, 2, 4, false, true, 0 },
	{ "add %eax,(%rsi)", { 0x01, 0x06 }, 2, 4, true, true, 0 },
	/* Its result does not depend on the old value: read seen with another immediate. */
	{ "orq $-1,(%rsi)", { 0x48, 0x83, 0x0e, 0xff }, 4, 8, true, true, 0 },
	{ "xchg %ah,(%rsi)", { 0x86, 0x26 }, 2, 1, true, true, RAX },
	{ "divl (%rsi)", { 0xf7, 0x36 }, 2, 4, true, false, RAX | RDX },
	{ "cmpxchg16b (%rsi)", { 0x48, 0x0f, 0xc7, 0x0e }, 4, 16, true, true, RAX | RDX },
	{ "push (%rsi)", { 0xff, 0x36 }, 2, 8, true, false, RSP },
	{ "movaps (%rsi),%xmm0", { 0x0f, 0x28, 0x06 }, 3, 16, true, false, 0 },
	{ "pcmpistri $0,(%rsi),%xmm0", { 0x66, 0x0f, 0x3a, 0x63, 0x06, 0x00 }, 6, 16, true, false, RCX },
	{ "vmovdqu (%rsi),%ymm0", { 0xc5, 0xfe, 0x6f, 0x06 }, 4, 32, true, false, 0 },
	{ "vmovdqu64 (%rsi),%zmm16", { 0x62, 0xe1, 0xfe, 0x48, 0x6f, 0x06 }, 6, 64, true, false, 0 },
	{ "vmovdqa32 %zmm16,(%rsi)", { 0x62, 0xe1, 0x7d, 0x48, 0x7f, 0x06 }, 6, 64, false, true, 0 },
	/* Kinds the other binaries bring (libcrypto, libstdc++, ld.so). */
	{ "movbe (%rsi),%eax", { 0x0f, 0x38, 0xf0, 0x06 }, 4, 4, true, false, RAX },
	{ "crc32b (%rsi),%eax", { 0xf2, 0x0f, 0x38, 0xf0, 0x06 }, 5, 1, true, false, RAX },
	{ "adcx (%rsi),%eax", { 0x66, 0x0f, 0x38, 0xf6, 0x06 }, 5, 4, true, false, RAX },
	{ "aesenc (%rsi),%xmm0", { 0x66, 0x0f, 0x38, 0xdc, 0x06 }, 5, 16, true, false, 0 },
	{ "pclmulqdq $0,(%rsi),%xmm0", { 0x66, 0x0f, 0x3a, 0x44, 0x06, 0x00 }, 6, 16, true, false, 0 },
	{ "sha256rnds2 (%rsi),%xmm1", { 0x0f, 0x38, 0xcb, 0x0e }, 4, 16, true, false, 0 },
	{ "fldt (%rsi)", { 0xdb, 0x2e }, 2, 10, true, false, 0 },
	{ "fstpt (%rsi)", { 0xdb, 0x3e }, 2, 10, false, true, 0 },
	{ "fnstcw (%rsi)", { 0xd9, 0x3e }, 2, 2, false, true, 0 },
	{ "lea (%rsi),%eax", { 0x8d, 0x06 }, 2, 0, false, false, 0 },
	{ "prefetcht0 (%rsi)", { 0x0f, 0x18, 0x0e }, 3, 0, false, false, 0 },
};

const size_t nselftests = sizeof(selftests) / sizeof(selftests[0]);
