/* SPDX-License-Identifier: MIT */
/*
 * render/model_sums: the step of rd_model_new() that lists a profile's
 * functions and adds up what the viewer shows of them, in one walk over
 * the tree shared by two threads.
 */
#ifndef HEARTH_RENDER_MODEL_SUMS_H
#define HEARTH_RENDER_MODEL_SUMS_H

#include "render/model.h"

/* Lists the functions of @m (one per distinct name; m->p and m->tree
 * set, the tree built), adds up each one's self, total (counted once
 * through recursion), node count and answerable share, and the class
 * and language sums, sets the tree's frame-to-function map and children
 * lists (rd_tree_list_kids), and writes the answer, notice and cards
 * (rd_answer_write). A tree of RD_MODEL_SPLIT_MIN nodes or more is
 * shared with a second thread from the start. Returns 0 or -ENOMEM
 * (then @m is incomplete: free it). */
int rd_model_sum_up(struct rd_model *m);

/* Trees from this many nodes on are summed on two threads. */
#define RD_MODEL_SPLIT_MIN 65536u

#endif /* HEARTH_RENDER_MODEL_SUMS_H */
