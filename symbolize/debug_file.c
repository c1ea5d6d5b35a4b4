/* SPDX-License-Identifier: MIT */
/*
 * debug_file: finds the separate debug file of a module, the way gdb and
 * elfutils do: /usr/lib/debug/.build-id/xx/rest.debug first, then the
 * .gnu_debuglink name next to the binary, in its .debug/ folder and under
 * /usr/lib/debug/<dir>. Each candidate is tried inside the process's root
 * (containers ship their own debug files) and then on the host. A
 * candidate with a different build-id is rejected. Last, when the
 * context has a debuginfod fetcher, the file fetched by build-id.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfod.h"
#include "sym_internal.h"

/* Opens @buf and checks that the build-id matches @m's when both have
 * one; records @path as the debug file. Returns an fd or -ENOENT. */
static int open_matching(struct sym_module *m, const char *buf,
			 const char *path)
{
	int fd = open(buf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	struct sym_module probe = { .fd = -1, .debug_fd = -1 };
	int err = sym_elf_read_header(fd, &probe);
	free(probe.segs);
	if (err == 0 && (m->build_id_len == 0 || probe.build_id_len == 0 ||
			 (probe.build_id_len == m->build_id_len &&
			  memcmp(probe.build_id, m->build_id,
				 m->build_id_len) == 0))) {
		snprintf(m->debug_path, sizeof(m->debug_path), "%s", path);
		return fd;
	}
	close(fd);
	return -ENOENT;
}

/* Opens @path under process @pid's root, then on the host, and checks that
 * the build-id matches @m's when both have one. */
static int try_open(struct sym_module *m, pid_t pid, const char *path)
{
	char buf[4200];
	for (int pass = 0; pass < 2; pass++) {
		int n;
		if (pass == 0)
			n = snprintf(buf, sizeof(buf), "/proc/%d/root%s",
				     (int)pid, path);
		else
			n = snprintf(buf, sizeof(buf), "%s", path);
		if (n < 0 || (size_t)n >= sizeof(buf))
			continue;
		int fd = open_matching(m, buf, path);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

static int by_build_id(const char *root, struct sym_module *m, pid_t pid)
{
	if (m->build_id_len < 2)
		return -ENOENT;
	char path[300 + 2 * SYM_BUILD_ID_MAX];
	size_t o = (size_t)snprintf(path, sizeof(path), "%s/.build-id/%02x/",
				    root, m->build_id[0]);
	for (size_t i = 1; i < m->build_id_len; i++)
		o += (size_t)snprintf(path + o, sizeof(path) - o, "%02x",
				      m->build_id[i]);
	snprintf(path + o, sizeof(path) - o, ".debug");
	return try_open(m, pid, path);
}

static int by_debuglink(const char *root, struct sym_module *m, pid_t pid)
{
	char link[256], dir[4096], path[4096 + 512];
	if (m->fd < 0 || sym_elf_debuglink(m->fd, link, sizeof(link)) != 0)
		return -ENOENT;
	const char *slash = strrchr(m->path, '/');
	size_t dl = slash ? (size_t)(slash - m->path) : 0;
	if (dl >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, m->path, dl);
	dir[dl] = '\0';
	for (int i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s/%s", dir, link);
		else if (i == 1)
			snprintf(path, sizeof(path), "%s/.debug/%s", dir, link);
		else
			snprintf(path, sizeof(path), "%s%s/%s", root, dir, link);
		/* the binary itself may carry the link's name */
		if (strcmp(path, m->path) == 0)
			continue;
		int fd = try_open(m, pid, path);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int sym_debug_open(struct sym_ctx *ctx, struct sym_module *m, pid_t pid)
{
	const char *root = ctx->debug_root;
	int fd = by_build_id(root, m, pid);
	if (fd < 0)
		fd = by_debuglink(root, m, pid);
	return fd;
}

int sym_debug_fetched(struct sym_ctx *ctx, struct sym_module *m)
{
	struct sym_debuginfod *d = ctx->opts.debuginfod;
	char path[4096];
	if (!d || m->build_id_len == 0)
		return -ENOENT;
	switch (sym_debuginfod_get(d, m->build_id, m->build_id_len, m->base,
				   path, sizeof(path))) {
	case SYM_DEBUGINFOD_PENDING:
		return -EINPROGRESS;
	case SYM_DEBUGINFOD_READY:
		/* the cache is ours, on the host, whatever the process sees */
		return open_matching(m, path, path);
	default:
		return -ENOENT;
	}
}
