/* SPDX-License-Identifier: MIT */
/*
 * debuginfod_cache: keeps libdebuginfod's cache folder under a size
 * bound. libdebuginfod itself only deletes files unused for a week; a
 * host fetching the debug files of everything it runs needs a bound in
 * bytes. The folder holds one folder per build-id with the files fetched
 * for it; the least recently used files go first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debuginfod.h"

#define NS 1000000000ull

static int cmp_age(const void *a, const void *b)
{
	const struct sym_cache_file *x = *(const struct sym_cache_file *const *)a;
	const struct sym_cache_file *y = *(const struct sym_cache_file *const *)b;

	if (x->used_ns != y->used_ns)
		return x->used_ns < y->used_ns ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return 0;
}

uint64_t sym_debuginfod_cache_plan(struct sym_cache_file *f, size_t n,
				   uint64_t max)
{
	uint64_t total = 0;
	struct sym_cache_file **order;

	for (size_t i = 0; i < n; i++) {
		f[i].evict = false;
		total += f[i].bytes;
	}
	if (total <= max)
		return total;
	order = malloc(n * sizeof(*order));
	if (!order)
		return total; /* nothing deleted: over the bound until next time */
	for (size_t i = 0; i < n; i++)
		order[i] = &f[i];
	qsort(order, n, sizeof(*order), cmp_age);
	for (size_t i = 0; i < n && total > max; i++) {
		if (order[i]->keep)
			continue;
		order[i]->evict = true;
		total -= order[i]->bytes;
	}
	free(order);
	return total;
}

static bool is_build_id(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || n > 2 * 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* One file of the scan: where it is, for deleting. */
struct found {
	char name[256]; /* "<build-id>/<file>" */
};

struct scan {
	struct sym_cache_file *f;
	struct found *where;
	size_t n, cap;
};

static int scan_push(struct scan *s, const char *dir, const char *file,
		     const struct stat *st, bool keep)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct sym_cache_file *f = realloc(s->f, cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		s->f = f;
		struct found *w = realloc(s->where, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		s->where = w;
		s->cap = cap;
	}
	uint64_t a = (uint64_t)st->st_atim.tv_sec * NS + (uint64_t)st->st_atim.tv_nsec;
	uint64_t c = (uint64_t)st->st_ctim.tv_sec * NS + (uint64_t)st->st_ctim.tv_nsec;
	int len = snprintf(s->where[s->n].name, sizeof(s->where[s->n].name),
			   "%s/%s", dir, file);

	if (len < 0 || (size_t)len >= sizeof(s->where[s->n].name))
		return 0; /* a name too long to be libdebuginfod's: not ours */
	s->f[s->n] = (struct sym_cache_file){
		.bytes = (uint64_t)st->st_size, .used_ns = a > c ? a : c,
		.keep = keep,
	};
	s->n++;
	return 0;
}

/* Adds the regular files of build-id folder @name (open on @fd). */
static int scan_dir(struct scan *s, int fd, const char *name,
		    const char *keep_dir, const char *keep_file)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(fd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d))) {
		struct stat st;

		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_size == 0)
			continue; /* empty files say "not on the servers" */
		bool keep = keep_dir && strcmp(keep_dir, name) == 0 &&
			    strcmp(keep_file, de->d_name) == 0;
		rc = scan_push(s, name, de->d_name, &st, keep);
	}
	closedir(d);
	return rc;
}

/* Deletes what the plan marked, and the folders it empties. */
static void evict(int root, const struct scan *s, uint64_t *freed)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!s->f[i].evict)
			continue;
		if (unlinkat(root, s->where[i].name, 0) == 0)
			*freed += s->f[i].bytes;
		char *slash = strchr(s->where[i].name, '/');
		if (slash) {
			*slash = '\0';
			unlinkat(root, s->where[i].name, AT_REMOVEDIR); /* when empty */
		}
	}
}

int sym_debuginfod_cache_trim(const char *dir, uint64_t max,
			      const char *keep, uint64_t *freed)
{
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct scan s = { 0 };
	char keep_dir[256] = "", keep_file[256] = "";
	int rc = 0;
	size_t dl = strlen(dir);

	if (root < 0)
		return -errno;
	/* @keep as "<build-id>/<file>" under @dir */
	if (keep && strncmp(keep, dir, dl) == 0 && keep[dl] == '/') {
		const char *rest = keep + dl + 1, *slash = strchr(rest, '/');

		if (slash && (size_t)(slash - rest) < sizeof(keep_dir)) {
			memcpy(keep_dir, rest, (size_t)(slash - rest));
			snprintf(keep_file, sizeof(keep_file), "%s", slash + 1);
		}
	}
	int dup_fd = dup(root);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		close(root);
		return -errno;
	}
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		if (!is_build_id(de->d_name))
			continue;
		int fd = openat(root, de->d_name,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			rc = scan_dir(&s, fd, de->d_name,
				      keep_dir[0] ? keep_dir : NULL, keep_file);
	}
	closedir(d);
	if (rc == 0) {
		sym_debuginfod_cache_plan(s.f, s.n, max);
		evict(root, &s, freed);
	}
	free(s.f);
	free(s.where);
	close(root);
	return rc;
}
