/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
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

/* The permission bits a new file gets: 0666 less the umask. */
static mode_t new_file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

/* A device, pipe or socket (/dev/null, a FIFO) is written in place: a
 * temporary file renamed over it would replace the device itself. */
static int open_in_place(struct cli_out *o)
{
	int fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		cli_error("cannot open %s: %s.", o->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return 0;
}

int cli_out_open(struct cli_out *o, const char *path)
{
	struct stat st;
	mode_t mode;
	int fd;

	o->path = path;
	o->tmp[0] = 0;
	o->f = NULL;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (stat(path, &st) < 0) {
		mode = new_file_mode();
	} else if (S_ISDIR(st.st_mode)) {
		cli_error("cannot write %s: it is a directory.", path);
		return -1;
	} else if (!S_ISREG(st.st_mode)) {
		return open_in_place(o);
	} else {
		mode = st.st_mode & 0777; /* a replaced file keeps its mode */
	}
	if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.XXXXXX", path) >= sizeof(o->tmp)) {
		cli_error("the output path is too long.");
		return -1;
	}
	/* O_CREAT|O_EXCL under a random name: never follows a link. */
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		cli_error("cannot create %s: %s.", path, strerror(errno));
		return -1;
	}
	if (fchmod(fd, mode) < 0 || !(o->f = fdopen(fd, "w"))) {
		cli_error("cannot create %s: %s.", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

int cli_out_close(struct cli_out *o, int rc)
{
	if (o->f == stdout) {
		if (fflush(stdout) != 0 && rc == 0)
			rc = -errno;
	} else if (fclose(o->f) != 0 && rc == 0) {
		rc = -errno;
	}
	o->f = NULL;
	if (rc == 0 && o->tmp[0] && rename(o->tmp, o->path) != 0)
		rc = -errno;
	if (rc == 0)
		return 0;
	if (o->tmp[0])
		unlink(o->tmp);
	if (!strcmp(o->path, "-"))
		cli_error("cannot write to standard output: %s.", strerror(-rc));
	else
		cli_error("cannot write %s: %s.", o->path, strerror(-rc));
	return -1;
}

void cli_out_abort(struct cli_out *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
}

int cli_write_profile(const char *path, struct prof_profile *p, unsigned flags)
{
	return cli_write_profile_pair(path, p, NULL, flags);
}

int cli_write_profile_pair(const char *path, struct prof_profile *p,
			   struct prof_profile *second, unsigned flags)
{
	unsigned fflags = ((flags & CLI_OUT_ANNOTATE) ? PROF_FOLDED_ANNOTATE : 0) |
			  ((flags & CLI_OUT_PLAIN) ? 0 : PROF_FOLDED_META);
	struct cli_out o;
	int rc;

	if (cli_out_open(&o, path) < 0)
		return -1;
	/* Standard output is always folded text. */
	if (o.f != stdout && is_pprof(path))
		rc = prof_pprof_write_pair(p, second, o.f);
	else
		rc = prof_folded_write(p, o.f, fflags);
	return cli_out_close(&o, rc);
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
