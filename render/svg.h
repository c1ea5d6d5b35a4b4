/* SPDX-License-Identifier: MIT */
/* render/svg: an interactive SVG flame graph (one <g> per frame with a
 * <title>, click to zoom, search), viewable in any browser. */
#ifndef HEARTH_RENDER_SVG_H
#define HEARTH_RENDER_SVG_H

#include <stdio.h>

#include "render/model.h"

struct rd_svg_opts {
	int width;         /* pixels, 0 = 1200 */
	int icicle;        /* 1: root on top */
	const char *title; /* NULL = "Flame graph" */
};

/* Writes the whole profile of @m (every frame at least 0.1 px wide, no
 * folding) as SVG to @out. Returns 0, -ENOMEM, or -EIO when a write
 * failed. */
int rd_svg_write(const struct rd_model *m, const struct rd_svg_opts *o,
		 FILE *out);

#endif /* HEARTH_RENDER_SVG_H */
