/* SPDX-License-Identifier: MIT */
/* PNG export: the viewer's first frame drawn off-screen. */
#include <errno.h>
#include <stdio.h>

#include "render/sdl.h"
#include "render/ui.h"

/* Height that shows every row of the full view under the window chrome. */
static int fit_height(struct rd_model *m, int w)
{
	struct rd_canvas *c;
	struct rd_ui ui;
	struct rd_text t;
	char err[256];
	int h = 1000, row;

	c = rd_canvas_new(16, 16, 1, err, sizeof(err));
	if (!c)
		return h;
	t = rd_canvas_text(c);
	if (rd_ui_init(&ui, m, &t) == 0) {
		/* Icicle: rows grow down from the top, all laid out. */
		ui.icicle = 1;
		if (rd_ui_layout(&ui, w, 100000, 1) == 0) {
			row = t.line_h[RD_FONT_NORMAL] + 5;
			h = ui.graph.y + ((int)ui.boxes.max_depth + 1) * row + 8;
		}
		rd_ui_release(&ui);
	}
	rd_canvas_free(c);
	if (h < 400)
		h = 400;
	return h > 8192 ? 8192 : h;
}

int rd_png_export(struct rd_model *m, FILE *f, int w, int h,
		  int icicle, char *err, size_t errlen)
{
	struct rd_canvas *c;
	struct rd_ui ui;
	struct rd_text t;
	int rc = -EIO;

	if (h <= 0)
		h = fit_height(m, w);
	if (!(c = rd_canvas_new(w, h, 1, err, errlen)))
		return -EIO;
	t = rd_canvas_text(c);
	if (rd_ui_init(&ui, m, &t) < 0) {
		snprintf(err, errlen, "out of memory");
		rd_canvas_free(c);
		return -ENOMEM;
	}
	ui.icicle = icicle;
	if (rd_ui_layout(&ui, w, h, 1) < 0) {
		snprintf(err, errlen, "out of memory while drawing");
		rc = -ENOMEM;
	} else if (rd_canvas_draw(c, &ui.list) < 0 ||
		   rd_canvas_save_png(c, f) < 0) {
		snprintf(err, errlen, "SDL could not draw or encode the PNG");
	} else {
		rc = 0;
	}
	rd_ui_release(&ui);
	rd_canvas_free(c);
	return rc;
}
