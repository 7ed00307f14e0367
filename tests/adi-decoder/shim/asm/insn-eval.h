/*
 * Shim for <asm/insn-eval.h>: adi_insn.c includes it, but the classifier
 * calls nothing from it (register and address evaluation live in the #GP
 * handler, which this test does not build).
 */
