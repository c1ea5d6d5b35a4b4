/* SPDX-License-Identifier: MIT */
/*
 * procs: the executable mappings of each process, read from
 * /proc/PID/maps, sorted for binary search.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sym_internal.h"

struct sym_proc *sym_proc_find(struct sym_ctx *ctx, pid_t pid)
{
	struct sym_proc *p = ctx->last_proc;
	if (p && p->pid == pid)
		return p;
	for (p = ctx->procs[(unsigned)pid % SYM_PROC_BUCKETS]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

void sym_proc_free_maps(struct sym_ctx *ctx, struct sym_proc *p)
{
	for (size_t i = 0; i < p->nmaps; i++) {
		if (p->maps[i].mod)
			sym_modcache_unref(ctx, p->maps[i].mod);
		free(p->maps[i].name);
	}
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
}

static int push_map(struct sym_map **maps, size_t *n, size_t *cap,
		    const struct sym_map *m)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		struct sym_map *nm = realloc(*maps, nc * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		*maps = nm;
		*cap = nc;
	}
	(*maps)[(*n)++] = *m;
	return 0;
}

/* Classifies one line into a mapping; returns 1 when it should be kept. */
static int line_to_map(struct sym_ctx *ctx, pid_t pid,
		       struct sym_maps_line *ml, const char *exe,
		       struct sym_map *out)
{
	memset(out, 0, sizeof(*out));
	out->start = ml->start;
	out->end = ml->end;
	out->pgoff = ml->pgoff;
	if (ml->path_len == 0 || ml->path[0] != '/') {
		out->kind = ml->path_len && ml->path[0] == '[' &&
				    strncmp(ml->path, "[anon", 5) != 0 ?
			    SYM_MAP_SPECIAL : SYM_MAP_ANON;
		if (out->kind == SYM_MAP_SPECIAL &&
		    ml->path_len < sizeof(ctx->scratch)) {
			out->name = strndup(ml->path, ml->path_len);
			if (!out->name)
				return -ENOMEM;
		}
		out->cls = PROF_CLASS_SYSTEM;
		return 1;
	}
	char path[4096];
	if (ml->path_len >= sizeof(path))
		return 0;
	memcpy(path, ml->path, ml->path_len);
	path[ml->path_len] = '\0';
	ml->path = path;
	out->kind = SYM_MAP_FILE;
	out->mod = sym_modcache_get(ctx, pid, ml);
	ml->path = NULL;
	if (!out->mod)
		return 0; /* not ELF (or unreadable): leave the range unknown */
	out->cls = sym_class_for_path(ctx, path, exe && strcmp(exe, path) == 0);
	return 1;
}

static void read_exe(pid_t pid, char *buf, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, buf, len - 1);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	static const char del[] = " (deleted)";
	size_t dl = sizeof(del) - 1;
	if ((size_t)n > dl && strcmp(buf + n - dl, del) == 0)
		buf[n - dl] = '\0';
}

static int cmp_map(const void *a, const void *b)
{
	const struct sym_map *x = a, *y = b;
	return x->start < y->start ? -1 : (x->start > y->start);
}

/* The mappings being read for one process. */
struct maps_read {
	struct sym_ctx *ctx;
	pid_t pid;
	const char *exe;
	struct sym_map *maps;
	size_t n, cap;
};

static void maps_read_drop(struct maps_read *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->maps[i].mod)
			sym_modcache_unref(r->ctx, r->maps[i].mod);
		free(r->maps[i].name);
	}
	free(r->maps);
	r->maps = NULL;
	r->n = r->cap = 0;
}

/* Keeps one executable mapping (a sym_maps_fn). Returns 0 or -ENOMEM. */
static int take_line(void *arg, struct sym_maps_line *ml)
{
	struct maps_read *r = arg;
	struct sym_map m;
	int keep = line_to_map(r->ctx, r->pid, ml, r->exe, &m);
	int err;

	if (keep <= 0)
		return keep;
	err = push_map(&r->maps, &r->n, &r->cap, &m);
	if (err) {
		if (m.mod)
			sym_modcache_unref(r->ctx, m.mod);
		free(m.name);
	}
	return err;
}

/* Reads the executable mappings of @r->pid: by query when the kernel has
 * it, else (or when a query fails midway) from the text. */
static int read_mappings(const char *path, struct maps_read *r)
{
	char name[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = sym_maps_query(fd, name, sizeof(name), take_line, r);
	if (err == 0 || err == -ENOMEM || err == -ESRCH) {
		/* ESRCH: no address space (a kernel thread, or the process
		 * is exiting), as the text would have no lines: the caller
		 * tells which */
		close(fd);
		return err == -ESRCH ? 0 : err;
	}
	maps_read_drop(r);
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -errno;
	}
	return sym_maps_text(fd, take_line, r);
}

/* True when the new view @r (not yet sorted) holds the mappings @p has. */
static bool same_maps(const struct sym_proc *p, const struct maps_read *r)
{
	if (p->nmaps == 0 || p->nmaps != r->n)
		return false;
	for (size_t i = 0; i < r->n; i++) {
		const struct sym_map *m = &r->maps[i];
		const struct sym_map *o = sym_proc_map_find(p, m->start);

		if (!o || o->start != m->start || o->end != m->end || o->mod != m->mod ||
		    o->pgoff != m->pgoff)
			return false;
	}
	return true;
}

int sym_proc_read_maps(struct sym_ctx *ctx, struct sym_proc *p)
{
	char path[64], exe[4096];
	struct maps_read r = { .ctx = ctx, .pid = p->pid, .exe = exe };
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	read_exe(p->pid, exe, sizeof(exe));
	err = read_mappings(path, &r);
	if (err == -ESRCH)
		return -ESRCH;
	p->settled = same_maps(p, &r);
	/* take the new view even when it is partial (ENOMEM): keep refs
	 * balanced by releasing the old one first */
	sym_proc_free_maps(ctx, p);
	if (r.n > 1)
		qsort(r.maps, r.n, sizeof(*r.maps), cmp_map);
	p->maps = r.maps;
	p->nmaps = r.n;
	if (r.n == 0 && err == 0) {
		/* a kernel thread or a process that just died */
		if (access(path, R_OK) != 0)
			err = -ESRCH;
	}
	return err;
}

/* @e as a mapping in @out; returns 1 to keep it, 0 to leave it out (a
 * file no module is found for), -ENOMEM. */
static int exit_map(struct sym_ctx *ctx, const struct sym_exit_map *e, struct sym_map *out)
{
	memset(out, 0, sizeof(*out));
	out->start = e->start;
	out->end = e->end;
	out->pgoff = e->pgoff;
	if (e->vdso) {
		out->kind = SYM_MAP_SPECIAL;
		out->cls = PROF_CLASS_SYSTEM;
		out->name = strdup("[vdso]");
		return out->name ? 1 : -ENOMEM;
	}
	out->kind = SYM_MAP_FILE;
	out->mod = sym_modcache_get_file(ctx, makedev(e->dev_major, e->dev_minor),
					 (ino_t)e->ino, e->path);
	if (!out->mod)
		return 0;
	out->cls = sym_class_for_path(ctx, e->path ? e->path : out->mod->path, e->exe);
	return 1;
}

int sym_proc_set_exit_maps(struct sym_ctx *ctx, pid_t pid, const struct sym_exit_map *maps,
			   size_t n)
{
	struct maps_read r = { .ctx = ctx, .pid = pid };
	struct sym_proc *p = sym_proc_find(ctx, pid);
	int err = 0;

	if (!p && !(p = sym_proc_new(ctx, pid)))
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		struct sym_map m;
		int keep = exit_map(ctx, &maps[i], &m);

		if (keep < 0)
			err = keep;
		else if (keep && (err = push_map(&r.maps, &r.n, &r.cap, &m)) != 0) {
			if (m.mod)
				sym_modcache_unref(ctx, m.mod);
			free(m.name);
		}
	}
	if (err) {
		maps_read_drop(&r);
		return err;
	}
	sym_proc_free_maps(ctx, p);
	if (r.n > 1)
		qsort(r.maps, r.n, sizeof(*r.maps), cmp_map);
	p->maps = r.maps;
	p->nmaps = r.n;
	p->gone = true;
	p->settled = true;
	return 0;
}

const struct sym_map *sym_proc_map_find(const struct sym_proc *p,
					uint64_t addr)
{
	size_t lo = 0, hi = p->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < p->maps[mid].start)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return NULL;
	const struct sym_map *m = &p->maps[lo - 1];
	return addr < m->end ? m : NULL;
}
