/* SPDX-License-Identifier: MIT */
/*
 * Python frames read from a real CPython 3.11 (Debian's /usr/bin/python3.11):
 * the offsets against the interpreter's own headers, line numbers against
 * the interpreter's own co_positions(), and the frames of a stopped
 * process's two threads against its source.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/python.h"

#define PYTHON "/usr/bin/python3.11"
#define SCRIPT "tests/fixtures/python/frames.py"

/* The line of @script holding @marker. */
static uint32_t line_of(const char *marker)
{
	FILE *f = fopen(SCRIPT, "r");
	char buf[512];
	uint32_t n = 0;

	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no line with '%s' in %s", marker, SCRIPT);
	return 0;
}

/* The offsets table equals offsetof() in the 3.11 headers: compiled and
 * run here, so a wrong offset fails rather than reads garbage. */
static void test_offsets_match_headers(void **state)
{
	(void)state;
	const char *src = "/tmp/hearth-pyoff.c", *bin = "/tmp/hearth-pyoff";
	FILE *f = fopen(src, "w");
	const struct hearth_py_offsets *o = sym_py_offsets(3, 11);
	char line[256];
	unsigned got[32], n = 0;

	assert_non_null(o);
	assert_null(sym_py_offsets(3, 10));
	assert_non_null(f);
	fputs("#define Py_BUILD_CORE 1\n#include <Python.h>\n#include <stdio.h>\n"
	      "#include \"internal/pycore_frame.h\"\n#include \"internal/pycore_runtime.h\"\n"
	      "#include \"internal/pycore_interp.h\"\n#define P(t, f) printf(\"%zu\\n\", offsetof(t, f))\n"
	      "int main(void) {\n"
	      "P(_PyRuntimeState, interpreters.head); P(PyInterpreterState, threads.head);\n"
	      "P(PyThreadState, next); P(PyThreadState, native_thread_id); P(PyThreadState, cframe);\n"
	      "P(_PyCFrame, current_frame); P(_PyInterpreterFrame, f_code);\n"
	      "P(_PyInterpreterFrame, previous); P(_PyInterpreterFrame, prev_instr);\n"
	      "P(_PyInterpreterFrame, is_entry); P(_PyInterpreterFrame, owner);\n"
	      "P(PyCodeObject, co_filename); P(PyCodeObject, co_name); P(PyCodeObject, co_qualname);\n"
	      "P(PyCodeObject, co_linetable); P(PyCodeObject, co_firstlineno);\n"
	      "P(PyCodeObject, co_code_adaptive); return 0; }\n", f);
	fclose(f);
	assert_int_equal(system("gcc -I/usr/include/python3.11 -o /tmp/hearth-pyoff "
				"/tmp/hearth-pyoff.c"), 0);
	f = popen(bin, "r");
	assert_non_null(f);
	while (n < 32 && fgets(line, sizeof(line), f))
		got[n++] = (unsigned)strtoul(line, NULL, 10);
	assert_int_equal(pclose(f), 0);
	assert_int_equal(n, 17);
	const uint16_t want[17] = {
		o->runtime_interp_head, o->interp_threads_head, o->tstate_next,
		o->tstate_native_tid, o->tstate_cframe, o->cframe_current, o->frame_code,
		o->frame_previous, o->frame_prev_instr, o->frame_is_entry, o->frame_owner,
		o->code_filename, o->code_name, o->code_qualname, o->code_linetable,
		o->code_firstlineno, o->code_adaptive,
	};
	for (unsigned i = 0; i < 17; i++)
		assert_int_equal(got[i], want[i]);
	unlink(src);
	unlink(bin);
}

/* Every instruction of every function of the script and of a big stdlib
 * module: our line equals the interpreter's own co_positions(). */
static void test_lines_match_interpreter(void **state)
{
	(void)state;
	const char *prog =
		"import sys, types, threading\n"
		"def codes(c):\n"
		"    yield c\n"
		"    for k in c.co_consts:\n"
		"        if isinstance(k, types.CodeType): yield from codes(k)\n"
		"for path in sys.argv[1:]:\n"
		"    top = compile(open(path).read(), path, \"exec\")\n"
		"    for c in codes(top):\n"
		"        lines = [p[0] or 0 for p in c.co_positions()]\n"
		"        print(c.co_firstlineno, c.co_linetable.hex(), \",\".join(map(str, lines)) or \"-\")\n";
	char cmd[1024], *buf = NULL;
	size_t cap = 0, codes = 0, instrs = 0;
	ssize_t len;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s -c '%s' %s /usr/lib/python3.11/threading.py "
		 "/usr/lib/python3.11/argparse.py", PYTHON, prog, SCRIPT);
	f = popen(cmd, "r");
	assert_non_null(f);
	while ((len = getline(&buf, &cap, f)) > 0) {
		char *first = strtok(buf, " \n"), *hex = strtok(NULL, " \n"),
		     *lines = strtok(NULL, " \n");
		uint8_t table[65536];
		size_t tl = 0;

		assert_non_null(lines);
		for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && tl < sizeof(table); i++) {
			unsigned v;
			sscanf(hex + 2 * i, "%2x", &v);
			table[tl++] = (uint8_t)v;
		}
		if (strcmp(lines, "-") == 0)
			continue;
		uint32_t instr = 0;
		for (char *l = strtok(lines, ","); l; l = strtok(NULL, ","), instr++) {
			uint32_t want = (uint32_t)strtoul(l, NULL, 10);
			uint32_t got = sym_py_line(table, tl, atoi(first), instr);
			if (got != want)
				fail_msg("code at line %s, instruction %u: line %u, the interpreter says %u",
					 first, instr, got, want);
			instrs++;
		}
		codes++;
	}
	free(buf);
	assert_int_equal(pclose(f), 0);
	assert_true(codes > 100);
	assert_true(instrs > 10000);
	/* damaged tables give no line, not a crash */
	const uint8_t bad[] = { 0x7f, 0xf0, 0xff };
	assert_int_equal(sym_py_line(bad, sizeof(bad), 1, 0), 0);
	assert_int_equal(sym_py_line(bad + 1, 2, 1, 5), 0);
}

static pid_t start_script(void)
{
	int out[2];
	pid_t pid;
	char buf[16] = "";

	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* a failed assertion in the parent must not leave it spinning */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(out[1], 1);
		close(out[0]);
		execl(PYTHON, PYTHON, SCRIPT, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	for (size_t n = 0; n < sizeof(buf) - 1 && !strchr(buf, '\n');) {
		ssize_t k = read(out[0], buf + n, sizeof(buf) - 1 - n);

		assert_true(k > 0);
		n += (size_t)k;
	}
	assert_string_equal(buf, "ready\n");
	close(out[0]);
	usleep(200000); /* into the loop and the sleep */
	return pid;
}

/* The thread of @pid that is not the main one. */
static pid_t other_thread(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	pid_t tid = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (atoi(e->d_name) > 0 && atoi(e->d_name) != pid)
			tid = atoi(e->d_name);
	closedir(d);
	return tid;
}

static void expect(struct sym_py_names *n, pid_t pid, const struct hearth_py_proc *py,
		   const struct hearth_py_frame *f, const char *name, uint32_t line, int cls)
{
	struct sym_frame sf;

	assert_int_equal(sym_py_name(n, pid, py, f, &sf), 1);
	assert_string_equal(sf.name, name);
	if (line)
		assert_int_equal(sf.line, line);
	assert_int_equal(sf.lang, PROF_LANG_PYTHON);
	assert_int_equal(sf.cls, cls);
}

static void test_frames_of_a_stopped_process(void **state)
{
	(void)state;
	pid_t pid = start_script(), tid;
	struct hearth_py_proc py;
	struct hearth_py_frame f[HEARTH_PY_DEPTH];
	struct sym_py_names *names = sym_py_names_new();
	char version[16] = "";
	int n;

	assert_non_null(names);
	kill(pid, SIGSTOP);
	assert_int_equal(sym_py_find(pid, &py, version), 0);
	assert_string_equal(version, "3.11");

	/* main thread: inner, middle, outer, <module>; one native call of
	 * the loop runs them all, so only the module frame is an entry */
	n = sym_py_walk(pid, &py, pid, f, HEARTH_PY_DEPTH);
	assert_int_equal(n, 4);
	expect(names, pid, &py, &f[0], "inner", line_of("SPIN LINE"), PROF_CLASS_YOURS);
	expect(names, pid, &py, &f[1], "middle", line_of("MIDDLE LINE"), PROF_CLASS_YOURS);
	expect(names, pid, &py, &f[2], "outer", line_of("OUTER LINE"), PROF_CLASS_YOURS);
	expect(names, pid, &py, &f[3], "<module>", 0, PROF_CLASS_YOURS);
	assert_int_equal(f[3].flags & HEARTH_PY_ENTRY, HEARTH_PY_ENTRY);
	assert_int_equal(f[0].flags & HEARTH_PY_ENTRY, 0);

	/* the sleeping thread: sleeper, under threading's frames (runtime) */
	tid = other_thread(pid);
	assert_true(tid > 0);
	n = sym_py_walk(pid, &py, tid, f, HEARTH_PY_DEPTH);
	assert_true(n >= 2);
	expect(names, pid, &py, &f[0], "sleeper", line_of("SLEEP LINE"), PROF_CLASS_YOURS);
	expect(names, pid, &py, &f[1], "Thread.run", 0, PROF_CLASS_RUNTIME);

	/* not a Python process */
	assert_int_equal(sym_py_find(getpid(), &py, NULL), -ENOENT);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Gone, its names are cached: forgetting other processes (one
	 * whose pid shares the slot of the cache's pid bitmap, one that
	 * does not) keeps them; forgetting it drops them, and with the
	 * process gone they cannot be read again. */
	sym_py_names_forget(names, pid + 4096);
	sym_py_names_forget(names, pid + 1);
	expect(names, pid, &py, &f[0], "sleeper", line_of("SLEEP LINE"), PROF_CLASS_YOURS);
	sym_py_names_forget(names, pid);
	struct sym_frame sf;
	assert_true(sym_py_name(names, pid, &py, &f[0], &sf) != 1);
	assert_string_equal(sf.name, "[unknown python frame]");
	sym_py_names_free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_match_headers),
		cmocka_unit_test(test_lines_match_interpreter),
		cmocka_unit_test(test_frames_of_a_stopped_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
