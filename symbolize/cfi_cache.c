/* SPDX-License-Identifier: MIT */
/*
 * cfi_cache: compiled CFI tables by build-id, in memory (least recently
 * used out beyond a byte budget) and as files in a folder, so that a
 * second process mapping the same libc, or a restart, compiles nothing.
 *
 * A file is a header (magic, format and compiler versions, row count,
 * base, build-id, CRC-32 of the header and rows) and the rows. Every
 * read checks all of it and the rows' order; anything else is removed and
 * compiled again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize/cfi.h"
#include "symbolize/sym_internal.h"

#define DISK_MAGIC "HRTHCFI"
/* Bumped whenever sym_cfi_compile's rules change: older files are then
 * compiled again, not trusted. */
#define DISK_VERSION 2
#define DISK_SUFFIX ".cfi"
#define TMP_SUFFIX ".cfi-tmp"
/* A temporary file older than this was left by a writer that died. */
#define TMP_STALE_SEC 60
/* Room a write leaves on the file system: the cache is only a cache and
 * yields to what shares its disk (the profile store, above all); this
 * much free, or a twentieth of the file system if more, or nothing is
 * written. */
#define DISK_RESERVE (64ull << 20)

struct disk_header {
	char magic[8];
	uint32_t version;
	uint32_t row_size;
	uint64_t n;
	uint64_t base;
	uint32_t build_id_len;
	uint8_t build_id[20];
	uint32_t crc;          /* of this header with crc 0, then the rows */
	uint32_t pad;
};
_Static_assert(sizeof(struct disk_header) == 64, "the file format's header");

struct entry {
	struct sym_cfi_table t;
	int err;               /* what compiling gave: a file without CFI
				* is not read again until it changes */
	dev_t dev;             /* the last file seen with this table */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	uint64_t last_use;
	size_t bytes;
};

struct sym_cfi_cache {
	int dirfd;
	size_t max_bytes;
	size_t disk_bytes;
	struct entry **v;      /* each on its own: a returned table never moves */
	size_t n, cap;
	uint64_t tick;
	unsigned tmp_seq;
	struct sym_cfi_cache_stats st;
};

struct sym_cfi_cache *sym_cfi_cache_new(int dirfd, size_t max_bytes)
{
	struct sym_cfi_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->dirfd = dirfd;
	c->max_bytes = max_bytes;
	c->disk_bytes = max_bytes;
	return c;
}

void sym_cfi_cache_set_disk_bytes(struct sym_cfi_cache *c, size_t bytes)
{
	c->disk_bytes = bytes;
}

static void entry_free(struct entry *e)
{
	sym_cfi_table_free(&e->t);
	free(e);
}

void sym_cfi_cache_free(struct sym_cfi_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		entry_free(c->v[i]);
	free(c->v);
	free(c);
}

void sym_cfi_cache_stats(const struct sym_cfi_cache *c,
			 struct sym_cfi_cache_stats *st)
{
	*st = c->st;
	st->tables = c->n;
}

/* ---- memory ------------------------------------------------------------- */

static bool same_file(const struct entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino &&
	       e->size == st->st_size && e->mtime.tv_sec == st->st_mtim.tv_sec &&
	       e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static struct entry *find_file(struct sym_cfi_cache *c, const struct stat *st)
{
	for (size_t i = 0; i < c->n; i++)
		if (same_file(c->v[i], st))
			return c->v[i];
	return NULL;
}

static struct entry *find_id(struct sym_cfi_cache *c, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < c->n; i++)
		if (len && c->v[i]->t.build_id_len == len &&
		    memcmp(c->v[i]->t.build_id, id, len) == 0)
			return c->v[i];
	return NULL;
}

/* Drops least recently used entries, never @keep, until the rows fit. */
static void evict(struct sym_cfi_cache *c, const struct entry *keep)
{
	while (c->st.bytes > c->max_bytes) {
		size_t old = SIZE_MAX;

		for (size_t i = 0; i < c->n; i++)
			if (c->v[i] != keep &&
			    (old == SIZE_MAX || c->v[i]->last_use < c->v[old]->last_use))
				old = i;
		if (old == SIZE_MAX)
			return;
		c->st.bytes -= c->v[old]->bytes;
		entry_free(c->v[old]);
		c->v[old] = c->v[--c->n];
	}
}

static int insert(struct sym_cfi_cache *c, struct entry *e)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct entry **v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	e->bytes = sizeof(*e) + e->t.n * sizeof(*e->t.rows);
	c->v[c->n++] = e;
	c->st.bytes += e->bytes;
	return 0;
}

/* ---- disk --------------------------------------------------------------- */

static void file_name(const uint8_t *id, size_t len, char *buf, size_t size)
{
	size_t k = 0;

	for (size_t i = 0; i < len && k + 3 < size; i++)
		k += (size_t)snprintf(buf + k, size - k, "%02x", id[i]);
	snprintf(buf + k, size - k, "%s", DISK_SUFFIX);
}

static uint32_t disk_crc(const struct disk_header *h, const void *rows, size_t n)
{
	struct disk_header z = *h;
	uLong crc = crc32(0L, Z_NULL, 0);

	z.crc = 0;
	crc = crc32_z(crc, (const Bytef *)&z, sizeof(z));
	return (uint32_t)crc32_z(crc, rows, n * sizeof(struct hearth_cfi_row));
}

/* Whether rows read from disk keep the contract: sorted, unique, known
 * rules. */
static bool rows_valid(const struct hearth_cfi_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].cfa_rule > HEARTH_CFA_NONE || r[i].fp_rule > HEARTH_FP_LOST ||
		    (i && r[i - 1].pc >= r[i].pc))
			return false;
	return n > 0;
}

static bool read_all(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);

		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			return false;
		}
		got += (size_t)k;
	}
	return true;
}

/* Reads and checks the file open at @fd for build-id @id into @t. */
static bool disk_parse(struct sym_cfi_cache *c, int fd, const uint8_t *id,
		       size_t len, struct sym_cfi_table *t)
{
	struct disk_header h;
	struct stat st;
	size_t rows;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size < sizeof(h) || (uint64_t)st.st_size > c->disk_bytes ||
	    !read_all(fd, &h, sizeof(h)))
		return false;
	rows = (size_t)((uint64_t)st.st_size - sizeof(h)) / sizeof(*t->rows);
	if (memcmp(h.magic, DISK_MAGIC, sizeof(h.magic)) != 0 ||
	    h.version != DISK_VERSION || h.row_size != sizeof(*t->rows) ||
	    h.n != rows || sizeof(h) + rows * sizeof(*t->rows) != (uint64_t)st.st_size ||
	    h.build_id_len != len || memcmp(h.build_id, id, len) != 0 ||
	    h.base & 0xfff)
		return false;
	t->rows = malloc(rows * sizeof(*t->rows));
	if (!t->rows)
		return false;
	t->n = rows;
	if (!read_all(fd, t->rows, rows * sizeof(*t->rows)) ||
	    disk_crc(&h, t->rows, rows) != h.crc || !rows_valid(t->rows, rows)) {
		sym_cfi_table_free(t);
		return false;
	}
	t->base = h.base;
	memcpy(t->build_id, id, len);
	t->build_id_len = len;
	return true;
}

/* The table of build-id @id from the folder, into @t. A file that is
 * there but not right (damaged, truncated, foreign, not a regular file of
 * ours, a link) is removed and counted. */
static bool disk_read(struct sym_cfi_cache *c, const uint8_t *id, size_t len,
		      struct sym_cfi_table *t)
{
	char name[64];
	int fd;
	bool ok;

	file_name(id, len, name, sizeof(name));
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return false;
	ok = fd >= 0 && disk_parse(c, fd, id, len, t);
	if (ok) {
		futimens(fd, NULL); /* recently used: removed last */
	} else {
		c->st.disk_rejects++;
		unlinkat(c->dirfd, name, 0);
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

struct disk_file {
	char name[64];
	off_t size;
	struct timespec mtime;
};

static int oldest_first(const void *a, const void *b)
{
	const struct disk_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

/* Lists the tables in the folder (and removes stale temporary files).
 * Returns how many, or -1. */
static ssize_t disk_list(struct sym_cfi_cache *c, struct disk_file **out)
{
	int fd = dup(c->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct disk_file *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	time_t now = time(NULL);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d); /* the duplicate shares the folder's read position */
	while ((de = readdir(d))) {
		struct stat st;
		size_t len = strlen(de->d_name);

		if (fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    len >= sizeof(v->name))
			continue;
		if (has_suffix(de->d_name, TMP_SUFFIX) && now - st.st_mtime > TMP_STALE_SEC)
			unlinkat(c->dirfd, de->d_name, 0);
		if (!has_suffix(de->d_name, DISK_SUFFIX))
			continue;
		if (n == cap) {
			struct disk_file *w = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (!w)
				break;
			v = w;
		}
		memcpy(v[n].name, de->d_name, len + 1);
		v[n].size = S_ISREG(st.st_mode) ? st.st_size : 0;
		v[n++].mtime = st.st_mtim;
	}
	closedir(d);
	*out = v;
	return (ssize_t)n;
}

/* Removes the oldest tables until @need more bytes fit in the budget.
 * Returns false when they cannot, or when writing them would leave the
 * file system short of DISK_RESERVE. */
static bool disk_make_room(struct sym_cfi_cache *c, size_t need)
{
	struct disk_file *v = NULL;
	ssize_t n = disk_list(c, &v);
	uint64_t total = 0;

	struct statvfs fs;

	if (fstatvfs(c->dirfd, &fs) == 0) {
		uint64_t avail = (uint64_t)fs.f_bavail * fs.f_frsize;
		uint64_t twentieth = (uint64_t)fs.f_blocks * fs.f_frsize / 20;
		uint64_t reserve = twentieth > DISK_RESERVE ? twentieth : DISK_RESERVE;

		if (avail < reserve + need)
			n = -1;
	}
	if (n < 0 || need > c->disk_bytes) {
		free(v);
		return false;
	}
	for (ssize_t i = 0; i < n; i++)
		total += (uint64_t)v[i].size;
	if (n > 0)
		qsort(v, (size_t)n, sizeof(*v), oldest_first);
	for (ssize_t i = 0; i < n && total + need > c->disk_bytes; i++)
		if (unlinkat(c->dirfd, v[i].name, 0) == 0)
			total -= (uint64_t)v[i].size;
	free(v);
	return total + need <= c->disk_bytes;
}

static bool write_all(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = write(fd, (const char *)buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		done += (size_t)k;
	}
	return true;
}

/* Writes @t to the folder: a temporary file, then renamed over any old
 * one. Failing is harmless: the next run compiles again. */
static void disk_write(struct sym_cfi_cache *c, const struct sym_cfi_table *t)
{
	struct disk_header h = { .magic = DISK_MAGIC, .version = DISK_VERSION,
				 .row_size = sizeof(*t->rows), .n = t->n,
				 .base = t->base,
				 .build_id_len = (uint32_t)t->build_id_len };
	size_t size = sizeof(h) + t->n * sizeof(*t->rows);
	char name[64], tmp[96];
	bool ok;
	int fd;

	if (!disk_make_room(c, size))
		return;
	memcpy(h.build_id, t->build_id, t->build_id_len);
	h.crc = disk_crc(&h, t->rows, t->n);
	file_name(t->build_id, t->build_id_len, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%d-%u%s", (int)getpid(), c->tmp_seq++, TMP_SUFFIX);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return;
	ok = write_all(fd, &h, sizeof(h)) &&
	     write_all(fd, t->rows, t->n * sizeof(*t->rows));
	if (close(fd) < 0)
		ok = false;
	if (!ok || renameat(c->dirfd, tmp, c->dirfd, name) < 0)
		unlinkat(c->dirfd, tmp, 0);
}

/* ---- lookup ------------------------------------------------------------- */

/* The build-id of the ELF open at @fd (0 when none or not ELF). */
static size_t file_build_id(int fd, uint8_t id[20])
{
	Elf *e;
	size_t n = 0;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		n = sym_elf_build_id(e, id, 20);
	if (e)
		elf_end(e);
	return n;
}

/* A new entry for the file at @fd: from disk, or compiled (and then
 * written to disk). */
static struct entry *load(struct sym_cfi_cache *c, int fd, const uint8_t *id,
			  size_t len)
{
	struct entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (len && c->dirfd >= 0 && disk_read(c, id, len, &e->t)) {
		c->st.disk_hits++;
		return e;
	}
	c->st.compiles++;
	e->err = sym_cfi_compile(fd, &e->t);
	if (e->err == -ENOMEM) {
		free(e);
		return NULL;
	}
	/* The file changed between reading its build-id and compiling it:
	 * keep what compiling saw. */
	if (!e->err && len && c->dirfd >= 0 && e->t.build_id_len == len &&
	    memcmp(e->t.build_id, id, len) == 0)
		disk_write(c, &e->t);
	if (e->err) {
		memcpy(e->t.build_id, id, len);
		e->t.build_id_len = len;
	}
	return e;
}

void sym_cfi_cache_trim(struct sym_cfi_cache *c)
{
	evict(c, NULL);
}

int sym_cfi_cache_get(struct sym_cfi_cache *c, int fd,
		      const struct sym_cfi_table **out)
{
	struct stat st;
	struct entry *e;
	uint8_t id[20];
	size_t len = 0;

	*out = NULL;
	if (fstat(fd, &st) < 0)
		return -errno;
	e = find_file(c, &st);
	if (!e) {
		len = file_build_id(fd, id);
		e = find_id(c, id, len);
	}
	if (e) {
		c->st.hits++;
	} else {
		c->st.misses++;
		e = load(c, fd, id, len);
		if (!e)
			return -ENOMEM;
		if (insert(c, e) < 0) {
			entry_free(e);
			return -ENOMEM;
		}
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = st.st_size;
	e->mtime = st.st_mtim;
	e->last_use = ++c->tick;
	evict(c, e);
	if (e->err)
		return e->err;
	*out = &e->t;
	return 0;
}

int sym_cfi_cache_take(struct sym_cfi_cache *c, int fd, struct sym_cfi_table *out)
{
	const struct sym_cfi_table *t;
	int rc = sym_cfi_cache_get(c, fd, &t);

	memset(out, 0, sizeof(*out));
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < c->n; i++) {
		struct entry *e = c->v[i];

		if (&e->t != t || e->bytes <= c->max_bytes)
			continue;
		/* Larger than the budget: no room would keep it, so the
		 * caller gets these rows rather than a copy of them (a
		 * large library's are tens of MiB). */
		*out = e->t;
		c->st.bytes -= e->bytes;
		c->v[i] = c->v[--c->n];
		free(e);
		return 0;
	}
	*out = *t;
	out->rows = malloc(t->n * sizeof(*t->rows));
	if (!out->rows) {
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	memcpy(out->rows, t->rows, t->n * sizeof(*t->rows));
	return 0;
}
