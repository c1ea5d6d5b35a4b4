/* SPDX-License-Identifier: MIT */
/* SVG export. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "render/flame.h"
#include "render/format.h"
#include "render/palette.h"
#include "render/svg.h"
#include "render/svg_script.h"

#define ROW_H 17
#define TOP 70

/* Length of the valid UTF-8 sequence at @s (1 to 4), or 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
	int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if ((n == 3 && s[0] == 0xE0 && s[1] < 0xA0) ||   /* overlong */
	    (n == 3 && s[0] == 0xED && s[1] >= 0xA0) ||  /* surrogates */
	    (n == 4 && s[0] == 0xF0 && s[1] < 0x90) ||   /* overlong */
	    (n == 4 && s[0] == 0xF4 && s[1] >= 0x90))    /* > U+10FFFF */
		return 0;
	return n;
}

/* Writes @s as XML text: markup escaped, control characters and invalid
 * UTF-8 replaced, so any frame name keeps the document well-formed. */
static void esc(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n = utf8_len(p);

		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if (n == 0 || (*p < 0x20 && *p != '\t'))
				fputs("\xef\xbf\xbd", out); /* U+FFFD */
			else
				fwrite(p, 1, (size_t)n, out);
		}
		p += n ? n : 1;
	}
}

static int measure7(void *ctx, int font, const char *s, size_t n)
{
	int w = 0;

	(void)ctx;
	(void)font;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			w += 7;
	return w;
}

static void frame_g(const struct rd_model *m, const struct rd_box *b,
		    FILE *out)
{
	const struct prof_node *n = prof_node_get(m->p, b->node);
	const struct prof_frame *f = prof_frame_get(m->p, n->frame);
	const char *name = b->node ? prof_str(m->p, f->name) : "all";
	enum prof_unit u = prof_meta_const(m->p)->unit;
	struct rd_text t = { .measure = measure7 };
	unsigned cls = b->node ? rd_frame_class(f) : 0;
	char v[32], p[16], sv[32], sp[16], label[512];
	double tot = m->total ? (double)m->total : 1;

	fprintf(out, "<g class=\"f\"%s data-x=\"%.3f\" data-w=\"%.3f\" data-d=\"%u\" data-n=\"",
		b->node ? "" : " id=\"all\"", b->fx + 10, b->fw, b->depth);
	esc(out, name);
	fputs("\"><title>", out);
	esc(out, name);
	snprintf(label, sizeof(label), " (total %s, %s; self %s, %s",
		 rd_fmt_value(v, sizeof(v), n->total, u),
		 rd_fmt_pct(p, sizeof(p), 100.0 * (double)n->total / tot),
		 rd_fmt_value(sv, sizeof(sv), n->self, u),
		 rd_fmt_pct(sp, sizeof(sp), 100.0 * (double)n->self / tot));
	esc(out, label); /* "<0.1%" needs escaping too */
	if (f && f->file && b->node &&
	    rd_lines_text(&m->lines, m->p, b->node, 1, label, sizeof(label))[0]) {
		fputs("; ", out); /* the lines merged into the box, by share */
		esc(out, label);
	} else if (f && f->file && b->node) {
		fputs("; ", out);
		esc(out, prof_str(m->p, f->file));
		if (f->line)
			fprintf(out, ":%u", f->line);
	}
	if (b->node)
		fprintf(out, "; %s", rd_class_name(cls));
	fprintf(out, ")</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"#%06X\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		b->fx + 10, b->y, b->fw, ROW_H - 1,
		b->node ? rd_frame_color(cls, name) : 0xE4E1DA, b->fx + 13,
		b->y + 12);
	if (rd_text_fit(&t, 0, name, (int)b->fw - 6, 0, label, sizeof(label)))
		esc(out, label);
	fputs("</text></g>\n", out);
}

int rd_svg_write(const struct rd_model *m, const struct rd_svg_opts *o,
		 FILE *out)
{
	int w = o->width > 0 ? o->width : 1200, h, rows;
	struct rd_flame_opts fo = { .area = { 10, 0, w - 20, 1 << 20 },
				    .row_h = ROW_H, .icicle = 1, .unfold = 1,
				    .min_px = 0.1 };
	struct rd_boxes b = { 0 };
	int rc;

	/* First pass: how deep it goes. */
	if ((rc = rd_flame_layout(&m->tree, &fo, &b)) < 0)
		goto out;
	rows = (int)b.max_depth + 1;
	h = TOP + rows * ROW_H + 30;
	fo.area = (struct rd_rect){ 10, TOP, w - 20, rows * ROW_H };
	fo.icicle = o->icicle;
	if ((rc = rd_flame_layout(&m->tree, &fo, &b)) < 0)
		goto out;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n", w, h, w, h);
	fprintf(out, "<style>text{font-family:'DejaVu Sans',Verdana,sans-serif;font-size:12px;fill:#1f2328}"
		"g.f{cursor:pointer}g.f text{pointer-events:none}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		".b{fill:#0969da;cursor:pointer}</style>\n");
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		rd_svg_script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fafaf7\"/>\n", w, h);
	fputs("<text x=\"10\" y=\"24\" style=\"font-size:17px;font-weight:bold\">", out);
	esc(out, o->title ? o->title : "Flame graph");
	fputs("</text>\n<text x=\"10\" y=\"46\">", out);
	esc(out, m->answer);
	fprintf(out, "</text>\n<text id=\"unzoom\" class=\"b\" x=\"10\" y=\"64\" style=\"display:none\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"b\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"64\" text-anchor=\"end\"></text>\n",
		w - 10, w - 10);
	for (size_t i = 0; i < b.n; i++)
		frame_g(m, &b.v[i], out);
	fputs("</svg>\n", out);
	rc = ferror(out) ? -EIO : 0;
out:
	rd_boxes_free(&b);
	return rc;
}
