// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Function names and file:line for report stacks, from elfutils'
 * eu-addr2line run as a short-lived child process (--pid=OURS: it reads
 * our /proc/PID/maps and the mapped files), as AddressSanitizer runs
 * llvm-symbolizer.  Its answers are kept per pc (the cache below), so a
 * stack whose frames have all been seen costs no process.
 *
 * Why out of process: a symbolizer in this process calls malloc(), ours,
 * which cannot be entered while this thread holds the heap lock (the
 * SIGSEGV handler and the leak report print under it) and would fill the
 * heap with its data; and loading libdw with dlmopen() into a namespace
 * of its own did not avoid it: ld.so allocates through our malloc() there
 * too, and its string routines read those blocks a word at a time past
 * their end, which under ADI traps (a bogus report from inside ld.so).
 *
 * Why clone(CLONE_VM | CLONE_VFORK) on a stack of our own, as
 * posix_spawn() does: it works from the SIGSEGV handler, with the heap
 * lock held and other threads inside malloc().  fork() would run the
 * atfork handlers (malloc.c's takes the heap lock) and copy the address
 * space; posix_spawn() itself may allocate.  Nothing here allocates: argv,
 * the child's stack, the answer and the cache are static (one stack at a
 * time: sym_lock).  The child makes raw system calls only (handlers reset,
 * the pipe as stdout, /dev/null as stdin and stderr, execve() with PATH
 * and LC_ALL only: no LD_PRELOAD, no DEBUGINFOD_URLS).  The program gets a
 * SIGCHLD for it; we wait for that pid only (a SIGCHLD handler of the
 * program's that reaps with wait(-1) may take it first: we then do
 * without its exit status).
 *
 * stack.c prints a stack with dladdr() instead when: symbolize=0; this
 * thread is already printing one (a fault or a signal in the middle); the
 * thread that is has taken longer than TIMEOUT_MS; no pipe or child can be
 * made (EMFILE, EAGAIN, seccomp); the answer overflows its buffer.  And for
 * the rest of the process when eu-addr2line cannot be run (not installed),
 * gives no answer within TIMEOUT_MS (it is killed) or one we cannot read:
 * the report says so once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#ifndef AM_ADDR2LINE		/* a test build may point it elsewhere */
#define AM_ADDR2LINE	"/usr/bin/eu-addr2line"
#endif
/*
 * For one stack's answer: eu-addr2line reads the symbol and line tables of
 * every module the stack passes through (0.01 s on the host for a stack
 * in the program alone, up to 0.25 s through libc with libc6-dbg).
 */
#ifndef AM_SYMBOLIZE_TIMEOUT_S	/* a test build may shorten it */
#define AM_SYMBOLIZE_TIMEOUT_S	10
#endif
#define TIMEOUT_S	AM_SYMBOLIZE_TIMEOUT_S
#define TIMEOUT_MS	(TIMEOUT_S * 1000)
#define ANSWER_MAX	(64 * 1024)
#define CHILD_STACK	(16 * 1024)
#define FIXED_ARGS	5	/* argv[0], --pid, -a, -f, -C */
#define CACHE_SLOTS	512
#define CACHE_PROBES	8
#define ARENA_SIZE	(64 * 1024)

/*
 * 0, or the pid of the process one of whose threads symbolizes: a fork()ed
 * child that finds its parent's pid has a copy nobody will release, and
 * takes it over.  Atomic.
 */
static pid_t sym_lock;
static __thread bool tl_busy __attribute__((tls_model("initial-exec")));
/* Its cancel state: poll(), read(), waitpid() are cancellation points. */
static __thread int tl_cancel __attribute__((tls_model("initial-exec")));
static bool given_up;		/* atomic */

/* The sym_lock holder's; the child reads them (it shares our memory). */
static char pid_arg[32];
static char addr_arg[AM_STACK_MAX][2 + 16 + 1];
static char *argv_buf[FIXED_ARGS + AM_STACK_MAX + 1];
static char *const child_env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
static int child_out;		/* the pipe's write end */
static int child_errno;		/* execve()'s, when it fails */
static char child_stack[CHILD_STACK] __attribute__((aligned(16)));
static char answer[ANSWER_MAX];

/*
 * What eu-addr2line said, per pc, so that the frames stacks share (main(),
 * libc's start, a thread's start) are asked about once per process: most
 * of its time goes into reading a library's debug info (0.1 s for libc's
 * from libc6-dbg).  A pc is kept with its module's load address and name,
 * so a library unloaded and another loaded in its place miss.  The strings
 * live in the arena, cleared when half full at the start of a stack.  A
 * fork()ed child keeps its copy: its mappings are the parent's.
 */
struct cached {
	uintptr_t pc;			/* 0: free */
	uint64_t module;
	uint32_t function, file;	/* arena offset + 1; 0: NULL */
	int line;
};
static struct cached cache[CACHE_SLOTS];
static char arena[ARENA_SIZE];
static size_t arena_used;

/* ---- the child: system calls only, on child_stack ---- */

/* The kernel's struct sigaction (x86-64). */
struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/*
 * Raw system calls, not their libc functions: a program's own open() or
 * execve() (an LD_PRELOAD wrapper) might allocate, and the heap it would
 * change is the parent's.
 */
static int child(void *arg)
{
	struct k_sigaction dfl = { .handler = SIG_DFL };
	uint64_t none = 0;
	long null;

	(void)arg;
	/* Our handlers must not run here, on the parent's memory: the parent
	 * blocked every signal before the clone. */
	for (int sig = 1; sig < _NSIG; sig++)	/* SIGKILL, SIGSTOP: EINVAL */
		syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
	/* dup2() onto itself would leave O_CLOEXEC set. */
	if (child_out == STDOUT_FILENO ?
	    syscall(SYS_fcntl, STDOUT_FILENO, F_SETFD, 0) < 0 :
	    syscall(SYS_dup2, child_out, STDOUT_FILENO) < 0)
		goto fail;
	null = syscall(SYS_open, "/dev/null", O_RDWR);
	if (null < 0) {
		syscall(SYS_close, STDIN_FILENO);
		syscall(SYS_close, STDERR_FILENO);
	} else {
		syscall(SYS_dup2, null, STDIN_FILENO);
		syscall(SYS_dup2, null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			syscall(SYS_close, null);
	}
	/* The program's other descriptors (ENOSYS before Linux 5.9: kept). */
	syscall(SYS_close_range, STDERR_FILENO + 1, ~0U, 0);
	syscall(SYS_execve, AM_ADDR2LINE, argv_buf, child_env);
fail:
	child_errno = errno;
	syscall(SYS_exit_group, 127);
	return 127;
}

/* ---- the parent ---- */

static void put_hex(char *p, uintptr_t v)
{
	char digits[16];
	int n = 0;

	do {
		digits[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*p++ = '0';
	*p++ = 'x';
	while (n)
		*p++ = digits[--n];
	*p = 0;
}

static void put_pid_arg(pid_t pid)
{
	static const char opt[] = "--pid=";
	char digits[12];
	int n = 0;
	char *p = pid_arg;

	do {
		digits[n++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid);
	for (const char *o = opt; *o; o++)
		*p++ = *o;
	while (n)
		*p++ = digits[--n];
	*p = 0;
}

/* eu-addr2line is not asked again in this process (its children too). */
static void give_up(void)
{
	__atomic_store_n(&given_up, true, __ATOMIC_RELEASE);
}

static const char *err_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "?";
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

enum outcome { ANSWERED, TIMED_OUT, TOO_LONG, BROKEN };

/*
 * The child's output, up to @lines lines, its end of file or TIMEOUT_MS.
 * It need not be seen to end: a fork() in another thread while the pipe
 * was open would keep a copy of its write end.
 */
static enum outcome read_answer(int fd, int lines, size_t *len)
{
	struct timespec t0;
	size_t got = 0;
	long left;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((left = TIMEOUT_MS - ms_since(&t0)) > 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;
		int ready = poll(&p, 1, (int)left);

		if (ready < 0 && errno != EINTR)
			return BROKEN;
		if (ready <= 0)
			continue;
		if (got == sizeof(answer))
			return TOO_LONG;
		r = read(fd, answer + got, sizeof(answer) - got);
		if (r < 0 && errno != EINTR && errno != EAGAIN)
			return BROKEN;
		if (r == 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			lines -= answer[got + i] == '\n';
		if (r > 0)
			got += (size_t)r;
		if (lines <= 0)
			break;
	}
	*len = got;
	return left > 0 ? ANSWERED : TIMED_OUT;
}

/* The next line of the answer, NUL-terminated in place; NULL: none. */
static char *next_line(char **p, char *end)
{
	char *s = *p;

	for (char *c = s; c < end; c++)
		if (*c == '\n') {
			*c = 0;
			*p = c + 1;
			return s;
		}
	return NULL;
}

static bool all_digits(const char *s, const char *end)
{
	if (s == end)
		return false;
	for (; s < end; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* "0x0000563f91c202a7": @pc's line, as -a prints it. */
static bool is_address(const char *s, uintptr_t pc)
{
	uintptr_t v = 0;

	if (s[0] != '0' || s[1] != 'x' || !s[2])
		return false;
	for (s += 2; *s; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0 || v >> 60)
			return false;
		v = v << 4 | (unsigned int)d;
	}
	return v == pc;
}

/*
 * One entry of the answer (-a -f, no -i: three lines per address):
 *	0x0000563f91c202a7
 *	plant_overflow_block		(or "inner inlined at FILE:L:C in outer", or ??)
 *	/path/to/bugs.c:48:9		(or FILE:LINE, or ??:0)
 * An inlined function is named alone (the innermost: the line is its own).
 */
static bool parse_entry(char **p, char *end, uintptr_t pc, struct am_symbol *s)
{
	char *addr = next_line(p, end), *fn = next_line(p, end),
	     *loc = next_line(p, end), *colon, *col;

	if (!addr || !fn || !loc || !is_address(addr, pc))
		return false;
	s->function = s->file = NULL;
	s->line = 0;
	if ((col = strstr(fn, " inlined ")))
		*col = 0;
	if (fn[0] && strcmp(fn, "??"))
		s->function = fn;
	/* FILE:LINE or FILE:LINE:COLUMN; the file name may hold colons. */
	colon = strrchr(loc, ':');
	if (!colon || !all_digits(colon + 1, colon + strlen(colon)))
		return true;
	for (col = colon - 1; col > loc && *col != ':'; col--)
		;
	if (col > loc && all_digits(col + 1, colon)) {
		*colon = 0;		/* the column is not shown */
		colon = col;
	}
	*colon = 0;
	for (char *d = colon + 1; *d; d++)
		s->line = s->line * 10 + (*d - '0');
	if (s->line > 0 && loc[0] && strcmp(loc, "??"))
		s->file = loc;
	else
		s->line = 0;
	return true;
}

bool am_symbolize_begin(void)
{
	struct timespec ms = { 0, 1000000 };
	pid_t me, held;

	if (!am_opt.symbolize || tl_busy || __atomic_load_n(&given_up, __ATOMIC_ACQUIRE))
		return false;
	me = getpid();
	/* The holder is done within TIMEOUT_MS, printing aside. */
	for (int i = 0; i < TIMEOUT_MS + 1000; i++) {
		held = 0;
		if (__atomic_compare_exchange_n(&sym_lock, &held, me, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED) ||
		    (held != me &&
		     __atomic_compare_exchange_n(&sym_lock, &held, me, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))) {
			tl_busy = true;
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &tl_cancel);
			return true;
		}
		nanosleep(&ms, NULL);
	}
	return false;
}

void am_symbolize_end(void)
{
	tl_busy = false;
	__atomic_store_n(&sym_lock, 0, __ATOMIC_RELEASE);
	pthread_setcancelstate(tl_cancel, NULL);
}

/* One eu-addr2line process for @n pcs; false: no answer. */
static bool ask(const uintptr_t *pcs, int n, struct am_symbol *syms)
{
	uint64_t all = ~0ULL, old;
	int fds[2], status, err;
	enum outcome got;
	size_t len = 0;
	char *p, *end;
	pid_t pid;

	argv_buf[0] = "eu-addr2line";
	put_pid_arg(getpid());
	argv_buf[1] = pid_arg;
	argv_buf[2] = "-a";	/* each entry starts with its address */
	argv_buf[3] = "-f";	/* then the function */
	argv_buf[4] = "-C";	/* demangled */
	for (int i = 0; i < n; i++) {
		put_hex(addr_arg[i], pcs[i]);
		argv_buf[FIXED_ARGS + i] = addr_arg[i];
	}
	argv_buf[FIXED_ARGS + n] = NULL;

	if (pipe2(fds, O_CLOEXEC))
		return false;
	/* No handler of ours may run in the child before it resets them. */
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));
	child_out = fds[1];
	child_errno = 0;
	pid = clone(child, child_stack + sizeof(child_stack),
		    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	err = errno;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		if (am_opt.verbose)
			am_printf("    (adimalloc: cannot start " AM_ADDR2LINE ": %s)\n",
				  err_name(err));
		return false;
	}
	got = child_errno ? BROKEN : read_answer(fds[0], 3 * n, &len);
	close(fds[0]);
	if (got != ANSWERED)
		kill(pid, SIGKILL);
	/* That pid only (ECHILD: the program reaped it, or ignores SIGCHLD). */
	status = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (child_errno) {
		give_up();
		am_printf("    (adimalloc: cannot run " AM_ADDR2LINE " (%s)%s; function "
			  "names from dladdr())\n", err_name(child_errno),
			  child_errno == ENOENT ? ": install elfutils for file:line" : "");
		return false;
	}
	if (got == TIMED_OUT) {
		give_up();
		am_printf("    (adimalloc: " AM_ADDR2LINE " gave no answer within "
			  AM_STR(TIMEOUT_S) " s: function names from dladdr() from "
			  "now on)\n");
		return false;
	}
	if (got == TOO_LONG)
		return false;
	p = answer;
	end = answer + len;
	for (int i = 0; i < n; i++)
		if (got != ANSWERED || !parse_entry(&p, end, pcs[i], &syms[i])) {
			give_up();
			am_printf("    (adimalloc: no answer from " AM_ADDR2LINE " that "
				  "adimalloc can read (%zu bytes, exit status %d): function "
				  "names from dladdr() from now on)\n", len,
				  status == -1 ? -1 : WIFEXITED(status) ?
				  WEXITSTATUS(status) : 128 + WTERMSIG(status));
			return false;
		}
	return true;
}

/* ---- the cache ---- */

/* @pc's module, as a key; 0: in none (not cached). */
static uint64_t module_of(uintptr_t pc)
{
	Dl_info info;
	uint64_t h;

	if (!dladdr((void *)pc, &info) || !info.dli_fname)
		return 0;
	h = 14695981039346656037ULL ^ (uint64_t)(uintptr_t)info.dli_fbase;
	for (const char *c = info.dli_fname; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	return h | 1;
}

static struct cached *slot(uintptr_t pc, uint64_t module, bool *found)
{
	uint32_t h = (uint32_t)((pc ^ pc >> 17) * 2654435761u);
	struct cached *free_slot = NULL;

	for (int i = 0; i < CACHE_PROBES; i++) {
		struct cached *c = &cache[(h + i) % CACHE_SLOTS];

		if (c->pc == pc && c->module == module) {
			*found = true;
			return c;
		}
		if (!c->pc && !free_slot)
			free_slot = c;
	}
	*found = false;
	return free_slot;
}

static const char *from_arena(uint32_t off)
{
	return off ? arena + off - 1 : NULL;
}

/* @s into the arena: its offset + 1; 0 for NULL or when full. */
static uint32_t to_arena(const char *s, bool *full)
{
	size_t len;

	if (!s)
		return 0;
	len = strlen(s) + 1;
	if (arena_used + len > sizeof(arena)) {
		*full = true;
		return 0;
	}
	memcpy(arena + arena_used, s, len);
	arena_used += len;
	return (uint32_t)(arena_used - len + 1);
}

bool am_symbolize(const uintptr_t *pcs, int n, struct am_symbol *syms)
{
	uintptr_t ask_pcs[AM_STACK_MAX];
	struct am_symbol answers[AM_STACK_MAX];
	int asked[AM_STACK_MAX], k = 0;
	uint64_t module[AM_STACK_MAX];

	if (n <= 0 || n > AM_STACK_MAX || __atomic_load_n(&given_up, __ATOMIC_ACQUIRE))
		return false;
	if (arena_used > sizeof(arena) / 2) {
		memset(cache, 0, sizeof(cache));
		arena_used = 0;
	}
	for (int i = 0; i < n; i++) {
		struct cached *c;
		bool found;

		module[i] = module_of(pcs[i]);
		c = module[i] ? slot(pcs[i], module[i], &found) : NULL;
		if (c && found) {
			syms[i].function = from_arena(c->function);
			syms[i].file = from_arena(c->file);
			syms[i].line = c->line;
		} else {
			asked[k] = i;
			ask_pcs[k++] = pcs[i];
		}
	}
	if (!k)
		return true;
	if (!ask(ask_pcs, k, answers))
		return false;
	for (int j = 0; j < k; j++) {
		int i = asked[j];
		struct cached *c;
		bool found, full = false;
		uint32_t fn, file;

		syms[i] = answers[j];
		c = module[i] ? slot(pcs[i], module[i], &found) : NULL;
		if (!c || found)
			continue;
		fn = to_arena(answers[j].function, &full);
		file = to_arena(answers[j].file, &full);
		if (full)
			continue;
		*c = (struct cached){ pcs[i], module[i], fn, file, answers[j].line };
	}
	return true;
}

#ifdef AM_SYMBOLIZE_SELFTEST
/*
 * make -C adimalloc check-symbolize, on the build host (no ADI needed):
 * this program prints one frame, its call of print_caller(), as a report
 * prints a stack; the Makefile checks the function and line named.
 */
static __attribute__((noinline)) void print_caller(void)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);

	am_stack_print(&pc, 1);
}

int main(void)
{
	print_caller();		/* the line check-symbolize wants */
	return 0;
}
#endif
