/* SPDX-License-Identifier: MIT */
/* hearth export --png: a picture of the viewer's window, drawn with SDL.
 * Linked into hearth-view only (cli/viewer.h). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/output.h"
#include "cli/viewer.h"
#include "profile/load.h"
#include "render/model.h"
#include "render/sdl.h"

int cli_export_png(char **argv, const struct cli_png_args *a)
{
	struct prof_profile *p = NULL;
	struct rd_model *m;
	struct cli_out o;
	char err[512];
	size_t n;
	int rc = 0;

	(void)argv;
	if (!(p = cli_load(a->in, a->load, 0)))
		return 1;
	if (!(m = rd_model_new(p))) {
		cli_error("out of memory while reading %s.", a->in);
		prof_free(p);
		return 1;
	}
	if (cli_out_open(&o, a->out) < 0) {
		rc = 1;
	} else if (rd_png_export(m, o.f, a->width ? a->width : 1920, a->height,
				 a->icicle, err, sizeof(err)) < 0) {
		cli_out_abort(&o);
		n = strlen(err);
		cli_error("%s%s", err, n && err[n - 1] == '.' ? "" : ".");
		rc = 1;
	} else if (cli_out_close(&o, 0) < 0) {
		rc = 1;
	}
	rd_model_free(m);
	prof_free(p);
	return rc;
}
