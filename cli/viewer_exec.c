/* SPDX-License-Identifier: MIT */
/*
 * hearth's side of the viewer: `view`, `export --png` and `diff --view`
 * exec hearth-view, found next to this binary (the build tree, or both in
 * one folder) or in the folder it is installed in. Only hearth links this
 * file (cli/hearth_main.c); hearth-view draws (cli/view_main.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/viewer.h"

#ifndef HEARTH_LIBEXEC_DIR
#define HEARTH_LIBEXEC_DIR "/usr/local/libexec/hearth"
#endif

#define VIEWER_NAME "hearth-view"

/* The viewer next to our own executable, else the installed one. Returns
 * 0 with the path in @buf, or -ENOENT. */
static int viewer_path(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash && (size_t)(slash - self) + sizeof(VIEWER_NAME) + 1 < len) {
			slash[1] = '\0';
			strcpy(buf, self);
			strcat(buf, VIEWER_NAME);
			if (access(buf, X_OK) == 0)
				return 0;
		}
	}
	if (sizeof(HEARTH_LIBEXEC_DIR "/" VIEWER_NAME) > len)
		return -ENOENT;
	strcpy(buf, HEARTH_LIBEXEC_DIR "/" VIEWER_NAME);
	return access(buf, X_OK) == 0 ? 0 : -ENOENT;
}

/* Reads our own command line (the strings as started: option parsing
 * reorders only the pointers) into a NULL-terminated array whose first
 * element is left free. Returns it (one allocation), or NULL. */
static char **own_cmdline(void)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *text = malloc(cap);
	ssize_t r = 0;
	while (text && (r = read(fd, text + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			char *nt = cap < (64u << 20) ? realloc(text, cap * 2) : NULL;
			if (!nt) {
				free(text);
				text = NULL;
				break;
			}
			text = nt;
			cap *= 2;
		}
	}
	close(fd);
	if (!text || r < 0 || len == 0 || text[len - 1] != '\0') {
		free(text);
		return NULL;
	}
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\0';
	/* pointers first, then the strings, in one block */
	char **v = malloc((n + 1) * sizeof(*v) + len);
	if (v) {
		char *s = memcpy((char *)(v + n + 1), text, len);
		for (size_t i = 0; i < n; i++, s += strlen(s) + 1)
			v[i] = s;
		v[n] = NULL;
	}
	free(text);
	return v;
}

/* Execs the viewer; returns only on failure, with the sentence in @err. */
static void exec_viewer(char **argv, char *err, size_t errlen)
{
	char path[PATH_MAX];
	if (viewer_path(path, sizeof(path)) < 0) {
		snprintf(err, errlen,
			 "the viewer is not installed: no %s next to hearth or in %s",
			 VIEWER_NAME, HEARTH_LIBEXEC_DIR);
		return;
	}
	char **v = own_cmdline();
	if (v && v[0] && v[1]) {
		v[0] = path;
		execv(path, v);
	} else {
		size_t n = 0;
		while (argv[n])
			n++;
		char **w = malloc((n + 2) * sizeof(*w));
		if (w) {
			w[0] = path;
			memcpy(w + 1, argv, (n + 1) * sizeof(*w));
			execv(path, w);
			free(w);
		}
	}
	int e = errno;
	free(v);
	snprintf(err, errlen, "cannot start the viewer %s: %s", path, strerror(e));
}

int cli_exec_viewer(char **argv)
{
	char err[PATH_MAX + 128];
	exec_viewer(argv, err, sizeof(err));
	cli_error("%s.", err);
	return 1;
}

int cli_view_launch(int argc, char **argv)
{
	/* The help text is hearth's own: it needs no viewer. */
	if (cli_view_wants_help(argc, argv)) {
		cli_view_usage(stdout);
		return 0;
	}
	return cli_exec_viewer(argv);
}
