/* SPDX-License-Identifier: MIT */
/*
 * render/model: what the viewer knows about a profile beyond its tree.
 * Built once per profile (and again on search): one row per function with
 * self and total counted once through recursion, class and language shares,
 * the answer sentence, the hot-spot cards, and the search matches.
 * A function's frames at several lines or inline sites are one frame and
 * one box (render/lines.h), the lines kept in m->lines.
 * Pure code; the profile is borrowed and must outlive the model.
 */
#ifndef HEARTH_RENDER_MODEL_H
#define HEARTH_RENDER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "render/lines.h"
#include "render/tree.h"

struct rd_fn {
	uint32_t name;  /* string id of the function's name */
	uint32_t frame; /* the first frame seen with that name */
	uint64_t self;  /* value with the function as leaf */
	uint64_t total; /* value with the function on the stack, once */
	uint64_t own;   /* its answerable share: self plus the callees that
			 * are not candidates themselves (see rd_model_new) */
	uint32_t nodes; /* tree nodes showing it */
	uint8_t row;    /* 1 when it is a function (not a process/thread row) */
};

struct rd_card {
	uint32_t fn;
	double pct;  /* share of the whole shown on the card */
	char at[96]; /* the lines merged into its function ("mix.c:10-13"),
		      * or "" (render/lines.h) */
};

enum rd_sort {
	RD_SORT_TOTAL = 0,
	RD_SORT_SELF = 1,
	RD_SORT_NAME = 2,
};

struct rd_model {
	struct prof_profile *p; /* the profile drawn: the one given (borrowed),
				 * or `merged` */
	struct prof_profile *merged; /* owned: the one given with a
				      * function's lines merged (rd_lines_merge),
				      * or NULL when it had none to merge */
	struct rd_lines lines;  /* the lines merged into merged's nodes */
	struct rd_tree tree;    /* preorder; rd_tree_fn() is the function */
	uint64_t total;
	uint32_t nnodes;
	struct rd_fn *fns;
	uint32_t nfn;
	int yours;              /* 1 when your code holds a real share */
	uint64_t class_self[PROF_CLASS_COUNT];
	uint64_t lang_self[PROF_LANG_COUNT];
	char answer[512];       /* the answer sentence */
	char notice[512];       /* stripped binaries holding a real share, or "" */
	struct rd_card cards[3];
	int ncards;
	/* Search (rd_model_search). */
	int searching;          /* a non-empty query is active */
	uint8_t *fn_match;      /* per function */
	uint32_t match_boxes;   /* matching nodes */
	uint64_t match_value;   /* their value, counted once */
};

/* The class a frame is drawn with: its own, or "system" for an
 * unclassified kernel frame. */
unsigned rd_frame_class(const struct prof_frame *f);

/* Builds the model of @p: sorts its siblings (prof_sort), merges a
 * function's frames at several lines into one (then m->p is that copy),
 * aggregates, and writes the answer and cards. Returns NULL when out of
 * memory. Free with rd_model_free(); @p stays the caller's, must outlive
 * the model and must not change while it lives (its nodes may be read in
 * place). */
struct rd_model *rd_model_new(struct prof_profile *p);

/* rd_model_new() with the tree always a copy (rd_tree_build_copy), as
 * for a profile whose ids are not its preorder: for comparing both. */
struct rd_model *rd_model_new_copied(struct prof_profile *p);

/* Frees @m (not its profile). Accepts NULL. */
void rd_model_free(struct rd_model *m);

/* The name of function @fn, owned by the profile. */
const char *rd_model_fn_name(const struct rd_model *m, uint32_t fn);

/* 1 when node @node matches the active search (0 without a search). */
int rd_model_node_match(const struct rd_model *m, uint32_t node);

/* Applies @query: comma-separated terms, each tried as a POSIX extended
 * regular expression (case-insensitive) and kept as one when it compiles and
 * matches some function; otherwise matched as a fuzzy term (its characters
 * in order, case-insensitive). Sets match_boxes (nodes whose function
 * matches) and match_value (value under matching nodes, counted once
 * through nesting). An empty query clears the search. Returns 0 or -ENOMEM. */
int rd_model_search(struct rd_model *m, const char *query);

/* Fills @idx (room for m->nfn) with function indexes sorted by @by
 * (descending values, ascending names), only those with row == 1 and, when
 * @yours_only, class PROF_CLASS_YOURS. Returns how many were written. */
size_t rd_model_sorted(const struct rd_model *m, enum rd_sort by,
		       int yours_only, uint32_t *idx);

/* Writes an exact-match regular expression for @name to @buf ("^name$" with
 * metacharacters escaped). Returns @buf. */
char *rd_model_exact_query(const char *name, char *buf, size_t n);

/* Whether the function whose first frame is @frame of @p may be named in
 * the answer (render/answer.c): a function the user can change, with a
 * name (not perf's "[unknown]" or "module+0x1f0"). Bit 0 set for a
 * candidate of class "your code", bit 1 for any candidate in user space;
 * bit 2 for a function named "module+0xHEX" (no symbol), which is
 * neither. 0 for process and thread rows and frames out of range. */
unsigned rd_answer_frame_bits(const struct prof_profile *p, uint32_t frame);

/* What the answer needs of the functions' sums, found as they are added
 * up (render/model_sums.c). A function's own share of a kind is the self
 * of the nodes whose nearest candidate of that kind (the node's function
 * or its nearest ancestor's) is the function: fns[].own holds the one
 * with any user-space candidate, @own_yours the one with your-code
 * candidates. */
struct rd_answer_in {
	const uint64_t *own_yours; /* m->nfn entries */
	const uint8_t *cand;       /* rd_answer_frame_bits() per function (0
				    * for the root's) */
	uint64_t yours_total;      /* the sum of own_yours[] */
	/* The rows with the largest own share of each kind (the first of
	 * equal ones; UINT32_MAX when every share is 0). */
	uint32_t best_yours, best_any;
};

/* Writes m->answer, m->notice and m->cards from the aggregates (called
 * by rd_model_new), and sets m->yours; fns[].own is left with the kind
 * of own share the answer uses. Returns 0 or -ENOMEM. */
int rd_answer_write(struct rd_model *m, const struct rd_answer_in *in);

/* The function index of node @node (a profile node id). */
uint32_t rd_model_node_fn(const struct rd_model *m, uint32_t node);

#endif /* HEARTH_RENDER_MODEL_H */
