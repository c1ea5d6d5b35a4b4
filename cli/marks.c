/* SPDX-License-Identifier: MIT */
/* hearth marks: placeholder until its part lands. */
#include "cli/cli.h"

int cmd_marks(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("'marks' is not built yet.");
	return 1;
}
