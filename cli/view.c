/* SPDX-License-Identifier: MIT */
/* hearth view: open a profile in the flame graph window. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/viewer.h"
#include "render/live.h"
#include "profile/load.h"
#include "render/model.h"
#include "render/sdl.h"
#include "render/views.h"

/* Prints a library's sentence through the one error sink, with exactly
 * one closing period. */
static void say(const char *err)
{
	size_t n = strlen(err);

	cli_error("%s%s", err, n && err[n - 1] == '.' ? "" : ".");
}

static int parse_size(const char *s, int *w, int *h)
{
	char *end;
	long a = strtol(s, &end, 10), b;

	if (end == s || *end != 'x' || a < 200 || a > 16384)
		return -1;
	s = end + 1;
	b = strtol(s, &end, 10);
	if (end == s || *end || b < 200 || b > 16384)
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}

/* ---- the window, with the views' panes (render/views) -------------------- */

/* Runs the window on @m with the views @v (taken; NULL: the flame graph
 * alone). Returns the exit status, after saying what went wrong. */
static int run_window(struct rd_model *m, struct rd_views *v,
		      const struct rd_window_opts *o)
{
	struct rd_window_opts wo = *o;
	char err[512];
	int rc;

	wo.panes = rd_views_panes(v);
	rc = rd_window_run(m, &wo, err, sizeof(err));
	if (rc < 0)
		say(err);
	rd_views_free(v);
	return rc < 0;
}

int cli_view_diff_window(struct prof_profile *before, struct prof_profile *after,
			 const struct rd_window_opts *wo)
{
	struct rd_views *v = rd_views_new();
	struct rd_model *m;
	char err[512];

	if (!v) {
		prof_free(before);
		prof_free(after);
		cli_error("out of memory.");
		return 1;
	}
	if (rd_views_set_diff(v, before, after, &m, err, sizeof(err)) < 0) {
		say(err);
		rd_views_free(v);
		return 1;
	}
	return run_window(m, v, wo);
}

struct live_src {
	const char *sock;
	struct ctl_snapshot_req req;
};

/* The live view's questions to hearthd: its status, or the snapshot. */
static int live_fetch(void *ctx, int snapshot, struct rd_live_answer *a)
{
	const struct live_src *s = ctx;
	struct ctl_request q = { .type = CTL_STATUS };
	struct ctl_snapshot_reply info;
	struct ctl_status st;
	struct cli_reply r;
	int rc;

	if (snapshot) {
		if (!(a->p = cli_fetch_snapshot(s->sock, &s->req, 20000, &info)))
			return -EIO;
		a->from_ns = info.from_ns;
		a->to_ns = info.to_ns;
		return 0;
	}
	if (cli_call(s->sock, &q, 5000, &r) < 0)
		return -EIO;
	rc = ctl_decode_status(r.payload, r.len, &st);
	free(r.buf);
	a->window_ns = st.window_ns;
	a->end_ns = st.last_window_end_ns;
	return rc;
}

static int view_live(struct live_src *src, struct rd_window_opts *wo)
{
	struct rd_live_answer a = { 0 };
	struct rd_views *v;
	struct rd_model *m;
	struct rd_live *l;
	char err[512];

	if (rd_live_check(src->sock, err, sizeof(err)) < 0) {
		say(err);
		return 1;
	}
	if (live_fetch(src, 1, &a) < 0)
		return 1;
	if (!(l = rd_live_new(live_fetch, src, src->req.last_ns))) {
		prof_free(a.p);
		cli_error("out of memory.");
		return 1;
	}
	/* The first frame shows the snapshot above: give it the cadence too. */
	struct rd_live_answer st = { 0 };
	if (live_fetch(src, 0, &st) == 0)
		rd_live_set_window(l, st.window_ns);
	wo->title = "live \xe2\x80\x94 hearth";
	if (!(v = rd_views_new())) {
		rd_live_free(l);
		prof_free(a.p);
		cli_error("out of memory.");
		return 1;
	}
	if (rd_views_set_live(v, l, a.p, a.from_ns, a.to_ns, &m) < 0) {
		rd_views_free(v);
		cli_error("out of memory.");
		return 1;
	}
	return run_window(m, v, wo);
}

static int view_diff(int argc, char **argv, struct rd_window_opts *wo,
		     const struct prof_load_opts *lo)
{
	struct prof_profile *b, *a;
	char title[512];

	if (optind != argc - 2) {
		cli_error("'hearth view --diff' takes two profiles, BEFORE and AFTER.");
		return 2;
	}
	snprintf(title, sizeof(title), "%s \xe2\x86\x92 %s \xe2\x80\x94 hearth",
		 argv[optind], argv[optind + 1]);
	wo->title = title;
	if (!(b = cli_load(argv[optind], lo, 1)))
		return 1;
	if (!(a = cli_load(argv[optind + 1], lo, 1))) {
		prof_free(b);
		return 1;
	}
	return cli_view_diff_window(b, a, wo);
}

/* Options of --live; returns 0, or -1 after saying what is wrong. */
static int live_option(int c, struct live_src *src)
{
	uint64_t ns;
	char *end;
	long v;

	switch (c) {
	case 'l':
		if (config_parse_duration(optarg, &ns) < 0 || !ns) {
			cli_error("--last takes a duration like 5m, not '%s'.", optarg);
			return -1;
		}
		src->req.last_ns = ns;
		return 0;
	case 'p':
		v = strtol(optarg, &end, 10);
		if (end == optarg || *end || v <= 0 || v > 4194304 ||
		    src->req.npids == CTL_PIDS_MAX) {
			cli_error("--pid takes a process id, not '%s'.", optarg);
			return -1;
		}
		src->req.pids[src->req.npids++] = (uint32_t)v;
		return 0;
	case 'c':
		if (!optarg[0] || strlen(optarg) > CTL_COMM_MAX) {
			cli_error("--comm takes a process name of 1-15 characters.");
			return -1;
		}
		snprintf(src->req.comm, sizeof(src->req.comm), "%s", optarg);
		return 0;
	case 'o': src->req.flags |= CTL_SNAP_OFFCPU; return 0;
	case 'k': src->sock = optarg; return 0;
	default: return -1;
	}
}

int cmd_view(int argc, char **argv)
{
	struct rd_window_opts wo = { 0 };
	struct live_src src = { .sock = CLI_DEFAULT_SOCKET,
				.req.last_ns = 300000000000ull };
	struct prof_load_opts lo = { .unit = -1 };
	struct prof_profile *p = NULL;
	struct rd_model *m;
	char title[512];
	int c, rc, diff = 0, live = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, cli_view_shortopts, cli_view_options, NULL)) != -1) {
		switch (c) {
		case 's': wo.query = optarg; break;
		case 'D': wo.debug_layout = optarg; break;
		case 'S':
			if (parse_size(optarg, &wo.width, &wo.height) < 0) {
				cli_error("--size wants WIDTHxHEIGHT, like 1600x900, not '%s'.", optarg);
				return 2;
			}
			break;
		case 'h': cli_view_usage(stdout); return 0;
		case 'd': diff = 1; break;
		case 'L': live = 1; break;
		case CLI_OPT_MAX_INPUT:
		case CLI_OPT_UNIT:
		case CLI_OPT_SAMPLE_TYPE:
			if (cli_input_option(c, optarg, &lo) < 0)
				return 2;
			break;
		case 'l': case 'p': case 'c': case 'o': case 'k':
			if (live_option(c, &src) < 0)
				return 2;
			break;
		default: cli_view_usage(stderr); return 2;
		}
	}
	if (diff && live) {
		cli_error("give either --diff or --live, not both.");
		return 2;
	}
	if (diff)
		return view_diff(argc, argv, &wo, &lo);
	if (live && optind != argc) {
		cli_error("'hearth view --live' reads from hearthd and takes no file.");
		return 2;
	}
	if (live)
		return view_live(&src, &wo);
	if (optind != argc - 1) {
		cli_error("'hearth view' takes one profile file (or '-' for stdin); 'hearth view --help' shows the options.");
		return 2;
	}
	/* "Nothing waited on a lock" is an answer: the window says it. */
	if (!(p = cli_load(argv[optind], &lo, CLI_LOAD_EMPTY_ANSWER)))
		return 1;
	if (!(m = rd_model_new(p))) {
		cli_error("out of memory while reading %s.", argv[optind]);
		prof_free(p);
		return 1;
	}
	snprintf(title, sizeof(title), "%s \xe2\x80\x94 hearth", argv[optind]);
	wo.title = title;
	/* the sandwich and call tree panes; without them when out of memory */
	rc = run_window(m, rd_views_new(), &wo);
	rd_model_free(m);
	prof_free(p);
	return rc;
}
