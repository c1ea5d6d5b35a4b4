/* SPDX-License-Identifier: MIT */
/* hearth diff's report: each side's total, then the functions whose share
 * changed most with their values, as a table or as JSON. */
#ifndef HEARTH_CLI_DIFF_REPORT_H
#define HEARTH_CLI_DIFF_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct cli_diff_report {
	const char *side[2];   /* what each side is: a file, or "10m before" */
	const char *mark;      /* --at: the mark, else NULL */
	uint64_t at_ns;        /* its time */
	uint64_t window_ns;    /* each side's length */
	unsigned windows[2];   /* windows each side holds */
	uint64_t after_ns;     /* time the after side covers so far */
	size_t top;            /* at most this many functions */
	double min_pp;         /* leave out changes smaller than this */
	int json;              /* JSON instead of the table */
};

struct cli_progress;

/* Prints the report of @before against @after to standard output; says
 * it compares on the progress line @pr (NULL: none), which it ends before
 * printing. Returns 0, or -1 after one sentence (different units, no
 * memory). */
int cli_diff_report(const struct prof_profile *before,
		    const struct prof_profile *after,
		    const struct cli_diff_report *r, struct cli_progress *pr);

#endif
