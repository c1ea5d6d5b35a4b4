/* SPDX-License-Identifier: MIT */
/*
 * render/diff_view: how a diff of two profiles is drawn. Pure code on top
 * of profile/diff.h (which does the arithmetic): the change of each frame
 * turned into a colour, the noise filter, the legend, the tooltip lines
 * and the answer sentence.
 *
 * Colour: Δ (from prof_delta_share in relative mode, the default; from the
 * raw values in absolute mode) mixes a neutral colour towards "worse" (red)
 * when Δ > 0 and towards "better" (blue) when Δ < 0, by |Δ|/100. A frame
 * only after is full red, only before full blue, and either total zero is
 * neutral. With the noise filter on, a change that is within sampling noise
 * is drawn neutral: for sample counts, when the two-proportion test
 * (prof_signif_test) does not find it significant at 95%; for other units,
 * when its share moved by less than a threshold (0.1 points by default).
 */
#ifndef HEARTH_RENDER_DIFF_VIEW_H
#define HEARTH_RENDER_DIFF_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "profile/diff.h"
#include "profile/profile.h"
#include "render/draw.h"

enum rd_diff_palette {
	RD_DIFF_RED_BLUE = 0,   /* red grew, blue shrank, warm neutral */
	RD_DIFF_COLORBLIND = 1, /* blue / grey / red, safe for red-green */
	RD_DIFF_PALETTES
};

struct rd_diff_opts {
	int palette;          /* enum rd_diff_palette */
	int absolute;         /* 1: compare raw values, not shares */
	int noise_filter;     /* 1: changes within noise stay neutral */
	double threshold_pp;  /* non-sample units: smallest change of share,
			       * in points, that is coloured (0.1) */
};

/* The defaults: red/blue, relative, noise filter on, 0.1 points. */
struct rd_diff_opts rd_diff_opts_default(void);

struct rd_diff_shade {
	enum prof_delta_kind kind; /* as prof_delta_share() says */
	double delta;              /* the Δ computed, −100..100, 2 decimals */
	double shown;              /* the Δ the colour uses (0 for noise) */
	int noise;                 /* 1 when filtered as noise */
};

/* The shade of a frame with @vb of @tb before and @va of @ta after, in
 * @unit, under @o. */
struct rd_diff_shade rd_diff_shade(uint64_t vb, uint64_t tb, uint64_t va,
				   uint64_t ta, enum prof_unit unit,
				   const struct rd_diff_opts *o);

/* The shade of node @node's total in diff @d (the unit is the diff
 * tree's). */
struct rd_diff_shade rd_diff_node_shade(const struct prof_diff *d,
					uint32_t node,
					const struct rd_diff_opts *o);

/* The colour of @delta (−100..100) in @palette. */
uint32_t rd_diff_color(double delta, int palette);

/* Draws the legend, a gradient from −100% (shrank / only before) to +100%
 * (grew / only after) with its labels, into @r. Returns the width used. */
int rd_diff_legend(struct rd_list *l, const struct rd_text *t,
		   struct rd_rect r, int palette);

/* Writes the tooltip lines for node @node of @d into @lines (@max lines of
 * @len bytes): before, after, Δ of share of total and of self, and the
 * change with its 95% confidence interval (sample counts). Returns the
 * number of lines written. */
int rd_diff_tip(const struct prof_diff *d, uint32_t node,
		const struct rd_diff_opts *o, char (*lines)[256], int max);

/* The same lines for values @v of a frame in totals @tb / @ta, @unit. */
int rd_diff_tip_values(const struct prof_diff_values *v, uint64_t tb,
		       uint64_t ta, enum prof_unit unit,
		       const struct rd_diff_opts *o, char (*lines)[256], int max);

/* Writes the answer sentence of @d into @buf: what grew most (by points of
 * share), "hot_b grew from 30% to 46% of CPU time."; what shrank most when
 * nothing grew. Returns 0 or -ENOMEM. */
int rd_diff_answer(const struct prof_diff *d, char *buf, size_t n);

#endif /* HEARTH_RENDER_DIFF_VIEW_H */
