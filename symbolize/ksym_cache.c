/* SPDX-License-Identifier: MIT */
/*
 * ksym_cache: kernel symbols asked for one address at a time and kept as
 * address ranges, so every later address inside a known symbol is
 * answered without asking again. The asking is injected (the BPF program
 * of ksym_bpf.c in hearth, canned answers in tests).
 *
 * The core kernel never changes while it runs: its symbols are kept for
 * good. A loadable module can be unloaded, and a BPF program freed, and
 * their addresses given to others: such symbols, and addresses that had
 * no symbol, are asked again when looked up more than SYM_KSYM_TTL_NS
 * after the kernel last answered for them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

#define NAME_NONE UINT32_MAX   /* an address in no symbol */
#define MOD_CORE UINT32_MAX    /* the core kernel */
#define MOD_BPF (UINT32_MAX - 1) /* a BPF program: "%pS" names no module */
/* Beyond these, everything is dropped and asked again: churn of BPF
 * programs over days must not grow memory forever. */
#define MAX_ENTS (1u << 18)
#define MAX_NAME_BYTES ((size_t)16 << 20)

struct ksym_ent {
	uint64_t start, end;   /* [start, end) */
	uint64_t asked_ns;     /* when the kernel last answered for it */
	uint32_t name;         /* offset in names, or NAME_NONE */
	uint32_t module;       /* offset in names, MOD_CORE or MOD_BPF */
};

struct sym_ksym {
	sym_ksym_ask_fn ask;
	sym_ksym_lookup_fn lookup; /* NULL: names as the kernel prints them */
	void *arg;
	uint64_t text[4]; /* core text: [0], [1]) and init text [2], [3]) */
	struct ksym_ent *v;
	size_t n, cap;
	struct sym_strtab names;
	uint64_t asked; /* answers the kernel gave */
};

struct sym_ksym *sym_ksym_new(sym_ksym_ask_fn ask, sym_ksym_lookup_fn lookup,
			      void *arg, const uint64_t text[4])
{
	struct sym_ksym *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->ask = ask;
	k->lookup = lookup;
	k->arg = arg;
	memcpy(k->text, text, sizeof(k->text));
	return k;
}

void sym_ksym_free(struct sym_ksym *k)
{
	if (!k)
		return;
	free(k->v);
	sym_strtab_free(&k->names);
	free(k);
}

static void drop_all(struct sym_ksym *k)
{
	k->n = 0;
	k->names.len = 0;
}

/* Index of the last entry starting at or below @addr, or k->n when none. */
static size_t find_le(const struct sym_ksym *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < k->v[mid].start)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo == 0 ? k->n : lo - 1;
}

/* Puts @e in place of every entry it overlaps. Returns 0 or -ENOMEM. */
static int insert(struct sym_ksym *k, const struct ksym_ent *e)
{
	size_t i = find_le(k, e->start);
	size_t from = i == k->n ? 0 : (k->v[i].end <= e->start ? i + 1 : i);
	size_t to = from;
	while (to < k->n && k->v[to].start < e->end)
		to++;
	if (to == from) {
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 256;
			struct ksym_ent *nv = realloc(k->v, cap * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			k->v = nv;
			k->cap = cap;
		}
		memmove(k->v + from + 1, k->v + from,
			(k->n - from) * sizeof(*k->v));
		k->n++;
	} else if (to - from > 1) {
		memmove(k->v + from + 1, k->v + to, (k->n - to) * sizeof(*k->v));
		k->n -= to - from - 1;
	}
	k->v[from] = *e;
	return 0;
}

/* Whether a name without a module is a BPF program's or trampoline's,
 * by the names the kernel gives them (for when the text bounds are
 * unknown: without CAP_SYSLOG the kernel hides symbol values). */
static bool bpf_named(const struct sym_ksym_rec *r)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trampoline_",
						"bpf_dispatcher_" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
		size_t pl = strlen(prefixes[i]);
		if (r->name_len > pl && memcmp(r->name, prefixes[i], pl) == 0)
			return true;
	}
	return false;
}

static bool in_core(const struct sym_ksym *k, uint64_t addr)
{
	return (k->text[0] <= addr && addr < k->text[1]) ||
	       (k->text[2] <= addr && addr < k->text[3]);
}

/* The module offset for an answer: the same bytes as @old's keep it. */
static uint32_t module_of(struct sym_ksym *k, const struct sym_ksym_rec *r,
			  uint64_t addr, const struct ksym_ent *old)
{
	if (!r->module && k->text[1] == 0)
		return bpf_named(r) ? MOD_BPF : MOD_CORE;
	if (!r->module)
		return in_core(k, addr) ? MOD_CORE : MOD_BPF;
	if (old && old->module < MOD_BPF &&
	    strncmp(k->names.buf + old->module, r->module, r->module_len) == 0 &&
	    k->names.buf[old->module + r->module_len] == '\0')
		return old->module;
	return sym_strtab_add(&k->names, r->module, r->module_len);
}

/* as bpf/ksym.h's KSYM_STR: the longest kernel name (512) and its suffix */
#define NAME_BUF 640

/* A system call without arguments has three names at one address and the
 * kernel prints the first, "__do_sys_f"; the name other tools show (and
 * the table gives) is the architecture's entry point, "__x64_sys_f" or
 * "__arm64_sys_f". Writes the one the kernel places at @start into @out
 * and returns true, or returns false. */
static bool syscall_entry(struct sym_ksym *k, const struct sym_ksym_rec *r,
			  uint64_t start, char out[NAME_BUF])
{
	static const char *const aliases[] = { "__do_sys_", "__ia32_sys_",
					       "__se_sys_" };
	static const char *const entries[] = { "__x64_sys_", "__arm64_sys_" };
	const char *rest = NULL;
	size_t rest_len = 0;
	for (size_t i = 0; !rest && i < sizeof(aliases) / sizeof(*aliases); i++) {
		size_t pl = strlen(aliases[i]);
		if (r->name_len > pl && memcmp(r->name, aliases[i], pl) == 0) {
			rest = r->name + pl;
			rest_len = r->name_len - pl;
		}
	}
	if (!k->lookup || r->module || !rest)
		return false;
	char cand[2][NAME_BUF];
	const char *names[2] = { cand[0], cand[1] };
	uint64_t addrs[2];
	for (size_t j = 0; j < 2; j++) {
		int len = snprintf(cand[j], NAME_BUF, "%s%.*s", entries[j],
				   (int)rest_len, rest);
		if (len < 0 || len >= NAME_BUF)
			return false;
	}
	if (k->lookup(k->arg, names, 2, addrs) != 0)
		return false;
	for (size_t j = 0; j < 2; j++) {
		if (addrs[j] == start) {
			memcpy(out, cand[j], NAME_BUF);
			return true;
		}
	}
	return false;
}

/* Asks the kernel about @addr and caches the answer; @old is the stale
 * entry holding @addr, if any. Returns the entry's index, or -errno. */
static ssize_t ask(struct sym_ksym *k, uint64_t addr, uint64_t now,
		   const struct ksym_ent *old)
{
	const char *s = NULL;
	int err = k->ask(k->arg, &addr, 1, &s);
	if (err)
		return err;
	/* a copy: the asker's buffer serves the next question */
	char answer[NAME_BUF], entry[NAME_BUF];
	size_t len = s ? strlen(s) : 0;
	if (!s || len >= sizeof(answer))
		return -EPROTO;
	memcpy(answer, s, len + 1);
	struct sym_ksym_rec r;
	err = sym_ksym_parse(answer, len, &r);
	if (err && err != -ENOENT)
		return -EPROTO;
	k->asked++;
	if (k->n >= MAX_ENTS || k->names.len > MAX_NAME_BYTES) {
		drop_all(k);
		old = NULL;
	}
	struct ksym_ent e = { .start = addr, .end = addr + 1, .asked_ns = now,
			      .name = NAME_NONE, .module = MOD_CORE };
	if (!err) {
		if (r.off > addr)
			return -EPROTO;
		e.start = addr - r.off;
		e.end = r.size > r.off ? e.start + r.size : addr + 1;
		if (e.end < e.start) /* wrapped past the top */
			e.end = UINT64_MAX;
		e.module = module_of(k, &r, addr, old);
		/* the kernel names the first of several names at one
		 * address; "__pi_f" is the position-independent alias of
		 * "f", the name every other tool shows */
		if (r.name_len > 5 && memcmp(r.name, "__pi_", 5) == 0) {
			r.name += 5;
			r.name_len -= 5;
		} else if (syscall_entry(k, &r, e.start, entry)) {
			r.name = entry;
			r.name_len = strlen(entry);
		}
		bool same = old && old->name != NAME_NONE &&
			    strncmp(k->names.buf + old->name, r.name, r.name_len) == 0 &&
			    k->names.buf[old->name + r.name_len] == '\0';
		e.name = same ? old->name : sym_strtab_add(&k->names, r.name, r.name_len);
		/* a module name that could not be stored reads MOD_CORE */
		if (e.name == UINT32_MAX || (r.module && e.module >= MOD_BPF))
			return -ENOMEM;
	}
	err = insert(k, &e);
	if (err)
		return err;
	return (ssize_t)find_le(k, addr);
}

int sym_ksym_find(struct sym_ksym *k, uint64_t addr, uint64_t now,
		  struct sym_ksym_hit *out)
{
	size_t i = find_le(k, addr);
	const struct ksym_ent *e = i < k->n && addr < k->v[i].end ? &k->v[i] : NULL;
	bool fresh = e && ((e->module == MOD_CORE && e->name != NAME_NONE) ||
			   now - e->asked_ns < SYM_KSYM_TTL_NS);
	if (!fresh) {
		struct ksym_ent old;
		if (e)
			old = *e;
		ssize_t j = ask(k, addr, now, e ? &old : NULL);
		if (j < 0)
			return (int)j;
		e = &k->v[j];
	}
	if (e->name == NAME_NONE)
		return -ENOENT;
	out->name = k->names.buf + e->name;
	out->module = e->module == MOD_CORE ? NULL :
		      e->module == MOD_BPF ? "bpf" : k->names.buf + e->module;
	out->start = e->start;
	out->size = e->end - e->start;
	return 0;
}

void sym_ksym_forget_volatile(struct sym_ksym *k)
{
	size_t w = 0;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].module == MOD_CORE && k->v[i].name != NAME_NONE)
			k->v[w++] = k->v[i];
	k->n = w;
}

size_t sym_ksym_bytes(const struct sym_ksym *k)
{
	return k ? k->cap * sizeof(*k->v) + k->names.cap : 0;
}

uint64_t sym_ksym_asked(const struct sym_ksym *k)
{
	return k ? k->asked : 0;
}
