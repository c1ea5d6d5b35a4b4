/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "profile/folded.h"
#include "profile/pprof.h"

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_pprof(const char *path)
{
	return has_suffix(path, ".pb.gz") || has_suffix(path, ".pprof");
}

static int write_to(FILE *f, struct prof_profile *p, unsigned flags, int pprof)
{
	unsigned fflags = (flags & CLI_OUT_ANNOTATE) ? PROF_FOLDED_ANNOTATE : 0;

	return pprof ? prof_pprof_write(p, f) : prof_folded_write(p, f, fflags);
}

/* A device, pipe or socket (/dev/null, a FIFO) is written in place: a
 * temporary file renamed over it would replace the device itself. */
static int write_special(const char *path, struct prof_profile *p, unsigned flags)
{
	FILE *f = fopen(path, "we");
	int rc;

	if (!f) {
		cli_error("cannot open %s: %s.", path, strerror(errno));
		return -1;
	}
	rc = write_to(f, p, flags, is_pprof(path));
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		cli_error("cannot write %s: %s.", path, strerror(-rc));
		return -1;
	}
	return 0;
}

int cli_write_profile(const char *path, struct prof_profile *p, unsigned flags)
{
	struct stat st;
	char tmp[4096];
	FILE *f;
	int rc;

	if (!strcmp(path, "-")) {
		if (write_to(stdout, p, flags, 0) < 0 || fflush(stdout) != 0) {
			cli_error("cannot write the profile to standard output: %s.", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return write_special(path, p, flags);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp)) {
		cli_error("the output path is too long.");
		return -1;
	}
	f = fopen(tmp, "we");
	if (!f) {
		cli_error("cannot create %s: %s.", path, strerror(errno));
		return -1;
	}
	rc = write_to(f, p, flags, is_pprof(path));
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc < 0) {
		cli_error("cannot write %s: %s.", path, strerror(-rc));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int cli_write_profiles(const char *base, struct prof_profile *on,
		       struct prof_profile *off, unsigned flags)
{
	char stem[4000], path[4096];
	size_t n;

	if (!on || !off)
		return cli_write_profile(base, on ? on : off, flags);
	const char *ext = is_pprof(base) ? ".pb.gz" : ".folded";

	n = strlen(base);
	if (has_suffix(base, ".folded"))
		n -= strlen(".folded");
	else if (has_suffix(base, ".pb.gz"))
		n -= strlen(".pb.gz");
	else if (has_suffix(base, ".pprof"))
		n -= strlen(".pprof");
	if (n >= sizeof(stem)) {
		cli_error("the output path is too long.");
		return -1;
	}
	memcpy(stem, base, n);
	stem[n] = '\0';
	snprintf(path, sizeof(path), "%s.oncpu%s", stem, ext);
	if (cli_write_profile(path, on, flags) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s.offcpu%s", stem, ext);
	return cli_write_profile(path, off, flags);
}
