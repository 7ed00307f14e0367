/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * adimalloc's logging: one formatted message to stderr (or log_path).  A leaf of the
 * library: it knows nothing of the heap, stacks or reports, so the heap
 * and the stack depot can print warnings without depending on report.c.
 */
#ifndef ADIMALLOC_LOG_H
#define ADIMALLOC_LOG_H

#include <stddef.h>

#define AM_LOG_PATH_MAX 256	/* log_path=PATH: longest PATH, with its NUL */

void am_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Messages go to @path.PID from now on (@len < AM_LOG_PATH_MAX, checked). */
void am_log_set_path(const char *path, size_t len);

#endif
