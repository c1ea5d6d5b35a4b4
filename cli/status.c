/* SPDX-License-Identifier: MIT */
/* hearth status: placeholder until its part lands. */
#include "cli/cli.h"

int cmd_status(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("'status' is not built yet.");
	return 1;
}
