/* SPDX-License-Identifier: MIT */
/* hearth diff's report (see diff_report.h). Shares, as the ranking uses
 * them, and beside them the values they come from. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/diff_report.h"
#include "cli/json.h"
#include "cli/progress.h"
#include "profile/diff.h"
#include "render/format.h"

static const char *const unit_names[] = { "samples", "nanoseconds", "bytes" };

static double share(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* @v as people read it: "12.3 K samples", "340 ms", "12 MiB". */
static const char *value(char *buf, size_t n, uint64_t v, enum prof_unit unit)
{
	char num[24];

	rd_fmt_value(num, sizeof(num), v, unit);
	snprintf(buf, n, "%s%s", num, unit == PROF_UNIT_SAMPLES ? " samples" : "");
	return buf;
}

/* The ranked functions to show: at most @top, none under @min_pp. */
static size_t shown(const struct prof_diff_fn *fn, size_t n, const struct cli_diff_report *r)
{
	size_t i;

	for (i = 0; i < n && i < r->top; i++)
		if ((fn[i].change < 0 ? -fn[i].change : fn[i].change) < r->min_pp)
			break;
	return i;
}

static void print_text(const struct prof_diff *d, const struct prof_diff_fn *fn,
		       size_t n, const struct cli_diff_report *r, enum prof_unit unit)
{
	const struct prof_profile *t = prof_diff_tree_const(d);
	uint64_t tot[2] = { prof_diff_total_before(d), prof_diff_total_after(d) };
	char when[32], v[2][48];

	if (r->mark) {
		cli_format_time(r->at_ns, when, sizeof(when));
		printf("mark %s at %s: %u windows before, %u after\n", r->mark, when,
		       r->windows[0], r->windows[1]);
		if (r->after_ns < r->window_ns)
			printf("(the after side is still being recorded: %.0f s of %.0f s so far)\n",
			       (double)r->after_ns / 1e9, (double)r->window_ns / 1e9);
	}
	for (int s = 0; s < 2; s++)
		printf("%-7s %s, total %s\n", s ? "after:" : "before:", r->side[s],
		       value(v[0], sizeof(v[0]), tot[s], unit));
	printf("%-40s %17s %17s %9s   %s\n", "function", "before", "after", "change",
	       "self before -> after");
	for (size_t i = 0; i < n; i++) {
		const struct prof_diff_fn *f = &fn[i];

		rd_fmt_value(v[0], sizeof(v[0]), f->total_before, unit);
		rd_fmt_value(v[1], sizeof(v[1]), f->total_after, unit);
		printf("%-40.40s %7.2f%% %8s %7.2f%% %8s %+8.2fpp   %.2f%% -> %.2f%%\n",
		       prof_str(t, f->name), share(f->total_before, tot[0]), v[0],
		       share(f->total_after, tot[1]), v[1], f->change,
		       share(f->self_before, tot[0]), share(f->self_after, tot[1]));
	}
	if (!n)
		printf("(no function's share changed by %.2f percentage points or more)\n", r->min_pp);
}

static void print_json(const struct prof_diff *d, const struct prof_diff_fn *fn,
		       size_t n, const struct cli_diff_report *r, enum prof_unit unit)
{
	const struct prof_profile *t = prof_diff_tree_const(d);
	uint64_t tot[2] = { prof_diff_total_before(d), prof_diff_total_after(d) };
	struct cli_json j;

	cli_json_start(&j, stdout);
	cli_json_object(&j, NULL);
	cli_json_str(&j, "unit", (size_t)unit < sizeof(unit_names) / sizeof(unit_names[0]) ?
		     unit_names[unit] : "unknown");
	for (int s = 0; s < 2; s++) {
		cli_json_object(&j, s ? "after" : "before");
		cli_json_str(&j, "name", r->side[s]);
		cli_json_u64(&j, "total", tot[s]);
		if (r->mark)
			cli_json_u64(&j, "windows", r->windows[s]);
		cli_json_end(&j);
	}
	if (r->mark) {
		cli_json_object(&j, "mark");
		cli_json_str(&j, "name", r->mark);
		cli_json_u64(&j, "at_ns", r->at_ns);
		cli_json_u64(&j, "window_ns", r->window_ns);
		cli_json_u64(&j, "after_recorded_ns", r->after_ns);
		cli_json_end(&j);
	}
	cli_json_array(&j, "functions");
	for (size_t i = 0; i < n; i++) {
		const struct prof_diff_fn *f = &fn[i];

		cli_json_object(&j, NULL);
		cli_json_str(&j, "name", prof_str(t, f->name));
		cli_json_u64(&j, "before", f->total_before);
		cli_json_u64(&j, "after", f->total_after);
		cli_json_double(&j, "share_before", share(f->total_before, tot[0]), 10);
		cli_json_double(&j, "share_after", share(f->total_after, tot[1]), 10);
		cli_json_double(&j, "change_pp", f->change, 10);
		cli_json_u64(&j, "self_before", f->self_before);
		cli_json_u64(&j, "self_after", f->self_after);
		cli_json_double(&j, "self_share_before", share(f->self_before, tot[0]), 10);
		cli_json_double(&j, "self_share_after", share(f->self_after, tot[1]), 10);
		cli_json_end(&j);
	}
	cli_json_end(&j);
	cli_json_end(&j);
}

int cli_diff_report(const struct prof_profile *before,
		    const struct prof_profile *after,
		    const struct cli_diff_report *r, struct cli_progress *pr)
{
	struct prof_diff *d = NULL;
	struct prof_diff_fn *fn = NULL;
	size_t n = 0;
	int rc;

	if (pr)
		cli_progress_step(pr, "comparing");
	rc = prof_diff_build(before, after, &d);
	if (!rc)
		rc = prof_diff_rank(d, PROF_RANK_TOTAL, &fn, &n);
	if (pr)
		cli_progress_stop(pr);
	if (rc) {
		prof_diff_free(d);
		cli_error(rc == -EINVAL ? "the two profiles are in different units." :
			  "out of memory while comparing.");
		return -1;
	}
	n = shown(fn, n, r);
	if (r->json)
		print_json(d, fn, n, r, prof_meta_const(before)->unit);
	else
		print_text(d, fn, n, r, prof_meta_const(before)->unit);
	free(fn);
	prof_diff_free(d);
	return 0;
}
