/* SPDX-License-Identifier: MIT */
/* push_service: a process's systemd unit, container id or program name. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/push_service.h"

#define PF_KTHREAD 0x00200000u

struct entry {
	uint32_t pid;             /* 0 = free */
	char comm[16];
	struct push_service svc;
};

struct push_services {
	struct entry *slots;
	size_t cap;               /* a power of two, twice max or more */
	size_t used, max;
	struct push_service tmp;
};

static bool name_byte(char ch)
{
	return ('a' <= ch && ch <= 'z') || ('A' <= ch && ch <= 'Z') ||
	       ('0' <= ch && ch <= '9') || ch == '_' || ch == '.' || ch == '/' ||
	       ch == '-';
}

void push_service_clean(const char *in, size_t len, char out[PUSH_SERVICE_MAX])
{
	size_t n = 0;

	for (size_t i = 0; i < len && n < PUSH_SERVICE_MAX - 1; i++)
		out[n++] = name_byte(in[i]) ? in[i] : '_';
	out[n] = 0;
	if (!n)
		snprintf(out, PUSH_SERVICE_MAX, "unknown");
}

static bool ends_with(const char *s, size_t n, const char *sfx)
{
	size_t k = strlen(sfx);

	return n > k && !memcmp(s + n - k, sfx, k);
}

/* A 64-hex-digit id after one of the runtimes' scope prefixes. */
static void container_of(const char *s, size_t n, char out[PUSH_CONTAINER_MAX])
{
	static const char *const pre[] = { "docker-", "cri-containerd-", "crio-", "libpod-" };

	out[0] = 0;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		size_t k = strlen(pre[i]);

		if (n != k + 64 + 6 || memcmp(s, pre[i], k) != 0 || !ends_with(s, n, ".scope"))
			continue;
		for (size_t j = k; j < k + 64; j++)
			if (!(('0' <= s[j] && s[j] <= '9') || ('a' <= s[j] && s[j] <= 'f')))
				return;
		memcpy(out, s + k, 64);
		out[64] = 0;
		return;
	}
}

/* The cgroup path that names the unit: the unified hierarchy's ("0::")
 * when it is not the root, else the name=systemd hierarchy's (a legacy
 * or hybrid boot keeps units there). As [*p, *p + *n). */
static bool systemd_path(const char *text, size_t len, const char **p, size_t *n)
{
	const char *s = text, *end = text + len;
	bool found = false;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end, *c;

		if (e - s > 4 && !memcmp(s, "0::", 3)) {
			*p = s + 3;
			*n = (size_t)(e - s) - 3;
			return true;
		}
		c = memchr(s, ':', (size_t)(e - s));
		if (c && (size_t)(e - c) > 14 && !memcmp(c, ":name=systemd:", 14)) {
			*p = c + 14;
			*n = (size_t)(e - c) - 14;
			found = true;
		}
		s = e + 1;
	}
	return found;
}

bool push_service_from_cgroup(const char *text, size_t len,
			      char unit[PUSH_SERVICE_MAX],
			      char container[PUSH_CONTAINER_MAX])
{
	const char *path;
	size_t n, end;

	unit[0] = container[0] = 0;
	if (!systemd_path(text, len, &path, &n))
		return false;
	/* The innermost unit: walk the components from the end. */
	end = n;
	while (end > 0) {
		size_t start = end;

		while (start > 0 && path[start - 1] != '/')
			start--;
		if (ends_with(path + start, end - start, ".service") ||
		    ends_with(path + start, end - start, ".scope")) {
			push_service_clean(path + start, end - start, unit);
			container_of(path + start, end - start, container);
			return true;
		}
		end = start ? start - 1 : 0;
	}
	return false;
}

/* Reads /proc/PID/NAME into @buf (NUL-terminated); length or -errno. */
static ssize_t read_proc(const char *proc, uint32_t pid, const char *name,
			 char *buf, size_t cap)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/%s", proc, pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

/* Fills @out for a live process whose comm is @comm; false when the pid
 * is gone or runs another program now. */
static bool resolve(const char *proc, uint32_t pid, const char *comm,
		    struct push_service *out)
{
	char buf[4096], exe[PATH_MAX], path[64];
	char *open_paren, *close_paren;
	unsigned long flags = 0;
	ssize_t n = read_proc(proc, pid, "stat", buf, sizeof(buf));

	if (n <= 0 || !(open_paren = strchr(buf, '(')) || !(close_paren = strrchr(buf, ')')))
		return false;
	*close_paren = 0;
	if (strcmp(open_paren + 1, comm) != 0)
		return false;
	/* Fields after ")": state ppid pgrp session tty_nr tpgid flags. */
	if (sscanf(close_paren + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	if (flags & PF_KTHREAD) {
		snprintf(out->name, sizeof(out->name), "kernel");
		out->container[0] = 0;
		return true;
	}
	n = read_proc(proc, pid, "cgroup", buf, sizeof(buf));
	if (n > 0 && push_service_from_cgroup(buf, (size_t)n, out->name, out->container))
		return true;
	snprintf(path, sizeof(path), "%s/%u/exe", proc, pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		const char *base;

		exe[n] = 0;
		if (n > 10 && !strcmp(exe + n - 10, " (deleted)"))
			exe[n - 10] = 0;
		base = strrchr(exe, '/');
		base = base ? base + 1 : exe;
		push_service_clean(base, strlen(base), out->name);
	} else {
		push_service_clean(comm, strlen(comm), out->name);
	}
	return true;
}

struct push_services *push_services_new(size_t max)
{
	struct push_services *s = calloc(1, sizeof(*s));
	size_t cap = 16;

	if (!s)
		return NULL;
	while (cap < max * 2)
		cap *= 2;
	s->slots = calloc(cap, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return NULL;
	}
	s->cap = cap;
	s->max = max ? max : 1;
	return s;
}

void push_services_free(struct push_services *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s);
}

const struct push_service *push_services_get(struct push_services *s,
					     const char *proc, uint32_t pid,
					     const char *comm, size_t len)
{
	char c[16];
	size_t j = (pid * 0x9e3779b1u) & (s->cap - 1);
	struct entry *e;

	if (len > sizeof(c) - 1)
		len = sizeof(c) - 1;
	memcpy(c, comm, len);
	c[len] = 0;
	for (e = &s->slots[j]; e->pid; e = &s->slots[j = (j + 1) & (s->cap - 1)])
		if (e->pid == pid && !strcmp(e->comm, c))
			return &e->svc;
	if (!pid || !resolve(proc, pid, c, &s->tmp)) {
		/* Gone: named by its program; not cached, it may be a
		 * pid that a new process takes next. */
		push_service_clean(c, len, s->tmp.name);
		s->tmp.container[0] = 0;
		return &s->tmp;
	}
	if (s->used == s->max) {
		memset(s->slots, 0, s->cap * sizeof(*s->slots));
		s->used = 0;
		j = (pid * 0x9e3779b1u) & (s->cap - 1);
		e = &s->slots[j];
	}
	e->pid = pid;
	memcpy(e->comm, c, len + 1);
	e->svc = s->tmp;
	s->used++;
	return &e->svc;
}
