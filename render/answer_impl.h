/* SPDX-License-Identifier: MIT */
/* What the answer's parts share (render/answer*.c); not a public
 * interface. */
#ifndef HEARTH_RENDER_ANSWER_IMPL_H
#define HEARTH_RENDER_ANSWER_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "render/model.h"

/* The function that names where the wait ending at node @i (a preorder
 * index) waited: the site of profile/waits.h, found up the node's
 * ancestors (from under its waker's frames, when it has them); the
 * node's own function when it is no kernel frame. */
uint32_t rd_answer_site(const struct rd_model *m, uint32_t i);

/* 1 when node @i's self time was spent waiting: every leaf of a profile
 * of waits, the waiting-class leaves of a profile of elapsed time. */
int rd_answer_waiting_leaf(const struct rd_model *m, uint32_t i);

/* The capture's length in words ("these 30 seconds", "this profile"
 * when unknown) into @buf. */
void rd_answer_span(const struct prof_meta *meta, char *buf, size_t n);

/* Writes m->answer for a profile of threads: how many were mostly
 * waiting and mostly running, and where (@cand: rd_answer_frame_bits()
 * per function). Returns 0, or -1 when the profile has no thread rows
 * or memory ran out (the caller writes the usual sentence). */
int rd_answer_threads(struct rd_model *m, const uint8_t *cand);

#endif
