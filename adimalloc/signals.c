// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The program's own SIGSEGV disposition, kept apart from ours.
 *
 * Our handler must stay installed for the whole life of the process (an
 * ADI mismatch arrives as a SIGSEGV), yet programs want SIGSEGV too: a
 * crash reporter, a garbage collector's write barrier, a stack-overflow
 * handler on an alternate stack.  Before, whichever came last won: a
 * program's handler set after our start-up took every mismatch, one set
 * before it was thrown away.  So the kernel keeps our handler, and
 * sigaction(), signal() and their aliases record what the program asks
 * for SIGSEGV here and give it back as the kernel would: a program that
 * reads the disposition sees its own, never ours.  A SIGSEGV that is none
 * of ours (report.c decides) goes where the program asked: to its handler,
 * called as the kernel calls one (SA_SIGINFO or not, its sa_mask and
 * SA_NODEFER, SA_RESETHAND), or to the default action, which kills the
 * process as it always did.
 *
 * Lock-free: sigaction() is async-signal-safe (a handler may call it, and
 * signal(SIGSEGV, SIG_DFL) before re-raising is common), and the SIGSEGV
 * handler reads the disposition at any moment, in any thread.  Each
 * setting is copied into a slot of a small ring and published by an
 * atomic pointer exchange; a reader copies the slot the pointer names.  A
 * slot is written again only RING settings later: a reader would have to
 * stall across that many sigaction() calls of other threads to see a
 * torn one.
 *
 * Not seen here: SIGSEGV set with sigset() or with the rt_sigaction system
 * call itself; those replace our handler, as any handler did before.  A
 * vfork() child shares this record with its parent (the kernel gives it
 * handlers of its own): a child that sets SIGSEGV before exec changes the
 * parent's setting too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "internal.h"

#define RING	64

/*
 * SA_ONSTACK: a program that handles stack overflow has set an alternate
 * stack, and a fault on the exhausted stack can be delivered nowhere
 * else (the kernel would kill the process instead).  SA_NODEFER: a fault
 * inside the report is a fault again, not a block that hangs.
 */
#define OUR_FLAGS	(SA_SIGINFO | SA_NODEFER | SA_ONSTACK)

/* glibc's sigaction() under its other name: ours takes the plain one. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

typedef __sighandler_t (*signal_fn)(int, __sighandler_t);

static struct sigaction ring[RING];
static unsigned int ring_next;
/* The program's setting; NULL: SIG_DFL, as after exec. */
static struct sigaction *program;
/* Our handler is installed: settings for SIGSEGV are recorded, not made. */
static bool chained;
static void (*our_handler)(int, siginfo_t *, void *);
static signal_fn libc_bsd_signal, libc_sysv_signal;

static void set_default(struct sigaction *a)
{
	memset(a, 0, sizeof(*a));
	a->sa_handler = SIG_DFL;
}

static void program_get(struct sigaction *out)
{
	struct sigaction *p = __atomic_load_n(&program, __ATOMIC_ACQUIRE);

	if (p)
		*out = *p;
	else
		set_default(out);
}

/*
 * Our handler with the program's SA_RESTART: a SIGSEGV sent by kill()
 * while a read() waits restarts it, or fails it with EINTR, as the
 * program's own setting would have.
 */
static void install(int restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = our_handler;
	sa.sa_flags = OUR_FLAGS | restart;
	sigemptyset(&sa.sa_mask);
	__sigaction(SIGSEGV, &sa, NULL);
}

static struct sigaction *new_slot(const struct sigaction *a)
{
	unsigned int i = __atomic_fetch_add(&ring_next, 1, __ATOMIC_RELAXED) % RING;

	ring[i] = *a;
	return &ring[i];
}

/* Record @a as the program's setting; @old (if not NULL) gets the last. */
static void program_set(const struct sigaction *a, struct sigaction *old)
{
	struct sigaction *s = new_slot(a), *prev;
	int was;

	prev = __atomic_exchange_n(&program, s, __ATOMIC_ACQ_REL);
	was = prev ? prev->sa_flags & SA_RESTART : 0;
	if (old) {
		if (prev)
			*old = *prev;
		else
			set_default(old);
	}
	if ((a->sa_flags & SA_RESTART) != was)
		install(a->sa_flags & SA_RESTART);
}

/*
 * From the first malloc (am_report_init()), before the program's threads
 * normally exist.  Settings made through our wrappers from now on are
 * recorded; the one the kernel had (a handler the program set before us,
 * SIG_IGN inherited across exec) becomes the program's, unless a newer
 * one was recorded meanwhile.
 */
void am_segv_install(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa, before, *none = NULL;

	our_handler = handler;
	__atomic_store_n(&chained, true, __ATOMIC_SEQ_CST);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = OUR_FLAGS;
	sigemptyset(&sa.sa_mask);
	if (__sigaction(SIGSEGV, &sa, &before)) {
		/* Not installed: the program's settings go to the kernel. */
		__atomic_store_n(&chained, false, __ATOMIC_SEQ_CST);
		return;
	}
	if (__atomic_compare_exchange_n(&program, &none, new_slot(&before), false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    (before.sa_flags & SA_RESTART))
		install(SA_RESTART);
}

static bool is_chained(int sig)
{
	return sig == SIGSEGV && __atomic_load_n(&chained, __ATOMIC_ACQUIRE);
}

bool am_segv_program_handles(void)
{
	struct sigaction a;

	program_get(&a);
	return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

/*
 * The default action, as the kernel would have taken it (a core dump, the
 * status a parent sees).  A fault is left to happen again when our handler
 * returns, with SIG_DFL in place: the kernel does the same for a fault
 * whose handler is SIG_IGN.  A signal that was sent is sent again; it is
 * not blocked here (SA_NODEFER), so it acts at once.
 */
static void default_action(int sig, bool fault)
{
	struct sigaction dfl;

	set_default(&dfl);
	__sigaction(sig, &dfl, NULL);
	if (!fault)
		raise(sig);
}

/*
 * Run the program's handler as the kernel would: with its sa_mask and,
 * unless SA_NODEFER, the signal itself blocked while it runs (ours blocks
 * nothing: SA_NODEFER, an empty mask), on the signal's own siginfo and
 * context, so that what it changes there (the pc, the registers, the mask
 * to restore) takes effect when the signal returns.  A handler that
 * leaves with siglongjmp() finds nothing of ours to undo.
 */
static void call_handler(const struct sigaction *a, int sig, siginfo_t *si, void *uc)
{
	sigset_t block = a->sa_mask, saved;

	if (!(a->sa_flags & SA_NODEFER))
		sigaddset(&block, sig);
	pthread_sigmask(SIG_BLOCK, &block, &saved);
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, si, uc);
	else
		a->sa_handler(sig);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

void am_segv_pass_on(int sig, siginfo_t *si, void *uc, bool fault)
{
	struct sigaction a, dfl;

	program_get(&a);
	if (a.sa_handler == SIG_IGN && !fault)
		return;			/* sent, and the program ignores it */
	if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN) {
		default_action(sig, fault);
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		set_default(&dfl);
		program_set(&dfl, NULL);
	}
	call_handler(&a, sig, si, uc);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!is_chained(sig))
		return __sigaction(sig, act, old);
	if (act)
		program_set(act, old);
	else if (old)
		program_get(old);
	return 0;
}

/* signal() and the like for SIGSEGV: a sigaction() with @flags. */
static __sighandler_t record(int sig, __sighandler_t h, int flags)
{
	struct sigaction sa, old;

	if (h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&sa.sa_mask, sig);
	program_set(&sa, &old);
	return old.sa_handler;
}

/* glibc's own, for every other signal (it knows siginterrupt()'s state). */
static __sighandler_t libc_signal(signal_fn *fn, const char *name, int sig,
				  __sighandler_t h)
{
	if (!*fn)
		*fn = (signal_fn)dlsym(RTLD_NEXT, name);
	if (!*fn) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return (*fn)(sig, h);
}

/* BSD semantics, as glibc's signal(): the handler stays, the signal is
 * blocked while it runs, interrupted system calls restart. */
static __sighandler_t bsd(int sig, __sighandler_t h)
{
	if (is_chained(sig))
		return record(sig, h, SA_RESTART);
	return libc_signal(&libc_bsd_signal, "bsd_signal", sig, h);
}

/* System V semantics: back to SIG_DFL when delivered, not blocked. */
static __sighandler_t sysv(int sig, __sighandler_t h)
{
	if (is_chained(sig))
		return record(sig, h, SA_RESETHAND | SA_NODEFER);
	return libc_signal(&libc_sysv_signal, "__sysv_signal", sig, h);
}

__sighandler_t signal(int sig, __sighandler_t h)
{
	return bsd(sig, h);
}

__sighandler_t bsd_signal(int sig, __sighandler_t h)
{
	return bsd(sig, h);
}

__sighandler_t ssignal(int sig, __sighandler_t h)
{
	return bsd(sig, h);
}

/* What signal() is in a program built for strict ISO C (no _DEFAULT_SOURCE). */
__sighandler_t __sysv_signal(int sig, __sighandler_t h)
{
	return sysv(sig, h);
}

__sighandler_t sysv_signal(int sig, __sighandler_t h)
{
	return sysv(sig, h);
}

/* Resolve glibc's signal functions now, not first in a signal handler. */
void am_segv_resolve(void)
{
	if (!libc_bsd_signal)
		libc_bsd_signal = (signal_fn)dlsym(RTLD_NEXT, "bsd_signal");
	if (!libc_sysv_signal)
		libc_sysv_signal = (signal_fn)dlsym(RTLD_NEXT, "__sysv_signal");
}
