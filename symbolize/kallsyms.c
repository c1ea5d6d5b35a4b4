/* SPDX-License-Identifier: MIT */
/*
 * kallsyms: kernel symbols from /proc/kallsyms ("addr type name [module]"),
 * text symbols only, sorted for binary search. A symbol ends where the next
 * one starts; the last one of the core kernel ends at _etext.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

struct ksym {
	uint64_t addr;
	uint32_t name;   /* offset in names */
	uint32_t module; /* offset in names, UINT32_MAX = core kernel */
};

struct sym_kallsyms {
	struct ksym *syms;
	size_t n, cap;
	struct sym_strtab names;
	uint64_t etext; /* end of the core kernel's text, 0 = unknown */
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* prefer names without the __pfx_ padding prefix */
	return x->name < y->name ? -1 : (x->name > y->name);
}

static int push(struct sym_kallsyms *k, uint64_t addr, const char *name,
		const char *mod, size_t modlen)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 65536;
		struct ksym *ns = realloc(k->syms, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		k->syms = ns;
		k->cap = cap;
	}
	uint32_t no = sym_strtab_add(&k->names, name, strlen(name));
	if (no == UINT32_MAX)
		return -ENOMEM;
	uint32_t mo = UINT32_MAX;
	if (mod) {
		/* one copy per module: modules come in runs */
		if (k->n > 0 && k->syms[k->n - 1].module != UINT32_MAX &&
		    strlen(k->names.buf + k->syms[k->n - 1].module) == modlen &&
		    memcmp(k->names.buf + k->syms[k->n - 1].module, mod,
			   modlen) == 0)
			mo = k->syms[k->n - 1].module;
		else
			mo = sym_strtab_add(&k->names, mod, modlen);
		if (mo == UINT32_MAX)
			return -ENOMEM;
	}
	k->syms[k->n++] = (struct ksym){ .addr = addr, .name = no, .module = mo };
	return 0;
}

/* Parses one line; returns 0 (kept or skipped) or -errno. */
static int parse_line(struct sym_kallsyms *k, char *line)
{
	char *end;
	errno = 0;
	unsigned long long addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ')
		return -EINVAL;
	char type = end[1];
	if (!type || end[2] != ' ')
		return -EINVAL;
	char *name = end + 3;
	char *mod = NULL;
	size_t modlen = 0;
	char *sp = strchr(name, '\t');
	if (!sp)
		sp = strchr(name, ' ');
	if (sp) {
		*sp = '\0';
		char *lb = strchr(sp + 1, '[');
		char *rb = lb ? strchr(lb, ']') : NULL;
		if (lb && rb && rb > lb + 1) {
			mod = lb + 1;
			modlen = (size_t)(rb - mod);
		}
	}
	if (!name[0])
		return -EINVAL;
	if (strcmp(name, "_etext") == 0 && !mod) {
		k->etext = addr;
		return 0;
	}
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (addr == 0)
		return 0;
	if (strncmp(name, "__pfx_", 6) == 0) /* padding before functions */
		return 0;
	return push(k, addr, name, mod, modlen);
}

static int finish(struct sym_kallsyms *k, size_t lines)
{
	if (k->n == 0)
		return lines ? -EPERM : -ENODATA; /* all zero: no privilege */
	qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	return 0;
}

struct sym_kallsyms *sym_kallsyms_load(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct sym_kallsyms *k = calloc(1, sizeof(*k));
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = k ? 0 : -ENOMEM;
	size_t lineno = 0;
	while (!err && (len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (!line[0])
			continue;
		err = parse_line(k, line);
	}
	free(line);
	fclose(f);
	if (!err)
		err = finish(k, lineno);
	if (err) {
		sym_kallsyms_free(k);
		errno = -err;
		return NULL;
	}
	return k;
}

struct sym_kallsyms *sym_kallsyms_parse(const char *buf, size_t len)
{
	struct sym_kallsyms *k = calloc(1, sizeof(*k));
	char line[1024];
	size_t lineno = 0;
	int err = k ? 0 : -ENOMEM;
	const char *p = buf, *end = buf + len;
	while (!err && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = (size_t)((nl ? nl : end) - p);
		p = nl ? nl + 1 : end;
		lineno++;
		if (l == 0)
			continue;
		if (l >= sizeof(line) || memchr(p - l - (nl ? 1 : 0), '\0', l)) {
			err = -EINVAL;
			break;
		}
		memcpy(line, nl ? p - l - 1 : p - l, l);
		line[l] = '\0';
		err = parse_line(k, line);
	}
	if (!err)
		err = finish(k, lineno);
	if (err) {
		sym_kallsyms_free(k);
		errno = -err;
		return NULL;
	}
	return k;
}

void sym_kallsyms_free(struct sym_kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	sym_strtab_free(&k->names);
	free(k);
}

int sym_kallsyms_find(const struct sym_kallsyms *k, uint64_t addr,
		      const char **name, const char **module)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < k->syms[mid].addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return -ENOENT;
	const struct ksym *s = &k->syms[lo - 1];
	/* past the end of the core kernel text and not in a module */
	if (s->module == UINT32_MAX && k->etext && addr >= k->etext &&
	    s->addr < k->etext)
		return -ENOENT;
	/* the last symbol of all: no end known, accept one page */
	if (lo == k->n && addr - s->addr >= 0x1000)
		return -ENOENT;
	*name = k->names.buf + s->name;
	*module = s->module == UINT32_MAX ? NULL : k->names.buf + s->module;
	return 0;
}

size_t sym_kallsyms_bytes(const struct sym_kallsyms *k)
{
	return k ? k->cap * sizeof(*k->syms) + k->names.cap : 0;
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

bool sym_kernel_name_is_bpf(const char *name, const char *module)
{
	if (module && (strcmp(module, "bpf") == 0))
		return true; /* JITed programs, trampolines, dispatchers */
	return has_prefix(name, "bpf_prog_") ||
	       has_prefix(name, "bpf_trace_run") ||
	       has_prefix(name, "__bpf_trace_") ||
	       has_prefix(name, "bpf_trampoline_") ||
	       /* the tracepoint's own dispatch, under every off-CPU wait */
	       has_prefix(name, "__traceiter_") ||
	       strcmp(name, "bpf_overflow_handler") == 0;
}
