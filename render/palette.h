/* SPDX-License-Identifier: MIT */
/* render/palette: colours by ownership class (SPEC), by value, and the
 * window's chrome. Pure functions of their arguments. */
#ifndef HEARTH_RENDER_PALETTE_H
#define HEARTH_RENDER_PALETTE_H

#include <stdint.h>

#include "profile/profile.h"

#define RD_COL_BG 0xFAFAF7u       /* window background */
#define RD_COL_TEXT 0x1F2328u     /* main text */
#define RD_COL_DIM 0x6A6F76u      /* secondary text */
#define RD_COL_LINE 0xD5D7DAu     /* separators, outlines */
#define RD_COL_PANEL 0xEEEFF1u    /* toolbar buttons, cards */
#define RD_COL_ACCENT 0x0969DAu   /* links, focus rings */
#define RD_COL_TIP_BG 0xFFFFF0u   /* tooltip */
#define RD_COL_MATCH 0xD63384u    /* outline of search matches */
#define RD_COL_ON 0xCFE2FFu       /* a pressed toggle */

/* The base colour of @cls (PROF_CLASS_UNKNOWN and out-of-range values get
 * the neutral colour). */
uint32_t rd_class_color(unsigned cls);

/* The colour of a frame named @name in class @cls: the class colour with a
 * small hue and lightness variation from a hash of the name, so neighbours
 * differ and the same function keeps its colour everywhere. */
uint32_t rd_frame_color(unsigned cls, const char *name);

/* "By value": yellow for a small share of the view to red for all of it;
 * @share in [0, 1]. */
uint32_t rd_value_color(double share);

/* Mixes @c towards @to by @t in [0, 1] (0 = c, 1 = to). */
uint32_t rd_mix(uint32_t c, uint32_t to, double t);

/* A human name for @cls: "your code", "libraries", "runtime", "system",
 * "waiting", "unclassified". */
const char *rd_class_name(unsigned cls);

/* A human name for @lang: "C", "C++", "Rust", "Go", "asm", "JIT", "Python",
 * "unknown". */
const char *rd_lang_name(unsigned lang);

#endif /* HEARTH_RENDER_PALETTE_H */
