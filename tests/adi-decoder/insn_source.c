// SPDX-License-Identifier: GPL-2.0
/*
 * Instruction streams from real code: libc.so.6 as this process loaded it,
 * and the other shared libraries of bin_specs[] as files.
 *
 * Functions come from the symbol table of the binary's detached debug
 * file (libc6-dbg has libc's and ld.so's, found by build-id) when it is
 * installed: it names the local IFUNC variants (__memmove_evex_unaligned_erms,
 * __strlen_avx2...).  Without it, from the unwind table (.eh_frame_hdr),
 * which has every compiled function's extent but no names; exported names
 * from .dynsym are added where they match, and for the other libraries
 * .dynsym's sized functions are added too (assembly without unwind
 * information: OpenSSL's perlasm).
 *
 * "Selected" is what each IFUNC of libc resolves to on this CPU: dlsym()
 * on libc runs the resolver as the dynamic linker does for the program.
 * "Siblings" are the other variants of those functions: symbols named
 * __<ifunc>_* or with the stem of a selected variant's name.  The other
 * libraries are read as files, not dlopen()ed (their constructors would
 * run): every function of theirs is "other".
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* DWARF pointer encodings (.eh_frame_hdr); not in <elf.h>. */
#define DW_EH_PE_udata4		0x03
#define DW_EH_PE_sdata4		0x0b
#define DW_EH_PE_datarel	0x30

static int add_func(struct source *src, const char *name, uint64_t start,
		    uint64_t size)
{
	size_t i;

	/* An alias of the last one (symbols come sorted by address). */
	for (i = src->nfuncs; i-- > 0 && src->funcs[i].start == start;) {
		if (src->funcs[i].size == size) {
			char *joined;

			if (asprintf(&joined, "%s=%s", src->funcs[i].name, name) < 0)
				return -1;
			free(src->funcs[i].name);
			src->funcs[i].name = joined;
			return 0;
		}
	}
	if (src->nfuncs == src->funcs_cap) {
		src->funcs_cap = src->funcs_cap ? 2 * src->funcs_cap : 4096;
		src->funcs = realloc(src->funcs, src->funcs_cap * sizeof(*src->funcs));
		if (!src->funcs)
			return -1;
	}
	src->funcs[src->nfuncs++] = (struct func){
		.name = strdup(name), .start = start, .size = size, .origin = ORIGIN_OTHER,
	};
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const Elf64_Sym *x = *(Elf64_Sym *const *)a, *y = *(Elf64_Sym *const *)b;

	if (x->st_value != y->st_value)
		return x->st_value < y->st_value ? -1 : 1;
	if (x->st_size != y->st_size)
		return x->st_size < y->st_size ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Every function symbol of @e's @symsec inside .text. */
static int funcs_from_symtab(struct source *src, const struct elf *e,
			     const char *symsec, const char *strsec)
{
	const Elf64_Shdr *ss = elf_section(e, symsec), *st = elf_section(e, strsec);
	const Elf64_Sym *syms, **sorted;
	size_t n, i, k = 0;

	if (!ss || !st || ss->sh_type == SHT_NOBITS)
		return -1;
	syms = (const Elf64_Sym *)(e->map + ss->sh_offset);
	n = ss->sh_size / sizeof(*syms);
	sorted = calloc(n, sizeof(*sorted));
	if (!sorted)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned int type = ELF64_ST_TYPE(syms[i].st_info);

		if ((type == STT_FUNC || type == STT_GNU_IFUNC) && syms[i].st_size &&
		    syms[i].st_value >= src->text_addr &&
		    syms[i].st_value + syms[i].st_size <= src->text_addr + src->text_size)
			sorted[k++] = &syms[i];
	}
	qsort(sorted, k, sizeof(*sorted), cmp_sym);
	for (i = 0; i < k; i++)
		if (add_func(src, (const char *)e->map + st->sh_offset + sorted[i]->st_name,
			     sorted[i]->st_value, sorted[i]->st_size)) {
			free(sorted);
			return -1;
		}
	free(sorted);
	return 0;
}

/* A file address (link-time vaddr) inside section @s, as a pointer. */
static const uint8_t *at_vaddr(const struct elf *e, const Elf64_Shdr *s, uint64_t a)
{
	if (a < s->sh_addr || a + 16 > s->sh_addr + s->sh_size)
		return NULL;
	return e->map + s->sh_offset + (a - s->sh_addr);
}

static int32_t s32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Without symbols: each FDE of .eh_frame is one function.  The binary
 * search table of .eh_frame_hdr lists them (datarel sdata4, as every
 * x86-64 toolchain writes it); each FDE's pc_begin is pcrel sdata4 and
 * must agree with the table, else the entry is not used.
 */
static int funcs_from_eh_frame(struct source *src, const struct elf *e)
{
	const Elf64_Shdr *hdr = elf_section(e, ".eh_frame_hdr");
	const Elf64_Shdr *ehf = elf_section(e, ".eh_frame");
	const uint8_t *h;
	size_t i, n;
	char name[32];

	if (!hdr || !ehf)
		return -1;
	h = e->map + hdr->sh_offset;
	if (h[0] != 1 || h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -1;
	n = (uint32_t)s32(h + 8);
	for (i = 0; i < n && 12 + 8 * i + 8 <= hdr->sh_size; i++) {
		uint64_t start = hdr->sh_addr + s32(h + 12 + 8 * i);
		uint64_t fde = hdr->sh_addr + s32(h + 16 + 8 * i);
		const uint8_t *f = at_vaddr(e, ehf, fde);
		uint64_t size;

		if (!f || fde + 8 + s32(f + 8) != start)
			continue;
		size = (uint32_t)s32(f + 12);
		if (start < src->text_addr || start + size > src->text_addr + src->text_size)
			continue;
		snprintf(name, sizeof(name), "fn_%lx", (unsigned long)start);
		if (add_func(src, name, start, size))
			return -1;
	}
	return src->nfuncs ? 0 : -1;
}

/* Exported names for the unnamed functions of the eh_frame path. */
static void name_from_dynsym(struct source *src, const struct elf *e)
{
	const Elf64_Shdr *ds = elf_section(e, ".dynsym"), *dstr = elf_section(e, ".dynstr");
	const Elf64_Sym *syms;
	size_t i, j, n;

	if (!ds || !dstr)
		return;
	syms = (const Elf64_Sym *)(e->map + ds->sh_offset);
	n = ds->sh_size / sizeof(*syms);
	for (j = 0; j < src->nfuncs; j++) {
		for (i = 0; i < n; i++) {
			if (ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC ||
			    syms[i].st_value != src->funcs[j].start)
				continue;
			free(src->funcs[j].name);
			src->funcs[j].name = strdup((const char *)e->map + dstr->sh_offset +
						    syms[i].st_name);
			break;
		}
	}
}

static bool name_has_prefix(const char *names, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p = names;

	while (p) {
		if (!strncmp(p, prefix, n))
			return true;
		p = strchr(p, '=');
		if (p)
			p++;
	}
	return false;
}

/* "__memmove_evex_unaligned_erms" -> "__memmove_" (empty if not "__x_..."). */
static void stem_of(const char *name, char *out, size_t len)
{
	const char *u = strncmp(name, "__", 2) ? NULL : strchr(name + 2, '_');

	out[0] = 0;
	if (u && (size_t)(u - name + 2) <= len)
		snprintf(out, u - name + 2, "%s", name);
}

static void append(char **list, const char *s)
{
	char *joined;

	if (!*list) {
		*list = strdup(s);
	} else if (asprintf(&joined, "%s,%s", *list, s) >= 0) {
		free(*list);
		*list = joined;
	}
}

/* IFUNC symbols of .dynsym: what does each resolve to here? */
static void mark_selected(struct source *src, const struct elf *e, void *handle,
			  uint64_t base, char ***prefixes, size_t *nprefixes)
{
	const Elf64_Shdr *ds = elf_section(e, ".dynsym"), *dstr = elf_section(e, ".dynstr");
	const Elf64_Sym *syms;
	size_t i, j, n;

	if (!ds || !dstr)
		return;
	syms = (const Elf64_Sym *)(e->map + ds->sh_offset);
	n = ds->sh_size / sizeof(*syms);
	*prefixes = calloc(2 * n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		const char *name = (const char *)e->map + dstr->sh_offset + syms[i].st_name;
		uint64_t addr;
		char pfx[128];
		void *p;

		if (ELF64_ST_TYPE(syms[i].st_info) != STT_GNU_IFUNC ||
		    syms[i].st_shndx == SHN_UNDEF)
			continue;
		p = dlsym(handle, name);
		if (!p)
			continue;
		addr = (uint64_t)p - base;
		if (addr < src->text_addr || addr >= src->text_addr + src->text_size)
			continue;	/* time(), gettimeofday(): the vDSO */
		snprintf(pfx, sizeof(pfx), "__%s_", name);
		(*prefixes)[(*nprefixes)++] = strdup(pfx);
		for (j = 0; j < src->nfuncs; j++) {
			struct func *f = &src->funcs[j];

			if (f->start != addr)
				continue;
			if (!f->ifuncs || !strstr(f->ifuncs, name))
				append(&f->ifuncs, name);
			if (!(f->origin & ORIGIN_SELECTED)) {
				f->origin = ORIGIN_SELECTED;
				if (!src->have_symtab && !strncmp(f->name, "fn_", 3)) {
					char *named;	/* unnamed variant: "memchr@163680" */

					if (asprintf(&named, "%s@%s", name, f->name + 3) >= 0) {
						free(f->name);
						f->name = named;
					}
				}
				stem_of(f->name, pfx, sizeof(pfx));
				if (pfx[0])
					(*prefixes)[(*nprefixes)++] = strdup(pfx);
			}
			break;
		}
	}
}

/* Sort by address; functions with the same extent become one, names joined. */
static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

static void merge_funcs(struct source *src)
{
	size_t i, k = 0;

	qsort(src->funcs, src->nfuncs, sizeof(*src->funcs), cmp_func);
	for (i = 0; i < src->nfuncs; i++) {
		struct func *f = &src->funcs[i], *last = k ? &src->funcs[k - 1] : NULL;
		char *joined;

		if (!last || last->start != f->start || last->size != f->size) {
			src->funcs[k++] = *f;
			continue;
		}
		/* An unwind entry's placeholder gives way to a real name. */
		if (!strncmp(last->name, "fn_", 3)) {
			free(last->name);
			last->name = f->name;
		} else if (strncmp(f->name, "fn_", 3) &&
			   asprintf(&joined, "%s=%s", last->name, f->name) >= 0) {
			free(last->name);
			last->name = joined;
			free(f->name);
		} else {
			free(f->name);
		}
	}
	src->nfuncs = k;
}

/* Bytes of .text that no function covers: padding, or code without symbols. */
static void count_gaps(struct source *src)
{
	uint64_t end = src->text_addr, covered = 0;
	size_t i;

	for (i = 0; i < src->nfuncs; i++) {
		const struct func *f = &src->funcs[i];
		uint64_t from = f->start > end ? f->start : end;

		if (f->start + f->size > from)
			covered += f->start + f->size - from;
		if (f->start + f->size > end)
			end = f->start + f->size;
	}
	src->gap_bytes = src->text_size - covered;
}

static int load_text(struct source *src, struct elf *e, char *err, size_t errlen)
{
	const Elf64_Shdr *text;

	if (elf_open(e, src->path)) {
		snprintf(err, errlen, "%s: not a readable ELF64 file", src->path);
		return -1;
	}
	text = elf_section(e, ".text");
	if (!text || text->sh_type != SHT_PROGBITS || text->sh_offset + text->sh_size > e->len) {
		snprintf(err, errlen, "%s: no .text", src->path);
		return -1;
	}
	src->text = e->map + text->sh_offset;
	src->text_addr = text->sh_addr;
	src->text_size = text->sh_size;
	return 0;
}

/*
 * The functions of @e: from its debug file's symbols, its own, or its
 * unwind table with .dynsym's names (and, with @dynsym_sized, .dynsym's
 * sized functions: assembly without unwind entries).
 */
static int load_functions(struct source *src, const struct elf *e, bool dynsym_sized,
			  char *err, size_t errlen)
{
	struct elf dbg = { 0 };

	if (elf_debug_file(e, src->symfile, sizeof(src->symfile)) && !elf_open(&dbg, src->symfile) &&
	    !funcs_from_symtab(src, &dbg, ".symtab", ".strtab")) {
		src->have_symtab = true;
	} else if (!funcs_from_symtab(src, e, ".symtab", ".strtab")) {
		snprintf(src->symfile, sizeof(src->symfile), "%s .symtab", src->path);
		src->have_symtab = true;
	} else if (!funcs_from_eh_frame(src, e)) {
		snprintf(src->symfile, sizeof(src->symfile), "%s .eh_frame%s (no debug symbols%s)",
			 src->path, dynsym_sized ? " and .dynsym" : "",
			 dynsym_sized ? "" : ": variants unnamed");
		name_from_dynsym(src, e);
		if (dynsym_sized)
			funcs_from_symtab(src, e, ".dynsym", ".dynstr");
	} else {
		snprintf(err, errlen, "%s: neither symbols nor an unwind table", src->path);
		elf_close(&dbg);
		return -1;
	}
	elf_close(&dbg);	/* the names are copies */
	merge_funcs(src);
	count_gaps(src);
	return 0;
}

/*
 * The file ldconfig's cache names for @soname (64-bit), resolved.  By its
 * full path: /sbin is not in every user's PATH.
 */
static int find_library(const char *soname, char *path, size_t len)
{
	FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "r");
	char line[1024], real[PATH_MAX];
	size_t n = strlen(soname);
	int found = 0;

	/* "\tlibcrypto.so.3 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcrypto.so.3" */
	while (p && fgets(line, sizeof(line), p)) {
		char *arrow = strstr(line, "=> ");

		if (found || line[0] != '\t' || strncmp(line + 1, soname, n) ||
		    strncmp(line + 1 + n, " (", 2) || !strstr(line, "x86-64") || !arrow)
			continue;
		arrow[strcspn(arrow, "\n")] = 0;
		if (realpath(arrow + 3, real) && strlen(real) < len) {
			memcpy(path, real, strlen(real) + 1);
			found = 1;
		}
	}
	if (p)
		pclose(p);
	return found ? 0 : -1;
}

const struct bin_spec bin_specs[NBIN] = {
	[BIN_LIBC] = { "libc.so.6", "libc", "libc6" },
	[BIN_LD] = { "ld-linux-x86-64.so.2", "ld.so", "libc6" },
	[BIN_STDCXX] = { "libstdc++.so.6", "libstdc++", "libstdc++6" },
	[BIN_PYTHON] = { "libpython3.11.so.1.0", "libpython", "libpython3.11" },
	[BIN_CRYPTO] = { "libcrypto.so.3", "libcrypto", "libssl3" },
};

int source_load_lib(struct source *src, enum bin b, char *err, size_t errlen)
{
	struct elf e;

	memset(src, 0, sizeof(*src));
	src->label = bin_specs[b].soname;
	if (find_library(src->label, src->path, sizeof(src->path))) {
		snprintf(err, errlen, "%s: not in ldconfig's cache (Debian package %s;"
			 " scripts/deps.sh installs it)", src->label, bin_specs[b].package);
		return -1;
	}
	if (load_text(src, &e, err, errlen))
		return -1;
	return load_functions(src, &e, true, err, errlen);
}

int source_load_libc(struct source *src, char *err, size_t errlen)
{
	struct elf e;
	char **prefixes = NULL;
	size_t nprefixes = 0, i, j;
	void *handle, *some;
	Dl_info info;

	memset(src, 0, sizeof(*src));
	src->label = bin_specs[BIN_LIBC].soname;
	handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	some = handle ? dlsym(handle, "strlen") : NULL;
	if (!some || !dladdr(some, &info) || !info.dli_fname) {
		snprintf(err, errlen, "cannot find libc.so.6 in this process");
		return -1;
	}
	snprintf(src->path, sizeof(src->path), "%s", info.dli_fname);
	if (load_text(src, &e, err, errlen) || load_functions(src, &e, false, err, errlen))
		return -1;

	mark_selected(src, &e, handle, (uint64_t)info.dli_fbase, &prefixes, &nprefixes);
	for (j = 0; j < src->nfuncs && src->have_symtab; j++) {
		if (src->funcs[j].origin & ORIGIN_SELECTED)
			continue;
		for (i = 0; i < nprefixes; i++)
			if (name_has_prefix(src->funcs[j].name, prefixes[i]))
				src->funcs[j].origin = ORIGIN_SIBLING;
	}
	for (i = 0; i < nprefixes; i++)
		free(prefixes[i]);
	free(prefixes);
	return 0;
}
