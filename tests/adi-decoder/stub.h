/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trampoline's context, shared by stub.S and executor.c (which
 * checks each offset with _Static_assert).  GPRs are in encoding order:
 * rax rcx rdx rbx rsp rbp rsi rdi r8 ... r15.
 */
#ifndef ADI_DECODER_STUB_H
#define ADI_DECODER_STUB_H

#define STUB_GPR_IN	0	/* u64[16]: loaded before the instruction */
#define STUB_GPR_OUT	128	/* u64[16]: as it left them */
#define STUB_FLAGS_IN	256
#define STUB_FLAGS_OUT	264
#define STUB_CODE	272	/* where the instruction is */
#define STUB_SAVED_RSP	280	/* the trampoline's own stack */
#define STUB_RFBM	288	/* XSAVE components (EDX:EAX) */
#define STUB_XIN	296	/* XRSTOR image loaded before */
#define STUB_XOUT	304	/* XSAVE image written after */
#define STUB_SIZE	312

#endif
