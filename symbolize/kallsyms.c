/* SPDX-License-Identifier: MIT */
/*
 * kallsyms: kernel symbols from /proc/kallsyms ("addr type name [module]"),
 * text symbols only, sorted for binary search. A symbol ends where the next
 * one starts; the last one of the core kernel ends at _etext.
 *
 * The file is read in large chunks and parsed as it comes, with no
 * per-line library calls but memchr: addresses are decoded eight digits
 * at a time, the names kept are appended to one block. The core kernel's
 * symbols come in address order, so only what follows them (modules, BPF)
 * is sorted, then merged in.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym_internal.h"

struct ksym {
	uint64_t addr;
	uint32_t name;   /* offset in names */
	uint32_t module; /* offset in names, UINT32_MAX = core kernel */
};

struct sym_kallsyms {
	struct ksym *syms;
	size_t n, cap;
	struct sym_strtab names; /* names and module names */
	uint64_t etext;  /* end of the core kernel's text, 0 = unknown */
};

/* Address order; among aliases, file order (the lookup takes the last). */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : (x->name > y->name);
}

/* The parse state: the names block being filled and the last module. */
struct kparse {
	struct sym_kallsyms *k;
	uint32_t last_mod; /* offset of the last module name, UINT32_MAX none */
	size_t last_mod_len;
	size_t lines;
};

static int grow(struct sym_kallsyms *k)
{
	size_t cap = k->cap ? k->cap * 2 : 16384;
	struct ksym *ns = realloc(k->syms, cap * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	k->syms = ns;
	k->cap = cap;
	return 0;
}

/* Hex digit values with 0x10 set; 0 for every other byte. */
static const uint8_t hexval[256] = {
	['0'] = 0x10, ['1'] = 0x11, ['2'] = 0x12, ['3'] = 0x13, ['4'] = 0x14,
	['5'] = 0x15, ['6'] = 0x16, ['7'] = 0x17, ['8'] = 0x18, ['9'] = 0x19,
	['a'] = 0x1a, ['b'] = 0x1b, ['c'] = 0x1c, ['d'] = 0x1d, ['e'] = 0x1e,
	['f'] = 0x1f, ['A'] = 0x1a, ['B'] = 0x1b, ['C'] = 0x1c, ['D'] = 0x1d,
	['E'] = 0x1e, ['F'] = 0x1f,
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight hex digits at @s as a number, eight bytes at a time: returns
 * false when one of them is not a hex digit. */
static inline bool hex8(const char *s, uint32_t *out)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x80 * ones;
	uint64_t x, lx;
	memcpy(&x, s, 8);
	lx = x | 0x20 * ones;
	/* per byte, the high bit of b + (0x7f - hi) says b > hi and that of
	 * b + (0x80 - lo) says b >= lo (7-bit bytes: no carries) */
	uint64_t digit = ~(x + (0x7f - '9') * ones) & (x + (0x80 - '0') * ones);
	uint64_t letter = ~(lx + (0x7f - 'f') * ones) & (lx + (0x80 - 'a') * ones);
	if (((digit | letter) & high) != high || (x & high))
		return false;
	uint64_t nib = (x & 0x0f * ones) + ((letter & high) >> 7) * 9;
	uint64_t t = ((nib << 4) | (nib >> 8)) & 0x00ff00ff00ff00ffull;
	uint64_t u = ((t << 8) | (t >> 16)) & 0x0000ffff0000ffffull;
	*out = (uint32_t)((u << 16) | (u >> 32));
	return true;
}
#else
static inline bool hex8(const char *s, uint32_t *out)
{
	uint32_t a = 0;
	for (int i = 0; i < 8; i++) {
		uint8_t v = hexval[(unsigned char)s[i]];
		if (!v)
			return false;
		a = a << 4 | (v & 15u);
	}
	*out = a;
	return true;
}
#endif

/* Parses the hex address at @s (before @e): sets *@addr and returns its
 * end, or NULL when there is none or it is over 64 bits. */
static const char *parse_addr(const char *s, const char *e, uint64_t *addr)
{
	uint32_t hi, lo;
	/* the kernel prints 16 digits */
	if (e - s > 16 && s[16] == ' ' && hex8(s, &hi) && hex8(s + 8, &lo)) {
		*addr = (uint64_t)hi << 32 | lo;
		return s + 16;
	}
	uint64_t a = 0;
	const char *q = s;
	while (q < e && hexval[(unsigned char)*q]) {
		if (q - s == 16)
			return NULL;
		a = a << 4 | (hexval[(unsigned char)*q++] & 15u);
	}
	*addr = a;
	return q == s ? NULL : q;
}

/* Parses the line [@s, @e) (no newline). Returns 0 (kept or skipped) or
 * -EINVAL. */
static int parse_line(struct kparse *p, const char *s, const char *e)
{
	uint64_t addr;
	const char *q = parse_addr(s, e, &addr);
	if (!q || e - q < 4 || q[0] != ' ' || q[2] != ' ')
		return -EINVAL;
	char type = q[1];
	const char *name = q + 3;
	bool code = type == 't' || type == 'T' || type == 'w' || type == 'W';
	bool six = e - name >= 6;
	if (!(six && memcmp(name, "_etext", 6) == 0) &&
	    (!code || addr == 0 || (six && memcmp(name, "__pfx_", 6) == 0)))
		/* not kept, and not _etext: only a name must be there */
		return name[0] == '\t' || (name[0] == ' ' &&
					   !memchr(name, '\t', (size_t)(e - name))) ?
			-EINVAL : 0;
	/* the name ends at a tab (then "[module]"), else at a space */
	const char *ne = memchr(name, '\t', (size_t)(e - name));
	if (!ne)
		ne = memchr(name, ' ', (size_t)(e - name));
	const char *mod = NULL;
	size_t modlen = 0;
	if (!ne) {
		ne = e;
	} else {
		const char *lb = memchr(ne + 1, '[', (size_t)(e - ne - 1));
		const char *rb = lb ? memchr(lb, ']', (size_t)(e - lb)) : NULL;
		if (lb && rb && rb > lb + 1) {
			mod = lb + 1;
			modlen = (size_t)(rb - mod);
		}
	}
	size_t nl = (size_t)(ne - name);
	if (nl == 0)
		return -EINVAL;
	if (!mod && nl == 6 && memcmp(name, "_etext", 6) == 0) {
		p->k->etext = addr;
		return 0;
	}
	if (!code || addr == 0 || (nl >= 6 && memcmp(name, "__pfx_", 6) == 0))
		return 0; /* hidden, or the padding before a function */
	struct sym_kallsyms *k = p->k;
	if (k->n == k->cap && grow(k) != 0)
		return -ENOMEM;
	uint32_t no = sym_strtab_add(&k->names, name, nl), mo = UINT32_MAX;
	if (no == UINT32_MAX)
		return -ENOMEM;
	if (mod) {
		/* one copy per run of a module's symbols */
		if (p->last_mod != UINT32_MAX && p->last_mod_len == modlen &&
		    memcmp(k->names.buf + p->last_mod, mod, modlen) == 0) {
			mo = p->last_mod;
		} else {
			mo = sym_strtab_add(&k->names, mod, modlen);
			if (mo == UINT32_MAX)
				return -ENOMEM;
			p->last_mod = mo;
			p->last_mod_len = modlen;
		}
	}
	k->syms[k->n++] = (struct ksym){ .addr = addr, .name = no, .module = mo };
	return 0;
}

/* Sorts the symbols. The core kernel's come sorted and first; what
 * follows (modules, BPF programs, often below the last module's address)
 * is sorted on its own and merged in from the back. Returns 0 or -ENOMEM. */
static int sort_syms(struct sym_kallsyms *k)
{
	size_t run = 1;
	while (run < k->n && ksym_cmp(&k->syms[run - 1], &k->syms[run]) < 0)
		run++;
	if (run >= k->n)
		return 0;
	size_t m = k->n - run;
	qsort(k->syms + run, m, sizeof(*k->syms), ksym_cmp);
	if (ksym_cmp(&k->syms[run - 1], &k->syms[run]) < 0)
		return 0;
	struct ksym *tail = malloc(m * sizeof(*tail));
	if (!tail)
		return -ENOMEM;
	memcpy(tail, k->syms + run, m * sizeof(*tail));
	size_t i = run, j = m, w = k->n;
	while (j > 0) {
		if (i > 0 && ksym_cmp(&k->syms[i - 1], &tail[j - 1]) > 0)
			k->syms[--w] = k->syms[--i];
		else
			k->syms[--w] = tail[--j];
	}
	free(tail);
	return 0;
}

/* Parses the complete lines of @buf (@len bytes; with @last, the rest
 * too). Returns the bytes consumed, or -errno. */
static ssize_t parse_chunk(struct kparse *p, const char *buf, size_t len,
			   bool last)
{
	const char *s = buf, *end = buf + len;
	if (memchr(buf, '\0', len))
		return -EINVAL;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl && !last)
			break;
		const char *e = nl ? nl : end;
		p->lines++;
		if (e > s) {
			int err = parse_line(p, s, e);
			if (err)
				return err;
		}
		s = e + (nl != NULL);
	}
	return s - buf;
}

/* Ends a parse: no symbol is an error, the rest is sorted. */
static int finish(struct kparse *p)
{
	struct sym_kallsyms *k = p->k;
	if (k->n == 0)
		return p->lines ? -EPERM : -ENODATA; /* all zero: no privilege */
	return sort_syms(k);
}

static struct sym_kallsyms *fail(struct sym_kallsyms *k, int err)
{
	sym_kallsyms_free(k);
	errno = -err;
	return NULL;
}

#define CHUNK (256u << 10)

/* Reads @fd to its end, parsing as it goes. Returns 0 or -errno. */
static int parse_fd(struct kparse *p, int fd)
{
	char *buf = malloc(CHUNK);
	size_t have = 0;
	int err = buf ? 0 : -ENOMEM;
	while (!err) {
		if (have == CHUNK) {
			err = -EINVAL; /* a line longer than the buffer */
			break;
		}
		ssize_t r = read(fd, buf + have, CHUNK - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		have += (size_t)r;
		ssize_t used = parse_chunk(p, buf, have, r == 0);
		if (used < 0) {
			err = (int)used;
			break;
		}
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		if (r == 0)
			break;
	}
	free(buf);
	return err;
}

struct sym_kallsyms *sym_kallsyms_load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct sym_kallsyms *k = calloc(1, sizeof(*k));
	struct kparse p = { .k = k, .last_mod = UINT32_MAX };
	int err = k ? parse_fd(&p, fd) : -ENOMEM;
	close(fd);
	if (!err)
		err = finish(&p);
	return err ? fail(k, err) : k;
}

struct sym_kallsyms *sym_kallsyms_parse(const char *buf, size_t len)
{
	struct sym_kallsyms *k = calloc(1, sizeof(*k));
	struct kparse p = { .k = k, .last_mod = UINT32_MAX };
	ssize_t used = k ? parse_chunk(&p, buf, len, true) : -ENOMEM;
	int err = used < 0 ? (int)used : finish(&p);
	return err ? fail(k, err) : k;
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
	return sym_kallsyms_find_at(k, addr, name, module, NULL);
}

int sym_kallsyms_find_at(const struct sym_kallsyms *k, uint64_t addr,
			 const char **name, const char **module,
			 uint64_t *start)
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
	if (start)
		*start = s->addr;
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

/* A JITed program's name: "bpf_prog_" and its 16-hex-digit tag. The
 * core kernel's own bpf_prog_load, bpf_prog_run_* are real frames. */
static bool is_prog_name(const char *name)
{
	if (!has_prefix(name, "bpf_prog_"))
		return false;
	name += strlen("bpf_prog_");
	for (int i = 0; i < 16; i++)
		if (!isxdigit((unsigned char)name[i]))
			return false;
	return name[16] == '\0' || name[16] == '_';
}

bool sym_kernel_name_is_bpf(const char *name, const char *module)
{
	if (module && (strcmp(module, "bpf") == 0))
		return true; /* JITed programs, trampolines, dispatchers */
	return is_prog_name(name) ||
	       has_prefix(name, "bpf_trace_run") ||
	       has_prefix(name, "__bpf_trace_") ||
	       has_prefix(name, "bpf_trampoline_") ||
	       /* the tracepoint's own dispatch, under every off-CPU wait */
	       has_prefix(name, "__traceiter_") ||
	       strcmp(name, "bpf_overflow_handler") == 0;
}

int sym_kallsyms_nth(const struct sym_kallsyms *k, size_t i, uint64_t *addr,
		     const char **name, const char **module)
{
	if (!k || i >= k->n)
		return -ENOENT;
	const struct ksym *s = &k->syms[i];
	*addr = s->addr;
	*name = k->names.buf + s->name;
	*module = s->module == UINT32_MAX ? NULL : k->names.buf + s->module;
	return 0;
}
