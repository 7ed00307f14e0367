// SPDX-License-Identifier: GPL-2.0
/*
 * The program's own SIGSEGV disposition under adimalloc: faults that are
 * not adimalloc's reach it, ADI mismatches are still reported.
 *   segv chain   sets handlers with signal() and sigaction() after the
 *                library's start-up and reads them back; takes page faults
 *                (a write to a PROT_NONE page) in its handler: siginfo,
 *                mask, SA_NODEFER, SA_RESETHAND, another thread; ends with
 *                a heap overflow, which must be reported (exit 86), not
 *                handed to the program's handler
 *   segv early   the same handler set from .preinit_array, before any
 *                library's constructor, with SA_ONSTACK: a page fault, a
 *                thread's stack overflow on its sigaltstack; ends with a
 *                heap overflow reported on the main thread's sigaltstack
 *   segv dfl     in forked children: SIGSEGV never set, set to SIG_DFL
 *                or SIG_IGN, a handler that resets SIG_DFL; SIGSEGV sent
 *                by raise() and kill(), page faults, and heap overflows,
 *                which must be reported (exit 86) whatever the setting
 * One line per check: PASS|FAIL CHECK: got ..., want ...; then "N failed"
 * (chain and early: before the final overflow).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed;
static char *page;			/* PROT_NONE until a handler opens it */
static volatile int calls, got_sig, got_code, segv_blocked, usr1_blocked;
static void *volatile got_addr;
static volatile pid_t got_tid, got_pid;

static void check(int good, const char *what, const char *got, const char *want)
{
	failed += !good;
	printf("%s %s: got %s, want %s\n", good ? "PASS" : "FAIL", what, got, want);
}

static int versioned(const void *p)
{
	return ((uintptr_t)p >> 60) != 0;
}

static void say(const char *s)
{
	ssize_t r = write(1, s, strlen(s));

	(void)r;
}

static void note_mask(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	segv_blocked = sigismember(&cur, SIGSEGV);
	usr1_blocked = sigismember(&cur, SIGUSR1);
}

/* Make the page usable, so that the faulting write goes through. */
static void open_page(void)
{
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

/* The program's handlers.  A mismatch must never come here. */
static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code == SEGV_ADIPERR || si->si_code == SEGV_ADIDERR) {
		say("FAIL the program's handler got an ADI mismatch (not reported)\n");
		_exit(3);
	}
	calls++;
	got_sig = sig;
	got_code = si->si_code;
	got_addr = si->si_addr;
	got_pid = si->si_pid;
	got_tid = gettid();
	note_mask();
	if (si->si_code > 0)
		open_page();
}

static void on_plain(int sig)
{
	calls++;
	got_sig = sig;
	note_mask();
	open_page();
}

static void fresh_page(void)
{
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
}

/* A write to the PROT_NONE page; the handler opens it. */
static void fault_once(void)
{
	fresh_page();
	calls = 0;
	((volatile char *)page)[100] = 7;
}

static void set(void (*fn)(int, siginfo_t *, void *), void (*plain)(int), int flags,
		int mask_usr1)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	if (fn)
		sa.sa_sigaction = fn;
	else
		sa.sa_handler = plain;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (mask_usr1)
		sigaddset(&sa.sa_mask, SIGUSR1);
	sigaction(SIGSEGV, &sa, NULL);
}

static const char *name(void *h)
{
	if (h == (void *)SIG_DFL)
		return "SIG_DFL";
	if (h == (void *)SIG_IGN)
		return "SIG_IGN";
	if (h == (void *)on_info)
		return "on_info";
	if (h == (void *)on_plain)
		return "on_plain";
	return "another handler (the library's?)";
}

static void check_handler(void *want, const char *what)
{
	struct sigaction old;

	memset(&old, 0, sizeof(old));
	sigaction(SIGSEGV, NULL, &old);
	check((void *)old.sa_handler == want, what, name((void *)old.sa_handler), name(want));
}

/* A heap overflow into the next slot: adimalloc must report it. */
static __attribute__((noinline)) void heap_overflow(void)
{
	char *p = NULL;

	for (int i = 0; i < 100000 && !versioned(p); i++)
		p = malloc(48);
	if (!versioned(p)) {
		printf("FAIL no block of ours in 100000 mallocs\n");
		exit(2);
	}
	fprintf(stderr, "bug: ptr=%p size=48 at=%p\n", (void *)p, (void *)(p + 64));
	((volatile char *)p)[64] = 1;
	say("FAIL the heap overflow went unreported\n");
	exit(4);
}

static void *fault_in_thread(void *arg)
{
	(void)arg;
	((volatile char *)page)[200] = 9;
	return NULL;
}

static void chain_signal(void)
{
	void (*h)(int);
	char got[64];

	check_handler((void *)SIG_DFL, "sigaction(SIGSEGV, NULL, &old) before any setting");
	h = signal(SIGSEGV, on_plain);
	check(h == SIG_DFL, "signal(SIGSEGV, on_plain) returns the last setting",
	      name((void *)h), "SIG_DFL");
	h = signal(SIGSEGV, on_plain);
	check(h == on_plain, "signal() again returns on_plain", name((void *)h), "on_plain");
	fault_once();
	check(calls == 1 && got_sig == SIGSEGV && segv_blocked,
	      "a page fault reaches signal()'s handler, SIGSEGV blocked in it",
	      calls == 1 ? (segv_blocked ? "called, blocked" : "called, not blocked") :
	      "not called", "called, blocked");
	snprintf(got, sizeof(got), "%d", ((volatile char *)page)[100]);
	check(page[100] == 7, "the faulting write went through after the handler", got, "7");
}

static void chain_sigaction(void)
{
	struct sigaction sa, old;
	char got[96], want[96];
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaction(SIGSEGV, &sa, &old);
	check((void *)old.sa_handler == (void *)on_plain && (old.sa_flags & SA_RESTART),
	      "sigaction()'s old setting: signal()'s, with SA_RESTART",
	      name((void *)old.sa_handler), "on_plain");
	memset(&old, 0, sizeof(old));
	sigaction(SIGSEGV, NULL, &old);
	check(old.sa_sigaction == on_info && (old.sa_flags & SA_SIGINFO) &&
	      sigismember(&old.sa_mask, SIGUSR1), "read back: on_info, SA_SIGINFO, mask SIGUSR1",
	      name((void *)old.sa_handler), "on_info");
	fault_once();
	snprintf(got, sizeof(got), "%d call(s), signo %d, code %d, addr %p", calls, got_sig,
		 got_code, got_addr);
	snprintf(want, sizeof(want), "1 call(s), signo %d, code %d, addr %p", SIGSEGV,
		 SEGV_ACCERR, (void *)(page + 100));
	check(!strcmp(got, want), "a PROT_NONE write reaches the SA_SIGINFO handler", got, want);
	check(usr1_blocked && segv_blocked, "in it, sa_mask (SIGUSR1) and SIGSEGV are blocked",
	      usr1_blocked ? (segv_blocked ? "both" : "SIGUSR1 only") : "not SIGUSR1", "both");
	note_mask();
	check(!usr1_blocked && !segv_blocked, "after it, the mask is the program's again",
	      usr1_blocked || segv_blocked ? "still blocked" : "restored", "restored");
	fresh_page();
	calls = 0;
	pthread_create(&t, NULL, fault_in_thread, NULL);
	pthread_join(t, NULL);
	check(calls == 1 && got_tid != getpid() && page[200] == 9,
	      "a fault in another thread reaches the handler, in that thread",
	      calls == 1 ? (got_tid != getpid() ? "there" : "main thread") : "not called",
	      "there");
}

static void chain_flags(void)
{
	char got[32];

	set(NULL, on_plain, SA_NODEFER, 0);
	fault_once();
	check(calls == 1 && got_sig == SIGSEGV && !segv_blocked,
	      "SA_NODEFER, no SA_SIGINFO: handler(SIGSEGV), SIGSEGV not blocked",
	      calls == 1 ? (segv_blocked ? "blocked" : "not blocked") : "not called",
	      "not blocked");
	set(on_info, NULL, SA_SIGINFO | SA_RESETHAND, 0);
	fault_once();
	snprintf(got, sizeof(got), "%d", calls);
	check(calls == 1, "SA_RESETHAND: the handler runs once", got, "1");
	check_handler((void *)SIG_DFL, "SA_RESETHAND: SIG_DFL after it ran");
	calls = 0;
	set(on_info, NULL, SA_SIGINFO, 0);
	kill(getpid(), SIGSEGV);
	snprintf(got, sizeof(got), "%d call(s), code %d", calls, got_code);
	check(calls == 1 && got_code == SI_USER && got_pid == getpid(),
	      "kill(getpid(), SIGSEGV) reaches the handler as sent (SI_USER, si_pid)", got,
	      "1 call(s), code 0");
}

static void chain(void)
{
	chain_signal();
	chain_sigaction();
	chain_flags();
	set(on_info, NULL, SA_SIGINFO, 0);
	printf("%d failed\n", failed);
	heap_overflow();
}

/* ---- early: set before the library's start-up, SA_ONSTACK ---- */
static __thread sigjmp_buf *overflow_jmp;
static __thread volatile int overflowing;

static void on_early(int sig, siginfo_t *si, void *uc)
{
	if (overflowing) {
		calls++;
		got_code = si->si_code;
		siglongjmp(*overflow_jmp, 1);
	}
	on_info(sig, si, uc);
}

static void early_init(int argc, char **argv, char **envp)
{
	struct sigaction sa;

	(void)envp;
	if (argc < 2 || strcmp(argv[1], "early"))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_early;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

__attribute__((section(".preinit_array"), used))
static void (*const preinit)(int, char **, char **) = early_init;

/* Deeper than any stack (the compiler must not see that it is endless). */
static volatile int depth_limit = 1 << 30;

static int deeper(int n)
{
	volatile char frame[1024];

	frame[0] = (char)n;
	if (n >= depth_limit)
		return frame[0];
	return deeper(n + 1) + frame[0];
}

static void use_altstack(size_t size)
{
	stack_t ss = { .ss_size = size };

	ss.ss_sp = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL)) {
		perror("sigaltstack");
		exit(2);
	}
}

/* Runs the stack into its guard page; the handler jumps back here. */
static void *overflow_thread(void *arg)
{
	sigjmp_buf back;

	(void)arg;
	use_altstack(SIGSTKSZ);
	overflow_jmp = &back;
	if (!sigsetjmp(back, 1)) {
		overflowing = 1;
		deeper(0);
	}
	overflowing = 0;
	return NULL;
}

static void early(void)
{
	struct sigaction old;
	pthread_attr_t attr;
	pthread_t t;
	char got[64];

	memset(&old, 0, sizeof(old));
	sigaction(SIGSEGV, NULL, &old);
	check(old.sa_sigaction == on_early && (old.sa_flags & SA_ONSTACK),
	      "the handler set in .preinit_array reads back", old.sa_sigaction == on_early ?
	      "on_early" : name((void *)old.sa_handler), "on_early");
	fault_once();
	snprintf(got, sizeof(got), "%d call(s), code %d", calls, got_code);
	check(calls == 1 && got_code == SEGV_ACCERR, "a PROT_NONE write reaches it", got,
	      "1 call(s), code 2");
	calls = 0;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_create(&t, &attr, overflow_thread, NULL);
	pthread_join(t, NULL);
	snprintf(got, sizeof(got), "%d call(s), code %d", calls, got_code);
	check(calls == 1, "a thread's stack overflow reaches it on the thread's sigaltstack "
	      "(SA_ONSTACK)", got, "1 call(s)");
	/*
	 * The overflow's report runs on a stack of adimalloc's own: the
	 * alternate stack may be small (SEGV_ALTSTACK bytes, default
	 * SIGSTKSZ).
	 */
	use_altstack(getenv("SEGV_ALTSTACK") ? strtoul(getenv("SEGV_ALTSTACK"), NULL, 0) :
		     SIGSTKSZ);
	printf("%d failed\n", failed);
	heap_overflow();
}

/* ---- dfl: what the default and SIG_IGN do, in children ---- */
enum act { RAISE, KILL, PAGE, OVERFLOW };

static void do_act(enum act a)
{
	if (a == RAISE)
		raise(SIGSEGV);
	else if (a == KILL)
		kill(getpid(), SIGSEGV);
	else if (a == PAGE)
		fault_once();
	else
		heap_overflow();
}

static void reset_and_return(int sig)
{
	signal(sig, SIG_DFL);
}

static void reset_and_raise(int sig)
{
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Not a disposition: the child leaves SIGSEGV as it found it. */
#define UNTOUCHED	((void (*)(int))-2)

/* Exit status: the signal that ended it (+128), or its exit status. */
static int child(void (*disp)(int), enum act a)
{
	struct rlimit none = { 0, 0 };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &none);
		if (disp != UNTOUCHED)
			signal(SIGSEGV, disp);
		do_act(a);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void dfl_case(const char *what, void (*disp)(int), enum act a, int want)
{
	char got[32], w[32];
	int st = child(disp, a);

	snprintf(got, sizeof(got), "%s %d", st > 128 ? "signal" : "exit",
		 st > 128 ? st - 128 : st);
	snprintf(w, sizeof(w), "%s %d", want > 128 ? "signal" : "exit",
		 want > 128 ? want - 128 : want);
	check(st == want, what, got, w);
}

static void dfl(void)
{
	int seg = 128 + SIGSEGV;

	dfl_case("never set, raise(SIGSEGV): killed by it", UNTOUCHED, RAISE, seg);
	dfl_case("never set, kill(getpid(), SIGSEGV): killed by it", UNTOUCHED, KILL, seg);
	dfl_case("never set, a PROT_NONE write: killed by SIGSEGV", UNTOUCHED, PAGE, seg);
	dfl_case("never set, a heap overflow: reported (exit 86)", UNTOUCHED, OVERFLOW, 86);
	dfl_case("set to SIG_DFL, raise(SIGSEGV): killed by it", SIG_DFL, RAISE, seg);
	dfl_case("set to SIG_DFL, a PROT_NONE write: killed by SIGSEGV", SIG_DFL, PAGE, seg);
	dfl_case("set to SIG_DFL, a heap overflow: reported (exit 86)", SIG_DFL, OVERFLOW, 86);
	dfl_case("SIG_IGN, raise(SIGSEGV): ignored", SIG_IGN, RAISE, 0);
	dfl_case("SIG_IGN, a PROT_NONE write: killed by SIGSEGV all the same", SIG_IGN, PAGE,
		 seg);
	dfl_case("SIG_IGN, a heap overflow: reported (exit 86)", SIG_IGN, OVERFLOW, 86);
	dfl_case("a handler that sets SIG_DFL and returns, a PROT_NONE write: killed by SIGSEGV",
		 reset_and_return, PAGE, seg);
	dfl_case("a handler that sets SIG_DFL and re-raises, a PROT_NONE write: killed by SIGSEGV",
		 reset_and_raise, PAGE, seg);
	printf("%d failed\n", failed);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(what, "chain"))
		chain();
	else if (!strcmp(what, "early"))
		early();
	else if (!strcmp(what, "dfl"))
		dfl();
	else {
		fprintf(stderr, "segv: chain|early|dfl\n");
		return 2;
	}
	return failed ? 1 : 0;
}
