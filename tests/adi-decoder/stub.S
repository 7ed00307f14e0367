/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stub_run(): run one instruction with every register the test chose.
 *
 * XRSTOR loads x87/SSE/AVX/AVX-512 state and the opmasks from one image,
 * then all GPRs but rsp and the flags come from stub_ctx, and the
 * trampoline jumps (not calls: the instruction sees the stack as it is)
 * to the code page.  The code page ends in "jmp *stub_back", so control
 * comes back even when the instruction loaded rsp; the trampoline then
 * saves every GPR and the flags into stub_ctx, its own rsp back from
 * stub_ctx, and the vector state with XSAVE.  Only RIP-relative accesses
 * to stub_ctx are used in between, so no register is needed to find it.
 * A fault in the instruction never returns here: the signal handler
 * siglongjmp()s out.
 */
#include "stub.h"

#define CTX(off)	stub_ctx+(off)(%rip)

	.text
	.globl	stub_run
	.type	stub_run, @function
stub_run:
	push	%rbx
	push	%rbp
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	%rsp, CTX(STUB_SAVED_RSP)
	mov	%rsp, CTX(STUB_GPR_IN + 4 * 8)
	mov	CTX(STUB_RFBM), %eax
	mov	CTX(STUB_RFBM + 4), %edx
	mov	CTX(STUB_XIN), %rcx
	xrstor64 (%rcx)
	push	CTX(STUB_FLAGS_IN)
	popfq
	mov	CTX(STUB_GPR_IN + 0 * 8), %rax
	mov	CTX(STUB_GPR_IN + 1 * 8), %rcx
	mov	CTX(STUB_GPR_IN + 2 * 8), %rdx
	mov	CTX(STUB_GPR_IN + 3 * 8), %rbx
	mov	CTX(STUB_GPR_IN + 5 * 8), %rbp
	mov	CTX(STUB_GPR_IN + 6 * 8), %rsi
	mov	CTX(STUB_GPR_IN + 7 * 8), %rdi
	mov	CTX(STUB_GPR_IN + 8 * 8), %r8
	mov	CTX(STUB_GPR_IN + 9 * 8), %r9
	mov	CTX(STUB_GPR_IN + 10 * 8), %r10
	mov	CTX(STUB_GPR_IN + 11 * 8), %r11
	mov	CTX(STUB_GPR_IN + 12 * 8), %r12
	mov	CTX(STUB_GPR_IN + 13 * 8), %r13
	mov	CTX(STUB_GPR_IN + 14 * 8), %r14
	mov	CTX(STUB_GPR_IN + 15 * 8), %r15
	jmp	*CTX(STUB_CODE)

	.globl	stub_back
stub_back:
	mov	%rax, CTX(STUB_GPR_OUT + 0 * 8)
	mov	%rcx, CTX(STUB_GPR_OUT + 1 * 8)
	mov	%rdx, CTX(STUB_GPR_OUT + 2 * 8)
	mov	%rbx, CTX(STUB_GPR_OUT + 3 * 8)
	mov	%rsp, CTX(STUB_GPR_OUT + 4 * 8)
	mov	%rbp, CTX(STUB_GPR_OUT + 5 * 8)
	mov	%rsi, CTX(STUB_GPR_OUT + 6 * 8)
	mov	%rdi, CTX(STUB_GPR_OUT + 7 * 8)
	mov	%r8, CTX(STUB_GPR_OUT + 8 * 8)
	mov	%r9, CTX(STUB_GPR_OUT + 9 * 8)
	mov	%r10, CTX(STUB_GPR_OUT + 10 * 8)
	mov	%r11, CTX(STUB_GPR_OUT + 11 * 8)
	mov	%r12, CTX(STUB_GPR_OUT + 12 * 8)
	mov	%r13, CTX(STUB_GPR_OUT + 13 * 8)
	mov	%r14, CTX(STUB_GPR_OUT + 14 * 8)
	mov	%r15, CTX(STUB_GPR_OUT + 15 * 8)
	mov	CTX(STUB_SAVED_RSP), %rsp
	pushfq
	pop	CTX(STUB_FLAGS_OUT)
	cld
	mov	CTX(STUB_RFBM), %eax
	mov	CTX(STUB_RFBM + 4), %edx
	mov	CTX(STUB_XOUT), %rcx
	xsave64	(%rcx)
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbp
	pop	%rbx
	ret
	.size	stub_run, . - stub_run

	.section .note.GNU-stack, "", @progbits
