/* SPDX-License-Identifier: MIT */
/* hearth: subcommand dispatch. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd cmds[] = {
	{ "record", cmd_record, "sample the host (or some processes) now, without the daemon" },
	{ "view", cmd_view, "open a profile in the flame graph viewer" },
	{ "export", cmd_export, "write a profile as SVG, PNG, folded or pprof" },
	{ "snapshot", cmd_snapshot, "cut a profile out of hearthd's rolling store" },
	{ "status", cmd_status, "show what hearthd is doing and what it costs" },
	{ "mark", cmd_mark, "stamp a named moment (a deploy) on hearthd's timeline" },
	{ "marks", cmd_marks, "list the marks" },
	{ "diff", cmd_diff, "compare two profiles, or before and after a mark" },
};

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

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("hearth %s\n", HEARTH_VERSION);
		return 0;
	}
	if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
		if (argc > 2) {
			char *help_argv[] = { argv[2], "--help", NULL };
			for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
				if (!strcmp(cmds[i].name, argv[2]))
					return cmds[i].fn(2, help_argv);
		}
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmds[i].name, name))
			return cmds[i].fn(argc - 1, argv + 1);
	cli_error("'%s' is not a hearth command; 'hearth help' lists them.", name);
	return 2;
}
