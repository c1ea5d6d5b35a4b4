/* SPDX-License-Identifier: MIT */
/*
 * symbolize: ELF symbols of a live fixture process, /proc/PID/maps
 * parsing, the sorted symbol table and kallsyms parsing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"
#include "symbolize/symbolize.h"

#include "sym_child.h"

static const char *fixture_path(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("FIXTURES");
	if (dir)
		snprintf(buf, len, "%s/%s", dir, name);
	else
		snprintf(buf, len, "%s/fixtures/%s",
			 getenv("BUILD") ? getenv("BUILD") : "build-test", name);
	return buf;
}

/* The .symtab value and size of @name in the ELF file @path. */
static int elf_symbol(const char *path, const char *name, uint64_t *value,
		      uint64_t *size)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int found = -1;
	Elf_Scn *scn = NULL;
	while (e && found != 0 && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			gelf_getsym(d, (int)i, &s);
			const char *n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0) {
				*value = s.st_value;
				*size = s.st_size;
				found = 0;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

/* sym_maps_text() walks the executable lines of a maps text, skipping
 * the others and malformed ones, and stops where the callback says. */
static int count_exec(void *arg, struct sym_maps_line *ml)
{
	int *n = arg;

	(*n)++;
	return ml->start == 0x3000 ? 7 : 0;
}

static void test_maps_text(void **state)
{
	const char text[] =
		"1000-2000 r-xp 00000000 08:01 12 /usr/bin/a\n"
		"2000-3000 rw-p 00001000 08:01 12 /usr/bin/a\n"
		"not a line\n"
		"4000-5000 r-xp 00000000 00:00 0 [vdso]\n";
	char path[] = "/tmp/hearth-maps-XXXXXX";
	int fd = mkstemp(path), n = 0;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(sym_maps_text(fd, count_exec, &n), 0);
	assert_int_equal(n, 2);
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = 0;
	assert_int_equal(sym_maps_text(fd, count_exec, &n), 0);
	assert_true(n > 0);
}

static void test_fixture_functions(void **state)
{
	(void)state;
	char path[4096];
	fixture_path("sym_funcs", path, sizeof(path));
	struct child c;
	child_start(&c, path);
	char names[16][64];
	uint64_t addrs[16];
	size_t n = child_read_addrs(&c, names, addrs, 16);
	assert_int_equal(n, 6);

	struct sym_ctx *ctx = sym_new(NULL);
	assert_non_null(ctx);
	assert_int_equal(sym_proc_load(ctx, c.pid), 0);
	uint64_t bias = 0;
	for (size_t i = 0; i < n; i++) {
		struct sym_frame f[4];
		if (strcmp(names[i], "getpid") == 0) {
			int k = sym_user(ctx, c.pid, addrs[i], f, 4);
			assert_true(k >= 1);
			/* glibc exports the same code as getpid and __getpid */
			assert_true(strcmp(f[k - 1].name, "getpid") == 0 ||
				    strcmp(f[k - 1].name, "__getpid") == 0);
			assert_string_equal(f[k - 1].module, "libc.so.6");
			assert_int_equal(f[k - 1].cls, PROF_CLASS_SYSTEM);
			continue;
		}
		uint64_t value, size;
		assert_int_equal(elf_symbol(path, names[i], &value, &size), 0);
		assert_true(size > 0);
		if (i == 0)
			bias = addrs[i] - value;
		/* PIE: one load bias for every function of the executable */
		assert_true(addrs[i] - value == bias);
		uint64_t probes[3] = { addrs[i], addrs[i] + size / 2,
				       addrs[i] + size - 1 };
		for (int k = 0; k < 3; k++) {
			int got = sym_user(ctx, c.pid, probes[k], f, 4);
			assert_true(got >= 1);
			/* the function is the outermost frame */
			assert_string_equal(f[got - 1].name, names[i]);
			assert_string_equal(f[got - 1].module, "sym_funcs");
			assert_int_equal(f[got - 1].cls, PROF_CLASS_YOURS);
			assert_int_equal(f[got - 1].flags & SYM_FRAME_UNRESOLVED, 0);
		}
	}
	struct sym_stats st;
	sym_stats(ctx, &st);
	assert_int_equal(st.procs, 1);
	assert_true(st.modules >= 2);
	assert_int_equal(st.misses, 0);
	sym_proc_forget(ctx, c.pid);
	sym_stats(ctx, &st);
	assert_int_equal(st.procs, 0);
	sym_free(ctx);
	child_stop(&c);
}

static void test_fork_keeps_maps(void **state)
{
	(void)state;
	char path[4096];
	fixture_path("sym_funcs", path, sizeof(path));
	struct child c;
	child_start(&c, path);
	char names[16][64];
	uint64_t addrs[16];
	size_t n = child_read_addrs(&c, names, addrs, 16);
	assert_true(n >= 1);
	struct sym_ctx *ctx = sym_new(NULL);
	assert_int_equal(sym_proc_load(ctx, c.pid), 0);
	/* a made-up child pid that never existed: named from the copy */
	pid_t fake = 0x3ffffff0;
	assert_int_equal(sym_proc_fork(ctx, c.pid, fake), 0);
	sym_proc_forget(ctx, c.pid);
	child_stop(&c);
	struct sym_frame f[4];
	int got = sym_user(ctx, fake, addrs[0], f, 4);
	assert_true(got >= 1);
	assert_string_equal(f[got - 1].name, names[0]);
	sym_free(ctx);
}

/* The vDSO (no file behind it) is named from our own copy. */
static void test_vdso(void **state)
{
	(void)state;
	void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	assert_non_null(vdso);
	void *fn = dlsym(vdso, "__vdso_clock_gettime");
	assert_non_null(fn);
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f[4];
	int n = sym_user(ctx, getpid(), (uint64_t)(uintptr_t)fn + 4, f, 4);
	assert_int_equal(n, 1);
	/* the vDSO exports one code under two names */
	assert_true(strcmp(f[0].name, "__vdso_clock_gettime") == 0 ||
		    strcmp(f[0].name, "clock_gettime") == 0);
	assert_string_equal(f[0].module, "[vdso]");
	assert_int_equal(f[0].cls, PROF_CLASS_SYSTEM);
	sym_free(ctx);
	dlclose(vdso);
}

/* Processes nobody forgets are dropped past the cap, oldest first. */
static void test_process_cap(void **state)
{
	(void)state;
	struct sym_ctx *ctx = sym_new(NULL);
	pid_t self = getpid();
	assert_int_equal(sym_proc_load(ctx, self), 0);
	for (pid_t fake = 0x20000000; fake < 0x20000000 + 40000; fake++)
		assert_int_equal(sym_proc_fork(ctx, self, fake), 0);
	struct sym_stats st;
	sym_stats(ctx, &st);
	assert_true(st.procs <= 32768);
	assert_true(st.procs >= 28000); /* an eighth goes at once */
	/* the newest copies are kept and still named */
	struct sym_frame f[4];
	int n = sym_user(ctx, 0x20000000 + 39999,
			 (uint64_t)(uintptr_t)&test_process_cap + 1, f, 4);
	assert_true(n >= 1);
	assert_string_equal(f[n - 1].name, "test_process_cap");
	sym_free(ctx);
}

/* One libc for every process: two processes share its cached module. */
static void test_module_shared(void **state)
{
	(void)state;
	char path[4096];
	fixture_path("sym_funcs", path, sizeof(path));
	struct child a, b;
	char names[16][64], names2[16][64];
	uint64_t addrs[16], addrs2[16];
	child_start(&a, path);
	child_start(&b, path);
	assert_int_equal(child_read_addrs(&a, names, addrs, 16), 6);
	assert_int_equal(child_read_addrs(&b, names2, addrs2, 16), 6);
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f[4];
	/* getpid (index 5) lives in libc */
	assert_true(sym_user(ctx, a.pid, addrs[5], f, 4) >= 1);
	struct sym_stats st1, st2;
	sym_stats(ctx, &st1);
	assert_true(sym_user(ctx, b.pid, addrs2[5], f, 4) >= 1);
	sym_stats(ctx, &st2);
	assert_int_equal(st2.procs, 2);
	/* the second process added no module and no module memory */
	assert_int_equal(st2.modules, st1.modules);
	assert_true(st2.module_bytes == st1.module_bytes);
	sym_free(ctx);
	child_stop(&a);
	child_stop(&b);
}

/* A binary deleted while it runs is still read, through map_files. */
static void test_deleted_binary(void **state)
{
	(void)state;
	char src[4096], dir[] = "/tmp/hearth-del-XXXXXX", dst[4200], cmd[8500];
	fixture_path("sym_funcs", src, sizeof(src));
	assert_non_null(mkdtemp(dir));
	snprintf(dst, sizeof(dst), "%s/sym_funcs_del", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, dst);
	assert_int_equal(system(cmd), 0);
	struct child c;
	child_start(&c, dst);
	char names[16][64];
	uint64_t addrs[16];
	assert_int_equal(child_read_addrs(&c, names, addrs, 16), 6);
	assert_int_equal(unlink(dst), 0);
	assert_int_equal(rmdir(dir), 0);
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f[4];
	int got = sym_user(ctx, c.pid, addrs[1] + 1, f, 4);
	assert_true(got >= 1);
	assert_string_equal(f[got - 1].name, names[1]);
	assert_string_equal(f[got - 1].module, "sym_funcs_del");
	sym_free(ctx);
	child_stop(&c);
}

/*
 * A .gnu_debuglink section read back normally, then retyped NOBITS: the
 * section then claims a size but libelf hands out no bytes, and the
 * reader must say "no link" rather than read through a NULL buffer.
 */
static void test_debuglink_nobits(void **state)
{
	(void)state;
	char src[1024], dir[] = "/tmp/hearth-dl-XXXXXX", dst[1100], cmd[4400];
	fixture_path("sym_funcs", src, sizeof(src));
	assert_non_null(mkdtemp(dir));
	snprintf(dst, sizeof(dst), "%s/linked", dir);
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s/sym_funcs.debug' && objcopy --add-gnu-debuglink='%s/sym_funcs.debug' '%s' '%s'",
		 src, dir, dir, src, dst);
	assert_int_equal(system(cmd), 0);

	char link[256];
	int fd = open(dst, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(sym_elf_debuglink(fd, link, sizeof(link)), 0);
	assert_string_equal(link, "sym_funcs.debug");
	close(fd);

	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = open(dst, O_RDWR);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
	assert_non_null(e);
	size_t shstrndx;
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	bool retyped = false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (!n || strcmp(n, ".gnu_debuglink") != 0)
			continue;
		sh.sh_type = SHT_NOBITS;
		assert_true(gelf_update_shdr(scn, &sh));
		retyped = true;
	}
	assert_true(retyped);
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	assert_true(elf_update(e, ELF_C_WRITE) >= 0);
	elf_end(e);
	close(fd);

	fd = open(dst, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(sym_elf_debuglink(fd, link, sizeof(link)), -ENOENT);
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_unmapped_is_module_offset(void **state)
{
	(void)state;
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_frame f[2];
	/* an address no process maps */
	int got = sym_user(ctx, getpid(), 0x10, f, 2);
	assert_int_equal(got, 1);
	assert_string_equal(f[0].name, "[unknown]+0x10");
	assert_true(f[0].flags & SYM_FRAME_UNRESOLVED);
	assert_int_equal(sym_user(ctx, getpid(), 0x10, f, 0), -EINVAL);
	/* our own code */
	got = sym_user(ctx, getpid(), (uint64_t)(uintptr_t)&child_start + 1,
		       f, 2);
	assert_true(got >= 1);
	assert_string_equal(f[got - 1].name, "child_start");
	assert_string_equal(f[got - 1].module, "test_sym_elf");
	sym_free(ctx);
}

static void test_maps_parse(void **state)
{
	(void)state;
	struct sym_maps_line ml;
	const char *l1 = "7f12a0000000-7f12a0021000 r-xp 00002000 fd:01 1234567   "
			 "                /usr/lib/x86_64-linux-gnu/libc.so.6";
	assert_int_equal(sym_maps_parse_line(l1, strlen(l1), &ml), 0);
	assert_true(ml.start == 0x7f12a0000000ull);
	assert_true(ml.end == 0x7f12a0021000ull);
	assert_true(ml.pgoff == 0x2000);
	assert_true(ml.exec);
	assert_int_equal(ml.dev_major, 0xfd);
	assert_int_equal(ml.dev_minor, 1);
	assert_true(ml.ino == 1234567);
	assert_int_equal(ml.path_len, strlen("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_memory_equal(ml.path, "/usr/lib/x86_64-linux-gnu/libc.so.6",
			    ml.path_len);
	assert_false(ml.deleted);

	const char *l2 = "00400000-00401000 r-xp 00000000 08:02 77 /tmp/a b (deleted)";
	assert_int_equal(sym_maps_parse_line(l2, strlen(l2), &ml), 0);
	assert_true(ml.deleted);
	assert_int_equal(ml.path_len, strlen("/tmp/a b"));

	const char *l3 = "7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]";
	assert_int_equal(sym_maps_parse_line(l3, strlen(l3), &ml), 0);
	assert_memory_equal(ml.path, "[vdso]", 6);

	const char *l4 = "7ffd1000-7ffd3000 rw-p 00000000 00:00 0";
	assert_int_equal(sym_maps_parse_line(l4, strlen(l4), &ml), 0);
	assert_false(ml.exec);
	assert_int_equal(ml.path_len, 0);

	const char *bad[] = {
		"", "zz-10 r-xp 0 0:0 0", "10-5 r-xp 00000000 00:00 0",
		"10-20 r-x 00000000 00:00 0", "10-20 r-xp 00000000 0000 0",
		"10-20 r-xp 00000000 00:00 x", "10-20",
		"11111111111111111-20 r-xp 00000000 00:00 0",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sym_maps_parse_line(bad[i], strlen(bad[i]), &ml),
				 -EINVAL);
}

static void test_symtab_best_and_sizes(void **state)
{
	(void)state;
	struct sym_symtab t = { 0 };
	assert_int_equal(sym_symtab_push(&t, 0x1000, 0x10, "local_alias", 110), 0);
	assert_int_equal(sym_symtab_push(&t, 0x1000, 0x10, "global_name", 130), 0);
	assert_int_equal(sym_symtab_push(&t, 0x1000, 0, "unsized", 30), 0);
	assert_int_equal(sym_symtab_push(&t, 0x2000, 0x20, "second", 130), 0);
	assert_int_equal(sym_symtab_push(&t, 0x3000, 0, "last_unsized", 30), 0);
	sym_symtab_finish(&t);
	assert_int_equal(t.n, 3);
	const struct sym_elfsym *s = sym_symtab_find(&t, 0x1000);
	assert_non_null(s);
	assert_string_equal(sym_symtab_name(&t, s), "global_name");
	assert_non_null(sym_symtab_find(&t, 0x100f));
	/* sizes are respected: the gap after a sized symbol is nobody's */
	assert_null(sym_symtab_find(&t, 0x1010));
	assert_null(sym_symtab_find(&t, 0xfff));
	s = sym_symtab_find(&t, 0x201f);
	assert_non_null(s);
	assert_string_equal(sym_symtab_name(&t, s), "second");
	assert_null(sym_symtab_find(&t, 0x2020));
	sym_symtab_free(&t);
}

static const char kallsyms_text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T __pfx_do_one\n"
	"ffffffff81000110 T do_one\n"
	"ffffffff81000200 t do_two\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 T bpf_trace_run2\n"
	"ffffffff81000500 t __bpf_trace_sched_switch\n"
	"ffffffff81000600 T _etext\n"
	"ffffffffa0000000 t mod_func\t[e1000]\n"
	"ffffffffa0000100 t mod_func2\t[e1000]\n"
	"ffffffffa0001000 t bpf_prog_6deef7357e7b4530_oncpu\t[bpf]\n";

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/hearth-test-kallsyms-XXXXXX");
	assert_non_null(path);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_kallsyms(void **state)
{
	(void)state;
	char *path = write_temp(kallsyms_text);
	struct sym_options o = { .kallsyms_path = path };
	struct sym_ctx *ctx = sym_new(&o);
	struct sym_frame f;
	assert_int_equal(sym_kernel(ctx, 0xffffffff81000115ull, &f), 1);
	assert_string_equal(f.name, "do_one");
	assert_string_equal(f.module, "[kernel]");
	assert_int_equal(f.cls, PROF_CLASS_SYSTEM);
	/* __pfx_ padding is not a function */
	assert_int_equal(sym_kernel(ctx, 0xffffffff81000105ull, &f), 1);
	assert_string_equal(f.name, "_text");
	assert_int_equal(sym_kernel(ctx, 0xffffffff810002ffull, &f), 1);
	assert_string_equal(f.name, "do_two"); /* data symbols skipped */
	assert_int_equal(sym_kernel(ctx, 0xffffffffa0000120ull, &f), 1);
	assert_string_equal(f.name, "mod_func2");
	assert_string_equal(f.module, "e1000");
	assert_int_equal(f.flags & SYM_FRAME_BPF, 0);
	/* past _etext and before any module: unknown, never bare hex */
	assert_int_equal(sym_kernel(ctx, 0xffffffff90000000ull, &f), 1);
	assert_string_equal(f.name, "[kernel]+0xffffffff90000000");
	assert_true(f.flags & SYM_FRAME_UNRESOLVED);
	/* BPF machinery is recognisable */
	assert_int_equal(sym_kernel_is_bpf(ctx, 0xffffffffa0001010ull), 1);
	assert_int_equal(sym_kernel(ctx, 0xffffffffa0001010ull, &f), 1);
	assert_true(f.flags & SYM_FRAME_BPF);
	assert_int_equal(sym_kernel_is_bpf(ctx, 0xffffffff81000404ull), 1);
	assert_int_equal(sym_kernel_is_bpf(ctx, 0xffffffff81000504ull), 1);
	assert_int_equal(sym_kernel_is_bpf(ctx, 0xffffffff81000204ull), 0);
	sym_free(ctx);
	unlink(path);
	free(path);
}

static void test_kallsyms_hidden(void **state)
{
	(void)state;
	/* what an unprivileged reader sees */
	char *path = write_temp("0000000000000000 T _text\n"
				"0000000000000000 T do_one\n");
	struct sym_options o = { .kallsyms_path = path };
	struct sym_ctx *ctx = sym_new(&o);
	assert_int_equal(sym_kernel_reload(ctx), -EPERM);
	struct sym_frame f;
	assert_int_equal(sym_kernel(ctx, 0xffffffff81000115ull, &f), 1);
	assert_true(f.flags & SYM_FRAME_UNRESOLVED);
	sym_free(ctx);
	unlink(path);
	free(path);
}

static void test_real_kallsyms(void **state)
{
	(void)state;
	struct sym_ctx *ctx = sym_new(NULL);
	/* an address inside a function every kernel has */
	FILE *f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	char line[512];
	unsigned long long addr = 0;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0)
			break;
		addr = 0;
	}
	fclose(f);
	assert_true(addr != 0);
	struct sym_frame fr;
	assert_int_equal(sym_kernel(ctx, addr + 1, &fr), 1);
	assert_string_equal(fr.name, "schedule");
	assert_string_equal(fr.module, "[kernel]");
	sym_free(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_parse),
		cmocka_unit_test(test_symtab_best_and_sizes),
		cmocka_unit_test(test_maps_text),
		cmocka_unit_test(test_fixture_functions),
		cmocka_unit_test(test_fork_keeps_maps),
		cmocka_unit_test(test_unmapped_is_module_offset),
		cmocka_unit_test(test_deleted_binary),
		cmocka_unit_test(test_debuglink_nobits),
		cmocka_unit_test(test_module_shared),
		cmocka_unit_test(test_process_cap),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_kallsyms_hidden),
		cmocka_unit_test(test_real_kallsyms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
