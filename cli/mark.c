/* SPDX-License-Identifier: MIT */
/* hearth mark: placeholder until its part lands. */
#include "cli/cli.h"

int cmd_mark(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("'mark' is not built yet.");
	return 1;
}
