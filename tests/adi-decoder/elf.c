// SPDX-License-Identifier: GPL-2.0
/*
 * ELF64 files, mapped read-only: sections by name or address, function
 * symbols by address.  The shared libraries (insn_source.c) and vmlinux
 * (kernel_sites.c) are only ever read, never loaded, through these.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"

int elf_open(struct elf *e, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(e, 0, sizeof(*e));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	e->len = st.st_size;
	e->map = mmap(NULL, e->len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (e->map == MAP_FAILED)
		return -1;
	e->eh = (const Elf64_Ehdr *)e->map;
	if (memcmp(e->eh->e_ident, ELFMAG, SELFMAG) || e->eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->eh->e_shoff + (uint64_t)e->eh->e_shnum * sizeof(Elf64_Shdr) > e->len ||
	    e->eh->e_shstrndx >= e->eh->e_shnum) {
		munmap((void *)e->map, e->len);
		e->map = NULL;
		return -1;
	}
	e->sh = (const Elf64_Shdr *)(e->map + e->eh->e_shoff);
	return 0;
}

void elf_close(struct elf *e)
{
	if (e->map)
		munmap((void *)e->map, e->len);
	e->map = NULL;
}

const Elf64_Shdr *elf_section(const struct elf *e, const char *name)
{
	const Elf64_Shdr *strs = &e->sh[e->eh->e_shstrndx];
	int i;

	for (i = 0; i < e->eh->e_shnum; i++)
		if (e->sh[i].sh_name < strs->sh_size &&
		    !strcmp((const char *)e->map + strs->sh_offset + e->sh[i].sh_name, name))
			return &e->sh[i];
	return NULL;
}

/* The allocated section with file contents that holds [@addr, @addr + @len). */
const Elf64_Shdr *elf_section_at(const struct elf *e, uint64_t addr, uint64_t len)
{
	int i;

	for (i = 0; i < e->eh->e_shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];

		if ((s->sh_flags & SHF_ALLOC) && s->sh_type == SHT_PROGBITS &&
		    addr >= s->sh_addr && addr + len <= s->sh_addr + s->sh_size &&
		    s->sh_offset + s->sh_size <= e->len)
			return s;
	}
	return NULL;
}

/* The detached debug file: /usr/lib/debug/.build-id/xx/yyyy.debug. */
bool elf_debug_file(const struct elf *e, char *out, size_t len)
{
	const Elf64_Shdr *note = elf_section(e, ".note.gnu.build-id");
	const uint8_t *p, *id;
	Elf64_Nhdr nh;
	size_t n, i;

	if (getenv("ADI_DECODER_NO_DEBUG") || !note || note->sh_size < sizeof(nh))
		return false;
	p = e->map + note->sh_offset;
	memcpy(&nh, p, sizeof(nh));
	id = p + sizeof(nh) + ((nh.n_namesz + 3) & ~3U);
	if (nh.n_descsz < 2 || nh.n_descsz > 64)
		return false;
	n = snprintf(out, len, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (i = 1; i < nh.n_descsz && n + 3 < len; i++)
		n += snprintf(out + n, len - n, "%02x", id[i]);
	snprintf(out + n, len - n, ".debug");
	return access(out, R_OK) == 0;
}

static int cmp_fsym(const void *a, const void *b)
{
	const struct elf_fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* Every function symbol of .symtab, sorted by address (the longest first). */
int elf_function_symbols(const struct elf *e, struct elf_syms *out)
{
	const Elf64_Shdr *ss = elf_section(e, ".symtab"), *st = elf_section(e, ".strtab");
	const Elf64_Sym *syms;
	size_t n, i;

	memset(out, 0, sizeof(*out));
	if (!ss || !st || ss->sh_type == SHT_NOBITS)
		return -1;
	syms = (const Elf64_Sym *)(e->map + ss->sh_offset);
	n = ss->sh_size / sizeof(*syms);
	out->syms = calloc(n, sizeof(*out->syms));
	if (!out->syms)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned int type = ELF64_ST_TYPE(syms[i].st_info);

		if ((type != STT_FUNC && type != STT_NOTYPE) || syms[i].st_shndx == SHN_UNDEF ||
		    syms[i].st_shndx >= e->eh->e_shnum ||
		    !(e->sh[syms[i].st_shndx].sh_flags & SHF_EXECINSTR))
			continue;
		out->syms[out->n++] = (struct elf_fsym){
			.addr = syms[i].st_value, .size = syms[i].st_size,
			.name = (const char *)e->map + st->sh_offset + syms[i].st_name,
			.func = type == STT_FUNC,
		};
	}
	qsort(out->syms, out->n, sizeof(*out->syms), cmp_fsym);
	return 0;
}

/*
 * The function that holds @addr: the last function symbol at or below it
 * whose size covers it, else the nearest symbol below (a local label of
 * assembly code).  NULL if none.
 */
const struct elf_fsym *elf_symbol_at(const struct elf_syms *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n, i;
	const struct elf_fsym *near = NULL;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i-- > 0 && addr - s->syms[i].addr < (1 << 20);) {
		const struct elf_fsym *f = &s->syms[i];

		if (f->func && addr < f->addr + f->size)
			return f;
		if (!near && (f->func || f->name[0] != '.'))
			near = f;
	}
	return near;
}
