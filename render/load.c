/* SPDX-License-Identifier: MIT */
/* Loading a profile for the viewer and exporters. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/folded.h"
#include "render/load.h"

#if defined(__has_include)
#if __has_include("profile/pprof.h")
#include "profile/pprof.h"
#define HAVE_PPROF 1
#endif
#endif

static int slurp(FILE *f, char **buf, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		size_t got;

		if (n == cap) {
			char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(b);
		return -EIO;
	}
	*buf = b;
	*len = n;
	return 0;
}

static int parse(const char *buf, size_t len, struct prof_profile **out,
		 char *err, size_t errlen)
{
	struct prof_profile *p;
	int rc;

	if (len >= 2 && (unsigned char)buf[0] == 0x1f &&
	    (unsigned char)buf[1] == 0x8b) {
#ifdef HAVE_PPROF
		return prof_pprof_read(buf, len, out, err, errlen);
#else
		snprintf(err, errlen, "this looks like a pprof file, and this "
			 "build of hearth reads only folded stacks");
		return -ENOTSUP;
#endif
	}
	if (!(p = prof_new(PROF_UNIT_SAMPLES))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		struct prof_folded_opts o = { 1, 1, len < ((size_t)1 << 20) || cpus < 2 ? 1 : (unsigned)cpus };

		rc = prof_folded_read(p, buf, len, &o, err, errlen);
	}
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		prof_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Files from this size on have their pages mapped in on two threads. */
#define POPULATE_SPLIT ((size_t)8 << 20)

#ifdef MADV_POPULATE_READ
/* A range of the mapped file whose pages are mapped in ahead of the
 * parse (the parse's own faults would cost more, a page at a time). */
struct populate {
	char *a;
	size_t n;
};

static void *populate_run(void *arg)
{
	struct populate *r = arg;
	volatile const char *p = (volatile const char *)r->a;
	long page = sysconf(_SC_PAGESIZE);

	/* Kernels before 5.14 do not know it: the pages are read in then,
	 * one byte each, as MAP_POPULATE would. */
	if (madvise(r->a, r->n, MADV_POPULATE_READ) < 0 && errno == EINVAL &&
	    0 < page)
		for (size_t i = 0; i < r->n; i += (size_t)page)
			(void)p[i];
	return NULL;
}

/* Maps in the pages of @m[0..len): the second half on a thread when the
 * file is big. */
static void populate(void *m, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t half = len < POPULATE_SPLIT || page <= 0 ? len :
		      len / 2 / (size_t)page * (size_t)page;
	struct populate a = { m, half }, b = { (char *)m + half, len - half };
	pthread_t th;
	int threaded = half < len && pthread_create(&th, NULL, populate_run, &b) == 0;

	populate_run(&a);
	if (threaded)
		pthread_join(th, NULL);
	else if (half < len)
		populate_run(&b);
}
#define MAP_FLAGS MAP_PRIVATE
#else
static void populate(void *m, size_t len)
{
	(void)m;
	(void)len;
}
#define MAP_FLAGS (MAP_PRIVATE | MAP_POPULATE)
#endif

/* Maps the regular file @f whole (read-only, its pages mapped in at once:
 * no copy and no fresh memory for big files). Returns 0, or -ENOTSUP when
 * it is not a regular non-empty file or cannot be mapped (then read it). */
static int map_file(FILE *f, void **buf, size_t *len)
{
	struct stat st;
	void *m;

	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)SIZE_MAX < (uint64_t)st.st_size)
		return -ENOTSUP;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_FLAGS, fileno(f), 0);
	if (m == MAP_FAILED)
		return -ENOTSUP;
	populate(m, (size_t)st.st_size);
	*buf = m;
	*len = (size_t)st.st_size;
	return 0;
}

/* Unmaps a big file's pages on a thread of its own that nobody waits
 * for: taking down the page tables of a 170 MiB file costs 15 to 20 ms,
 * which the caller would wait for, where the viewer's model leaves a
 * core idle now and then. */
struct unmap {
	void *map;
	size_t len;
};

static void *unmap_run(void *arg)
{
	struct unmap *u = arg;

	munmap(u->map, u->len);
	free(u);
	return NULL;
}

static void unmap(void *map, size_t len)
{
	struct unmap *u = len < POPULATE_SPLIT ? NULL : malloc(sizeof(*u));
	pthread_attr_t at;
	pthread_t th;
	int started = 0;

	if (u && pthread_attr_init(&at) == 0) {
		*u = (struct unmap){ map, len };
		started = pthread_attr_setdetachstate(&at,
						      PTHREAD_CREATE_DETACHED) == 0 &&
			  pthread_create(&th, &at, unmap_run, u) == 0;
		pthread_attr_destroy(&at);
	}
	if (!started) {
		free(u);
		munmap(map, len);
	}
}

int rd_load_profile(const char *path, struct prof_profile **out, char *err,
		    size_t errlen)
{
	int stdin_ = !strcmp(path, "-");
	FILE *f = stdin_ ? stdin : fopen(path, "rb");
	char *buf = NULL;
	void *map = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return rc;
	}
	rc = stdin_ ? -ENOTSUP : map_file(f, &map, &len);
	if (rc < 0)
		rc = slurp(f, &buf, &len);
	if (!stdin_)
		fclose(f);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read %s: %s", stdin_ ? "stdin" : path,
			 strerror(-rc));
		return rc;
	}
	rc = parse(map ? map : buf, len, out, err, errlen);
	if (map)
		unmap(map, len);
	free(buf);
	return rc;
}
