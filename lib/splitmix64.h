/* SPDX-License-Identifier: GPL-2.0 */
/*
 * splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): small, seedable, the same stream on every
 * machine, and a good finalizer for seeding other generators (neighbouring
 * seeds give unrelated outputs).  The one copy for tests, tools and
 * adimalloc.
 */
#ifndef LK417_SPLITMIX64_H
#define LK417_SPLITMIX64_H

#include <stdint.h>

/* Advance *@state and return the next output. */
static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif
