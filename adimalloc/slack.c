// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Slack: the bytes of an allocation's versioned blocks that the program
 * did not ask for.  A version covers 64-byte blocks and malloc() returns
 * 16-byte aligned pointers, so up to 63 bytes before or after the requested
 * range carry the allocation's own version: an access there matches and
 * traps nowhere.  They are filled with a pattern when the block is handed
 * out and checked when it is freed (or reallocated), so that a write past
 * either edge, even of one byte, is reported at the latest then, with the
 * allocation's stack.  Reads there stay unseen.
 *
 * The pattern is never 0: the most common one-byte overflow writes a
 * string's terminating NUL one past the end.
 */
#include <string.h>

#include "internal.h"

#define SLACK_BYTE 0xa5

/* The versioned range around [start, start + size): [*lo, *hi). */
static void versioned_range(uintptr_t start, size_t size, uintptr_t *lo, uintptr_t *hi)
{
	*lo = am_round_down(start, AM_BLOCK);
	*hi = am_round_up(start + (size ? size : 1), AM_BLOCK);
}

void am_slack_fill(uintptr_t start, size_t size)
{
	uintptr_t lo, hi;

	versioned_range(start, size, &lo, &hi);
	memset((void *)lo, SLACK_BYTE, start - lo);
	memset((void *)(start + size), SLACK_BYTE, hi - (start + size));
}

/* The first byte of [from, to) that is not the pattern, or 0. */
static uintptr_t first_changed(uintptr_t from, uintptr_t to)
{
	for (uintptr_t a = from; a < to; a++)
		if (*(const unsigned char *)a != SLACK_BYTE)
			return a;
	return 0;
}

/* The last byte of [from, to) that is not the pattern, or 0. */
static uintptr_t last_changed(uintptr_t from, uintptr_t to)
{
	for (uintptr_t a = to; a > from; a--)
		if (*(const unsigned char *)(a - 1) != SLACK_BYTE)
			return a - 1;
	return 0;
}

bool am_slack_check(const struct am_chunk *c, struct am_slack_damage *d)
{
	uintptr_t lo, hi, end = c->start + c->size;

	versioned_range(c->start, c->size, &lo, &hi);
	/* Overflows first: they are the common case, and a block rarely has
	 * both. */
	d->first = first_changed(end, hi);
	if (d->first) {
		d->last = last_changed(d->first, hi);
		d->after = true;
		return true;
	}
	d->last = last_changed(lo, c->start);
	if (d->last) {
		d->first = first_changed(lo, d->last + 1);
		d->after = false;
		return true;
	}
	return false;
}
