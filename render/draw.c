/* SPDX-License-Identifier: MIT */
/* The draw command list and text fitting. */
#include <stdlib.h>
#include <string.h>

#include "render/draw.h"

#define ELLIPSIS "\xe2\x80\xa6"
#define ELLIPSIS_LEN 3

void rd_list_clear(struct rd_list *l)
{
	l->n = 0;
	l->tlen = 0;
	l->oom = 0;
}

void rd_list_free(struct rd_list *l)
{
	free(l->cmds);
	free(l->text);
	memset(l, 0, sizeof(*l));
}

static struct rd_cmd *push(struct rd_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct rd_cmd *c = realloc(l->cmds, cap * sizeof(*c));

		if (!c) {
			l->oom = 1;
			return NULL;
		}
		l->cmds = c;
		l->cap = cap;
	}
	memset(&l->cmds[l->n], 0, sizeof(l->cmds[0]));
	return &l->cmds[l->n++];
}

void rd_list_rect(struct rd_list *l, int x, int y, int w, int h,
		  uint32_t color)
{
	struct rd_cmd *c;

	if (w <= 0 || h <= 0 || !(c = push(l)))
		return;
	c->kind = RD_CMD_RECT;
	c->x = x, c->y = y, c->w = w, c->h = h;
	c->color = color;
}

void rd_list_outline(struct rd_list *l, int x, int y, int w, int h,
		     uint32_t color)
{
	struct rd_cmd *c;

	if (w <= 0 || h <= 0 || !(c = push(l)))
		return;
	c->kind = RD_CMD_OUTLINE;
	c->x = x, c->y = y, c->w = w, c->h = h;
	c->color = color;
}

void rd_list_text(struct rd_list *l, int x, int y, int w, int font,
		  uint32_t color, const char *s, size_t n)
{
	struct rd_cmd *c;

	if (n == 0 || w <= 0)
		return;
	if (l->tlen + n + 1 > l->tcap) {
		size_t cap = l->tcap ? l->tcap * 2 : 4096;
		char *t;

		while (cap < l->tlen + n + 1)
			cap *= 2;
		t = realloc(l->text, cap);
		if (!t) {
			l->oom = 1;
			return;
		}
		l->text = t;
		l->tcap = cap;
	}
	if (!(c = push(l)))
		return;
	memcpy(l->text + l->tlen, s, n);
	l->text[l->tlen + n] = '\0';
	c->kind = RD_CMD_TEXT;
	c->font = (uint8_t)font;
	c->x = x, c->y = y, c->w = w;
	c->h = 0;
	c->color = color;
	c->text = (uint32_t)l->tlen;
	c->len = (uint32_t)n;
	l->tlen += n + 1;
}

static int is_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/* Width of the kept part plus the ellipsis, keeping @k bytes. */
static int fit_width(const struct rd_text *t, int font, const char *s,
		     size_t len, size_t k, int keep_end, char *tmp)
{
	if (keep_end) {
		memcpy(tmp, ELLIPSIS, ELLIPSIS_LEN);
		memcpy(tmp + ELLIPSIS_LEN, s + len - k, k);
	} else {
		memcpy(tmp, s, k);
		memcpy(tmp + k, ELLIPSIS, ELLIPSIS_LEN);
	}
	return t->measure(t->ctx, font, tmp, k + ELLIPSIS_LEN);
}

size_t rd_text_fit(const struct rd_text *t, int font, const char *s,
		   int maxw, int keep_end, char *out, size_t outsz)
{
	size_t len = strlen(s), lo = 0, hi, k;

	if (outsz < ELLIPSIS_LEN + 1 || maxw <= 0)
		return 0;
	if (len + 1 <= outsz && t->measure(t->ctx, font, s, len) <= maxw) {
		memcpy(out, s, len + 1);
		return len;
	}
	hi = len < outsz - ELLIPSIS_LEN - 1 ? len : outsz - ELLIPSIS_LEN - 1;
	if (fit_width(t, font, s, len, 0, keep_end, out) > maxw)
		return 0;
	/* Largest k in [lo, hi] that fits; widths grow with k. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (fit_width(t, font, s, len, mid, keep_end, out) <= maxw)
			lo = mid;
		else
			hi = mid - 1;
	}
	k = lo;
	/* Never split a UTF-8 sequence. */
	if (keep_end) {
		while (k > 0 && is_cont((unsigned char)s[len - k]))
			k--;
	} else {
		while (k > 0 && k < len && is_cont((unsigned char)s[k]))
			k--;
	}
	fit_width(t, font, s, len, k, keep_end, out);
	out[k + ELLIPSIS_LEN] = '\0';
	return k + ELLIPSIS_LEN;
}
