/*
 * Shim for <asm/ptrace.h>: struct pt_regs with the fields adi_emulate.c
 * names (the kernel's layout does not matter: emulate.c's adi_reg() is
 * the only other user).
 */
#ifndef ADI_SHIM_ASM_PTRACE_H
#define ADI_SHIM_ASM_PTRACE_H
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#endif
