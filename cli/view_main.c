/* SPDX-License-Identifier: MIT */
/* hearth-view: the whole command plus what draws with SDL, which hearth
 * execs for view, export --png and diff --view (cli/viewer.h). */
#include "cli/cli.h"
#include "cli/viewer.h"

static const struct cli_viewer window = {
	.view = cmd_view,
	.png = cli_export_png,
	.diff_window = cli_view_diff_window,
};

int main(int argc, char **argv)
{
	return cli_main(argc, argv, &window);
}
