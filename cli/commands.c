/* SPDX-License-Identifier: MIT */
/* hearth and hearth-view: the subcommand table and its dispatch. Each
 * binary's main() (cli/hearth_main.c, cli/view_main.c) runs it with the
 * viewer it has (cli/viewer.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/viewer.h"

/* A subcommand: @fn, or @vfn for those that may draw (given the viewer). */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	int (*vfn)(int argc, char **argv, const struct cli_viewer *v);
	const char *summary;
};

static int view(int argc, char **argv, const struct cli_viewer *v)
{
	return v->view(argc, argv);
}

static const struct cmd cmds[] = {
	{ "record", cmd_record, NULL, "sample the host (or some processes) now, without the daemon" },
	{ "view", NULL, view, "open a profile in the flame graph viewer" },
	{ "export", NULL, cmd_export, "write a profile as SVG, PNG, folded or pprof" },
	{ "snapshot", cmd_snapshot, NULL, "cut a profile out of hearthd's rolling store" },
	{ "status", cmd_status, NULL, "show what hearthd is doing and what it costs" },
	{ "mark", cmd_mark, NULL, "stamp a named moment (a deploy) on hearthd's timeline" },
	{ "marks", cmd_marks, NULL, "list the marks" },
	{ "diff", NULL, cmd_diff, "compare two profiles, or before and after a mark" },
};

static const struct cmd *find(const char *name)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static int run(const struct cmd *c, int argc, char **argv,
	       const struct cli_viewer *v)
{
	return c->fn ? c->fn(argc, argv) : c->vfn(argc, argv, v);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("hearth: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: hearth [--version] <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out, "\n'hearth <command> --help' describes a command's options.\n");
}

int cli_main(int argc, char **argv, const struct cli_viewer *v)
{
	const char *name = argc > 1 ? argv[1] : NULL;
	const struct cmd *c;

	if (!name) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("hearth %s\n", HEARTH_VERSION);
		return 0;
	}
	if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
		if (argc > 2 && (c = find(argv[2]))) {
			char *help_argv[] = { argv[2], "--help", NULL };
			return run(c, 2, help_argv, v);
		}
		usage(stdout);
		return 0;
	}
	if ((c = find(name)))
		return run(c, argc - 1, argv + 1, v);
	cli_error("'%s' is not a hearth command; 'hearth help' lists them.", name);
	return 2;
}
