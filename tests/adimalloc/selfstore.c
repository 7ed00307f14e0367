// SPDX-License-Identifier: GPL-2.0
/*
 * A pointer stored through itself ("mov %rdi,(%rdi)", as in a circular
 * list's head->next = head) must keep its version.  The kernel steps a
 * matching access with the version stripped from the address register;
 * it must not store that stripped value.  (It once did: in apt-config,
 * libstdc++'s std::string then failed its local-buffer test and freed an
 * interior pointer.)  Prints SAME or STRIPPED.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	void **p = malloc(64);

	__asm__ volatile("mov %0, (%0)" : : "r"(p) : "memory");
	printf("%s\n", *p == (void *)p ? "SAME" : "STRIPPED");
	free(p);
	return 0;
}
