/* SPDX-License-Identifier: MIT */
/* hearth snapshot: placeholder until its part lands. */
#include "cli/cli.h"

int cmd_snapshot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("'snapshot' is not built yet.");
	return 1;
}
