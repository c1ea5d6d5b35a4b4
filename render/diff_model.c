/* SPDX-License-Identifier: MIT */
/* What the diff union says (render/diff_view.h): each frame's change as a
 * colour, the noise filter, the legend, the tooltip lines and the answer.
 * Its panes are render/diff_pane.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_view.h"
#include "render/format.h"
#include "render/palette.h"

/* neutral, worse (grew), better (shrank) per palette */
static const uint32_t pal[RD_DIFF_PALETTES][3] = {
	[RD_DIFF_RED_BLUE] = { 0xE6E2DA, 0xE0301E, 0x1F6FD1 },
	[RD_DIFF_COLORBLIND] = { 0xBEBEBE, 0xCA0020, 0x0571B0 },
};

struct rd_diff_opts rd_diff_opts_default(void)
{
	return (struct rd_diff_opts){ .palette = RD_DIFF_RED_BLUE,
				      .noise_filter = 1, .threshold_pp = 0.1 };
}

/* 1 when the change of a frame present on both sides is within noise. */
static int is_noise(uint64_t vb, uint64_t tb, uint64_t va, uint64_t ta,
		    enum prof_unit unit, const struct rd_diff_opts *o)
{
	struct prof_signif s;
	double pb, pa;

	if (unit == PROF_UNIT_SAMPLES) {
		if (prof_signif_test(vb, tb, va, ta, &s) < 0 || !s.valid)
			return 0;
		return !s.significant;
	}
	pb = tb ? 100.0 * (double)vb / (double)tb : 0;
	pa = ta ? 100.0 * (double)va / (double)ta : 0;
	return fabs(pa - pb) < o->threshold_pp;
}

struct rd_diff_shade rd_diff_shade(uint64_t vb, uint64_t tb, uint64_t va,
				   uint64_t ta, enum prof_unit unit,
				   const struct rd_diff_opts *o)
{
	struct rd_diff_shade s = { 0 };
	struct prof_delta d;

	if (o->absolute)
		d = (tb == 0 || ta == 0) ? (struct prof_delta){ 0 } :
		    prof_delta_abs(vb, va);
	else
		d = prof_delta_share(vb, tb, va, ta);
	s.kind = d.kind;
	s.delta = d.delta;
	s.shown = d.delta;
	if (d.kind == PROF_DELTA_CHANGED && o->noise_filter &&
	    is_noise(vb, tb, va, ta, unit, o)) {
		s.noise = 1;
		s.shown = 0;
	}
	return s;
}

struct rd_diff_shade rd_diff_node_shade(const struct prof_diff *d,
					uint32_t node,
					const struct rd_diff_opts *o)
{
	struct prof_diff_values v = prof_diff_values(d, node);
	const struct prof_profile *t = prof_diff_tree_const(d);

	return rd_diff_shade(v.before_total, prof_diff_total_before(d),
			     v.after_total, prof_diff_total_after(d),
			     prof_meta_const(t)->unit, o);
}

uint32_t rd_diff_color(double delta, int palette)
{
	const uint32_t *c = pal[palette >= 0 && palette < RD_DIFF_PALETTES ?
				palette : 0];
	double t = fabs(delta) / 100.0;

	if (t > 1)
		t = 1;
	if (delta == 0 || t != t)
		return c[0];
	return rd_mix(c[0], 0 < delta ? c[1] : c[2], t);
}

int rd_diff_legend(struct rd_list *l, const struct rd_text *t,
		   struct rd_rect r, int palette)
{
	static const char *left = "\xe2\x88\x92" "100% shrank", *right = "grew +100%";
	int lw = t->measure(t->ctx, RD_FONT_NORMAL, left, strlen(left));
	int rw = t->measure(t->ctx, RD_FONT_NORMAL, right, strlen(right));
	int gap = 6, gw = r.w - lw - rw - 2 * gap, steps = 21, ty;

	if (gw < 40)
		return 0;
	ty = r.y + (r.h - t->line_h[RD_FONT_NORMAL]) / 2;
	rd_list_text(l, r.x, ty, lw, RD_FONT_NORMAL, RD_COL_TEXT, left, strlen(left));
	for (int i = 0; i < steps; i++) {
		int x0 = r.x + lw + gap + gw * i / steps;
		int x1 = r.x + lw + gap + gw * (i + 1) / steps;
		double d = -100.0 + 200.0 * i / (steps - 1);

		rd_list_rect(l, x0, r.y + 2, x1 - x0, r.h - 4, rd_diff_color(d, palette));
	}
	rd_list_outline(l, r.x + lw + gap, r.y + 2, gw, r.h - 4, RD_COL_LINE);
	rd_list_text(l, r.x + lw + gw + 2 * gap, ty, rw, RD_FONT_NORMAL, RD_COL_TEXT,
		     right, strlen(right));
	return r.w;
}

static const char *word(double x)
{
	return x < 0 ? "\xe2\x88\x92" : "+";
}

int rd_diff_tip_values(const struct prof_diff_values *v, uint64_t tb,
		       uint64_t ta, enum prof_unit u,
		       const struct rd_diff_opts *o, char (*lines)[256], int max)
{
	struct rd_diff_shade tot = rd_diff_shade(v->before_total, tb, v->after_total,
						 ta, u, o);
	struct prof_delta self = prof_delta_share(v->before_self, tb, v->after_self, ta);
	struct prof_delta share = prof_delta_share(v->before_total, tb, v->after_total, ta);
	struct prof_signif s;
	char a[32], b[32], pa[16], pb[16];
	int k = 0;

	if (k < max)
		snprintf(lines[k++], 256, "Before: %s (%s)  After: %s (%s)",
			 rd_fmt_value(a, sizeof(a), v->before_total, u),
			 rd_fmt_pct(pa, sizeof(pa), share.p_before),
			 rd_fmt_value(b, sizeof(b), v->after_total, u),
			 rd_fmt_pct(pb, sizeof(pb), share.p_after));
	if (k < max)
		snprintf(lines[k++], 256, "%s total: %s%.2f%%%s  self: %s%.2f%%",
			 o->absolute ? "\xce\x94 value" : "\xce\x94 share", word(tot.delta),
			 fabs(tot.delta), tot.kind == PROF_DELTA_ADDED ? " (only after)" :
			 tot.kind == PROF_DELTA_REMOVED ? " (only before)" : "",
			 word(self.delta), fabs(self.delta));
	if (k < max && u == PROF_UNIT_SAMPLES &&
	    prof_signif_test(v->before_total, tb, v->after_total, ta, &s) == 0 && s.valid)
		snprintf(lines[k++], 256, "Change %s%.2f pp, 95%% CI [%.2f, %.2f]: %s",
			 word(s.change), fabs(s.change), s.ci_low, s.ci_high,
			 s.significant ? "significant" : "within noise");
	else if (k < max && tot.noise)
		snprintf(lines[k++], 256, "Within %.2f points: drawn as unchanged",
			 o->threshold_pp);
	return k;
}

int rd_diff_tip(const struct prof_diff *d, uint32_t node,
		const struct rd_diff_opts *o, char (*lines)[256], int max)
{
	struct prof_diff_values v = prof_diff_values(d, node);

	return rd_diff_tip_values(&v, prof_diff_total_before(d),
				  prof_diff_total_after(d),
				  prof_meta_const(prof_diff_tree_const(d))->unit, o,
				  lines, max);
}

static const char *what_of(const struct prof_profile *t)
{
	const struct prof_meta *m = prof_meta_const(t);

	if (m->off_cpu)
		return "waiting time";
	switch (m->unit) {
	case PROF_UNIT_BYTES: return "memory";
	case PROF_UNIT_NANOSECONDS: return "time";
	default: return "CPU time";
	}
}

int rd_diff_answer(const struct prof_diff *d, char *buf, size_t n)
{
	const struct prof_profile *t = prof_diff_tree_const(d);
	struct prof_diff_fn *fn = NULL;
	size_t nfn = 0, i;
	char pb[16], pa[16];

	if (prof_diff_rank(d, PROF_RANK_TOTAL, &fn, &nfn) < 0)
		return -ENOMEM;
	/* What grew most (the regression one looks for); what shrank most
	 * when nothing grew. The ranking is by the size of the change. */
	for (i = 0; i < nfn && !(0 < fn[i].change); i++)
		;
	if (i == nfn)
		i = 0;
	if (!prof_diff_total_before(d) || !prof_diff_total_after(d))
		snprintf(buf, n, "One of the two profiles is empty; there is nothing to compare.");
	else if (!nfn || fn[i].change == 0)
		snprintf(buf, n, "No function's share of %s changed.", what_of(t));
	else {
		rd_fmt_pct(pb, sizeof(pb), fn[i].total_delta.p_before);
		rd_fmt_pct(pa, sizeof(pa), fn[i].total_delta.p_after);
		if (!strcmp(pa, pb)) { /* a small change: show the decimals */
			snprintf(pb, sizeof(pb), "%.2f%%", fn[i].total_delta.p_before);
			snprintf(pa, sizeof(pa), "%.2f%%", fn[i].total_delta.p_after);
		}
		snprintf(buf, n, "%s %s from %s to %s of %s.", prof_str(t, fn[i].name),
			 fn[i].change > 0 ? "grew" : "shrank", pb, pa, what_of(t));
	}
	free(fn);
	return 0;
}
