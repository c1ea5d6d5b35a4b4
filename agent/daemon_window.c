/* SPDX-License-Identifier: MIT */
/* daemon_window: fold thread rows into pids, drop excluded processes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/daemon_window.h"

#define UNMAPPED UINT32_MAX

struct copy_ctx {
	struct prof_profile *dst;
	const struct window_filter *f;
	uint32_t *map;       /* src frame -> dst frame, UNMAPPED = not yet */
	uint32_t *path;
	size_t cap;
	/* the last thread row seen and its pid: stacks come grouped by thread */
	uint32_t last_thread;
	uint32_t last_pid;
	/* the last (process row, thread row) pair and the process frame it
	 * became, so each thread's frame is interned once, not per stack */
	uint32_t last_top, last_th, last_dst;
};

uint32_t daemon_window_proc_tgid(void *arg, uint32_t tid)
{
	char path[64], buf[512], *p;
	unsigned long v;
	ssize_t n;
	int fd;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return 0;
	errno = 0;
	v = strtoul(p + 6, NULL, 10);
	return errno || v > UINT32_MAX ? 0 : (uint32_t)v;
}

/* The tid at the end of a thread row "name-tid", 0 when none. */
static uint32_t thread_tid(const char *name)
{
	const char *dash = strrchr(name, '-');
	unsigned long v;
	char *end;

	if (!dash || !dash[1])
		return 0;
	errno = 0;
	v = strtoul(dash + 1, &end, 10);
	return errno || *end || v > UINT32_MAX ? 0 : (uint32_t)v;
}

/* The pid of the thread row @frame named "name-tid"; stacks come grouped
 * by thread, so the last answer is kept. */
static uint32_t thread_pid(struct copy_ctx *c, uint32_t frame, const char *name)
{
	if (c->last_thread != frame) {
		c->last_thread = frame;
		c->last_pid = c->f->tgid_of ? c->f->tgid_of(c->f->arg, thread_tid(name)) : 0;
	}
	return c->last_pid;
}

static uint32_t copy_frame(struct copy_ctx *c, const struct prof_profile *src,
			   uint32_t id, uint32_t line_override, bool override)
{
	const struct prof_frame *sf = prof_frame_get(src, id);
	struct prof_frame f;

	if (!sf)
		return UNMAPPED;
	if (!override && c->map[id] != UNMAPPED)
		return c->map[id];
	f = *sf;
	f.name = prof_intern_cstr(c->dst, prof_str(src, sf->name));
	f.module = prof_intern_cstr(c->dst, prof_str(src, sf->module));
	f.file = prof_intern_cstr(c->dst, prof_str(src, sf->file));
	if (f.name == UINT32_MAX || f.module == UINT32_MAX || f.file == UINT32_MAX)
		return UNMAPPED;
	if (override)
		f.line = line_override;
	id = override ? prof_frame_intern(c->dst, &f) : (c->map[id] = prof_frame_intern(c->dst, &f));
	return id;
}

static bool excluded(const struct window_filter *f, const char *comm)
{
	for (size_t i = 0; i < f->nexclude; i++)
		if (!strncmp(f->exclude[i], comm, 16))
			return true;
	return false;
}

static int copy_stack(const struct prof_profile *src, const uint32_t *frames,
		      size_t n, uint64_t value, void *arg)
{
	struct copy_ctx *c = arg;
	const struct prof_frame *top = n ? prof_frame_get(src, frames[0]) : NULL;
	const struct prof_frame *th;
	size_t skip = 1, k = 0;
	uint32_t pid = 0;
	const char *comm;

	if (!top || top->kind != PROF_KIND_PROCESS)
		return 0; /* only process-rooted stacks are kept */
	comm = prof_str(src, top->name);
	th = n > 1 ? prof_frame_get(src, frames[1]) : NULL;
	if (excluded(c->f, comm))
		return 0;
	if (th && th->kind == PROF_KIND_THREAD) {
		pid = thread_pid(c, frames[1], prof_str(src, th->name));
		skip = 2;
	}
	if (n - skip + 1 > c->cap) {
		size_t cap = n + 16;
		uint32_t *p = realloc(c->path, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->path = p;
		c->cap = cap;
	}
	if (c->last_dst == UNMAPPED || c->last_top != frames[0] ||
	    c->last_th != (skip == 2 ? frames[1] : 0)) {
		c->last_top = frames[0];
		c->last_th = skip == 2 ? frames[1] : 0;
		c->last_dst = copy_frame(c, src, frames[0], pid, true);
	}
	c->path[k++] = c->last_dst;
	for (size_t i = skip; i < n; i++)
		c->path[k++] = copy_frame(c, src, frames[i], 0, false);
	for (size_t i = 0; i < k; i++)
		if (c->path[i] == UNMAPPED)
			return -ENOMEM;
	return prof_add_stack(c->dst, c->path, k, value) == UINT32_MAX ? -ENOMEM : 0;
}

int daemon_window_copy(struct prof_profile *dst, const struct prof_profile *src,
		       const struct window_filter *f)
{
	struct copy_ctx c = { .dst = dst, .f = f, .last_dst = UNMAPPED };
	uint32_t nf = prof_frame_count(src);
	int rc;

	if (prof_meta_const(dst)->unit != prof_meta_const(src)->unit)
		return -EINVAL;
	c.map = malloc((nf ? nf : 1) * sizeof(*c.map));
	if (!c.map)
		return -ENOMEM;
	for (uint32_t i = 0; i < nf; i++)
		c.map[i] = UNMAPPED;
	rc = prof_walk_stacks(src, copy_stack, &c);
	free(c.map);
	free(c.path);
	return rc;
}
