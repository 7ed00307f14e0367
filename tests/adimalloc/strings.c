// SPDX-License-Identifier: GPL-2.0
/*
 * Heap strings of every length from 0 to 300 through glibc's string
 * functions.  Those functions read whole vectors past the end of a string;
 * under adimalloc that must never be reported (libc's read-ahead ranges).
 * Prints one checksum line per function family (printf's %s forms too),
 * identical under any malloc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	unsigned long sum[9] = { 0 };
	char line[1024];

	for (size_t len = 0; len <= 300; len++) {
		char *s = malloc(len + 1), *t = malloc(len + 1), *u = malloc(2 * len + 1);
		char *d;

		for (size_t i = 0; i < len; i++)
			s[i] = (char)('a' + (i * 7 + len) % 26);
		s[len] = 0;
		sum[0] += strlen(s) + strnlen(s, 400);
		strcpy(t, s);
		sum[1] += (unsigned long)(strcmp(s, t) == 0) + (unsigned long)(strncmp(s, t, len) == 0) +
			  (unsigned long)(memcmp(s, t, len) == 0);
		sum[2] += (unsigned long)(strchr(s, 'z') ? strchr(s, 'z') - s : 1000) +
			  (unsigned long)(strrchr(s, 'a') ? strrchr(s, 'a') - s : 2000) +
			  (unsigned long)(memchr(s, 'q', len) ? 1 : 0) + (unsigned long)(strchr(s, 0) - s);
		d = strdup(s);
		sum[3] += strlen(d);
		strcpy(u, s);
		strcat(u, t);
		sum[4] += strlen(u) + (unsigned long)(strstr(u, "xyz") != NULL) +
			  (unsigned long)(len > 3 && strstr(u, s + len - 3) != NULL);
		memmove(u + 1, u, len);
		sum[5] += (unsigned char)u[len];
		sum[6] += strspn(s, "abcdefghijklm") + strcspn(s, "nop");
		sum[7] += (unsigned long)(strcasecmp(s, t) == 0) + (unsigned long)snprintf(NULL, 0, "%s", s);
		/* printf's %s forms (checked by a %s handler in full mode). */
		snprintf(line, sizeof(line), "%s|%12s|%-9s|%.3s|%*.*s|%c%s|%d", s, t, s, t,
			 (int)(len % 13), (int)(len % 7), s, 'x', s + len / 2, (int)len);
		for (const char *c = line; *c; c++)
			sum[8] = sum[8] * 31 + (unsigned char)*c;
		free(d);
		free(u);
		free(t);
		free(s);
	}
	/* A NULL %s: glibc prints "(null)", with the check as without. */
	{
		const char *volatile none = NULL;

		snprintf(line, sizeof(line), "%s|%.3s|%10s", none, none, none);
		for (const char *c = line; *c; c++)
			sum[8] = sum[8] * 31 + (unsigned char)*c;
	}
	for (int i = 0; i < 9; i++)
		printf("sum%d %lu\n", i, sum[i]);
	return 0;
}
