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

int main(void)
{
	static char buf[4096] __attribute__((aligned(4096))) = "/tmp";
	void *v = adi_make_ptr(buf, 5);
	void *kernel = (void *)0xffff888000000000UL;
	long checks0, ret;
	int p[2], err;

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
	tap_eq_long(write(p[1], "x", 1), 1, "no ADI: a byte into the pipe");
	tap_errno(read(p[0], v, 1), EFAULT, "no ADI: read into a pointer with bits 63:60 set");
	tap_errno(write(p[1], v, 1), EFAULT, "no ADI: write from it");
	tap_errno(syscall(SYS_getcwd, v, 64), EFAULT, "no ADI: getcwd into it");
	tap_errno(uname(v), EFAULT, "no ADI: uname into it");
	tap_errno(open(v, O_RDONLY), EFAULT, "no ADI: open with a path there");
	ret = mprotect(v, 4096, PROT_READ);
	err = errno;
	tap_ok(ret == -1 && (err == ENOMEM || err == EINVAL),
	       "no ADI: mprotect of such an address fails (got %ld, %s; want -1, ENOMEM or EINVAL)",
	       ret, tap_errname(err));
	adi_expect_no_signal(TRY(buf[1] = 'x'), "no ADI: and the page stays writable");
	tap_errno(read(p[0], kernel, 1), EFAULT, "no ADI: read into a kernel address");
	tap_errno(write(p[1], kernel, 1), EFAULT, "no ADI: write from a kernel address");
	tap_eq_long(adi_counter("uaccess_checks") - checks0, 0,
		    "no ADI: the kernel checked nothing for this process (uaccess_checks added)");
	tap_eq_long(read(p[0], buf, 1), 1, "no ADI: the pipe still holds a byte");
	tap_eq_long(buf[0], 'x', "no ADI: and it is the byte written");
	return tap_done();
}
