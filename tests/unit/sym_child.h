/* SPDX-License-Identifier: MIT */
/*
 * A fixture process the symbolization tests look at: started with pipes
 * on its stdin and stdout, it prints "name 0xaddr" lines and "ready",
 * then waits until its stdin closes. Include after cmocka.h.
 */
#ifndef HEARTH_TEST_SYM_CHILD_H
#define HEARTH_TEST_SYM_CHILD_H

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The fixtures' folder: $FIXTURES, else build-test/fixtures made
 * absolute. */
static inline const char *fixture_dir(void)
{
	static char dir[PATH_MAX];
	const char *d = getenv("FIXTURES");
	if (dir[0])
		return dir;
	if (d)
		snprintf(dir, sizeof(dir), "%s", d);
	else if (!realpath("build-test/fixtures", dir))
		snprintf(dir, sizeof(dir), "build-test/fixtures");
	return dir;
}

/* The path of fixture @name, valid until the fourth call after. */
static inline const char *fix(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", fixture_dir(), name);
	return buf[k];
}

struct child {
	pid_t pid;
	int in_fd;  /* write end of the child's stdin */
	FILE *out;  /* the child's stdout */
};

static inline void child_start(struct child *c, const char *path)
{
	int in[2], out[2];
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out = fdopen(out[0], "r");
	assert_non_null(c->out);
}

static inline void child_stop(struct child *c)
{
	int st;
	close(c->in_fd);
	fclose(c->out);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Reads "name 0xaddr" lines until "ready"; returns how many. */
static inline size_t child_read_addrs(struct child *c, char names[][64],
				      uint64_t *addrs, size_t max)
{
	char line[256];
	size_t n = 0;
	while (fgets(line, sizeof(line), c->out)) {
		if (strncmp(line, "ready", 5) == 0)
			break;
		char name[64];
		unsigned long long a;
		if (n < max && sscanf(line, "%63s %llx", name, &a) == 2) {
			snprintf(names[n], 64, "%s", name);
			addrs[n++] = a;
		}
	}
	return n;
}

#endif
