/* SPDX-License-Identifier: MIT */
/* Reading the profile files a command is given: one loader for view,
 * export and diff (profile/load.h), its options, its sentences. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/config.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "profile/load.h"

int cli_input_option(int c, const char *arg, struct prof_load_opts *o)
{
	static const char *const units[] = { "samples", "nanoseconds", "bytes" };

	if (c == CLI_OPT_MAX_INPUT) {
		uint64_t v;

		if (config_parse_size(arg, &v) == 0 && v && v <= SIZE_MAX) {
			o->max_input = (size_t)v;
			return 0;
		}
		cli_error("--max-input takes a size like 2G or 512M, not '%s'.", arg);
		return -1;
	}
	if (c == CLI_OPT_SAMPLE_TYPE) {
		if (!arg[0]) {
			cli_error("--sample-type takes a sample type's name, such as inuse_space.");
			return -1;
		}
		o->sample_type = arg;
		return 0;
	}
	for (int u = 0; u < 3; u++)
		if (!strcmp(arg, units[u])) {
			o->unit = u;
			return 0;
		}
	cli_error("--unit takes samples, nanoseconds or bytes, not '%s'.", arg);
	return -1;
}

struct prof_profile *cli_load(const char *path, const struct prof_load_opts *o,
			      int empty_ok)
{
	return cli_load_shown(path, o, empty_ok, NULL, NULL);
}

/* Says what a load of @path that returned @rc met (@err, @note), and
 * whether @p may be used as @empty_ok says: 0, or -1 after a sentence. */
static int loaded(const char *path, int rc, const char *err,
		  const struct prof_load_note *note, const struct prof_profile *p,
		  int empty_ok)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	size_t n;

	if (rc < 0) {
		n = strlen(err);
		cli_error("%s%s", err, n && err[n - 1] == '.' ? "" : ".");
		return -1;
	}
	if (note->negative)
		cli_error("%s: %llu samples with a negative value were left out.",
			  name, (unsigned long long)note->negative);
	if (!prof_total(p) && !(empty_ok == CLI_LOAD_EMPTY ||
				(empty_ok == CLI_LOAD_EMPTY_ANSWER &&
				 prof_meta_const(p)->question != PROF_Q_USUAL))) {
		cli_error("%s: the profile is empty.", name);
		return -1;
	}
	return 0;
}

struct prof_profile *cli_load_shown(const char *path, const struct prof_load_opts *o,
				    int empty_ok, struct cli_progress *pr, const char **format)
{
	struct prof_load_note note = { 0 };
	struct prof_profile *p = NULL;
	struct stat st;
	char err[512];
	int rc;

	if (pr && strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		cli_progress_step(pr, "reading %s (%.0f MB)", path, (double)st.st_size / 1e6);
	else if (pr)
		cli_progress_step(pr, "reading %s", strcmp(path, "-") ? path : "standard input");
	rc = prof_load(path, o, &p, &note, err, sizeof(err));
	if (pr)
		cli_progress_hide(pr);
	if (loaded(path, rc, err, &note, p, empty_ok) < 0) {
		prof_free(p);
		return NULL;
	}
	if (format)
		*format = note.format;
	return p;
}

int cli_load_types(const char *path, const struct prof_load_opts *o,
		   struct prof_load_types *t)
{
	struct prof_load_note note = { 0 };
	char err[512];
	int rc = prof_load_types(path, o, t, &note, err, sizeof(err));

	if (loaded(path, rc, err, &note, rc < 0 ? NULL : t->p[t->shown],
		   CLI_LOAD_NONEMPTY) < 0) {
		prof_load_types_free(t);
		return -1;
	}
	return 0;
}
