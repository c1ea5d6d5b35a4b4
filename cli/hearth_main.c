/* SPDX-License-Identifier: MIT */
/* hearth: the command, linked without SDL. What draws (view, export
 * --png, diff --view) is handed over to hearth-view (cli/viewer_exec.c). */
#include "cli/cli.h"
#include "cli/viewer.h"

static int png(char **argv, const struct cli_png_args *a)
{
	(void)a; /* hearth-view parses the same command line again */
	return cli_exec_viewer(argv);
}

static const struct cli_viewer launch = {
	.view = cli_view_launch,
	.png = png,
	.handoff = cli_exec_viewer,
};

int main(int argc, char **argv)
{
	return cli_main(argc, argv, &launch);
}
