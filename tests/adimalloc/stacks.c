// SPDX-License-Identifier: GPL-2.0
/*
 * Stacks in heap memory, as programs make them:
 *   stacks altstack   an alternate signal stack from malloc (CPython's
 *                     faulthandler does this): install it, take a signal
 *                     on it and a nested one inside that handler (which
 *                     the kernel must put below the first, on the same
 *                     stack), read the setting back, disable it
 *   stacks context    makecontext() with a malloc'd stack, swapcontext()
 *                     into it and back (coroutine libraries)
 * One line per check: PASS|FAIL CHECK: got ..., want ...
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define STACK_SIZE (64 * 1024)

static int failed;
static char *stack;
static volatile uintptr_t handler_sp, nested_sp;
static volatile int handler_flags;

static void check(int good, const char *what, const char *got, const char *want)
{
	failed += !good;
	printf("%s %s: got %s, want %s\n", good ? "PASS" : "FAIL", what, got, want);
}

/* Addresses compared without the version bits (63:60). */
static uintptr_t plain(const void *p)
{
	return (uintptr_t)p & ~(UINT64_C(0xf) << 60);
}

static int on_stack(uintptr_t sp)
{
	return sp >= plain(stack) && sp < plain(stack) + STACK_SIZE;
}

static void on_usr2(int sig)
{
	volatile char here = (char)sig;

	nested_sp = (uintptr_t)&here;
}

/* Some work on the signal stack: a libc call, locals, a nested signal. */
static void on_usr1(int sig)
{
	volatile char here = (char)sig;
	stack_t cur;

	sigaltstack(NULL, &cur);
	handler_flags = cur.ss_flags;
	handler_sp = (uintptr_t)&here;
	raise(SIGUSR2);
}

static void altstack(void)
{
	stack_t ss = { .ss_sp = NULL, .ss_size = STACK_SIZE }, old;
	struct sigaction sa;
	char got[64];
	int r;

	stack = malloc(STACK_SIZE);
	ss.ss_sp = stack;
	r = sigaltstack(&ss, NULL);
	check(r == 0, "sigaltstack(malloc'd stack)", r ? "-1" : "0", "0");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR1);
	check(on_stack(handler_sp), "the handler ran on the alternate stack",
	      on_stack(handler_sp) ? "on it" : handler_sp ? "elsewhere" : "not run", "on it");
	check(handler_flags & SS_ONSTACK, "sigaltstack() in the handler says SS_ONSTACK",
	      handler_flags & SS_ONSTACK ? "SS_ONSTACK" : "not on it", "SS_ONSTACK");
	check(on_stack(nested_sp) && nested_sp < handler_sp,
	      "a nested signal's handler ran below the first one on the same stack",
	      !on_stack(nested_sp) ? "elsewhere" : nested_sp < handler_sp ? "below" :
	      "above it (the first frame overwritten)", "below");
	memset(&old, 0, sizeof(old));
	sigaltstack(NULL, &old);
	snprintf(got, sizeof(got), "%p", old.ss_sp);
	check(old.ss_sp == stack, "sigaltstack(NULL, &old) gives the pointer installed",
	      got, "the malloc'd pointer");
	ss.ss_flags = SS_DISABLE;
	r = sigaltstack(&ss, NULL);
	check(r == 0, "sigaltstack(SS_DISABLE)", r ? "-1" : "0", "0");
	free(stack);
}

static ucontext_t main_ctx, co_ctx;
static volatile uintptr_t co_sp;
static volatile long co_sum;

/* Runs on the malloc'd stack: locals, calls, a return to uc_link. */
static void coroutine(int n)
{
	volatile long a[64];

	for (int i = 0; i < 64; i++)
		a[i] = i * n;
	for (int i = 0; i < 64; i++)
		co_sum += a[i];
	co_sp = (uintptr_t)&a[0];
}

static void context(void)
{
	char got[64];

	stack = malloc(STACK_SIZE);
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK_SIZE;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, (void (*)(void))coroutine, 1, 3);
	swapcontext(&main_ctx, &co_ctx);
	snprintf(got, sizeof(got), "%ld", (long)co_sum);
	check(co_sum == 3 * 2016, "the coroutine's sum", got, "6048");
	check(on_stack(co_sp), "the coroutine ran on the malloc'd stack",
	      on_stack(co_sp) ? "on it" : "elsewhere", "on it");
	free(stack);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(what, "altstack"))
		altstack();
	else if (!strcmp(what, "context"))
		context();
	else {
		fprintf(stderr, "stacks: altstack|context\n");
		return 2;
	}
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
