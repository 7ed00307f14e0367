// SPDX-License-Identifier: GPL-2.0
/*
 * dlopen() of heap paths whose terminator lies at every offset of a 64-byte
 * block (issue 42).  ld.so runs its own copies of the string functions
 * (strlen() of the name in _dl_new_object(), strcmp(), strdup()), which
 * read whole vectors past a string's end: under adimalloc's full mode
 * those loads cross into the next block, of another version, and are
 * false reports unless ld.so's code is a read-ahead range.
 *
 *     dlopen LIB DIR
 *
 * makes symlinks to LIB in DIR with names of every length from 1 to
 * NAMES, and for each, ROUNDS times: copies DIR/NAME into a malloc()ed
 * block (the allocator draws where in its slot the block goes), dlopen()s
 * it, calls dltiny_answer() and dlclose()s it, so that every dlopen()
 * loads the object afresh.  Where the terminator lands depends on the
 * allocator's draw, so offsets still missing after that are then filled:
 * paths are drawn again, up to FILL_PASSES passes over the lengths, and
 * only those ending on a new offset are loaded.  The test so covers every
 * offset whatever the draws were, instead of failing on an unlucky run.
 * Prints
 *     PASS|FAIL CASE: got RESULT, want RESULT
 * and "N failed" last; exits 1 when any failed.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAMES	140	/* name lengths 1..NAMES: >2 blocks of terminators */
#define ROUNDS	4	/* copies per name: both placements in a slot, likely */
#define BLOCK	64
#define FILL_PASSES 64	/* 140 random draws miss an offset ~1 time in 9 */

static int failed;

static void result(int good, const char *what, const char *got, const char *want)
{
	failed += !good;
	printf("%s %s: got %s, want %s\n", good ? "PASS" : "FAIL", what, got, want);
}

/* DIR/xxx...x with a name of @len bytes, in a fresh malloc()ed block. */
static char *link_path(const char *dir, size_t len)
{
	size_t dlen = strlen(dir);
	char *p = malloc(dlen + 1 + len + 1);

	if (!p)
		return NULL;
	memcpy(p, dir, dlen);
	p[dlen] = '/';
	memset(p + dlen + 1, 'x', len);
	p[dlen + 1 + len] = 0;
	return p;
}

static int make_links(const char *lib, const char *dir)
{
	for (size_t len = 1; len <= NAMES; len++) {
		char *p = link_path(dir, len);

		if (!p || symlink(lib, p)) {
			perror(p ? p : "malloc");
			free(p);
			return -1;
		}
		free(p);
	}
	return 0;
}

/* One load of @path; returns 0 when it loaded and ran, else -1 (printed). */
static int load_once(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	int (*answer)(void);
	int got;

	if (!h) {
		printf("FAIL dlopen(%s): got NULL (%s), want a handle\n", path, dlerror());
		return -1;
	}
	answer = (int (*)(void))dlsym(h, "dltiny_answer");
	got = answer ? answer() : -1;
	dlclose(h);
	if (got != 42) {
		printf("FAIL dltiny_answer() through %s: got %d, want 42\n", path, got);
		return -1;
	}
	return 0;
}

/* Terminator offset of @p in its 64-byte block, below its version bits. */
static unsigned int end_offset(const char *p)
{
	return ((uintptr_t)p + strlen(p)) % BLOCK;
}

int main(int argc, char **argv)
{
	uint64_t seen = 0;	/* terminator offsets in a block, one bit each */
	int loads = 0, bad = 0, offsets;
	char got[64], want[64];

	if (argc != 3) {
		fprintf(stderr, "usage: dlopen LIB DIR\n");
		return 2;
	}
	if (make_links(argv[1], argv[2]))
		return 2;
	for (size_t len = 1; len <= NAMES; len++) {
		for (int r = 0; r < ROUNDS; r++) {
			char *p = link_path(argv[2], len);

			if (!p)
				return 2;
			seen |= 1ULL << end_offset(p);
			bad += load_once(p) != 0;
			loads++;
			free(p);
		}
	}
	for (int pass = 0; pass < FILL_PASSES && ~seen; pass++) {
		for (size_t len = 1; len <= NAMES && ~seen; len++) {
			char *p = link_path(argv[2], len);
			uint64_t bit;

			if (!p)
				return 2;
			bit = 1ULL << end_offset(p);
			if (!(seen & bit)) {
				seen |= bit;
				bad += load_once(p) != 0;
				loads++;
			}
			free(p);
		}
	}
	snprintf(got, sizeof(got), "%d of %d", loads - bad, loads);
	snprintf(want, sizeof(want), "%d of %d", loads, loads);
	result(loads > 0 && bad == 0, "dlopen() of heap paths, loaded and run", got, want);
	offsets = __builtin_popcountll(seen);
	snprintf(got, sizeof(got), "%d of %d", offsets, BLOCK);
	snprintf(want, sizeof(want), "%d of %d", BLOCK, BLOCK);
	result(offsets == BLOCK, "offsets of the paths' terminators in their 64-byte block", got,
	       want);
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
