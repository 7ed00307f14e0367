// SPDX-License-Identifier: GPL-2.0
/*
 * tests/lib/tap.h's group filter, on itself: three groups, "alpha",
 * "beta" and "gamma", each with one passing test.  Run with TAP_GROUPS
 * set, the groups not named there must each print a SKIP result, so that
 * the plan and the "N passed, N failed, N skipped" summary show that not
 * everything ran.  The smoke suite checks this program's output.
 */
#include "tap.h"

static void alpha(void)
{
	tap_ok(1, "alpha: ran");
}

static void beta(void)
{
	tap_ok(1, "beta: ran");
}

static void gamma_group(void)
{
	tap_ok(1, "gamma: ran");
}

int main(void)
{
	tap_init();
	tap_group("alpha", alpha);
	tap_group("beta", beta);
	tap_group("gamma", gamma_group);
	return tap_done();
}
