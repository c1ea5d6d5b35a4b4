/* SPDX-License-Identifier: MIT */
/* A process that execs: once its exec is known (its mappings read again and
 * its stacks forgotten, as the sampler does on the exec event), its samples
 * are named from the new image, never from what was cached for the old one
 * at the same addresses, in the same drain or a later one.
 *
 * Uses the fixtures exec_spin and exec_spin_b (built without PIE: the same
 * address is spin_first in one and spin_other in the other). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/stack_build.h"
#include "profile/folded.h"

struct child {
	pid_t pid;
	FILE *out; /* its stdout */
};

struct world {
	struct sym_ctx *sym;
	struct stack_builder *b;
	struct prof_profile *p, *next;
	struct child c, c2;
};

/* The fixtures folder: FIXTURES, else next to this test's build folder. */
static void fixtures_dir(char *dir, size_t len)
{
	const char *env = getenv("FIXTURES");
	char self[PATH_MAX - 64];
	ssize_t n;

	if (env && env[0]) {
		snprintf(dir, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(dir, len, "%s/../fixtures", self);
}

/* Starts exec_spin, which spins in spin_first until SIGUSR1, then execs
 * exec_spin_b, which spins in spin_other until SIGUSR1. */
static void start(struct child *c)
{
	char dir[PATH_MAX], a[PATH_MAX + 16], b[PATH_MAX + 16];
	int fds[2];

	fixtures_dir(dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/exec_spin", dir);
	snprintf(b, sizeof(b), "%s/exec_spin_b", dir);
	assert_int_equal(access(a, X_OK), 0);
	assert_int_equal(access(b, X_OK), 0);
	assert_int_equal(pipe(fds), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(a, a, b, "1", "0", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	c->out = fdopen(fds[0], "r");
	assert_non_null(c->out);
}

/* Reads the address the child's current image spins at. */
static uint64_t spin_addr(struct child *c)
{
	char line[64];
	unsigned long long ip = 0;

	assert_non_null(fgets(line, sizeof(line), c->out));
	assert_int_equal(sscanf(line, "spin %llx", &ip), 1);
	return ip;
}

static char *folded(struct prof_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(prof_folded_write(p, out, 0), 0);
	fclose(out);
	return buf;
}

static void assert_folded(struct prof_profile *p, const char *want)
{
	char *got = folded(p);

	if (strcmp(got, want))
		fprintf(stderr, "got:\n%s", got);
	assert_string_equal(got, want);
	free(got);
}

/* Adds the one-frame stack at @ip of process @pid, @times times (a stack
 * is remembered the second time it comes). */
static void add(struct stack_builder *b, struct sym_ctx *sym, struct prof_profile *p,
		pid_t pid, const uint64_t *ip, int times)
{
	/* The same process name before and after: an image re-executed
	 * from another path, or a name the key cannot tell apart. */
	struct stack_input in = { .tgid = (uint32_t)pid, .tid = (uint32_t)pid,
				  .comm = "exec_spin", .tcomm = "exec_spin",
				  .uips = ip, .nu = 1 };

	for (int i = 0; i < times; i++)
		assert_int_equal(stack_builder_add_memo(b, sym, p, &in, 1), 0);
}

/* The exec comes while one drain's stacks are symbolized (or between the
 * copies and the drain of one window): the stacks after it, at the same
 * address, in the same profile, are the new image's. */
static void test_exec_within_epoch(void **state)
{
	struct world *w = *state;
	struct child *c = &w->c;
	uint64_t ip, ip2;

	start(c);
	ip = spin_addr(c);
	assert_int_equal(sym_proc_load(w->sym, c->pid), 0);
	add(w->b, w->sym, w->p, c->pid, &ip, 3);
	assert_folded(w->p, "exec_spin;spin_first 3\n");

	kill(c->pid, SIGUSR1);
	ip2 = spin_addr(c); /* printed by the new image: the exec is done */
	assert_true(ip2 == ip);
	/* What the sampler does on the exec event. */
	assert_int_equal(sym_proc_load(w->sym, c->pid), 0);
	stack_builder_forget_tgid(w->b, (uint32_t)c->pid);
	add(w->b, w->sym, w->p, c->pid, &ip, 3);
	assert_folded(w->p, "exec_spin;spin_first 3\nexec_spin;spin_other 3\n");

	/* And in the next drain's fresh profile. */
	stack_builder_next_epoch(w->b);
	add(w->b, w->sym, w->next, c->pid, &ip, 3);
	assert_folded(w->next, "exec_spin;spin_other 3\n");
}

/* Two processes of one binary (an exec storm's): the second's addresses
 * are named from what the first's were, by their place in the file, with
 * no lookup of their own, and the frames are the same. */
static void test_one_binary_two_processes(void **state)
{
	struct world *w = *state;
	struct sym_stats before, after;
	uint64_t ip, ip2;

	start(&w->c);
	start(&w->c2);
	ip = spin_addr(&w->c);
	ip2 = spin_addr(&w->c2);
	assert_int_equal(sym_proc_load(w->sym, w->c.pid), 0);
	assert_int_equal(sym_proc_load(w->sym, w->c2.pid), 0);
	add(w->b, w->sym, w->p, w->c.pid, &ip, 1);
	sym_stats(w->sym, &before);
	add(w->b, w->sym, w->p, w->c2.pid, &ip2, 1);
	sym_stats(w->sym, &after);
	assert_int_equal(after.lookups, before.lookups);
	assert_folded(w->p, "exec_spin;spin_first 2\n");

	/* A process of another binary at the same address is its own. */
	kill(w->c2.pid, SIGUSR1);
	assert_true(spin_addr(&w->c2) == ip2);
	assert_int_equal(sym_proc_load(w->sym, w->c2.pid), 0);
	stack_builder_forget_tgid(w->b, (uint32_t)w->c2.pid);
	add(w->b, w->sym, w->p, w->c2.pid, &ip2, 1);
	assert_folded(w->p, "exec_spin;spin_first 2\nexec_spin;spin_other 1\n");
}

static int setup(void **state)
{
	struct sym_options so = { 0 };
	struct world *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	w->sym = sym_new(&so);
	w->b = stack_builder_new();
	w->p = prof_new(PROF_UNIT_SAMPLES);
	w->next = prof_new(PROF_UNIT_SAMPLES);
	*state = w;
	return w->sym && w->b && w->p && w->next ? 0 : -1;
}

static int teardown(void **state)
{
	struct world *w = *state;
	int st;

	for (struct child *c = &w->c; c <= &w->c2; c++) {
		if (c->pid > 0) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
		}
		if (c->out)
			fclose(c->out);
	}
	stack_builder_free(w->b);
	prof_free(w->p);
	prof_free(w->next);
	sym_free(w->sym);
	free(w);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exec_within_epoch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_binary_two_processes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
