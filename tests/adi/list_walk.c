// SPDX-License-Identifier: GPL-2.0
/*
 * A linked list built and walked through versioned pointers: compiled
 * twice, at -O0 and at -O2, so both code shapes meet the checker.
 */
#include <stddef.h>
#include <stdint.h>

#include "libadi.h"

struct node {
	struct node *next;
	uint64_t value;
	char pad[48];		/* one node per 64-byte block */
};

/* Link @n nodes at @base (block-aligned), node i with version 1 + i % 14. */
struct node *LIST_FN(build)(void *base, int n)
{
	struct node *head = NULL;

	for (int i = n - 1; i >= 0; i--) {
		struct node *node = adi_make_ptr((char *)base + i * 64, 1 + i % 14);

		node->value = (uint64_t)i * 3;
		node->next = head;
		head = node;
	}
	return head;
}

uint64_t LIST_FN(sum)(const struct node *head)
{
	uint64_t sum = 0;

	for (; head; head = head->next)
		sum += head->value;
	return sum;
}
