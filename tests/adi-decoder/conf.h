/* SPDX-License-Identifier: GPL-2.0 */
/*
 * adi_decoder_conf: the kernel's ADI instruction classifier against the
 * host CPU.  What the files share.
 *
 *   decoder.c      the kernel's instruction decoder (tools/ copy), built
 *                  for user space
 *   insn_source.c  instruction streams: libc.so.6's functions, which of
 *                  them IFUNC selects on this host, their sibling variants
 *   corpus.c       their memory instructions, classified, in classes
 *   encoding.c     the memory operand: class key, what may not be run,
 *                  the instruction re-encoded onto a known base register
 *   executor.c     runs one instruction class on the CPU and measures its
 *                  access (stub.S: the register-exact trampoline)
 *   selftest.c     instructions with known accesses, to check the executor
 *   disasm.c       mnemonics for the report, from objdump
 *   adi_decoder_conf.c   compares the claims with the CPU, prints TAP
 */
#ifndef ADI_DECODER_CONF_H
#define ADI_DECODER_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asm/insn.h"		/* the kernel tree's tools/ copy, through -I: not a system header */
#include "adi_internal.h"	/* struct adi_mem_op, adi_classify_insn() */

/* ---- decoder.c ---- */

/* Decode one 64-bit instruction at @p (at most @len bytes); 0 or -errno. */
int conf_decode(struct insn *insn, const uint8_t *p, size_t len);

/* ---- insn_source.c ---- */

/* Where a function, or an instruction, comes from. */
enum origin {
	/* what an IFUNC of libc resolves to here (and, for an instruction, reaches) */
	ORIGIN_SELECTED = 1,
	ORIGIN_SIBLING = 2,	/* another variant of such a function */
	ORIGIN_OTHER = 4,	/* the rest of libc's .text */
};

struct func {
	char *name;		/* symbol name, aliases joined by '=' */
	char *ifuncs;		/* for a selected one: the IFUNCs that chose it */
	uint64_t start, size;	/* link-time address in libc */
	unsigned int origin;
};

struct source {
	char path[256];		/* libc.so.6 as loaded */
	char symfile[400];	/* where the names came from */
	const uint8_t *text;	/* .text bytes, mapped from the file */
	uint64_t text_addr, text_size;
	struct func *funcs;
	size_t nfuncs;
	bool have_symtab;	/* local symbols known: variants are named */
};

int source_load_libc(struct source *src, char *err, size_t errlen);

/* ---- encoding.c ---- */

#define KEY_MAX 24

/*
 * An instruction class: everything of the encoding that decides what the
 * instruction does to memory (prefixes that select the operation or the
 * operand size, REX.W, VEX/EVEX L/W/pp/map, EVEX broadcast/mask, opcode,
 * ModRM.reg), and nothing of the addressing form or the registers named.
 */
struct class_key {
	uint8_t len;
	uint8_t b[KEY_MAX];
};

void class_key_of(struct insn *insn, struct class_key *key);
/* "EVEX.512.F3.0F.W1 6f /1 {k}": the class in SDM-like words. */
void class_label(const struct class_key *key, char *buf, size_t n);

/* Why an instruction may not be run here, or NULL. */
const char *encoding_skip_reason(struct insn *insn);
/* Why its access depends on more than the encoding (noted, still run), or NULL. */
const char *encoding_mask_note(struct insn *insn);
/* EVEX with an opmask (aaa, k1-k7) that is not compress/expand. */
bool encoding_is_masked(struct insn *insn);
bool encoding_is_branch(struct insn *insn);	/* call/jmp through memory */

/*
 * Re-encode @insn (raw bytes @raw) with the memory operand (%rsi): ModRM.mod
 * = 0, no SIB, no displacement, REX/VEX/EVEX B and X cleared, fs/gs dropped;
 * opcode, ModRM.reg, other prefixes and the immediate kept.  With @imm_fill
 * >= 0 every immediate byte is set to it.  Returns the length, or -1.
 */
int encoding_rebase(struct insn *insn, const uint8_t *raw, int imm_fill,
		    uint8_t out[16]);
/* ModRM.reg with its REX/VEX/EVEX.R extension. */
unsigned int encoding_modrm_reg(struct insn *insn);
/* VEX.vvvv (a GPR for BMI), or -1. */
int encoding_vvvv(struct insn *insn);

/* ---- executor.c ---- */

enum meas_status {
	MEAS_NOT_RUN,		/* not attempted (see why) */
	MEAS_DONE,
	MEAS_SKIPPED,		/* deliberately not run: why */
	MEAS_NO_CPU,		/* #UD: the CPU lacks it */
	MEAS_FAILED,		/* ran but gave no consistent answer: why */
};

struct measure {
	enum meas_status status;
	bool traps_versioned;	/* #GP with bits 63:60 set, as under ADI */
	bool accesses;		/* faults on a PROT_NONE page */
	bool below;		/* touches bytes below the operand address */
	bool write;		/* faults on a PROT_READ page */
	bool read_seen;		/* its results depend on the memory's old value */
	bool mask_note;		/* size measured with all-ones EVEX masks */
	unsigned int size;	/* bytes from the operand address on */
	/* An EVEX form with an opmask (encoding_is_masked()), also run with: */
	bool mask_measured;
	unsigned int size_mask1;	/* only element 0 selected (0: aligned form, not measured) */
	bool mask0_accesses;	/* no element selected: touches memory all the same */
	uint16_t gpr_changed;	/* GPRs it changed */
	uint16_t gpr_top_changed;	/* ... and those whose bits 63:60 it replaced */
	uint16_t gpr_top_used;	/* GPRs whose bits 63:60 changed a result */
	unsigned int data_runs;	/* runs behind the three fields above */
	char why[120];
};

struct cpu_caps {
	bool xsave, avx, avx512;	/* CPU and OS */
	bool avx512_any;	/* F, BW or VL usable: what glibc looks at */
	uint64_t xcr0;
	unsigned int xsave_size;
};

void executor_caps(struct cpu_caps *caps);
/*
 * Measure the class of @insn (raw bytes @raw) on this CPU, in a child
 * process; fills @m.  @branch: call/jmp through memory (lands back).
 */
void executor_measure(const struct cpu_caps *caps, struct insn *insn,
		      const uint8_t *raw, struct measure *m);

/* ---- corpus.c ---- */

struct inst {
	uint32_t off;		/* from .text */
	uint32_t cls;
	uint64_t sel_mask;	/* the selected functions that run it (corpus.sel) */
	uint8_t origin;		/* enum origin, of every function holding it */
	bool reachable;		/* an address register a version can be in */
};

struct cls {
	struct class_key key;
	uint32_t first;		/* index before sorting */
	uint8_t raw[16], len;	/* the class's example, as found */
	int rep_rank;		/* 2: run by a selected function, 1: reachable */
	int rc;			/* adi_classify_insn() on the example */
	struct adi_mem_op op;
	bool inconsistent;	/* instances of the class classified differently */
	unsigned int n[3];	/* instances: selected, sibling, other */
	unsigned int n_sel_reach, n_reach;	/* ... that a version can reach */
	struct measure m;
	char text[80];		/* objdump's text of the example */
	char label[64];		/* class_label() */
};

#define MAX_SELECTED 64

struct corpus {
	struct source src;
	uint32_t sel[MAX_SELECTED];	/* selected functions: index in src.funcs */
	size_t nsel;
	struct inst *insts;
	size_t ninsts;
	struct cls *classes;	/* sorted by encoding */
	size_t nclasses;
	unsigned long decoded, undecodable;
};

int corpus_build(struct corpus *cp, char *err, size_t errlen);

/* ---- selftest.c ---- */

struct selftest {
	const char *name;
	uint8_t bytes[16], len;
	unsigned int size;	/* 0: no memory access */
	bool read, write;
	uint16_t writes;	/* GPRs it changes */
};

extern const struct selftest selftests[];
extern const size_t nselftests;

/* ---- disasm.c ---- */

/* objdump's text for each of @n instructions (bytes[i], len[i]) into text[i]. */
void disasm_many(size_t n, const uint8_t (*bytes)[16], const uint8_t *len,
		 char (*text)[80]);

#endif
