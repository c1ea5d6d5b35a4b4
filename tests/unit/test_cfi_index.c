/* SPDX-License-Identifier: MIT */
/*
 * The page index the in-kernel walker searches rows with: for every pc of
 * real modules, the search the walker does (bpf/sampler.bpf.c find_row:
 * two index entries, then at most HEARTH_CFI_PAGE_STEPS halvings) finds
 * the row a search over the whole table finds.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/cfi_tables.h"
#include "bpf/unwind.h"
#include "symbolize/cfi.h"

static uint32_t entry(const union hearth_cfi_slot *idx, uint32_t k)
{
	return idx[k / HEARTH_CFI_INDEX_PER_SLOT].index[k % HEARTH_CFI_INDEX_PER_SLOT];
}

/* The walker's search, in C: NULL where it gives up. */
static const struct hearth_cfi_row *index_find(const struct sym_cfi_table *t,
					       const union hearth_cfi_slot *idx,
					       uint32_t npages, uint64_t rel)
{
	uint32_t page = (uint32_t)(rel >> HEARTH_CFI_PAGE_SHIFT), lo, hi, len;

	if (page >= npages) {
		lo = hi = (uint32_t)t->n - 1;
	} else {
		lo = entry(idx, page);
		hi = entry(idx, page + 1);
	}
	if (hi < lo || hi >= t->n || hi - lo > (1u << HEARTH_CFI_PAGE_SHIFT))
		return NULL;
	len = hi - lo + 1;
	for (int i = 0; i < HEARTH_CFI_PAGE_STEPS; i++) {
		uint32_t half = len / 2, ge = t->rows[lo + half].pc <= rel;

		lo += ge ? half : 0;
		len = ge ? len - half : half;
	}
	return t->rows[lo].pc <= rel ? &t->rows[lo] : NULL;
}

static void check_file(const char *path)
{
	struct sym_cfi_table t;
	union hearth_cfi_slot *idx;
	uint32_t npages, nslots;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(sym_cfi_compile(fd, &t), 0);
	close(fd);
	assert_true(t.n > 100);
	idx = cfi_tables_page_index(t.rows, (uint32_t)t.n, &npages, &nslots);
	assert_non_null(idx);
	assert_int_equal(npages, (t.rows[t.n - 1].pc >> HEARTH_CFI_PAGE_SHIFT) + 1);
	assert_true(nslots * HEARTH_CFI_INDEX_PER_SLOT >= npages + 1);
	/* Every pc of every row, the byte before it, and past the end. */
	for (size_t i = 0; i < t.n; i++) {
		uint64_t pcs[] = { t.rows[i].pc, t.rows[i].pc ? t.rows[i].pc - 1 : 0,
				   t.rows[i].pc + 1 };

		for (size_t k = 0; k < 3; k++)
			assert_ptr_equal(index_find(&t, idx, npages, pcs[k]),
					 sym_cfi_find(&t, pcs[k]));
	}
	assert_ptr_equal(index_find(&t, idx, npages, (uint64_t)t.rows[t.n - 1].pc + 100000),
			 &t.rows[t.n - 1]);
	free(idx);
	sym_cfi_table_free(&t);
}

static void test_index_finds_the_rows(void **state)
{
	(void)state;
	/* ourselves (PIE), and libc: dense and sparse rows alike */
	check_file("/proc/self/exe");
	check_file("/lib/x86_64-linux-gnu/libc.so.6");
}

static void test_index_of_nothing(void **state)
{
	uint32_t npages = 7, nslots = 7;

	(void)state;
	assert_null(cfi_tables_page_index(NULL, 0, &npages, &nslots));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_finds_the_rows),
		cmocka_unit_test(test_index_of_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
