// SPDX-License-Identifier: GPL-2.0
/*
 * A pointer stored through itself ("mov %rdi,(%rdi)", as in a circular
 * list's head->next = head) must keep its version.  The kernel executes a
 * matching access with the version stripped from the address register, so
 * if it does not put the version back into the stored value, the program
 * later compares a stripped and a versioned pointer and goes wrong (seen in
 * libstdc++ through apt-config: std::string's local-buffer test fails and
 * it frees an interior pointer).  Prints SAME or STRIPPED.
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
