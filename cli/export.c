/* SPDX-License-Identifier: MIT */
/* hearth export: write a profile as SVG, PNG, folded stacks or pprof. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/viewer.h"
#include "profile/folded.h"
#include "profile/pprof.h"
#include "profile/load.h"
#include "render/model.h"
#include "render/svg.h"

enum fmt { FMT_NONE, FMT_SVG, FMT_PNG, FMT_FOLDED, FMT_PPROF };

struct args {
	enum fmt fmt;
	const char *out, *in, *title;
	int width, height, icicle, plain;
	struct prof_load_opts load;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hearth export (--svg | --png | --folded | --pprof) -o OUT [options] FILE\n"
		"\n"
		"Writes FILE (folded stacks, pprof or perf script text; '-' reads stdin) as:\n"
		"  --svg              an interactive flame graph (hover, click to zoom, search)\n"
		"  --png              a picture of the viewer's window\n"
		"  --folded           folded stacks, as flamegraph.pl and inferno read them,\n"
		"                     after hearth's comment lines (the unit, each frame's\n"
		"                     class, language and file:line), which they skip\n"
		"  --pprof            gzip'd pprof, as 'go tool pprof' reads it, with every\n"
		"                     sample type of a pprof FILE (--sample-type: one)\n"
		"\n"
		"  -o, --output OUT   where to write ('-' = stdout, not for --png)\n"
		"      --width N      picture width in pixels (default 1200 SVG, 1920 PNG)\n"
		"      --height N     PNG height (default: tall enough for every row)\n"
		"      --icicle       root on top\n"
		"      --title TEXT   SVG title\n"
		"      --plain        --folded without hearth's comment lines\n"
		CLI_INPUT_HELP
		"  -h, --help         this text\n"
		"\n"
		"FILE is told apart by its content, gzip'd or not. A file with no\n"
		"samples is an error, and so are difffolded.pl's two-count files\n"
		"(hearth diff reads them), two formats, or an option the format does\n"
		"not take.\n");
}

static int parse_int(const char *s, int lo, int hi, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || end == s || *end || x < lo || x > hi)
		return -1;
	*v = (int)x;
	return 0;
}

static const char *const fmt_names[] = { "", "--svg", "--png", "--folded", "--pprof" };

/* Takes format @f; a second, different one is an error (said). */
static int set_format(struct args *a, enum fmt f)
{
	if (a->fmt != FMT_NONE && a->fmt != f) {
		cli_error("%s and %s are two formats; give one (one export writes one file).",
			  fmt_names[a->fmt], fmt_names[f]);
		return -1;
	}
	a->fmt = f;
	return 0;
}

/* Whether every option given applies to the format; says which does not. */
static bool fits_format(const struct args *a)
{
	const char *bad = NULL;

	if (a->height && a->fmt != FMT_PNG)
		bad = "--height";
	else if (a->title && a->fmt != FMT_SVG)
		bad = "--title";
	else if (a->width && a->fmt != FMT_SVG && a->fmt != FMT_PNG)
		bad = "--width";
	else if (a->icicle && a->fmt != FMT_SVG && a->fmt != FMT_PNG)
		bad = "--icicle";
	else if (a->plain && a->fmt != FMT_FOLDED)
		bad = "--plain";
	if (bad)
		cli_error("%s does not apply to %s.", bad, fmt_names[a->fmt]);
	return !bad;
}

/* Returns 0, or the exit status for a usage error / --help (-1 = 0). */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "svg", no_argument, NULL, 'v' }, { "png", no_argument, NULL, 'p' },
		{ "folded", no_argument, NULL, 'f' }, { "pprof", no_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "width", required_argument, NULL, 'w' },
		{ "height", required_argument, NULL, 'H' },
		{ "icicle", no_argument, NULL, 'i' },
		{ "title", required_argument, NULL, 't' },
		{ "plain", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' }, CLI_INPUT_OPTIONS, { 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'v': case 'p': case 'f': case 'P':
			if (set_format(a, c == 'v' ? FMT_SVG : c == 'p' ? FMT_PNG :
				       c == 'f' ? FMT_FOLDED : FMT_PPROF) < 0)
				return 2;
			break;
		case 'o': a->out = optarg; break;
		case 'i': a->icicle = 1; break;
		case 't': a->title = optarg; break;
		case 'F': a->plain = 1; break;
		case 'w':
		case 'H':
			if (parse_int(optarg, 100, 16384, c == 'w' ? &a->width : &a->height) < 0) {
				cli_error("--%s wants a number of pixels from 100 to 16384, not '%s'.",
					  c == 'w' ? "width" : "height", optarg);
				return 2;
			}
			break;
		case CLI_OPT_MAX_INPUT:
		case CLI_OPT_UNIT:
		case CLI_OPT_SAMPLE_TYPE:
			if (cli_input_option(c, optarg, &a->load) < 0)
				return 2;
			break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (a->fmt == FMT_NONE || !a->out || optind != argc - 1) {
		cli_error("'hearth export' needs a format (--svg, --png, --folded or --pprof), -o OUT and one profile file.");
		return 2;
	}
	a->in = argv[optind];
	if (!fits_format(a))
		return 2;
	if (a->fmt == FMT_PNG && !strcmp(a->out, "-")) {
		cli_error("--png writes to a file; give -o a file name.");
		return 2;
	}
	return 0;
}

static int write_text(const struct args *a, struct prof_profile *p,
		      struct rd_model *m)
{
	struct rd_svg_opts so = { .width = a->width, .icicle = a->icicle,
				  .title = a->title ? a->title : a->in };
	struct cli_out o;
	int rc;

	if (cli_out_open(&o, a->out) < 0)
		return 1;
	if (a->fmt == FMT_SVG)
		rc = rd_svg_write(m, &so, o.f);
	else
		rc = prof_folded_write(p, o.f, a->plain ? 0 : PROF_FOLDED_META);
	return cli_out_close(&o, rc) < 0 ? 1 : 0;
}

/* --pprof: every sample type of a pprof file stays (all of them, unless
 * --sample-type picks one). */
static int export_pprof(const struct args *a)
{
	struct prof_load_types t;
	struct cli_out o;
	int rc;

	if (cli_load_types(a->in, &a->load, &t) < 0)
		return 1;
	rc = cli_out_open(&o, a->out) < 0 ? 1 : 0;
	if (rc == 0)
		rc = cli_out_close(&o, prof_pprof_write_types(t.p, t.n, t.shown, o.f)) < 0 ? 1 : 0;
	prof_load_types_free(&t);
	return rc;
}

int cmd_export(int argc, char **argv, const struct cli_viewer *v)
{
	struct args a = { .load.unit = -1 };
	struct prof_profile *p = NULL;
	struct rd_model *m = NULL;
	int rc = parse_args(argc, argv, &a);

	if (rc)
		return rc < 0 ? 0 : rc;
	if (a.fmt == FMT_PNG) {
		struct cli_png_args pa = { .in = a.in, .out = a.out,
					   .width = a.width, .height = a.height,
					   .icicle = a.icicle, .load = &a.load };
		return v->png(argv, &pa);
	}
	if (a.fmt == FMT_PPROF)
		return export_pprof(&a);
	if (!(p = cli_load(a.in, &a.load, 0)))
		return 1;
	if (!(m = rd_model_new(p))) {
		cli_error("out of memory while reading %s.", a.in);
		prof_free(p);
		return 1;
	}
	rc = write_text(&a, p, m);
	rd_model_free(m);
	prof_free(p);
	return rc;
}
