// SPDX-License-Identifier: GPL-2.0
/*
 * TAP output, and the words every part uses for accesses, registers and
 * what the CPU did.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"

struct tap_counts tap_counts;

const char *const gpr_name[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

void tap_result(int ok, const char *skip, const char *todo, const char *fmt, ...)
{
	va_list ap;

	if (ok || skip)
		todo = NULL;
	tap_counts.n++;
	if (skip)
		tap_counts.skip++;
	else if (ok)
		tap_counts.pass++;
	else if (todo)
		tap_counts.todo++;
	else
		tap_counts.fail++;
	printf("%s %u - ", ok || skip ? "ok" : "not ok", tap_counts.n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (skip)
		printf(" # SKIP %s", skip);
	if (todo)
		printf(" # TODO %s", todo);
	printf("\n");
}

void describe_access(char *buf, size_t n, unsigned int size, bool r, bool w)
{
	snprintf(buf, n, "%u B %s", size, r && w ? "read+write" : r ? "read" : w ? "write" : "no access");
}

void describe_regs(char *buf, size_t n, uint16_t mask)
{
	size_t k = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < 16; i++)
		if (mask & (1 << i))
			k += snprintf(buf + k, k < n ? n - k : 0, "%s%s", k ? "," : "", gpr_name[i]);
	if (!k)
		snprintf(buf, n, "-");
}

const char *describe_cpu(const struct measure *m, char *buf, size_t n)
{
	size_t k;

	if (m->status != MEAS_DONE) {
		snprintf(buf, n, "not measured: %s", m->why);
		return buf;
	}
	if (!m->accesses) {
		snprintf(buf, n, "no memory access%s",
			 m->traps_versioned ? " (but #GP on a versioned address)" : ", never traps");
		return buf;
	}
	describe_access(buf, n, m->size, !m->write || m->read_seen, m->write);
	k = strlen(buf);
	if (m->mask_note)
		k += snprintf(buf + k, n - k, " (all-ones mask; the size depends on the mask)");
	if (m->mask_measured && m->size_mask1)
		k += snprintf(buf + k, n - k, ", %u B with element 0 alone", m->size_mask1);
	if (m->mask_measured)
		k += snprintf(buf + k, n - k, ", %s with none", m->mask0_accesses ? "an access" : "no access");
	if (m->below)
		k += snprintf(buf + k, n - k, " (and bytes below the address)");
	if (!m->traps_versioned)
		snprintf(buf + k, n - k, " (no #GP on a versioned address)");
	return buf;
}
