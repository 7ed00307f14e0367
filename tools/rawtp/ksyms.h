/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel text symbols from /proc/kallsyms, for naming stack addresses.
 * One loader for the rawtp tool and its test (tests/rawtp), so both read
 * a stack the same way.
 */
#ifndef KSYMS_H
#define KSYMS_H

#include <stdbool.h>
#include <stddef.h>

struct ksym {
	unsigned long long addr;
	char *name;
};

struct ksyms {
	struct ksym *syms;	/* sorted by address */
	size_t n;
	/*
	 * Every address read 0: kptr_restrict hides them from this process.
	 * The symbols are dropped then (n is 0): none could match.
	 */
	bool hidden;
};

/* 0, or -errno when /proc/kallsyms cannot be read (or memory runs out). */
int ksyms_load(struct ksyms *ks);

/* The text symbol at or below ADDR, NULL below the first one. */
const struct ksym *ksyms_find(const struct ksyms *ks, unsigned long long addr);

void ksyms_free(struct ksyms *ks);

#endif
