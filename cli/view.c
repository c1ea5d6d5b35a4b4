/* SPDX-License-Identifier: MIT */
/* hearth view: placeholder until its part lands. */
#include "cli/cli.h"

int cmd_view(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("'view' is not built yet.");
	return 1;
}
