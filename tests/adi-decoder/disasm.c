// SPDX-License-Identifier: GPL-2.0
/*
 * Mnemonics for the report.  The kernel's decoder knows lengths and
 * fields, not names, so objdump (binutils, which gcc depends on)
 * disassembles the representative of each class, all of them in one run
 * over a scratch file.  Without objdump the report says "?".
 *
 * Each instruction has a slot of its own, padded with int3: where objdump
 * reads an instruction shorter or longer than the kernel's decoder does
 * (XOP, LKGS: "(bad)"), it is back in step by the next slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"

/* Bytes per instruction: 15 at most, then int3 for objdump to find its step again. */
#define SLOT 32

void disasm_many(size_t n, const uint8_t (*bytes)[16], const uint8_t *len,
		 char (*text)[80])
{
	char path[] = "/tmp/adi-decoder-XXXXXX", cmd[256], line[512];
	size_t i, off = 0, *start;
	FILE *f, *p;
	int fd;

	for (i = 0; i < n; i++)
		snprintf(text[i], sizeof(text[i]), "?");
	start = calloc(n + 1, sizeof(*start));
	fd = mkstemp(path);
	if (!start || fd < 0 || !(f = fdopen(fd, "w"))) {
		free(start);
		return;
	}
	for (i = 0; i < n; i++) {
		static const uint8_t int3[SLOT] = { [0 ... SLOT - 1] = 0xcc };

		start[i] = off;
		fwrite(bytes[i], 1, len[i], f);
		fwrite(int3, 1, SLOT - len[i], f);
		off += SLOT;
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "objdump -D -b binary -m i386:x86-64 --insn-width=16 %s 2>/dev/null", path);
	p = popen(cmd, "r");
	/* "   1a:\t48 8b 07 ...\tmov    (%rdi),%rax": offset, bytes, text. */
	while (p && fgets(line, sizeof(line), p)) {
		char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
		unsigned long at;
		size_t lo = 0, hi = n;

		if (!tab2 || sscanf(line, " %lx:", &at) != 1)
			continue;
		tab2[strcspn(tab2, "\n")] = 0;
		while (lo < hi) {		/* the instruction that starts at @at */
			size_t mid = (lo + hi) / 2;

			if (start[mid] < at)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && start[lo] == at) {
			char *s = tab2 + 1, *d = text[lo];
			size_t k = 0;

			/*
			 * Squeeze objdump's column padding; drop its "# 0x..."
			 * comment, a RIP-relative target in the scratch file.
			 */
			s[strcspn(s, "#")] = 0;
			for (; *s && k + 1 < sizeof(text[lo]); s++)
				if (*s != ' ' || (k && d[k - 1] != ' '))
					d[k++] = *s;
			while (k && d[k - 1] == ' ')
				k--;
			d[k] = 0;
		}
	}
	if (p)
		pclose(p);
	unlink(path);
	free(start);
}
