/* SPDX-License-Identifier: MIT */
/*
 * `hearth view`'s options and help text. Linked into hearth and
 * hearth-view alike, so `hearth view --help` is answered by hearth itself,
 * with or without the viewer installed.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/viewer.h"

const struct option cli_view_options[] = {
	{ "search", required_argument, NULL, 's' },
	{ "size", required_argument, NULL, 'S' },
	{ "debug-layout", required_argument, NULL, 'D' },
	{ "diff", no_argument, NULL, 'd' },
	{ "live", no_argument, NULL, 'L' },
	{ "last", required_argument, NULL, 'l' },
	{ "pid", required_argument, NULL, 'p' },
	{ "comm", required_argument, NULL, 'c' },
	{ "off-cpu", no_argument, NULL, 'o' },
	{ "socket", required_argument, NULL, 'k' },
	{ "help", no_argument, NULL, 'h' },
	CLI_INPUT_OPTIONS,
	{ 0 },
};

const char cli_view_shortopts[] = "s:h";

void cli_view_usage(FILE *out)
{
	fprintf(out,
		"usage: hearth view [options] FILE\n"
		"       hearth view --diff [options] BEFORE AFTER\n"
		"       hearth view --live [options]\n"
		"\n"
		"Opens FILE (folded stacks, pprof or perf script text; '-' reads stdin) in\n"
		"the flame graph viewer. Click or Enter zooms, Escape zooms out, arrows\n"
		"move, '/' searches.\n"
		"\n"
		"  -s, --search QUERY   start with this search (comma-separated terms)\n"
		"      --size WxH       window size in screen pixels (default 1280x800)\n"
		"      --debug-layout F test aid: rewrite F with the box and zone\n"
		"                       rectangles after every redraw\n"
		CLI_INPUT_HELP
		"      --diff           two files, BEFORE AFTER: the change between them,\n"
		"                       red where a function's share grew, blue where it\n"
		"                       shrank (changes within sampling noise stay neutral)\n"
		"      --live           no file: hearthd's latest windows, redrawn as each\n"
		"                       window is stored (Space pauses)\n"
		"      --last DUR       with --live: how far back (default 5m)\n"
		"      --pid PID        with --live: only this process (repeatable)\n"
		"      --comm NAME      with --live: only processes with this name\n"
		"      --off-cpu        with --live: blocked time instead of on-CPU samples\n"
		"      --socket PATH    with --live: hearthd's control socket\n"
		"  -h, --help           this text\n"
		"\n"
		"FILE is told apart by its content, gzip'd or not. A file with no\n"
		"samples is an error, and so is difffolded.pl's two-count file (hearth\n"
		"diff reads it).\n"
		"\n"
		"In every view, s shows the selected function's sandwich (its callers and\n"
		"callees), and 'Call tree' shows the profile as an expandable table.\n"
		"A function seen at several lines or inline sites is one box; its lines\n"
		"are in the tooltip and the call tree.\n"
		"\n"
		"HEARTH_SCALE=2 enlarges the window's text and rows on HiDPI screens that do\n"
		"not say so (X11).\n");
}

int cli_view_wants_help(int argc, char **argv)
{
	int c, help = 0, saved = opterr;

	opterr = 0; /* the viewer reports wrong options itself */
	optind = 1;
	while ((c = getopt_long(argc, argv, cli_view_shortopts, cli_view_options, NULL)) != -1)
		if (c == 'h')
			help = 1;
	opterr = saved;
	optind = 1;
	return help;
}
