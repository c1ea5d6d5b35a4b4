/* SPDX-License-Identifier: MIT */
/*
 * DWARF from compressed sections inflated as lookups need them: every
 * answer equals the one from the same file inflated whole at open (as
 * libdw does by itself), over libc's compressed debug file (libc6-dbg)
 * and a compressed copy of a fixture, in an order that jumps back and
 * forth; a lookup in libc's first units inflates a small part; and a
 * header that lies about the inflated size is refused, not followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"

/* Function symbols of @path (value and size), up to @max. */
static size_t functions(const char *path, uint64_t *addr, uint64_t *size,
			size_t max)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	size_t n = 0;
	Elf_Scn *scn = NULL;
	while (n < max && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && n < max && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    s.st_value != 0 && s.st_size > 0) {
				addr[n] = s.st_value;
				size[n++] = s.st_size;
			}
		}
	}
	elf_end(e);
	close(fd);
	return n;
}

/* Calls @fn for each compressed .debug_* section of @path (opened with
 * @flags) with the file's descriptor, the section header and the
 * compression header; returns how many there were. */
static size_t each_compressed(const char *path, int flags,
			      void (*fn)(int fd, const GElf_Shdr *, const GElf_Chdr *, void *),
			      void *arg)
{
	int fd = open(path, flags);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx, n = 0;
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    strncmp(name, ".debug_", 7) == 0 && gelf_getchdr(scn, &ch)) {
			fn(fd, &sh, &ch, arg);
			n++;
		}
	}
	elf_end(e);
	close(fd);
	return n;
}

static void add_size(int fd, const GElf_Shdr *sh, const GElf_Chdr *ch, void *arg)
{
	(void)fd;
	(void)sh;
	*(size_t *)arg += ch->ch_size;
}

/* Inflated size of the compressed .debug_* sections of @path. */
static size_t compressed_total(const char *path)
{
	size_t total = 0;
	each_compressed(path, O_RDONLY, add_size, &total);
	return total;
}

static void libc_debug_file(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128], lib[PATH_MAX] = "";
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (p && strstr(p, "/libc.so")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(lib, sizeof(lib), "%s", p);
			break;
		}
	}
	fclose(f);
	assert_true(lib[0] != '\0');
	struct sym_module m = { .fd = -1, .debug_fd = -1 };
	int fd = open(lib, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(sym_elf_read_header(fd, &m), 0);
	close(fd);
	free(m.segs);
	assert_true(m.build_id_len > 1);
	int o = snprintf(out, len, "/usr/lib/debug/.build-id/%02x/", m.build_id[0]);
	for (size_t i = 1; i < m.build_id_len; i++)
		o += snprintf(out + o, len - (size_t)o, "%02x", m.build_id[i]);
	snprintf(out + o, len - (size_t)o, ".debug");
	assert_int_equal(access(out, R_OK), 0); /* libc6-dbg is installed */
}

static struct sym_dwarf *open_path(const char *path, bool whole)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	size_t bytes = 0;
	struct sym_dwarf *d = whole ? sym_dwarf_open_whole(fd, &bytes) :
				      sym_dwarf_open(fd, &bytes);
	close(fd);
	assert_non_null(d);
	return d;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Resolves @n addresses in both and compares every frame; returns how
 * many addresses had DWARF frames. */
static size_t compare(struct sym_dwarf *lazy, struct sym_dwarf *whole,
		      const uint64_t *addrs, size_t n)
{
	struct sym_dwarf_frame a[SYM_INLINE_MAX], b[SYM_INLINE_MAX];
	size_t with = 0;
	for (size_t i = 0; i < n; i++) {
		size_t na = sym_dwarf_resolve(lazy, addrs[i], a, SYM_INLINE_MAX);
		size_t nb = sym_dwarf_resolve(whole, addrs[i], b, SYM_INLINE_MAX);
		if (na != nb)
			fail_msg("0x%llx: %zu frames lazily, %zu whole",
				 (unsigned long long)addrs[i], na, nb);
		for (size_t k = 0; k < na; k++) {
			if (!same_str(a[k].name, b[k].name) ||
			    !same_str(a[k].file, b[k].file) ||
			    a[k].line != b[k].line || a[k].lang != b[k].lang)
				fail_msg("0x%llx frame %zu: %s %s:%u against %s %s:%u",
					 (unsigned long long)addrs[i], k,
					 a[k].name ? a[k].name : "-",
					 a[k].file ? a[k].file : "-", a[k].line,
					 b[k].name ? b[k].name : "-",
					 b[k].file ? b[k].file : "-", b[k].line);
		}
		with += na > 0;
	}
	return with;
}

/* Starts, middles and ends of the functions, in an order that jumps
 * around the file. */
static size_t addresses(const char *path, uint64_t **out)
{
	enum { MAX = 6000 };
	uint64_t *fa = calloc(MAX, sizeof(*fa)), *fs = calloc(MAX, sizeof(*fs));
	uint64_t *a = calloc(3 * MAX, sizeof(*a));
	assert_true(fa && fs && a);
	size_t nf = functions(path, fa, fs, MAX), n = 0;
	assert_true(nf > 0);
	for (size_t i = 0; i < nf; i++) {
		a[n++] = fa[i];
		a[n++] = fa[i] + fs[i] / 2;
		a[n++] = fa[i] + fs[i] - 1;
	}
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = n; i > 1; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t j = (size_t)(x % i);
		uint64_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
	free(fa);
	free(fs);
	*out = a;
	return n;
}

static void test_libc_same_as_whole(void **state)
{
	(void)state;
	char path[PATH_MAX];
	libc_debug_file(path, sizeof(path));
	assert_true(compressed_total(path) > 0); /* libc6-dbg compresses */
	uint64_t *a;
	size_t n = addresses(path, &a);
	struct sym_dwarf *lazy = open_path(path, false);
	struct sym_dwarf *whole = open_path(path, true);
	size_t with = compare(lazy, whole, a, n);
	print_message("libc: %zu addresses, %zu with DWARF frames, equal\n", n, with);
	assert_true(with > n / 2);
	assert_int_equal(sym_dwarf_inflated(whole), 0);
	sym_dwarf_free(lazy);
	sym_dwarf_free(whole);
	free(a);
}

static void test_libc_first_unit_inflates_little(void **state)
{
	(void)state;
	char path[PATH_MAX];
	libc_debug_file(path, sizeof(path));
	uint64_t v = 0, sz = 0;
	/* libc's start-up code sits in its first units */
	int fd = open(path, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	while (!v && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (gelf_getsym(d, (int)i, &s) &&
			    strcmp(elf_strptr(e, sh.sh_link, s.st_name),
				   "__libc_start_call_main") == 0) {
				v = s.st_value;
				sz = s.st_size;
			}
		}
	}
	elf_end(e);
	close(fd);
	assert_true(v != 0);
	uint64_t mid = v + sz / 2;
	struct sym_dwarf *lazy = open_path(path, false);
	struct sym_dwarf *whole = open_path(path, true);
	assert_int_equal(compare(lazy, whole, &mid, 1), 1);
	size_t total = compressed_total(path), got = sym_dwarf_inflated(lazy);
	print_message("libc: one lookup in __libc_start_call_main inflated %zu of %zu bytes\n",
		      got, total);
	assert_true(got > 0);
	assert_true(got < total / 4);
	sym_dwarf_free(lazy);
	sym_dwarf_free(whole);
}

static void test_fixture_compressed_copy(void **state)
{
	(void)state;
	char bin[PATH_MAX], copy[] = "/tmp/hearth-test-zdebug-XXXXXX", cmd[2 * PATH_MAX];
	const char *dir = getenv("FIXTURES");
	snprintf(bin, sizeof(bin), "%s/sym_cpp", dir ? dir : "build-test/fixtures");
	assert_int_equal(access(bin, R_OK), 0);
	int fd = mkstemp(copy);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'",
		 bin, copy);
	assert_int_equal(system(cmd), 0);
	assert_true(compressed_total(copy) > 0);
	uint64_t *a;
	size_t n = addresses(copy, &a);
	struct sym_dwarf *lazy = open_path(copy, false);
	struct sym_dwarf *whole = open_path(copy, true);
	size_t with = compare(lazy, whole, a, n);
	print_message("sym_cpp, compressed: %zu addresses, %zu with DWARF frames, equal\n",
		      n, with);
	assert_true(with > 0);
	sym_dwarf_free(lazy);
	sym_dwarf_free(whole);
	/* the plain file: nothing to inflate, the same answers */
	lazy = open_path(bin, false);
	whole = open_path(bin, true);
	assert_int_equal(compare(lazy, whole, a, n), with);
	assert_int_equal(sym_dwarf_inflated(lazy), 0);
	sym_dwarf_free(lazy);
	sym_dwarf_free(whole);
	free(a);
	unlink(copy);
}

/* Sets the inflated size in a compression header to 4 GiB + 16: more
 * than the stream holds and more than one zlib call can be given. */
static void lie_about_size(int fd, const GElf_Shdr *sh, const GElf_Chdr *ch, void *arg)
{
	uint64_t lie = (1ull << 32) + 16;
	(void)ch;
	(void)arg;
	/* Elf64_Chdr: ch_type, ch_reserved, then ch_size */
	assert_int_equal(pwrite(fd, &lie, 8, (off_t)sh->sh_offset + 8), 8);
}

/* A header that claims more than its stream holds is refused, not
 * inflated for ever: lookups return, and give what the whole-file path
 * gives (alarm() ends the test if one hangs). */
static void test_lying_size_returns(void **state)
{
	(void)state;
	char bin[PATH_MAX], copy[] = "/tmp/hearth-test-zlie-XXXXXX", cmd[2 * PATH_MAX];
	const char *dir = getenv("FIXTURES");
	snprintf(bin, sizeof(bin), "%s/sym_cpp", dir ? dir : "build-test/fixtures");
	int fd = mkstemp(copy);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'",
		 bin, copy);
	assert_int_equal(system(cmd), 0);
	assert_true(each_compressed(copy, O_RDWR, lie_about_size, NULL) > 0);
	uint64_t *a;
	size_t n = addresses(copy, &a);
	if (n > 200)
		n = 200;
	alarm(60);
	fd = open(copy, O_RDONLY);
	assert_true(fd >= 0);
	size_t bytes = 0;
	struct sym_dwarf *lazy = sym_dwarf_open(fd, &bytes);
	struct sym_dwarf *whole = sym_dwarf_open_whole(fd, &bytes);
	close(fd);
	assert_true((lazy == NULL) == (whole == NULL));
	if (lazy) {
		compare(lazy, whole, a, n);
		assert_int_equal(sym_dwarf_inflated(lazy), 0);
	}
	alarm(0);
	sym_dwarf_free(lazy);
	sym_dwarf_free(whole);
	free(a);
	unlink(copy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_same_as_whole),
		cmocka_unit_test(test_libc_first_unit_inflates_little),
		cmocka_unit_test(test_fixture_compressed_copy),
		cmocka_unit_test(test_lying_size_returns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
