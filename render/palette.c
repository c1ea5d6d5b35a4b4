/* SPDX-License-Identifier: MIT */
/* Colours by ownership class, by value, and colour arithmetic. */
#include <math.h>

#include "render/palette.h"

struct hsl {
	double h, s, l;
};

/* Orange, blue, violet, grey, pale grey; unclassified frames are a warm
 * neutral sand so an unsymbolized profile still reads well. */
static const struct hsl class_hsl[PROF_CLASS_COUNT] = {
	[PROF_CLASS_UNKNOWN] = { 40, 0.28, 0.72 },
	[PROF_CLASS_YOURS] = { 27, 0.90, 0.60 },
	[PROF_CLASS_LIBRARY] = { 210, 0.70, 0.64 },
	[PROF_CLASS_RUNTIME] = { 272, 0.52, 0.68 },
	[PROF_CLASS_SYSTEM] = { 215, 0.07, 0.62 },
	[PROF_CLASS_WAITING] = { 215, 0.06, 0.84 },
};

static double hue2rgb(double p, double q, double t)
{
	if (t < 0)
		t += 1;
	if (t > 1)
		t -= 1;
	if (t < 1.0 / 6)
		return p + (q - p) * 6 * t;
	if (t < 0.5)
		return q;
	if (t < 2.0 / 3)
		return p + (q - p) * (2.0 / 3 - t) * 6;
	return p;
}

static uint32_t hsl_rgb(struct hsl c)
{
	double h = fmod(c.h + 360.0, 360.0) / 360.0;
	double q = c.l < 0.5 ? c.l * (1 + c.s) : c.l + c.s - c.l * c.s;
	double p = 2 * c.l - q;
	unsigned r = (unsigned)lround(hue2rgb(p, q, h + 1.0 / 3) * 255);
	unsigned g = (unsigned)lround(hue2rgb(p, q, h) * 255);
	unsigned b = (unsigned)lround(hue2rgb(p, q, h - 1.0 / 3) * 255);

	return r << 16 | g << 8 | b;
}

uint32_t rd_class_color(unsigned cls)
{
	if (cls >= PROF_CLASS_COUNT)
		cls = PROF_CLASS_UNKNOWN;
	return hsl_rgb(class_hsl[cls]);
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

uint32_t rd_frame_color(unsigned cls, const char *name)
{
	uint32_t h = name_hash(name);
	struct hsl c;
	double dh = ((double)(h & 0xff) / 255.0 - 0.5) * 20.0;
	double dl = ((double)((h >> 8) & 0xff) / 255.0 - 0.5) * 0.10;

	if (cls >= PROF_CLASS_COUNT)
		cls = PROF_CLASS_UNKNOWN;
	c = class_hsl[cls];
	c.h += dh;
	c.l += cls == PROF_CLASS_WAITING ? dl / 3 : dl;
	return hsl_rgb(c);
}

uint32_t rd_value_color(double share)
{
	struct hsl c = { 55, 0.95, 0.62 };

	if (share < 0)
		share = 0;
	if (share > 1)
		share = 1;
	c.h = 55 * (1 - share);
	c.l = 0.62 - 0.08 * share;
	return hsl_rgb(c);
}

uint32_t rd_mix(uint32_t c, uint32_t to, double t)
{
	uint32_t out = 0;

	for (int sh = 0; sh <= 16; sh += 8) {
		double a = (double)((c >> sh) & 0xff), b = (double)((to >> sh) & 0xff);

		out |= (uint32_t)lround(a + (b - a) * t) << sh;
	}
	return out;
}

const char *rd_class_name(unsigned cls)
{
	static const char *const names[PROF_CLASS_COUNT] = {
		"unclassified", "your code", "libraries", "runtime", "system",
		"waiting",
	};

	return cls < PROF_CLASS_COUNT ? names[cls] : names[0];
}

const char *rd_lang_name(unsigned lang)
{
	static const char *const names[PROF_LANG_COUNT] = {
		"unknown", "C", "C++", "Rust", "Go", "asm", "JIT", "Python",
	};

	return lang < PROF_LANG_COUNT ? names[lang] : names[0];
}
