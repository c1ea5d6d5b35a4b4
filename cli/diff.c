/* SPDX-License-Identifier: MIT */
/* hearth diff: which functions' share of the profile changed most, between
 * two files or around a mark in hearthd's store. Shares, not raw values:
 * a function's share is its inclusive value over the profile's total;
 * the ranking is profile/diff.h's. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "cli/cli.h"
#include "cli/viewer.h"
#include "cli/client.h"
#include "cli/diff_report.h"
#include "cli/progress.h"
#include "profile/diff.h"
#include "profile/load.h"
#include "render/format.h"
#include "render/sdl.h"

struct diff_args {
	const char *sock;
	const char *mark;
	uint64_t window_ns;
	size_t top;
	double min_pp;
	struct ctl_snapshot_req filter;
	struct prof_load_opts load;
	int view;                 /* --view: open the diff in the viewer */
	int json;                 /* --json: the report as JSON */
	const char *difffolded;   /* the one file holding both sides */
	struct cli_diff_report report;
	const char *debug_layout; /* its --debug-layout (a test aid) */
};

static uint64_t mark_time(const struct diff_args *a, int *ok)
{
	struct ctl_request req = { .type = CTL_MARKS };
	struct ctl_mark *m = NULL;
	struct cli_reply r;
	uint64_t at = 0;
	uint32_t damaged = 0;
	size_t n = 0;

	*ok = 0;
	if (cli_call(a->sock, &req, 10000, &r) < 0)
		return 0;
	if (ctl_decode_marks(r.payload, r.len, &m, &n, &damaged) < 0) {
		free(r.buf);
		cli_error("hearthd sent a malformed marks reply.");
		return 0;
	}
	free(r.buf);
	for (size_t i = n; i-- > 0;)
		if (!strcmp(m[i].name, a->mark)) {
			at = m[i].at_ns;
			*ok = 1;
			break;
		}
	free(m);
	if (!*ok && damaged)
		cli_error("there is no mark named '%s' among those hearthd could read (%u damaged); 'hearth marks' lists them.",
			  a->mark, damaged);
	else if (!*ok)
		cli_error("there is no mark named '%s'; 'hearth marks' lists them.", a->mark);
	return at;
}

/* Before = [at - window, at), after = [at, at + window), from the store;
 * what each side holds goes to @a's report. */
static int load_around_mark(struct diff_args *a, struct prof_profile **p)
{
	struct ctl_snapshot_reply info[2];
	struct ctl_snapshot_req req = a->filter;
	int ok;
	uint64_t at = mark_time(a, &ok);

	if (!ok)
		return -1;
	if (at < a->window_ns + 1) {
		cli_error("the window is longer than the time before the mark.");
		return -1;
	}
	for (int side = 0; side < 2; side++) {
		req.since_ns = side ? at : at - a->window_ns;
		req.until_ns = side ? at + a->window_ns : at;
		p[side] = cli_fetch_snapshot(a->sock, &req, 120000, &info[side]);
		if (!p[side])
			return -1;
		if (!info[side].windows) {
			cli_error("hearthd has no windows stored %s the mark.", side ? "after" : "before");
			return -1;
		}
		a->report.windows[side] = info[side].windows;
	}
	a->report.mark = a->mark;
	a->report.at_ns = at;
	a->report.window_ns = a->window_ns;
	a->report.after_ns = info[1].to_ns < at + a->window_ns ? info[1].to_ns - at : a->window_ns;
	return 0;
}

/* The two sides from files: BEFORE and AFTER, or both columns of one
 * difffolded file. Returns 0, or -1 after one sentence. */
static int load_files(struct diff_args *a, int n, char **files, struct prof_profile **p,
		      struct cli_progress *pr)
{
	const char *format = NULL;

	if (n == 2) {
		p[0] = cli_load_shown(files[0], &a->load, 1, pr, NULL);
		p[1] = p[0] ? cli_load_shown(files[1], &a->load, 1, pr, NULL) : NULL;
		return p[1] ? 0 : -1;
	}
	if (!strcmp(files[0], "-")) {
		cli_error("a difffolded file is read twice, once a side: name the file, not '-'.");
		return -1;
	}
	a->difffolded = files[0];
	for (int side = 0; side < 2; side++) {
		a->load.diff_side = side + 1;
		p[side] = cli_load_shown(files[0], &a->load, 1, pr, &format);
		if (!p[side])
			return -1;
		if (strcmp(format, "difffolded")) {
			cli_error("%s is %s, not difffolded.pl's two counts a line: diff needs "
				  "two files, or --at MARK.", files[0], format);
			return -1;
		}
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hearth diff [options] BEFORE AFTER\n"
		"       hearth diff [options] DIFFFOLDED\n"
		"       hearth diff --at MARK [options]\n"
		"\n"
		"Prints the functions whose share of the profile changed most (inclusive\n"
		"share in percent; change in percentage points), largest change first.\n"
		"BEFORE and AFTER are folded or pprof files, gzip'd or not, told apart by\n"
		"their content; --at MARK takes both sides from hearthd's store.\n"
		"DIFFFOLDED is FlameGraph's difffolded.pl output (stack before after).\n"
		"\n"
		"      --at MARK        the --window before the newest mark MARK against\n"
		"                       the same length after it\n"
		"      --window DUR     with --at: each side's length (default 10m)\n"
		"      --off-cpu        with --at: blocked time instead of on-CPU samples\n"
		"      --pid PID        with --at: only this process (repeatable)\n"
		"      --comm NAME      with --at: only processes with this name\n"
		"      --socket PATH    with --at: hearthd's control socket\n"
		"      --top N          print the N largest changes (default 20)\n"
		"      --json           the report as JSON (field names in hearth(1))\n"
		"      --view           open the diff in the viewer instead (as\n"
		"                       hearth view --diff does)\n"
		"      --debug-layout F with --view, a test aid: rewrite F with the box\n"
		"                       and zone rectangles after every redraw\n"
		CLI_INPUT_HELP
		"  -h, --help           this text\n");
}

static int parse_args(struct diff_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "at", required_argument, NULL, 'a' },
		{ "window", required_argument, NULL, 'w' },
		{ "off-cpu", no_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },
		{ "top", required_argument, NULL, 't' },
		{ "socket", required_argument, NULL, 's' },
		{ "view", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "debug-layout", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		CLI_INPUT_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	uint64_t ns;
	char *end;
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': a->mark = optarg; break;
		case 'w':
			if (config_parse_duration(optarg, &ns) < 0 || !ns) {
				cli_error("--window takes a duration like 10m, not '%s'.", optarg);
				return -1;
			}
			a->window_ns = ns;
			break;
		case 'f': a->filter.flags |= CTL_SNAP_OFFCPU; break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v <= 0 || v > 4194304 || a->filter.npids == CTL_PIDS_MAX) {
				cli_error("--pid takes a process id, not '%s'.", optarg);
				return -1;
			}
			a->filter.pids[a->filter.npids++] = (uint32_t)v;
			break;
		case 'c':
			if (!optarg[0] || strlen(optarg) > CTL_COMM_MAX) {
				cli_error("--comm takes a process name of 1-15 characters.");
				return -1;
			}
			snprintf(a->filter.comm, sizeof(a->filter.comm), "%s", optarg);
			break;
		case 't':
			v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v <= 0 || v > 100000) {
				cli_error("--top takes a count, not '%s'.", optarg);
				return -1;
			}
			a->top = (size_t)v;
			break;
		case 's': a->sock = optarg; break;
		case 'v': a->view = 1; break;
		case 'j': a->json = 1; break;
		case 'D': a->debug_layout = optarg; break;
		case CLI_OPT_MAX_INPUT:
		case CLI_OPT_UNIT:
		case CLI_OPT_SAMPLE_TYPE:
			if (cli_input_option(c, optarg, &a->load) < 0)
				return -1;
			break;
		case 'h': usage(stdout); return 1;
		default: return -1;
		}
	}
	return 0;
}

/* --view: the diff in the viewer's window instead of the table. Takes
 * the profiles. Returns the exit status. */
static int view_window(const struct diff_args *a, struct prof_profile **p,
		       int argc, char **argv, const struct cli_viewer *v)
{
	struct rd_window_opts wo = { .debug_layout = a->debug_layout };
	char title[512];
	int rc;

	if (a->mark)
		snprintf(title, sizeof(title), "diff around %s \xe2\x80\x94 hearth", a->mark);
	else if (a->difffolded)
		snprintf(title, sizeof(title), "%s \xe2\x80\x94 hearth", a->difffolded);
	else
		snprintf(title, sizeof(title), "%s \xe2\x86\x92 %s \xe2\x80\x94 hearth",
			 argv[argc - 2], argv[argc - 1]);
	wo.title = title;
	rc = v->diff_window(p[0], p[1], &wo);
	p[0] = p[1] = NULL;
	return rc;
}

int cmd_diff(int argc, char **argv, const struct cli_viewer *v)
{
	struct diff_args a = { .sock = CLI_DEFAULT_SOCKET, .window_ns = 600000000000ull,
			       .top = 20, .min_pp = 0.005, .load.unit = -1 };
	struct prof_profile *p[2] = { NULL, NULL };
	struct cli_progress pr = { 0 };
	char win[32], side[2][128];
	int rc = parse_args(&a, argc, argv), status = 1;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (a.mark && optind != argc) {
		cli_error("give either --at MARK or two files, not both.");
		return 2;
	}
	if (!a.mark && optind + 2 != argc && optind + 1 != argc) {
		cli_error("diff needs two files, or --at MARK; 'hearth diff --help' shows how.");
		return 2;
	}
	/* The window is drawn by hearth-view: hand over before loading
	 * anything, so the inputs are read (or asked for) once. */
	if (a.view && a.json) {
		cli_error("--json is the report's form; --view draws the diff instead: give one.");
		return 2;
	}
	if (a.view && v->handoff)
		return v->handoff(argv);
	if (a.mark) {
		if (load_around_mark(&a, p) < 0)
			goto out;
	} else {
		/* Big files take seconds to read and compare: a line says so. */
		cli_progress_start(&pr, "diff");
		if (load_files(&a, argc - optind, argv + optind, p, &pr) < 0)
			goto out;
	}
	if (!prof_total(p[0]) || !prof_total(p[1])) {
		cli_error("the %s profile is empty; there is nothing to compare.",
			  prof_total(p[0]) ? "after" : "before");
		goto out;
	}
	if (a.view) {
		cli_progress_stop(&pr);
		status = view_window(&a, p, argc, argv, v);
		goto out;
	}
	a.report.top = a.top;
	a.report.min_pp = a.min_pp;
	a.report.json = a.json;
	if (a.mark) {
		rd_fmt_value(win, sizeof(win), a.window_ns, PROF_UNIT_NANOSECONDS);
		snprintf(side[0], sizeof(side[0]), "the %s before %s", win, a.mark);
		snprintf(side[1], sizeof(side[1]), "the %s after %s", win, a.mark);
		a.report.side[0] = side[0];
		a.report.side[1] = side[1];
	} else if (optind + 1 == argc) {
		snprintf(side[0], sizeof(side[0]), "%s (before)", argv[optind]);
		snprintf(side[1], sizeof(side[1]), "%s (after)", argv[optind]);
		a.report.side[0] = side[0];
		a.report.side[1] = side[1];
	} else {
		for (int i = 0; i < 2; i++)
			a.report.side[i] = strcmp(argv[optind + i], "-") ? argv[optind + i] :
					   "standard input";
	}
	if (cli_diff_report(p[0], p[1], &a.report, &pr) < 0)
		goto out;
	status = 0;
out:
	cli_progress_stop(&pr);
	prof_free(p[0]);
	prof_free(p[1]);
	return status;
}
