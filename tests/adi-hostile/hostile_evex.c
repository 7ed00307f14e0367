// SPDX-License-Identifier: GPL-2.0
/*
 * The checker decodes the faulting instruction again from user memory, so
 * a second thread can rewrite it between the #GP and the decoding.  That
 * is the one way a program on a CPU without AVX-512 (QEMU's TCG) can make
 * the kernel check an EVEX access: such a CPU raises #UD for EVEX before
 * any #GP.  Here thread A calls a one-instruction function, a load
 * through a matching versioned pointer, while thread B swaps that
 * instruction for two EVEX loads of the same
 * length: a masked one (vmovdqu8 (%rax),%zmm0{%k1}) and a whole one
 * (vmovdqu64 (%rax),%zmm0).  It swaps whole pages (mmap(MAP_FIXED) of
 * one of three pages of a memfd), not bytes: code written while another
 * CPU fetches it may be fetched torn (with 8-byte stores under TCG, 30 of
 * 48,082 loads returned a wrong value and 41 calls died of SEGV_MAPERR,
 * which no ADI path raises: what a torn mix of two forms would do), and
 * what is tested here is the kernel, not cross-modifying code.
 *
 * Wanted: the masked form, whose opmask the kernel cannot read on a CPU
 * without opmask state, is refused with a plain SIGSEGV (SI_KERNEL), no
 * WARNING in the kernel log (the runner fails the suite on one); the
 * whole form is checked and stepped (the CPU then raises #UD: SIGILL);
 * every load that completes reads the right value; no SIGTRAP (a step
 * left behind); the process ends in time.  The count of refusals shows
 * that the rewrite won the race at all.
 */
#include <pthread.h>
#include <setjmp.h>

#include "hostile.h"

#define VER	9
#define DATA	0x1122334455667788ULL
#define LIMIT_MS 20000

/* Eight bytes each: the instruction, ret, int3. */
static const uint8_t form_mov[8] = { 0x48, 0x8b, 0x18, 0x0f, 0x1f, 0x00, 0xc3, 0xcc };
static const uint8_t form_masked[8] = { 0x62, 0xf1, 0x7f, 0x49, 0x6f, 0x00, 0xc3, 0xcc };
static const uint8_t form_whole[8] = { 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x00, 0xc3, 0xcc };

struct evex_result {
	long completed, wrong_value, wrong_rax;
	long segv_kernel, segv_other, sigill, sigtrap, other;
	int last_segv_code, other_signo;
	long swaps;
};

static struct evex_result *res;
static uint8_t *code;		/* the function: a page of forms_fd */
static int forms_fd;		/* a memfd: page i holds forms[i] */
static uint64_t *data;		/* ADI memory, version VER */
static volatile int stop;
static sigjmp_buf jump_back;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (sig == SIGSEGV && si->si_code == SI_KERNEL) {
		res->segv_kernel++;
	} else if (sig == SIGSEGV) {
		res->segv_other++;
		res->last_segv_code = si->si_code;
	} else if (sig == SIGILL) {
		res->sigill++;
	} else if (sig == SIGTRAP) {
		res->sigtrap++;
	} else {
		res->other++;
		res->other_signo = sig;
	}
	siglongjmp(jump_back, 1);
}

static const uint8_t *const forms[3] = { form_mov, form_masked, form_whole };

/* Map page @i of forms_fd (forms[i]) at @code, replacing what is there. */
static int map_form(unsigned int i)
{
	void *p = mmap(code, 4096, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED,
		       forms_fd, i * 4096L);

	return p == MAP_FAILED ? -1 : 0;
}

static void *swapper(void *arg)
{
	static const unsigned int order[4] = { 0, 1, 0, 2 };
	unsigned int i = 0;

	(void)arg;
	while (!stop) {
		if (map_form(order[i++ & 3]))
			break;
		res->swaps++;
	}
	map_form(0);
	return NULL;
}

/*
 * Call the page's function with rax = the versioned pointer; rbx is what
 * it loaded, and rax must come back with its version.
 */
static uint64_t call_slot(void *vptr, uint64_t *rax_after)
{
	uint64_t rbx = 0, rax = (uint64_t)vptr;

	__asm__ volatile("sub $128, %%rsp\n\tcall *%[fn]\n\tadd $128, %%rsp"
			 : "+b"(rbx), "+a"(rax) : [fn] "r"(code)
			 : "memory", "cc", "xmm0");
	*rax_after = rax;
	return rbx;
}

static void race_child(void *arg)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_NODEFER };
	void *vptr = adi_make_ptr(data, VER);
	long long end = now_ms() + *(long *)arg * 1000;
	pthread_t t;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	if (pthread_create(&t, NULL, swapper, NULL))
		_exit(5);
	while (now_ms() < end) {
		uint64_t got, rax;

		hb_beat("call the slot");
		if (sigsetjmp(jump_back, 1))
			continue;
		got = call_slot(vptr, &rax);
		res->completed++;
		if (got != DATA)
			res->wrong_value++;
		if (rax != (uint64_t)vptr)
			res->wrong_rax++;
	}
	stop = 1;
	pthread_join(t, NULL);
}

static void test_evex_rewrite(void)
{
	const char *what = "evex-rewrite";
	long seconds = hostile_seconds(3, 60);
	struct bounded r;

	unsigned int i;

	res = hostile_shared(sizeof(*res));
	forms_fd = memfd_create("adi-hostile-forms", 0);
	data = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_ADI,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (forms_fd < 0 || ftruncate(forms_fd, 3 * 4096) || data == MAP_FAILED ||
	    adi_set_version(data, 4096, VER)) {
		tap_ok(0, "%s: set-up (forms memfd, ADI page): %s", what, strerror(errno));
		return;
	}
	for (i = 0; i < 3; i++)
		if (pwrite(forms_fd, forms[i], 8, i * 4096L) != 8) {
			tap_ok(0, "%s: set-up: pwrite: %s", what, strerror(errno));
			return;
		}
	code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, forms_fd, 0);
	if (code == MAP_FAILED) {
		tap_ok(0, "%s: set-up: mmap of the forms: %s", what, strerror(errno));
		return;
	}
	*data = DATA;
	run_bounded(race_child, &seconds, seconds * 1000 + LIMIT_MS * hostile_slow(), &r);
	note_wedged(&r);
	check_finished(what, &r, seconds * 1000 + LIMIT_MS * hostile_slow());
	tap_diag("%s: %ld page swaps, %ld loads completed, %ld refused (SIGSEGV SI_KERNEL), %ld SIGILL",
		 what, res->swaps, res->completed, res->segv_kernel, res->sigill);
	tap_ok(res->segv_kernel > 0,
	       "%s: the kernel decoded a rewritten masked EVEX load and refused it "
	       "(got %ld SIGSEGV SI_KERNEL, want > 0)", what, res->segv_kernel);
	tap_ok(res->completed > 0, "%s: loads completed (got %ld, want > 0)", what,
	       res->completed);
	tap_eq_long(res->wrong_value, 0, "%s: loads that completed read the block: wrong values "
		    "(of %ld loads)", what, res->completed);
	tap_eq_long(res->wrong_rax, 0, "%s: the address register came back with its version",
		    what);
	tap_eq_long(res->segv_other, 0, "%s: no other SIGSEGV (last si_code %d)", what,
		    res->last_segv_code);
	tap_eq_long(res->sigtrap, 0, "%s: no SIGTRAP (a single-step left behind)", what);
	tap_eq_long(res->other, 0, "%s: no other signal (last %d)", what, res->other_signo);
}

int main(void)
{
	tap_init();
	hostile_group("evex-rewrite", test_evex_rewrite);
	return tap_done();
}
