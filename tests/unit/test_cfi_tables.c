/* SPDX-License-Identifier: MIT */
/*
 * The walker's tables in user space, over real BPF maps: a pool too small
 * for the modules of this process leaves them out, and asking again does
 * not compile them again (a large library costs a tenth of a second or
 * more each time), nor writes the same mappings twice.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>

#include "agent/cfi_tables.h"
#include "bpf/unwind.h"

#define POOL_ROWS 64

struct maps {
	int rows, modules, procs, files;
};

static void maps_make(struct maps *m)
{
	m->rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rows", sizeof(uint32_t),
				 sizeof(struct hearth_cfi_row), POOL_ROWS, NULL);
	m->modules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_mods", sizeof(uint32_t),
				    sizeof(struct hearth_cfi_module), HEARTH_CFI_MAX_MODULES, NULL);
	m->procs = bpf_map_create(BPF_MAP_TYPE_HASH, "t_procs", sizeof(uint32_t),
				  sizeof(struct hearth_cfi_proc), 64, NULL);
	m->files = bpf_map_create(BPF_MAP_TYPE_HASH, "t_files",
				  sizeof(struct hearth_cfi_file_key), sizeof(struct hearth_cfi_file),
				  HEARTH_CFI_MAX_MODULES, NULL);
	assert_true(m->rows >= 0 && m->modules >= 0 && m->procs >= 0 && m->files >= 0);
}

static void maps_close(struct maps *m)
{
	close(m->rows);
	close(m->modules);
	close(m->procs);
	close(m->files);
}

static struct cfi_tables_stats stats(const struct cfi_tables *t)
{
	struct cfi_tables_stats st;

	cfi_tables_stats(t, &st);
	return st;
}

/* Collects until every module handed to the compiling thread came back. */
static void settle(struct cfi_tables *t, uint64_t handed)
{
	uint64_t back = 0;

	for (int i = 0; i < 3000 && back < handed; i++) {
		back += (uint64_t)cfi_tables_collect(t);
		usleep(10000);
	}
	assert_int_equal(back, handed);
}

static void test_no_room_not_compiled_again(void **state)
{
	struct maps m;
	struct cfi_tables *t;
	struct cfi_tables_opts o;
	struct cfi_tables_stats a, b;
	pid_t self = getpid();

	(void)state;
	maps_make(&m);
	o = (struct cfi_tables_opts){ .rows_fd = m.rows, .pool_rows = POOL_ROWS,
				      .modules_fd = m.modules, .procs_fd = m.procs,
				      .files_fd = m.files, .cache_dirfd = -1,
				      .cache_bytes = 1 << 20, .disk_bytes = 1 << 20 };
	t = cfi_tables_new(&o);
	assert_non_null(t);
	assert_int_equal(cfi_tables_load(t, self, 0), 0);
	a = stats(t);
	/* This program, libc, the loader, cmocka, libbpf...: none fits. */
	assert_true(a.compiles >= 3);
	settle(t, a.compiles);
	/* The walker asks again once they are back (those without CFI are
	 * listed now, so the walker stops asking for them). */
	assert_int_equal(cfi_tables_load(t, self, 0), 0);
	a = stats(t);
	assert_true(a.no_room >= 3);
	/* Asked again, twice: nothing compiled, nothing written. */
	assert_int_equal(cfi_tables_load(t, self, 0), 0);
	assert_int_equal(cfi_tables_load(t, self, 0), 0);
	b = stats(t);
	assert_int_equal(b.compiles, a.compiles);
	assert_int_equal(b.loads, a.loads);
	/* Another image (exec_id): written again, still nothing compiled. */
	assert_int_equal(cfi_tables_load(t, self, 1), 0);
	b = stats(t);
	assert_int_equal(b.compiles, a.compiles);
	assert_int_equal(b.loads, a.loads + 1);
	cfi_tables_free(t);
	maps_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_room_not_compiled_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
