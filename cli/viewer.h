/* SPDX-License-Identifier: MIT */
/*
 * The viewer's binary. Everything that draws with SDL (the window, PNG
 * export) is linked into hearth-view, not into hearth, so that `hearth
 * record`, `snapshot`, `diff`, `export --svg` and the rest start without
 * loading SDL and the ~40 libraries behind it. hearth-view is the whole
 * command plus the viewer; hearth hands `view`, `export --png` and `diff
 * --view` over to it with exec (same process, arguments and output).
 */
#ifndef HEARTH_CLI_VIEWER_H
#define HEARTH_CLI_VIEWER_H

#include <getopt.h>
#include <stdio.h>

/* `hearth view`'s long options and short option string (cli/view_help.c),
 * for getopt_long() in hearth and hearth-view alike. */
extern const struct option cli_view_options[];
extern const char cli_view_shortopts[];

/* Prints `hearth view`'s help text to @out. */
void cli_view_usage(FILE *out);

/* Returns 1 when `view`'s arguments @argv (argv[0] the subcommand) ask for
 * --help / -h, 0 otherwise; prints nothing (wrong options are the
 * viewer's to report) and leaves optind at 1. */
int cli_view_wants_help(int argc, char **argv);

/* What `hearth export --png` was asked for. */
struct prof_load_opts;
struct cli_png_args {
	const char *in, *out;
	int width, height, icicle;
	const struct prof_load_opts *load; /* how to read @in */
};

/* Writes the PNG (hearth-view), or replaces this process with hearth-view
 * running the same command line (hearth). Returns the exit status. */
int cli_export_png(char **argv, const struct cli_png_args *a);

/* Replaces this process with hearth-view running the command line this
 * process was started with (@argv, the subcommand's arguments with argv[0]
 * its name, when that cannot be read). Returns only when it could not
 * start the viewer, after saying why: the exit status, 1. */
int cli_exec_viewer(char **argv);

/* For commands that load their input before drawing it (`diff --view`):
 * in hearth, replaces this process with hearth-view running the same
 * command line before anything is loaded, and returns only when it could
 * not, after saying why: 1. In hearth-view, returns 0 and the caller goes
 * on to load and draw. */
int cli_view_handoff(char **argv);

#endif
