// SPDX-License-Identifier: GPL-2.0
/* The smallest shared library dlopen.c loads: one symbol to look up. */
int dltiny_answer(void);

int dltiny_answer(void)
{
	return 42;
}
