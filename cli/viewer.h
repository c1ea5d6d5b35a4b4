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

struct prof_profile;
struct rd_window_opts;

/* What of the command draws with SDL. hearth-view has the window
 * (cli/view_main.c: cli/view.c, cli/export_png.c); hearth hands the same
 * command line over to hearth-view (cli/hearth_main.c:
 * cli/viewer_exec.c). Exactly one of handoff and diff_window is set. */
struct cli_viewer {
	/* `hearth view`: returns the exit status. */
	int (*view)(int argc, char **argv);
	/* `hearth export --png` (@argv the subcommand's arguments): writes
	 * the PNG, or hands over. Returns the exit status. */
	int (*png)(char **argv, const struct cli_png_args *a);
	/* `hearth diff --view`, before anything is loaded (so the inputs
	 * are read, or asked for, once): replaces this process with
	 * hearth-view running the same command line; returns only when it
	 * could not, after saying why: 1. */
	int (*handoff)(char **argv);
	/* Draws the diff of @before and @after (both taken) in a window
	 * opened as @wo says. Returns the exit status, after saying what
	 * went wrong. */
	int (*diff_window)(struct prof_profile *before, struct prof_profile *after,
			   const struct rd_window_opts *wo);
};

/* hearth-view's: `hearth view` (cli/view.c). */
int cmd_view(int argc, char **argv);

/* hearth-view's: the diff window of `view --diff` and `diff --view`
 * (cli/view.c), as cli_viewer.diff_window says. */
int cli_view_diff_window(struct prof_profile *before, struct prof_profile *after,
			 const struct rd_window_opts *wo);

/* hearth-view's: writes the PNG (cli/export_png.c), as cli_viewer.png
 * says. */
int cli_export_png(char **argv, const struct cli_png_args *a);

/* hearth's: `hearth view` answered by hearth for --help, else handed to
 * hearth-view (cli/viewer_exec.c). Returns the exit status. */
int cli_view_launch(int argc, char **argv);

/* Replaces this process with hearth-view running the command line this
 * process was started with (@argv, the subcommand's arguments with argv[0]
 * its name, when that cannot be read). Returns only when it could not
 * start the viewer, after saying why: the exit status, 1. */
int cli_exec_viewer(char **argv);

#endif
