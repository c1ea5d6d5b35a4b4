/* SPDX-License-Identifier: MIT */
/* hearth export: placeholder until its part lands. */
#include "cli/cli.h"

int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("'export' is not built yet.");
	return 1;
}
