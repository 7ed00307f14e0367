// SPDX-License-Identifier: GPL-2.0
/*
 * The adi-syscall suite, the other side: a process without ADI mappings.
 * Bits 63:60 of its pointers are not a version but garbage, and system
 * calls must refuse such pointers exactly as a kernel without ADI does,
 * even while other processes use ADI (the static key is on).
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "adi_test.h"

static int efault(long ret)
{
	return ret == -1 && errno == EFAULT;
}

int main(void)
{
	static char buf[4096] __attribute__((aligned(4096))) = "/tmp";
	void *v = adi_make_ptr(buf, 5);
	void *kernel = (void *)0xffff888000000000UL;
	long checks0, ret;
	int p[2];

	tap_init();
	if (!adi_is_available()) {
		tap_skip("no ADI in this kernel", "adi-syscall: process without ADI");
		return tap_done();
	}
	/* Some process has used ADI, so the kernel's slow paths are live. */
	if (fork() == 0) {
		void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_ADI,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		_exit(m == MAP_FAILED || adi_set_version(m, 64, 3));
	}
	wait(NULL);

	checks0 = adi_counter("uaccess_checks");
	if (pipe(p))
		return 1;
	tap_ok(write(p[1], "x", 1) == 1 && efault(read(p[0], v, 1)),
	       "no ADI: read into a pointer with bits 63:60 set: EFAULT");
	tap_ok(efault(write(p[1], v, 1)), "no ADI: write from it: EFAULT");
	tap_ok(efault(syscall(SYS_getcwd, v, 64)), "no ADI: getcwd into it: EFAULT");
	tap_ok(efault(uname(v)), "no ADI: uname into it: EFAULT");
	tap_ok(efault(open(v, O_RDONLY)), "no ADI: open with a path there: EFAULT");
	ret = mprotect(v, 4096, PROT_READ);
	tap_ok(ret == -1 && (errno == ENOMEM || errno == EINVAL) && TRY(buf[1] = 'x') == 0,
	       "no ADI: mprotect of such an address fails, the page stays writable");
	tap_ok(efault(read(p[0], kernel, 1)) && efault(write(p[1], kernel, 1)),
	       "no ADI: a kernel address: EFAULT");
	tap_ok(adi_counter("uaccess_checks") == checks0,
	       "no ADI: the kernel checked nothing for this process");
	tap_ok(read(p[0], buf, 1) == 1 && buf[0] == 'x', "no ADI: the pipe still holds the byte");
	return tap_done();
}
