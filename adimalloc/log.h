/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adimalloc's logging: one formatted message to stderr.  A leaf of the
 * library: it knows nothing of the heap, stacks or reports, so the heap
 * and the stack depot can print warnings without depending on report.c.
 */
#ifndef ADIMALLOC_LOG_H
#define ADIMALLOC_LOG_H

void am_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
