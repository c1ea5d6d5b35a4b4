/* SPDX-License-Identifier: MIT */
/*
 * perf_map: names for JIT code from /tmp/perf-PID.map, the file JITs
 * (V8, the JVM with perf-map-agent, LuaJIT, our fixture) write with one
 * "START SIZE name" line per generated function, in hex. The file is read
 * through /proc/PID/root with the PID as the process's own namespace sees
 * it, and read again when it grew since.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sym_internal.h"

#define PERFMAP_MAX_BYTES ((off_t)64 << 20)

struct pm_entry {
	uint64_t start, size;
	uint32_t name;
	uint32_t seq; /* line number: later lines win on equal starts */
};

struct sym_perfmap {
	struct pm_entry *e;
	size_t n, cap;
	struct sym_strtab names;
	off_t size;         /* file size when read */
	struct timespec mtime;
	uint64_t checked_ns; /* last look at the file (misses re-check) */
	bool missing;
};

#define PERFMAP_RECHECK_NS 200000000ull /* look again at most 5 times/s */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A hex field of a perf map line, "0x" optional, ending at a space. */
static int parse_hex(const char **pp, const char *end, uint64_t *out)
{
	if (end - *pp > 2 && (*pp)[0] == '0' && ((*pp)[1] == 'x' || (*pp)[1] == 'X'))
		*pp += 2;
	return sym_parse_hex(pp, end, ' ', out);
}

static int pm_push(struct sym_perfmap *pm, uint64_t start, uint64_t size,
		   const char *name, size_t len)
{
	if (pm->n == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 64;
		struct pm_entry *ne = realloc(pm->e, cap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		pm->e = ne;
		pm->cap = cap;
	}
	uint32_t off = sym_strtab_add(&pm->names, name, len);
	if (off == UINT32_MAX)
		return -ENOMEM;
	pm->e[pm->n] = (struct pm_entry){ .start = start, .size = size,
		.name = off, .seq = (uint32_t)pm->n };
	pm->n++;
	return 0;
}

static int pm_cmp(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq > y->seq ? -1 : (x->seq < y->seq); /* newest first */
}

int sym_perfmap_parse(struct sym_perfmap *pm, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		uint64_t start, size;
		const char *q = p;
		if (parse_hex(&q, le, &start) == 0 &&
		    parse_hex(&q, le, &size) == 0 && q < le && size > 0 &&
		    start + size > start) {
			size_t nlen = (size_t)(le - q);
			if (nlen > 0 && q[nlen - 1] == '\r')
				nlen--;
			if (nlen > 0 && pm_push(pm, start, size, q, nlen) != 0)
				return -ENOMEM;
		}
		p = nl ? nl + 1 : end;
	}
	if (pm->n > 1)
		qsort(pm->e, pm->n, sizeof(*pm->e), pm_cmp);
	/* keep the newest entry per start */
	size_t w = 0;
	for (size_t r = 0; r < pm->n; r++)
		if (w == 0 || pm->e[w - 1].start != pm->e[r].start)
			pm->e[w++] = pm->e[r];
	pm->n = w;
	return 0;
}

struct sym_perfmap *sym_perfmap_new(void)
{
	return calloc(1, sizeof(struct sym_perfmap));
}

void sym_perfmap_free(struct sym_perfmap *pm)
{
	if (!pm)
		return;
	free(pm->e);
	sym_strtab_free(&pm->names);
	free(pm);
}

const char *sym_perfmap_find(const struct sym_perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < pm->e[mid].start)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* overlapping entries: look back a little for one that covers */
	for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
		const struct pm_entry *e = &pm->e[lo - 1];
		if (addr - e->start < e->size)
			return pm->names.buf + e->name;
	}
	return NULL;
}

/* The PID the process has in its own PID namespace (last NSpid field). */
static pid_t ns_pid(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	pid_t r = pid;
	if (!f)
		return r;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		char *tok = strtok(line + 6, " \t\n");
		while (tok) {
			char *end;
			long v = strtol(tok, &end, 10);
			if (end != tok && v > 0 && v <= INT32_MAX)
				r = (pid_t)v;
			tok = strtok(NULL, " \t\n");
		}
		break;
	}
	fclose(f);
	return r;
}

static int pm_read(struct sym_ctx *ctx, struct sym_proc *p)
{
	char *path = ctx->scratch;
	snprintf(path, sizeof(ctx->scratch), "/proc/%d/root/tmp/perf-%d.map",
		 (int)p->pid, (int)ns_pid(p->pid));
	struct sym_perfmap *pm = p->perfmap;
	struct stat st;
	if (stat(path, &st) != 0) {
		pm->missing = true;
		return -ENOENT;
	}
	if (!pm->missing && st.st_size == pm->size &&
	    st.st_mtim.tv_sec == pm->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == pm->mtime.tv_nsec)
		return 0;
	if (st.st_size > PERFMAP_MAX_BYTES)
		return -EFBIG;
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char *buf = malloc((size_t)st.st_size + 1);
	size_t got = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (!buf)
		return -ENOMEM;
	pm->n = 0;
	sym_strtab_free(&pm->names);
	int err = sym_perfmap_parse(pm, buf, got);
	free(buf);
	pm->size = st.st_size;
	pm->mtime = st.st_mtim;
	pm->missing = false;
	return err;
}

int sym_perfmap_lookup(struct sym_ctx *ctx, struct sym_proc *p,
		       uint64_t addr, struct sym_frame *out)
{
	if (!p->perfmap && !(p->perfmap = sym_perfmap_new()))
		return -ENOMEM;
	const char *name = sym_perfmap_find(p->perfmap, addr);
	uint64_t now = mono_ns();
	if (!name && !p->gone &&
	    (p->perfmap->checked_ns == 0 ||
	     now - p->perfmap->checked_ns >= PERFMAP_RECHECK_NS)) {
		/* a miss: the JIT may have written more since */
		p->perfmap->checked_ns = now;
		if (pm_read(ctx, p) != 0)
			return -ENOENT;
		name = sym_perfmap_find(p->perfmap, addr);
	}
	if (!name)
		return -ENOENT;
	*out = (struct sym_frame){
		.name = name, .module = "[jit]", .cls = PROF_CLASS_YOURS,
		.lang = PROF_LANG_JIT, .flags = SYM_FRAME_JIT,
	};
	return 0;
}

int sym_perfmap_refresh(struct sym_ctx *ctx, struct sym_proc *p)
{
	if (!p->perfmap && !(p->perfmap = sym_perfmap_new()))
		return -ENOMEM;
	p->perfmap->checked_ns = mono_ns();
	return pm_read(ctx, p);
}
