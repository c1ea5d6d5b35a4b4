/* SPDX-License-Identifier: MIT */
/* Loading a profile for the viewer and exporters. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

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
	rc = prof_folded_parse_sorted(p, buf, len, 1, err, errlen);
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		prof_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Maps the regular file @f whole (read-only, its pages faulted in at once:
 * no copy and no fresh memory for big files). Returns 0, or -ENOTSUP when
 * it is not a regular non-empty file or cannot be mapped (then read it). */
static int map_file(FILE *f, void **buf, size_t *len)
{
	struct stat st;
	void *m;

	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)SIZE_MAX < (uint64_t)st.st_size)
		return -ENOTSUP;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
		 fileno(f), 0);
	if (m == MAP_FAILED)
		return -ENOTSUP;
	*buf = m;
	*len = (size_t)st.st_size;
	return 0;
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
		munmap(map, len);
	free(buf);
	return rc;
}
