/* SPDX-License-Identifier: MIT */
/*
 * Kernel symbols asked one address at a time (the BPF program printing
 * "%pS") against the /proc/kallsyms table: for thousands of addresses of
 * the running kernel (a symbol's first byte, the byte after it, its last
 * byte, addresses in no symbol, BPF programs' and, where the kernel has
 * them, modules' text) both give the same name, module, start and
 * offset. Then the "%pS" parser and the cache on canned answers: ranges
 * answered without asking, modules unloaded and their addresses reused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"

/* ---- the running kernel's lines, read the plain way ---- */

struct line {
	uint64_t addr;
	char type;
	char name[128];
	char module[64]; /* "" for the core kernel */
};

struct lines {
	struct line *v;
	size_t n;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void read_lines(struct lines *ls)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	size_t cap = 0;
	char buf[512];
	ls->n = 0;
	ls->v = NULL;
	while (fgets(buf, sizeof(buf), f)) {
		if (ls->n == cap) {
			cap = cap ? cap * 2 : 65536;
			ls->v = realloc(ls->v, cap * sizeof(*ls->v));
			assert_non_null(ls->v);
		}
		struct line *l = &ls->v[ls->n];
		unsigned long long a;
		l->module[0] = '\0';
		int got = sscanf(buf, "%llx %c %127s [%63[^]]]", &a, &l->type,
				 l->name, l->module);
		assert_true(got >= 3);
		l->addr = a;
		ls->n++;
	}
	fclose(f);
	/* stable order is not needed: only ends are taken from neighbours */
	qsort(ls->v, ls->n, sizeof(*ls->v), line_cmp);
}

static bool kept(const struct line *l)
{
	return strchr("tTwW", l->type) && l->addr != 0 &&
	       strncmp(l->name, "__pfx_", 6) != 0;
}

static uint64_t find_addr(const struct lines *ls, const char *name)
{
	for (size_t i = 0; i < ls->n; i++)
		if (strcmp(ls->v[i].name, name) == 0)
			return ls->v[i].addr;
	return 0;
}

/* ---- the differential test ---- */

/* The code of the two programs this test loaded: other programs,
 * recorders' among them, may go while it runs. */
static uint64_t own_addr[2];

static bool own_program(const struct line *l)
{
	return strcmp(l->module, "bpf") == 0 &&
	       (l->addr == own_addr[0] || l->addr == own_addr[1]);
}

struct probe {
	uint64_t addr;
	uint64_t want_start; /* 0: in no symbol */
	bool bpf;            /* a BPF program's text */
	bool module;         /* a loadable module's text */
};

struct counts {
	size_t core, bpf, bpf_last, module, none, aliased, renamed;
};

/* True when @name is one of the kept symbols at @start (aliases). */
static bool is_alias(const struct lines *ls, uint64_t start, const char *name)
{
	for (size_t i = 0; i < ls->n; i++)
		if (ls->v[i].addr == start && kept(&ls->v[i]) &&
		    strcmp(ls->v[i].name, name) == 0)
			return true;
	return false;
}

static void check_one(const struct lines *ls, const struct sym_kallsyms *tab,
		      struct sym_ksym *cache, const struct probe *p,
		      const char *raw, struct counts *c)
{
	const char *tname, *tmod;
	uint64_t tstart;
	int trc = sym_kallsyms_find_at(tab, p->addr, &tname, &tmod, &tstart);
	struct sym_ksym_hit h;
	int brc = sym_ksym_find(cache, p->addr, 1, &h);
	struct sym_ksym_rec r;
	int prc = raw ? sym_ksym_parse(raw, strlen(raw), &r) : -EINVAL;
	if (p->want_start == 0) {
		if (trc != -ENOENT || brc != -ENOENT || prc != -ENOENT)
			fail_msg("%#llx: table %d, asked %d, raw '%s'",
				 (unsigned long long)p->addr, trc, brc,
				 raw ? raw : "(null)");
		c->none++;
		return;
	}
	if (trc != 0 || brc != 0 || prc != 0)
		fail_msg("%#llx: table %d, asked %d, raw '%s'",
			 (unsigned long long)p->addr, trc, brc, raw ? raw : "(null)");
	assert_int_equal(tstart, p->want_start);
	assert_int_equal(h.start, tstart);
	assert_int_equal(p->addr - r.off, tstart);
	assert_true(p->addr < h.start + h.size);
	/* modules: the same name; the core kernel's and BPF: "bpf", which
	 * the table reads from "[bpf]" and the asking path from the
	 * address lying outside the core kernel's text */
	if (tmod == NULL || h.module == NULL)
		assert_ptr_equal(tmod, h.module);
	else
		assert_string_equal(tmod, h.module);
	if (strcmp(tname, h.name) != 0) {
		/* several names at one address: the table takes the last
		 * of the file, the kernel the first; both name the start */
		if (!is_alias(ls, tstart, h.name))
			fail_msg("%#llx: table '%s', asked '%s' (raw '%s')",
				 (unsigned long long)p->addr, tname, h.name, raw);
		c->aliased++;
	}
	/* the cache names "__pi_f" "f" and "__do_sys_f" "__x64_sys_f":
	 * other names at the same start */
	if (r.name_len != strlen(h.name) ||
	    memcmp(r.name, h.name, r.name_len) != 0) {
		assert_true(is_alias(ls, tstart, h.name));
		c->renamed++;
	}
	assert_int_equal(sym_kernel_name_is_bpf(tname, tmod),
			 sym_kernel_name_is_bpf(h.name, h.module));
	if (p->bpf)
		c->bpf++;
	else if (p->module)
		c->module++;
	else
		c->core++;
}

static void add_probe(struct probe **v, size_t *n, size_t *cap,
		      struct probe p)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		*v = realloc(*v, *cap * sizeof(**v));
		assert_non_null(*v);
	}
	(*v)[(*n)++] = p;
}

/* Every kept symbol's first byte, the byte after it and its last byte
 * (for a thousand core ones spread over the table, and all BPF and module
 * ones), then addresses in no symbol. */
static size_t make_probes(const struct lines *ls, struct probe **out)
{
	size_t n = 0, cap = 0, core = 0;
	*out = NULL;
	for (size_t i = 0; i < ls->n; i++)
		core += kept(&ls->v[i]) && !ls->v[i].module[0];
	size_t step = core / 1000 ? core / 1000 : 1, seen = 0;
	for (size_t i = 0; i < ls->n; i++) {
		const struct line *l = &ls->v[i];
		if (!kept(l))
			continue;
		bool bpf = strcmp(l->module, "bpf") == 0;
		bool mod = l->module[0] && !bpf;
		/* other programs may go while this runs: only our own */
		if (bpf && !own_program(l))
			continue;
		if (!l->module[0] && seen++ % step != 0)
			continue;
		/* the kernel's end: the next line at a higher address */
		size_t j = i + 1;
		while (j < ls->n && ls->v[j].addr == l->addr)
			j++;
		if (j == ls->n)
			continue; /* the last of all: no end known */
		uint64_t end = ls->v[j].addr;
		/* the core kernel's text ends at _etext whatever follows */
		if (strcmp(ls->v[j].name, "_etext") == 0 && end == l->addr)
			continue;
		struct probe p = { .want_start = l->addr, .bpf = bpf, .module = mod };
		p.addr = l->addr;
		add_probe(out, &n, &cap, p);
		if (end - l->addr > 1) {
			p.addr = l->addr + 1;
			add_probe(out, &n, &cap, p);
		}
		/* a BPF program's last byte: the table ends it at the next
		 * program, the kernel at its size (test_bpf_last_byte()) */
		if (end - l->addr > 2 && !bpf) {
			p.addr = end - 1;
			add_probe(out, &n, &cap, p);
		}
	}
	uint64_t stext = find_addr(ls, "_stext"), etext = find_addr(ls, "_etext");
	uint64_t sinit = find_addr(ls, "_sinittext");
	assert_true(stext != 0 && etext > stext);
	struct probe none[] = {
		{ .addr = stext - 0x1000 },        /* below the kernel */
		{ .addr = stext - 1 },
		{ .addr = etext },                 /* just past its text */
		{ .addr = etext + 0x100 },
		{ .addr = 0 },
		{ .addr = 0xffffffffffff0000ull }, /* above everything */
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		add_probe(out, &n, &cap, none[i]);
	if (sinit > etext + 0x1000)
		add_probe(out, &n, &cap, (struct probe){ .addr = sinit - 0x800 });
	return n;
}

/* A BPF program's last byte, by the size the kernel gives: both name
 * the program there. Returns how many were checked. */
static size_t bpf_last_bytes(const struct lines *ls,
			     const struct sym_kallsyms *tab,
			     struct sym_ksym *cache)
{
	size_t n = 0;
	for (size_t i = 0; i < ls->n; i++) {
		const struct line *l = &ls->v[i];
		if (!kept(l) || strcmp(l->module, "bpf") != 0 || !own_program(l))
			continue;
		struct sym_ksym_hit h;
		assert_int_equal(sym_ksym_find(cache, l->addr, 1, &h), 0);
		assert_true(h.size > 0);
		uint64_t last = h.start + h.size - 1;
		char want[128];
		snprintf(want, sizeof(want), "%s", h.name);
		const char *tname, *tmod;
		uint64_t tstart;
		assert_int_equal(sym_ksym_find(cache, last, 1, &h), 0);
		assert_string_equal(h.name, want);
		assert_int_equal(sym_kallsyms_find_at(tab, last, &tname, &tmod,
						      &tstart), 0);
		assert_string_equal(tname, want);
		assert_string_equal(tmod, "bpf");
		assert_int_equal(tstart, l->addr);
		n++;
	}
	return n;
}

static void test_same_as_table(void **state)
{
	(void)state;
	/* the program itself is a BPF program the table lists */
	struct sym_ksym_bpf *kb = sym_ksym_bpf_open();
	if (!kb)
		fail_msg("the program did not load: %s (run as root)",
			 strerror(errno));
	struct sym_ksym_bpf *kb2 = sym_ksym_bpf_open();
	assert_non_null(kb2);
	own_addr[0] = sym_ksym_bpf_prog_addr(kb);
	own_addr[1] = sym_ksym_bpf_prog_addr(kb2);
	assert_true(own_addr[0] != 0 && own_addr[1] != 0);
	struct lines ls;
	read_lines(&ls);
	struct sym_kallsyms *tab = sym_kallsyms_load("/proc/kallsyms");
	assert_non_null(tab);
	uint64_t text[4];
	sym_ksym_bpf_text(kb, text);
	assert_int_equal(text[0], find_addr(&ls, "_stext"));
	assert_int_equal(text[1], find_addr(&ls, "_etext"));
	struct sym_ksym *cache = sym_ksym_new(sym_ksym_bpf_ask, sym_ksym_bpf_lookup,
					      kb, text);
	assert_non_null(cache);

	struct probe *pv;
	size_t np = make_probes(&ls, &pv);
	assert_true(np > 3000);
	struct counts c = { 0 };
	/* raw answers a batch at a time; the cache asks one by one */
	for (size_t i = 0; i < np; i += SYM_KSYM_BATCH) {
		size_t m = np - i < SYM_KSYM_BATCH ? np - i : SYM_KSYM_BATCH;
		uint64_t addrs[SYM_KSYM_BATCH];
		const char *raw[SYM_KSYM_BATCH];
		char copy[SYM_KSYM_BATCH][256];
		for (size_t j = 0; j < m; j++)
			addrs[j] = pv[i + j].addr;
		assert_int_equal(sym_ksym_bpf_ask(kb2, addrs, m, raw), 0);
		for (size_t j = 0; j < m; j++) {
			assert_non_null(raw[j]);
			snprintf(copy[j], sizeof(copy[j]), "%s", raw[j]);
		}
		for (size_t j = 0; j < m; j++)
			check_one(&ls, tab, cache, &pv[i + j], copy[j], &c);
	}
	c.bpf_last = bpf_last_bytes(&ls, tab, cache);
	print_message("core %zu, BPF %zu (last bytes %zu), module %zu, "
		      "no symbol %zu; answers renamed (__pi_f, __do_sys_f) %zu, "
		      "other aliases named differently %zu; asked %llu times\n",
		      c.core, c.bpf, c.bpf_last, c.module, c.none, c.renamed, c.aliased,
		      (unsigned long long)sym_ksym_asked(cache));
	assert_true(c.core > 2900);
	assert_int_equal(c.bpf, 4); /* the two programs loaded here */
	assert_int_equal(c.bpf_last, 2);
	assert_true(c.none >= 6);
	/* every address was asked once at most; the next byte of a symbol
	 * already asked about is answered from the range */
	assert_true(sym_ksym_asked(cache) < np);
	free(pv);
	sym_ksym_free(cache);
	sym_kallsyms_free(tab);
	free(ls.v);
	sym_ksym_bpf_free(kb2);
	sym_ksym_bpf_free(kb);
}

/* sym_kernel() through a context: the same frame with the program and
 * with the table (HEARTH_KSYM=kallsyms). */
static void test_context_fallback(void **state)
{
	(void)state;
	struct lines ls;
	read_lines(&ls);
	uint64_t a = find_addr(&ls, "do_nanosleep");
	assert_true(a != 0);
	unsetenv("HEARTH_KSYM");
	struct sym_ctx *asked = sym_new(NULL);
	setenv("HEARTH_KSYM", "kallsyms", 1);
	struct sym_ctx *table = sym_new(NULL);
	unsetenv("HEARTH_KSYM");
	assert_non_null(asked);
	assert_non_null(table);
	struct sym_frame f1, f2;
	assert_int_equal(sym_kernel(asked, a + 4, &f1), 1);
	assert_string_equal(f1.name, "do_nanosleep");
	assert_string_equal(f1.module, "[kernel]");
	assert_int_equal(sym_kernel(table, a + 4, &f2), 1);
	assert_string_equal(f2.name, "do_nanosleep");
	assert_string_equal(f2.module, "[kernel]");
	struct sym_stats s1, s2;
	sym_stats(asked, &s1);
	sym_stats(table, &s2);
	/* the table holds the whole kernel; the asking path one symbol */
	assert_true(s1.module_bytes < 64 * 1024);
	assert_true(s2.module_bytes > 1024 * 1024);
	/* a system call without arguments: three names at one address, the
	 * architecture's entry point named both ways */
	uint64_t g = find_addr(&ls, "__x64_sys_getpid");
	if (!g)
		g = find_addr(&ls, "__arm64_sys_getpid");
	assert_true(g != 0);
	assert_int_equal(sym_kernel(asked, g + 1, &f1), 1);
	assert_int_equal(sym_kernel(table, g + 1, &f2), 1);
	assert_string_equal(f1.name, f2.name);
	assert_int_equal(strncmp(f1.name, "__do_sys_", 9) != 0, 1);
	assert_int_equal(sym_kernel_reload(asked), 0);
	assert_int_equal(sym_kernel(asked, a, &f1), 1);
	assert_string_equal(f1.name, "do_nanosleep");
	sym_free(asked);
	sym_free(table);
	free(ls.v);
}

/* ---- the parser ---- */

static void test_parse(void **state)
{
	(void)state;
	struct sym_ksym_rec r;
	const char *s = "do_nanosleep+0x5/0x180";
	assert_int_equal(sym_ksym_parse(s, strlen(s), &r), 0);
	assert_int_equal(r.name_len, 12);
	assert_memory_equal(r.name, "do_nanosleep", 12);
	assert_null(r.module);
	assert_int_equal(r.off, 5);
	assert_int_equal(r.size, 0x180);
	s = "ext4_readdir+0x0/0x9a0 [ext4]";
	assert_int_equal(sym_ksym_parse(s, strlen(s), &r), 0);
	assert_memory_equal(r.name, "ext4_readdir", r.name_len);
	assert_int_equal(r.module_len, 4);
	assert_memory_equal(r.module, "ext4", 4);
	assert_int_equal(r.off, 0);
	/* with a build-id after the module name */
	s = "f.cold+0x10/0x20 [nf_tables 0123456789abcdef0123]";
	assert_int_equal(sym_ksym_parse(s, strlen(s), &r), 0);
	assert_memory_equal(r.name, "f.cold", 6);
	assert_int_equal(r.module_len, 9);
	s = "0xffffffffc0001234";
	assert_int_equal(sym_ksym_parse(s, strlen(s), &r), -ENOENT);
	static const char *const bad[] = {
		"", "+0x1/0x2", "f+0x1", "f+0x1/", "f+1/0x2", "f+0x1/0x2 [",
		"f+0x1/0x2 []", "f+0x1/0x2x", "a b+0x1/0x2", "0x", "0xzz",
		"f+0x11111111111111111/0x2", "f+0x1/0x2 [m] [n]x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sym_ksym_parse(bad[i], strlen(bad[i]), &r) != -EINVAL)
			fail_msg("'%s' parsed", bad[i]);
	assert_int_equal(sym_ksym_parse("f+0x1/0x2\0", 10, &r), -EINVAL);
}

/* ---- the cache, on canned answers ---- */

struct canned {
	const char *answer; /* for every address */
	char buf[1024];
	size_t asked;
	int err;
	uint64_t getpid;    /* where canned_lookup() puts __x64_sys_getpid */
	size_t looked;
};

static int canned_ask(void *arg, const uint64_t *addrs, size_t n,
		      const char **out)
{
	struct canned *c = arg;
	(void)addrs;
	if (c->err)
		return c->err;
	for (size_t i = 0; i < n; i++) {
		snprintf(c->buf, sizeof(c->buf), "%s", c->answer);
		out[i] = c->buf;
		c->asked++;
	}
	return 0;
}

/* Knows one name: "__x64_sys_getpid" at c->getpid. */
static int canned_lookup(void *arg, const char *const *names, size_t n,
			 uint64_t *addrs)
{
	struct canned *c = arg;
	for (size_t i = 0; i < n; i++)
		addrs[i] = strcmp(names[i], "__x64_sys_getpid") == 0 ? c->getpid : 0;
	c->looked += n;
	return 0;
}

static void test_cache_syscall_names(void **state)
{
	(void)state;
	const uint64_t text[4] = { 0xffffffff81000000ull, 0xffffffff82000000ull };
	struct canned c = { .answer = "__do_sys_getpid+0x4/0x30",
			    .getpid = 0xffffffff81382730ull };
	struct sym_ksym *k = sym_ksym_new(canned_ask, canned_lookup, &c, text);
	struct sym_ksym_hit h;
	assert_int_equal(sym_ksym_find(k, 0xffffffff81382734ull, 1, &h), 0);
	assert_string_equal(h.name, "__x64_sys_getpid");
	assert_int_equal(h.start, 0xffffffff81382730ull);
	/* not at that address: the kernel's name stays */
	c.answer = "__do_sys_getppid+0x4/0x30";
	assert_int_equal(sym_ksym_find(k, 0xffffffff81382834ull, 1, &h), 0);
	assert_string_equal(h.name, "__do_sys_getppid");
	/* other names are not looked up */
	size_t looked = c.looked;
	c.answer = "do_nanosleep+0x5/0x180";
	assert_int_equal(sym_ksym_find(k, 0xffffffff81500005ull, 1, &h), 0);
	assert_string_equal(h.name, "do_nanosleep");
	assert_int_equal(c.looked, looked);
	sym_ksym_free(k);
}

static void test_cache_ranges_and_unload(void **state)
{
	(void)state;
	const uint64_t text[4] = { 0xffffffff81000000ull, 0xffffffff82000000ull,
				   0xffffffff83000000ull, 0xffffffff83100000ull };
	struct canned c = { .answer = "core_fn+0x10/0x100" };
	struct sym_ksym *k = sym_ksym_new(canned_ask, canned_lookup, &c, text);
	assert_non_null(k);
	struct sym_ksym_hit h;
	uint64_t t = 1000;
	assert_int_equal(sym_ksym_find(k, 0xffffffff81000110ull, t, &h), 0);
	assert_string_equal(h.name, "core_fn");
	assert_null(h.module);
	assert_int_equal(h.start, 0xffffffff81000100ull);
	assert_int_equal(h.size, 0x100);
	/* the rest of the symbol, and much later: no asking */
	assert_int_equal(sym_ksym_find(k, 0xffffffff810001ffull,
				       t + 100 * SYM_KSYM_TTL_NS, &h), 0);
	assert_string_equal(h.name, "core_fn");
	assert_int_equal(c.asked, 1);

	/* a module's function, then the module unloaded and another loaded
	 * at the same address: the old name holds until asked again */
	c.answer = "mod_fn+0x4/0x40 [mod_a]";
	assert_int_equal(sym_ksym_find(k, 0xffffffffc0000104ull, t, &h), 0);
	assert_string_equal(h.name, "mod_fn");
	assert_string_equal(h.module, "mod_a");
	assert_int_equal(h.start, 0xffffffffc0000100ull);
	c.answer = "other_fn+0x24/0x80 [mod_b]";
	assert_int_equal(sym_ksym_find(k, 0xffffffffc0000108ull, t + 1, &h), 0);
	assert_string_equal(h.name, "mod_fn");
	assert_int_equal(c.asked, 2);
	assert_int_equal(sym_ksym_find(k, 0xffffffffc0000104ull,
				       t + SYM_KSYM_TTL_NS, &h), 0);
	assert_string_equal(h.name, "other_fn");
	assert_string_equal(h.module, "mod_b");
	assert_int_equal(h.start, 0xffffffffc00000e0ull);
	assert_int_equal(h.size, 0x80);
	assert_int_equal(c.asked, 3);
	/* the module gone: no symbol there any more */
	c.answer = "0xffffffffc0000104";
	assert_int_equal(sym_ksym_find(k, 0xffffffffc0000104ull,
				       t + 2 * SYM_KSYM_TTL_NS + 1, &h), -ENOENT);
	assert_int_equal(sym_ksym_find(k, 0xffffffffc0000104ull,
				       t + 2 * SYM_KSYM_TTL_NS + 2, &h), -ENOENT);
	assert_int_equal(c.asked, 4);

	/* outside the core kernel's text without a module: a BPF program */
	c.answer = "bpf_prog_0123456789abcdef_on_cpu+0x8/0x200";
	assert_int_equal(sym_ksym_find(k, 0xffffffffa0001008ull, t, &h), 0);
	assert_string_equal(h.module, "bpf");
	assert_true(sym_kernel_name_is_bpf(h.name, h.module));
	/* by name alone: a program's tag makes it one; the core kernel's
	 * bpf_prog_load under a bpf() call is a real frame */
	assert_true(sym_kernel_name_is_bpf("bpf_prog_0123456789abcdef_on_cpu", NULL));
	assert_true(sym_kernel_name_is_bpf("bpf_prog_0123456789abcdef", NULL));
	assert_false(sym_kernel_name_is_bpf("bpf_prog_load", NULL));
	assert_false(sym_kernel_name_is_bpf("bpf_prog_run_array_cg", NULL));
	/* init text is the core kernel's */
	c.answer = "init_fn+0x0/0x10";
	assert_int_equal(sym_ksym_find(k, 0xffffffff83000000ull, t, &h), 0);
	assert_null(h.module);
	/* a reload forgets the BPF program, not the core kernel */
	sym_ksym_forget_volatile(k);
	size_t before = c.asked;
	assert_int_equal(sym_ksym_find(k, 0xffffffff81000100ull, t, &h), 0);
	assert_string_equal(h.name, "core_fn");
	assert_int_equal(c.asked, before);
	c.answer = "bpf_prog_0123456789abcdef_on_cpu+0x8/0x200";
	assert_int_equal(sym_ksym_find(k, 0xffffffffa0001008ull, t, &h), 0);
	assert_int_equal(c.asked, before + 1);
	/* a kernel that cannot be asked, and an answer that makes no sense */
	c.err = -EPERM;
	assert_int_equal(sym_ksym_find(k, 0xffffffff81800000ull, t, &h), -EPERM);
	c.err = 0;
	c.answer = "f+0x10/0x20 [";
	assert_int_equal(sym_ksym_find(k, 0xffffffff81800000ull, t, &h), -EPROTO);
	c.answer = "f+0x20/0x10";
	assert_int_equal(sym_ksym_find(k, 0x10ull, t, &h), -EPROTO);
	/* a name of the kernel's longest (512 bytes since 6.1) is kept whole;
	 * a longer answer is refused for that address only */
	char name[513], answer[700];
	memset(name, 'r', 512);
	name[512] = '\0';
	snprintf(answer, sizeof(answer), "%s+0x4/0x40 [rust_mod]", name);
	c.answer = answer;
	assert_int_equal(sym_ksym_find(k, 0xffffffffc0100004ull, t, &h), 0);
	assert_string_equal(h.name, name);
	assert_string_equal(h.module, "rust_mod");
	char longer[1000];
	memset(longer, 'x', 900);
	snprintf(longer + 900, 100, "+0x4/0x40");
	c.answer = longer;
	assert_int_equal(sym_ksym_find(k, 0xffffffff81900004ull, t, &h), -EPROTO);
	c.answer = "next_fn+0x4/0x40";
	assert_int_equal(sym_ksym_find(k, 0xffffffff81a00004ull, t, &h), 0);
	assert_string_equal(h.name, "next_fn");
	sym_ksym_free(k);
}

/* Overlapping answers replace what they cover, in address order. */
static void test_cache_overlap(void **state)
{
	(void)state;
	const uint64_t text[4] = { 0 };
	struct canned c = { .answer = "a+0x0/0x10" };
	struct sym_ksym *k = sym_ksym_new(canned_ask, canned_lookup, &c, text);
	struct sym_ksym_hit h;
	assert_int_equal(sym_ksym_find(k, 0x1000, 1, &h), 0);
	c.answer = "b+0x0/0x10";
	assert_int_equal(sym_ksym_find(k, 0x1020, 1, &h), 0);
	c.answer = "c+0x0/0x10";
	assert_int_equal(sym_ksym_find(k, 0x1040, 1, &h), 0);
	/* a miss, then a symbol over all three once they are stale */
	c.answer = "0x1030";
	assert_int_equal(sym_ksym_find(k, 0x1030, 1, &h), -ENOENT);
	c.answer = "big+0x18/0x60";
	assert_int_equal(sym_ksym_find(k, 0x1018, 2, &h), 0);
	assert_string_equal(h.name, "big");
	/* text bounds unknown: no module means the core kernel, kept */
	assert_null(h.module);
	c.answer = "never";
	assert_int_equal(sym_ksym_find(k, 0x1000, 3, &h), 0);
	assert_string_equal(h.name, "big");
	assert_int_equal(sym_ksym_find(k, 0x1045, 3, &h), 0);
	assert_string_equal(h.name, "big");
	assert_int_equal(sym_ksym_find(k, 0x105f, 3, &h), 0);
	assert_string_equal(h.name, "big");
	c.answer = "after+0x0/0x8";
	assert_int_equal(sym_ksym_find(k, 0x1060, 3, &h), 0);
	assert_string_equal(h.name, "after");
	assert_int_equal(c.asked, 6);
	/* bounds unknown (no CAP_SYSLOG): a BPF program by its name, asked
	 * again once stale since programs come and go */
	c.answer = "bpf_prog_0123456789abcdef_on_cpu+0x8/0x200";
	assert_int_equal(sym_ksym_find(k, 0x5008, 3, &h), 0);
	assert_string_equal(h.module, "bpf");
	c.answer = "bpf_prog_fedcba9876543210_other+0x8/0x200";
	assert_int_equal(sym_ksym_find(k, 0x5008, 3 + SYM_KSYM_TTL_NS, &h), 0);
	assert_string_equal(h.name, "bpf_prog_fedcba9876543210_other");
	sym_ksym_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_cache_ranges_and_unload),
		cmocka_unit_test(test_cache_overlap),
		cmocka_unit_test(test_cache_syscall_names),
		cmocka_unit_test(test_same_as_table),
		cmocka_unit_test(test_context_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
