/* SPDX-License-Identifier: GPL-2.0 */
/*
 * adi_decoder_conf: the kernel's ADI instruction classifier against the
 * host CPU.  What the files share.
 *
 *   decoder.c      the kernel's instruction decoder (tools/ copy), built
 *                  for user space
 *   elf.c          ELF files, mapped read-only: sections, symbols
 *   insn_source.c  instruction streams: the functions of libc.so.6 (which
 *                  of them IFUNC selects on this host, their sibling
 *                  variants) and of the other shared libraries
 *   corpus.c       their memory instructions, classified, in classes
 *   encoding.c     the memory operand: class key, what may not be run,
 *                  the instruction re-encoded onto a known base register
 *   emulate.c      what the kernel's #GP handler emulates, from its own
 *                  decoders (adi_emulate.c, compiled with shim/emulate)
 *   executor.c     runs one instruction class on the CPU and measures its
 *                  access (stub.S: the register-exact trampoline)
 *   selftest.c     instructions with known accesses, to check the executor
 *   disasm.c       mnemonics for the report, from objdump
 *   kernel_sites.c vmlinux's user-access sites and the kernel's handler
 *   tap.c          TAP results, and how accesses and registers are written
 *   adi_decoder_conf.c   compares the claims with the CPU, prints TAP
 */
#ifndef ADI_DECODER_CONF_H
#define ADI_DECODER_CONF_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "asm/insn.h"		/* the kernel tree's tools/ copy, through -I: not a system header */
#include "adi_internal.h"	/* struct adi_mem_op, adi_classify_insn() */

/* ---- decoder.c ---- */

/* Decode one 64-bit instruction at @p (at most @len bytes); 0 or -errno. */
int conf_decode(struct insn *insn, const uint8_t *p, size_t len);

/* ---- elf.c ---- */

struct elf {
	const uint8_t *map;	/* the whole file, read-only */
	size_t len;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
};

/* A symbol of executable code: a function, or a label of assembly code. */
struct elf_fsym {
	uint64_t addr, size;
	const char *name;
	bool func;		/* STT_FUNC, with its size */
};

struct elf_syms {
	struct elf_fsym *syms;	/* by address */
	size_t n;
};

int elf_open(struct elf *e, const char *path);
void elf_close(struct elf *e);
const Elf64_Shdr *elf_section(const struct elf *e, const char *name);
const Elf64_Shdr *elf_section_at(const struct elf *e, uint64_t addr, uint64_t len);
bool elf_debug_file(const struct elf *e, char *out, size_t len);
int elf_function_symbols(const struct elf *e, struct elf_syms *out);
const struct elf_fsym *elf_symbol_at(const struct elf_syms *s, uint64_t addr);

/* ---- insn_source.c ---- */

/*
 * The binaries whose instructions are the corpus: libc first (the one
 * whose IFUNC choices part 2 judges), then the others issue 21 names.
 */
enum bin { BIN_LIBC, BIN_LD, BIN_STDCXX, BIN_PYTHON, BIN_CRYPTO, NBIN };

struct bin_spec {
	const char *soname;	/* as ldconfig -p lists it */
	const char *tag;	/* short, for per-class counts */
	const char *package;	/* the Debian 12 package that has it */
};

extern const struct bin_spec bin_specs[NBIN];

/* Where a function, or an instruction, comes from. */
enum origin {
	/* what an IFUNC of libc resolves to here (and, for an instruction, reaches) */
	ORIGIN_SELECTED = 1,
	ORIGIN_SIBLING = 2,	/* another variant of such a function */
	ORIGIN_OTHER = 4,	/* the rest of .text */
};

struct func {
	char *name;		/* symbol name, aliases joined by '=' */
	char *ifuncs;		/* for a selected one: the IFUNCs that chose it */
	uint64_t start, size;	/* link-time address in the binary */
	unsigned int origin;
};

struct source {
	const char *label;	/* the soname */
	char path[256];		/* the file read */
	char symfile[400];	/* where the function extents came from */
	const uint8_t *text;	/* .text bytes, mapped from the file */
	uint64_t text_addr, text_size;
	uint64_t gap_bytes;	/* .text in no function (padding, or code without symbols) */
	uint64_t gap_code;	/* ... decoded as code reached by direct calls and jumps */
	struct func *funcs;
	size_t nfuncs, funcs_cap;
	bool have_symtab;	/* local symbols known: variants are named */
};

/* libc.so.6 as this process loaded it, with what IFUNC selects here. */
int source_load_libc(struct source *src, char *err, size_t errlen);
/* Another binary of bin_specs, found with ldconfig: no IFUNC selection. */
int source_load_lib(struct source *src, enum bin b, char *err, size_t errlen);

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
/* adi_decode_modrm() takes the operand: 64-bit addressing, not RIP-relative. */
bool encoding_modrm_ok(struct insn *insn);
/* ... through a base, or an index scaled by 1: a version can be there (adi_fixup_modrm()). */
bool encoding_reachable(struct insn *insn);
bool encoding_has_segment(struct insn *insn);	/* fs: or gs: */
/* AMD XOP, which the kernel's decoder does not know: its real length, or 0. */
int encoding_xop(struct insn *insn, const uint8_t *raw, size_t avail, bool *mem,
		 bool *reachable);

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

/* ---- emulate.c ---- */

enum emul_kind { EMUL_NONE, EMUL_MOV, EMUL_ALU, EMUL_VMOV };

/*
 * What the kernel's #GP handler does itself with an instruction, decided
 * by its own decoders (adi_decode_mov/alu/vmov): the access it makes and
 * the general register it writes.
 */
struct emul {
	enum emul_kind kind;
	unsigned int size;	/* bytes it accesses */
	bool read, write;
	int gpr;		/* the GPR it writes (ah..bh: rax..rbx), or -1 */
	bool gpr_top;		/* ... replacing its bits 63:60 (a 4- or 8-byte result) */
};

/*
 * A program's instruction, classified as @op: what adi_emulate_user_access()
 * does with it (ignoring what only the run decides: alignment, an access
 * across a page, a hardware breakpoint).
 */
void emul_user(struct insn *insn, const struct adi_mem_op *op, struct emul *e);
/* A kernel user-access site: what adi_kernel_modrm() does (adi_decode_mov() alone). */
void emul_kernel(struct insn *insn, struct emul *e);
const char *emul_name(enum emul_kind kind);

/* String instructions, which the handler emulates on a path of its own. */
bool emul_is_string(struct insn *insn);
enum string_fate { STR_EMULATED, STR_STEPPED, STR_REFUSED };
/* ... and what adi_fixup_string() does with this one. */
enum string_fate emul_string(struct insn *insn);

/* Does the CPU (@m) do what the handler's emulation @e does?  Problems in @buf, or 0. */
size_t emul_problems(const struct emul *e, const struct measure *m, char *buf, size_t n);

/* ---- corpus.c ---- */

/* An instance of libc (the other binaries only count theirs, per class). */
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
	enum bin rep_bin;	/* where the example is from */
	int rc;			/* adi_classify_insn() on the example */
	struct adi_mem_op op;
	struct emul emul;	/* what the #GP handler emulates (rc 0 only) */
	bool inconsistent;	/* instances of the class classified differently */
	bool emul_inconsistent;	/* ... or emulated differently */
	unsigned int n[3];	/* libc's instances: selected, sibling, other */
	unsigned int n_sel_reach, n_reach;	/* ... that a version can reach */
	unsigned int nbin[NBIN];	/* instances in each binary */
	unsigned int nbin_reach[NBIN];	/* ... that a version can reach */
	struct measure m;
	char text[80];		/* objdump's text of the example */
	char label[64];		/* class_label() */
};

#define MAX_SELECTED 64

/* String instructions of one binary (movs, stos, lods, scas, cmps), by fate. */
struct strings {
	unsigned int n[3];	/* enum string_fate */
};

struct corpus {
	struct source src[NBIN];	/* src[BIN_LIBC]: libc.so.6 */
	bool loaded[NBIN];
	char why[NBIN][300];	/* not loaded: why */
	uint32_t sel[MAX_SELECTED];	/* selected functions: index in src[BIN_LIBC].funcs */
	size_t nsel;
	struct inst *insts;	/* libc's */
	size_t ninsts;
	struct cls *classes;	/* sorted by encoding */
	size_t nclasses;
	unsigned long decoded[NBIN], undecodable[NBIN];
	uint64_t first_undecodable[NBIN];	/* link-time address */
	struct strings strings[NBIN];
};

/* libc and, unless @libc_only, the other binaries; 0, or -1 when libc fails. */
int corpus_build(struct corpus *cp, bool libc_only, char *err, size_t errlen);
/* Does the class touch memory at all (the CPU says; a class not run: yes)? */
bool cls_accesses(const struct cls *c);

/* ---- kernel_sites.c ---- */

/* vmlinux (build/obj, or $ADI_DECODER_VMLINUX): its sites, judged; -1: part 5 skips. */
int ksites_load(void);
void ksites_measure(const struct cpu_caps *caps);
size_t ksites_ntests(void);	/* TAP results ksites_report() prints */
void ksites_report(void);

/* ---- tap.c ---- */

struct tap_counts {
	unsigned int n, pass, fail, skip, todo;
};

extern struct tap_counts tap_counts;
extern const char *const gpr_name[16];

/*
 * One TAP result; with @skip, "ok ... # SKIP @skip"; a failure with @todo
 * is "not ok ... # TODO @todo" (counted, not failed).
 */
__attribute__((format(printf, 4, 5)))
void tap_result(int ok, const char *skip, const char *todo, const char *fmt, ...);
void describe_access(char *buf, size_t n, unsigned int size, bool r, bool w);
void describe_regs(char *buf, size_t n, uint16_t mask);
const char *describe_cpu(const struct measure *m, char *buf, size_t n);

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
