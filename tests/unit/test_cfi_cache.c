/* SPDX-License-Identifier: MIT */
/*
 * The cache of compiled CFI tables: hits from memory, from disk after a
 * restart, files on disk that are damaged, truncated, foreign or planted
 * as links compiled again and replaced, and both byte bounds; a table
 * taken is the caller's own, handed over without a copy when it is
 * larger than the memory budget.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/cfi.h"
#include "tests/unit/sym_child.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX "/lib/x86_64-linux-gnu/libstdc++.so.6"
#define HEADER_SIZE 64 /* the file's header, before the rows */
#define MiB (1024 * 1024)

struct dir {
	char path[64];
	int fd;
};

static void dir_make(struct dir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/hearth-cfi-cache-XXXXXX");
	assert_non_null(mkdtemp(d->path));
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(d->fd >= 0);
}

static void dir_remove(struct dir *d)
{
	char cmd[128];

	close(d->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	assert_int_equal(system(cmd), 0);
}

/* The files in @d, and the name of the last one in @name. */
static size_t dir_files(const struct dir *d, char *name, size_t size)
{
	DIR *dd = opendir(d->path);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(dd);
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.')
			continue;
		n++;
		if (name)
			snprintf(name, size, "%s", de->d_name);
	}
	closedir(dd);
	return n;
}

static uint64_t dir_bytes(const struct dir *d)
{
	DIR *dd = opendir(d->path);
	struct dirent *de;
	uint64_t total = 0;

	assert_non_null(dd);
	while ((de = readdir(dd))) {
		struct stat st;

		if (de->d_name[0] != '.' &&
		    fstatat(d->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			total += (uint64_t)st.st_size;
	}
	closedir(dd);
	return total;
}

static const char *hex_name(const struct sym_cfi_table *t, char *buf, size_t size)
{
	size_t k = 0;

	for (size_t i = 0; i < t->build_id_len; i++)
		k += (size_t)snprintf(buf + k, size - k, "%02x", t->build_id[i]);
	snprintf(buf + k, size - k, ".cfi");
	return buf;
}

/* Gets the table of @path from @c, and checks it holds what compiling
 * the file gives. */
static const struct sym_cfi_table *get_checked(struct sym_cfi_cache *c, const char *path)
{
	const struct sym_cfi_table *t;
	struct sym_cfi_table want;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(sym_cfi_cache_get(c, fd, &t), 0);
	assert_non_null(t);
	assert_int_equal(sym_cfi_compile(fd, &want), 0);
	close(fd);
	assert_int_equal(t->n, want.n);
	assert_int_equal(t->base, want.base);
	assert_int_equal(t->build_id_len, want.build_id_len);
	assert_memory_equal(t->build_id, want.build_id, want.build_id_len);
	assert_memory_equal(t->rows, want.rows, want.n * sizeof(*want.rows));
	sym_cfi_table_free(&want);
	return t;
}

static struct sym_cfi_cache_stats stats(const struct sym_cfi_cache *c)
{
	struct sym_cfi_cache_stats st;

	sym_cfi_cache_stats(c, &st);
	return st;
}

static void test_memory_hit(void **state)
{
	struct sym_cfi_cache *c = sym_cfi_cache_new(-1, 64 * MiB);
	const struct sym_cfi_table *a, *b;

	(void)state;
	assert_non_null(c);
	a = get_checked(c, LIBC);
	b = get_checked(c, LIBC); /* another descriptor, the same file */
	assert_ptr_equal(a, b);
	assert_int_equal(stats(c).compiles, 1);
	assert_int_equal(stats(c).misses, 1);
	assert_int_equal(stats(c).hits, 1);
	assert_int_equal(stats(c).tables, 1);
	assert_true(stats(c).bytes >= a->n * sizeof(*a->rows));
	sym_cfi_cache_free(c);
}

/* A new cache (a restart) reads the table back and compiles nothing. */
static void test_disk_hit_after_restart(void **state)
{
	struct sym_cfi_cache *c;
	struct dir d;
	char name[256], want[64];
	const struct sym_cfi_table *t;

	(void)state;
	dir_make(&d);
	c = sym_cfi_cache_new(d.fd, 64 * MiB);
	t = get_checked(c, LIBC);
	assert_int_equal(stats(c).compiles, 1);
	assert_int_equal(dir_files(&d, name, sizeof(name)), 1);
	assert_string_equal(name, hex_name(t, want, sizeof(want)));
	sym_cfi_cache_free(c);

	c = sym_cfi_cache_new(d.fd, 64 * MiB);
	get_checked(c, LIBC);
	assert_int_equal(stats(c).compiles, 0);
	assert_int_equal(stats(c).disk_hits, 1);
	assert_int_equal(stats(c).disk_rejects, 0);
	sym_cfi_cache_free(c);
	dir_remove(&d);
}

/* Writes libc's table to disk, damages the file with @damage, and checks
 * a new cache rejects it, compiles, and leaves a good file behind. */
static void damaged_is_replaced(void (*damage)(struct dir *d, const char *name))
{
	struct sym_cfi_cache *c;
	struct dir d;
	char name[256];
	struct stat st;

	dir_make(&d);
	c = sym_cfi_cache_new(d.fd, 64 * MiB);
	hex_name(get_checked(c, LIBC), name, sizeof(name));
	sym_cfi_cache_free(c);

	damage(&d, name);
	c = sym_cfi_cache_new(d.fd, 64 * MiB);
	get_checked(c, LIBC);
	assert_int_equal(stats(c).disk_hits, 0);
	assert_int_equal(stats(c).disk_rejects, 1);
	assert_int_equal(stats(c).compiles, 1);
	sym_cfi_cache_free(c);
	/* Replaced by a regular file that the next restart trusts. */
	assert_int_equal(fstatat(d.fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	c = sym_cfi_cache_new(d.fd, 64 * MiB);
	get_checked(c, LIBC);
	assert_int_equal(stats(c).disk_hits, 1);
	assert_int_equal(stats(c).compiles, 0);
	sym_cfi_cache_free(c);
	dir_remove(&d);
}

static void flip_byte_at(struct dir *d, const char *name, off_t off)
{
	int fd = openat(d->fd, name, O_RDWR | O_CLOEXEC);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x01;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void flip_row_byte(struct dir *d, const char *name)
{
	flip_byte_at(d, name, HEADER_SIZE + 12 * 1000 + 4); /* a CFA offset */
}

static void flip_header_byte(struct dir *d, const char *name)
{
	flip_byte_at(d, name, 24); /* the base */
}

static void truncate_file(struct dir *d, const char *name)
{
	int fd = openat(d->fd, name, O_RDWR | O_CLOEXEC);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(ftruncate(fd, st.st_size - 12), 0);
	close(fd);
}

/* A link planted in the folder, to a good copy of the very table: still
 * not followed. */
static void plant_symlink(struct dir *d, const char *name)
{
	char target[128];

	snprintf(target, sizeof(target), "%s/elsewhere", d->path);
	assert_int_equal(renameat(d->fd, name, d->fd, "elsewhere"), 0);
	assert_int_equal(symlinkat(target, d->fd, name), 0);
}

/* Another module's table under libc's name. */
static void foreign_file(struct dir *d, const char *name)
{
	struct sym_cfi_cache *c = sym_cfi_cache_new(d->fd, 64 * MiB);
	char other[64];

	hex_name(get_checked(c, LIBSTDCXX), other, sizeof(other));
	sym_cfi_cache_free(c);
	assert_int_equal(renameat(d->fd, other, d->fd, name), 0);
}

static void test_flipped_row_byte(void **state)
{
	(void)state;
	damaged_is_replaced(flip_row_byte);
}

static void test_flipped_header_byte(void **state)
{
	(void)state;
	damaged_is_replaced(flip_header_byte);
}

static void test_truncated(void **state)
{
	(void)state;
	damaged_is_replaced(truncate_file);
}

static void test_symlink_not_followed(void **state)
{
	(void)state;
	damaged_is_replaced(plant_symlink);
}

static void test_foreign_file(void **state)
{
	(void)state;
	damaged_is_replaced(foreign_file);
}

/* A budget that holds one of libc and libstdc++ at a time, in memory
 * and on disk. */
static void test_bound_evicts(void **state)
{
	struct sym_cfi_cache *c;
	struct dir d;
	const struct sym_cfi_table *t;
	size_t max;
	char name[256], want[64];

	(void)state;
	dir_make(&d);
	c = sym_cfi_cache_new(-1, 64 * MiB);
	max = get_checked(c, LIBSTDCXX)->n * 12 + 4096;
	assert_true(max > get_checked(c, LIBC)->n * 12 + 4096); /* the larger */
	sym_cfi_cache_free(c);

	c = sym_cfi_cache_new(d.fd, max);
	get_checked(c, LIBC);
	t = get_checked(c, LIBSTDCXX);
	assert_int_equal(stats(c).tables, 1);
	assert_true(stats(c).bytes <= max);
	assert_true(dir_bytes(&d) <= max);
	assert_int_equal(dir_files(&d, name, sizeof(name)), 1);
	assert_string_equal(name, hex_name(t, want, sizeof(want)));
	/* libc is gone from both: read again, it is compiled again. */
	get_checked(c, LIBC);
	assert_int_equal(stats(c).compiles, 3);
	assert_int_equal(stats(c).disk_hits, 0);
	sym_cfi_cache_free(c);

	/* A budget below one table: kept in memory while it is the one
	 * returned, never written. */
	c = sym_cfi_cache_new(d.fd, 1024);
	get_checked(c, LIBC);
	assert_int_equal(stats(c).tables, 1);
	get_checked(c, LIBSTDCXX);
	assert_int_equal(stats(c).tables, 1);
	assert_true(dir_bytes(&d) <= 1024);
	sym_cfi_cache_free(c);
	dir_remove(&d);
}

/* A folder larger than memory: trimmed, nothing stays in memory, and
 * every table is read back from disk rather than compiled again. */
static void test_disk_budget_and_trim(void **state)
{
	struct sym_cfi_cache *c;
	struct dir d;

	(void)state;
	dir_make(&d);
	c = sym_cfi_cache_new(d.fd, 1024);
	sym_cfi_cache_set_disk_bytes(c, 64 * MiB);
	get_checked(c, LIBC);
	sym_cfi_cache_trim(c);
	assert_int_equal(stats(c).tables, 0);
	assert_int_equal(stats(c).bytes, 0);
	get_checked(c, LIBSTDCXX);
	sym_cfi_cache_trim(c);
	assert_int_equal(dir_files(&d, NULL, 0), 2);
	get_checked(c, LIBC);
	get_checked(c, LIBSTDCXX);
	assert_int_equal(stats(c).compiles, 2);
	assert_int_equal(stats(c).disk_hits, 2);
	assert_int_equal(stats(c).tables, 1); /* the one returned last */
	sym_cfi_cache_free(c);
	dir_remove(&d);
}

/* take, LIBC's table through @c: its rows are the compiled ones. */
static struct sym_cfi_table take_checked(struct sym_cfi_cache *c)
{
	struct sym_cfi_table t, want;
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(sym_cfi_cache_take(c, fd, &t), 0);
	assert_int_equal(sym_cfi_compile(fd, &want), 0);
	close(fd);
	assert_int_equal(t.n, want.n);
	assert_int_equal(t.base, want.base);
	assert_memory_equal(t.rows, want.rows, want.n * sizeof(*want.rows));
	sym_cfi_table_free(&want);
	return t;
}

/* Larger than the budget, the table leaves the cache for the caller (the
 * compiling thread held it twice: 55 MiB for clang's libraries); within
 * it, the caller gets a copy and the cache keeps its own. */
static void test_take(void **state)
{
	struct sym_cfi_cache *small = sym_cfi_cache_new(-1, 1024);
	struct sym_cfi_cache *big = sym_cfi_cache_new(-1, 64 * MiB);
	struct sym_cfi_table a, b;

	(void)state;
	assert_true(small && big);
	a = take_checked(small);
	assert_int_equal(stats(small).tables, 0);
	assert_int_equal(stats(small).bytes, 0);
	b = take_checked(big);
	assert_int_equal(stats(big).tables, 1);
	assert_true(stats(big).bytes >= b.n * sizeof(*b.rows));
	sym_cfi_table_free(&b);
	b = take_checked(big); /* a hit: the cache's rows were not given away */
	assert_int_equal(stats(big).hits, 1);
	sym_cfi_table_free(&a);
	sym_cfi_table_free(&b);
	sym_cfi_cache_free(small);
	sym_cfi_cache_free(big);
}

/* Without a build-id: memory only, by the file's identity. */
static void test_no_build_id(void **state)
{
	struct sym_cfi_cache *c;
	struct dir d;
	char path[] = "/tmp/hearth-cfi-noid-XXXXXX", cmd[PATH_MAX + 128];
	const struct sym_cfi_table *t;
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .note.gnu.build-id '%s' '%s'",
		 fix("unwind_nofp"), path);
	assert_int_equal(system(cmd), 0);
	dir_make(&d);
	c = sym_cfi_cache_new(d.fd, 64 * MiB);
	t = get_checked(c, path);
	assert_int_equal(t->build_id_len, 0);
	get_checked(c, path);
	assert_int_equal(stats(c).compiles, 1);
	assert_int_equal(stats(c).hits, 1);
	assert_int_equal(dir_files(&d, NULL, 0), 0);
	/* Changed (its mtime): compiled again. */
	assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
	get_checked(c, path);
	assert_int_equal(stats(c).compiles, 2);
	sym_cfi_cache_free(c);
	dir_remove(&d);
	unlink(path);
}

/* A file that is not ELF: its error is remembered, not compiled again. */
static void test_error_remembered(void **state)
{
	struct sym_cfi_cache *c = sym_cfi_cache_new(-1, 64 * MiB);
	const struct sym_cfi_table *t;
	char path[] = "/tmp/hearth-cfi-text-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, "plain text", 10), 10);
	assert_int_equal(sym_cfi_cache_get(c, fd, &t), -EINVAL);
	assert_null(t);
	assert_int_equal(sym_cfi_cache_get(c, fd, &t), -EINVAL);
	assert_int_equal(stats(c).compiles, 1);
	assert_int_equal(stats(c).hits, 1);
	close(fd);
	sym_cfi_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_hit),
		cmocka_unit_test(test_disk_hit_after_restart),
		cmocka_unit_test(test_flipped_row_byte),
		cmocka_unit_test(test_flipped_header_byte),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_symlink_not_followed),
		cmocka_unit_test(test_foreign_file),
		cmocka_unit_test(test_bound_evicts),
		cmocka_unit_test(test_disk_budget_and_trim),
		cmocka_unit_test(test_take),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_error_remembered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
