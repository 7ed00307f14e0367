// SPDX-License-Identifier: GPL-2.0
/* Kernel text symbols from /proc/kallsyms: see ksyms.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ksyms.h"

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int ksyms_add(struct ksyms *ks, size_t *cap, unsigned long long addr,
		     const char *name)
{
	if (ks->n == *cap) {
		size_t new_cap = *cap ? 2 * *cap : 4096;
		struct ksym *s = realloc(ks->syms, new_cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		ks->syms = s;
		*cap = new_cap;
	}
	ks->syms[ks->n].name = strdup(name);
	if (!ks->syms[ks->n].name)
		return -ENOMEM;
	ks->syms[ks->n].addr = addr;
	ks->n++;
	return 0;
}

/* Only text symbols ('t', 'T'): stack addresses are code. */
static int ksyms_read(struct ksyms *ks, FILE *f)
{
	unsigned long long addr;
	char type, name[256], line[512];
	size_t cap = 0;
	bool nonzero = false;
	int err;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T')
			continue;
		err = ksyms_add(ks, &cap, addr, name);
		if (err)
			return err;
		nonzero |= addr != 0;
	}
	ks->hidden = ks->n && !nonzero;
	return 0;
}

int ksyms_load(struct ksyms *ks)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	int err;

	memset(ks, 0, sizeof(*ks));
	if (!f)
		return -errno;
	err = ksyms_read(ks, f);
	fclose(f);
	if (err || ks->hidden) {
		bool hidden = ks->hidden;

		ksyms_free(ks);
		ks->hidden = hidden;
		return err;
	}
	qsort(ks->syms, ks->n, sizeof(*ks->syms), cmp_ksym);
	return 0;
}

const struct ksym *ksyms_find(const struct ksyms *ks, unsigned long long addr)
{
	size_t lo = 0, hi = ks->n;

	/* lo ends one past the last symbol at or below addr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ks->syms[lo - 1] : NULL;
}

void ksyms_free(struct ksyms *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		free(ks->syms[i].name);
	free(ks->syms);
	memset(ks, 0, sizeof(*ks));
}
