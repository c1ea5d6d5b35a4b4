/* SPDX-License-Identifier: MIT */
/* hearth view: open a profile in the flame graph window. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "render/load.h"
#include "render/model.h"
#include "render/sdl.h"

/* Prints a library's sentence through the one error sink, with exactly
 * one closing period. */
static void say(const char *err)
{
	size_t n = strlen(err);

	cli_error("%s%s", err, n && err[n - 1] == '.' ? "" : ".");
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hearth view [options] FILE\n"
		"\n"
		"Opens FILE (folded stacks or pprof; '-' reads stdin) in the flame graph\n"
		"viewer. Click or Enter zooms, Escape zooms out, arrows move, '/' searches.\n"
		"\n"
		"  -s, --search QUERY   start with this search (comma-separated terms)\n"
		"      --size WxH       window size in screen pixels (default 1280x800)\n"
		"      --debug-layout F test aid: rewrite F with the box and zone\n"
		"                       rectangles after every redraw\n"
		"  -h, --help           this text\n"
		"\n"
		"HEARTH_SCALE=2 enlarges the window's text and rows on HiDPI screens that do\n"
		"not say so (X11).\n");
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

int cmd_view(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "search", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'S' },
		{ "debug-layout", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct rd_window_opts wo = { 0 };
	struct prof_profile *p = NULL;
	struct rd_model *m;
	char err[512], title[512];
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': wo.query = optarg; break;
		case 'D': wo.debug_layout = optarg; break;
		case 'S':
			if (parse_size(optarg, &wo.width, &wo.height) < 0) {
				cli_error("--size wants WIDTHxHEIGHT, like 1600x900, not '%s'.", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		cli_error("'hearth view' takes one profile file (or '-' for stdin); 'hearth view --help' shows the options.");
		return 2;
	}
	if (rd_load_profile(argv[optind], &p, err, sizeof(err)) < 0) {
		say(err);
		return 1;
	}
	if (!(m = rd_model_new(p))) {
		cli_error("out of memory while reading %s.", argv[optind]);
		prof_free(p);
		return 1;
	}
	snprintf(title, sizeof(title), "%s \xe2\x80\x94 hearth", argv[optind]);
	wo.title = title;
	rc = rd_window_run(m, &wo, err, sizeof(err));
	if (rc < 0)
		say(err);
	rd_model_free(m);
	prof_free(p);
	return rc < 0 ? 1 : 0;
}
