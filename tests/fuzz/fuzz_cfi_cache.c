/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the reader of the CFI cache's files (symbolize/cfi_cache.c):
 * the file the cache wrote for a real binary (the stripped fixture in
 * cfi_seed, mk/cfi.mk) is damaged by the input, put back in the folder,
 * and a new cache asked for that binary's table. The input is a list of
 * 4-byte edits:
 *
 *   byte 0  bit 0: where (0 the 64-byte header, 1 anywhere);
 *           bit 6: set the byte instead of XOR; bit 7: cut the file there
 *   byte 1-2 offset (little-endian, modulo the place's size)
 *   byte 3  the value
 *
 * Whatever the file holds, the cache must answer with a table that keeps
 * the contract of bpf/unwind.h.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern const unsigned char cfi_seed[];
extern const unsigned long cfi_seed_len;

#define HEADER 64
#define BUDGET (64u << 20)

struct fixture {
	int dirfd;
	int elf;           /* the seed binary */
	char name[64];     /* its table's file */
	uint8_t *good;     /* the file as the cache wrote it */
	size_t len;
};

static char dir[] = "/tmp/hearth-fuzz-cfi-XXXXXX";

static void cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return;
}

static void setup(struct fixture *f)
{
	struct sym_cfi_cache *c;
	const struct sym_cfi_table *t;
	struct stat st;
	size_t k = 0;
	int fd;

	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	f->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	f->elf = memfd_create("fuzz-cfi-seed", MFD_CLOEXEC);
	if (f->dirfd < 0 || f->elf < 0 ||
	    write(f->elf, cfi_seed, cfi_seed_len) != (ssize_t)cfi_seed_len)
		abort();
	c = sym_cfi_cache_new(f->dirfd, BUDGET);
	if (!c || sym_cfi_cache_get(c, f->elf, &t) != 0 || t->build_id_len == 0)
		abort();
	for (size_t i = 0; i < t->build_id_len; i++)
		k += (size_t)snprintf(f->name + k, sizeof(f->name) - k, "%02x", t->build_id[i]);
	snprintf(f->name + k, sizeof(f->name) - k, ".cfi");
	sym_cfi_cache_free(c);
	fd = openat(f->dirfd, f->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !(f->good = malloc((size_t)st.st_size)) ||
	    read(fd, f->good, (size_t)st.st_size) != st.st_size)
		abort();
	f->len = (size_t)st.st_size;
	close(fd);
}

static void check(const struct sym_cfi_table *t)
{
	if (t->n == 0 || t->base & 0xfff)
		__builtin_trap();
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].cfa_rule > HEARTH_CFA_NONE || t->rows[i].fp_rule > HEARTH_FP_LOST ||
		    (i && t->rows[i - 1].pc >= t->rows[i].pc) ||
		    sym_cfi_find(t, t->rows[i].pc) != &t->rows[i])
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fixture f;
	struct sym_cfi_cache *c;
	const struct sym_cfi_table *t;
	uint8_t *img;
	size_t len;
	int fd;

	if (!f.good)
		setup(&f);
	img = malloc(f.len);
	if (!img)
		return 0;
	memcpy(img, f.good, f.len);
	len = f.len;
	for (size_t i = 0; i + 4 <= size; i += 4) {
		size_t span = data[i] & 1 ? f.len : HEADER;
		size_t off = ((size_t)data[i + 1] | (size_t)data[i + 2] << 8) % span;

		if (off >= len)
			continue;
		if (data[i] & 0x80)
			len = off;
		else if (data[i] & 0x40)
			img[off] = data[i + 3];
		else
			img[off] ^= data[i + 3];
	}
	fd = openat(f.dirfd, f.name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len)
		abort();
	close(fd);
	free(img);
	c = sym_cfi_cache_new(f.dirfd, BUDGET);
	if (!c)
		return 0;
	if (sym_cfi_cache_get(c, f.elf, &t) != 0)
		__builtin_trap(); /* a bad file is compiled again, never an error */
	check(t);
	sym_cfi_cache_free(c);
	return 0;
}
