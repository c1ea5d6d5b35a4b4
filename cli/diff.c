/* SPDX-License-Identifier: MIT */
/* hearth diff: placeholder until its part lands. */
#include "cli/cli.h"

int cmd_diff(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("'diff' is not built yet.");
	return 1;
}
