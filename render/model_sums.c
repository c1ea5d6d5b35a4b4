/* SPDX-License-Identifier: MIT */
/*
 * The model's sums. Each function (one per distinct name) gets its self,
 * its total counted once through recursion, its node count and the share
 * it answers for, from one walk over the tree in preorder; the walk also
 * adds up the class and language sums and finds the nodes with many
 * children.
 *
 * Two threads share the work from the start (rd_model_sum_up): while one
 * lists the functions, the other rates most frames as the answer's
 * candidates; then each walks half of the nodes into sums of its own,
 * adds up half of the functions from both halves' sums (with what the
 * answer needs of them), and at last one writes the answer while the
 * other makes the children lists. A barrier separates the steps.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "render/model_sums.h"

/* What the model needs of a frame, in one place (one cache miss). */
struct frame_info {
	uint32_t fn;
	uint8_t cls, lang;
};

/* A function's sums while the tree is walked, in the order the walk
 * reaches the functions (random): what every node adds, four to a cache
 * line, and apart what only the nodes with a self time add. at: the
 * function's candidate bits 0 and 1 (rd_answer_frame_bits, CAND_BITS),
 * and above them the path depth of its last counted node (see struct
 * step). own: the self of the nodes whose nearest user-space candidate is
 * the function (the one with your-code candidates is kept apart, as it is
 * mostly zero). */
struct fn_sum {
	uint64_t total;
	uint32_t nodes;
	uint32_t at;
};

struct fn_self {
	uint64_t self, own;
};

#define CAND_BITS 2u
#define CAND_MASK ((1u << CAND_BITS) - 1)
#define NONE UINT32_MAX

/* The path from the root to the node being visited: s[d] is the node at
 * depth d (s[0] the root, whose function is NONE so it matches none).
 * A node's total counts for its function when no node above it on the
 * path has the same function: the function's sums keep the depth of its
 * last counted node, which is on the path (and so the function is)
 * exactly when it lies above the node and s[] there still holds the
 * function (a node of the function on the path is below the first one,
 * the counted one, whose depth stays kept until it leaves). Each step
 * also keeps its nearest candidates of both kinds (the function index
 * nfn when none: a spare slot of the sums that is not read). */
struct step {
	uint32_t node, fn;
	uint32_t yours, any;
};

/* The path of one half, with room for depths 0..cap-1; kids[d]: the
 * children the node at depth d has had in the half; slot[d]: its index
 * in the half's noted nodes, once it has had KIDS_LIST / 2. */
struct path {
	struct step *s;
	uint32_t *kids;
	uint32_t *slot;
	uint32_t cap;
};

/* The children a noted node has in the half from its KIDS_LIST / 2-th
 * on (consecutive siblings), with their totals, so that its list is made
 * without following the links through them (rd_tree_list_kids_runs). */
struct kid_rec {
	uint32_t *kid;
	uint64_t *total;
	uint32_t n, cap;
};

struct sums;

/* One thread's share: nodes lo..hi walked into its own sums, then the
 * functions flo..fhi added up from both halves. */
struct half {
	struct sums *g;
	uint32_t lo, hi;
	uint32_t flo, fhi;
	struct fn_sum *sum;   /* 64-byte aligned; nfn entries */
	struct fn_self *self; /* 64-byte aligned; nfn + 1 (the spare) */
	uint64_t *own_yours;  /* nfn + 1 */
	uint64_t class_self[PROF_CLASS_COUNT];
	uint64_t lang_self[PROF_LANG_COUNT];
	struct path pa;
	uint32_t root_kids;   /* the root's children in this half */
	/* Of the functions flo..fhi: the sum of their own shares with
	 * your-code candidates, the rows with the largest share of each
	 * kind (see struct rd_answer_in) and those shares. */
	uint64_t yours_total, best_y, best_a;
	uint32_t fn_y, fn_a;
	uint32_t *big, nbig, big_cap; /* nodes with many children here */
	struct kid_rec *rec;  /* their children, as big[] */
};

/* Nodes with this many children get a list of them in the tree (see
 * rd_tree_list_kids); each half notes those with half as many. */
#define KIDS_LIST 64u

struct sums {
	struct rd_model *m;
	const struct rd_tree *t;
	struct frame_info *fi; /* per frame */
	uint8_t *frame_bits;   /* per frame: rd_answer_frame_bits() */
	uint8_t *cand;         /* per function, once added up */
	uint64_t *own_yours;   /* per function, once added up */
	uint32_t nfr, nfn;
	/* 1 when every frame is a function of its own (no two share a
	 * name): then function i is frame i, and the class and language
	 * sums are made from the functions' self, so a node needs no
	 * look-up in fi[]. */
	int same;
	int rc;                /* 0, or -ENOMEM once a step failed */
	int two;               /* a second thread shares the work */
	pthread_barrier_t bar;
	struct half half[2];
};

/* Waits for the other thread, if any. */
static void sums_wait(struct sums *g)
{
	if (g->two)
		pthread_barrier_wait(&g->bar);
}

/* Notes that a step ran out of memory (either thread, maybe both). */
static void sums_fail(struct sums *g)
{
	__atomic_store_n(&g->rc, -ENOMEM, __ATOMIC_RELAXED);
}

/* 1 while no step failed. */
static int sums_ok(struct sums *g)
{
	return __atomic_load_n(&g->rc, __ATOMIC_RELAXED) == 0;
}

/* The frames the first thread rates, of @nfr, when the second shares
 * the work: an eighth, as listing the functions costs the first about
 * as much as rating three quarters of them. */
#define RATE_FIRST(nfr) ((nfr) / 8)

/* Rates frames @lo..@hi as candidates of the answer. */
static void rate_frames(struct sums *g, uint32_t lo, uint32_t hi)
{
	for (uint32_t f = lo; f < hi; f++)
		g->frame_bits[f] = (uint8_t)rd_answer_frame_bits(g->m->p, f);
}

/* Lists the functions: one per distinct name, numbered in the order of
 * their first frames (the root gets function 0 of its own, not a row),
 * through a per-frame table so each frame is looked at once. 0 or
 * -ENOMEM. */
static int list_functions(struct sums *g)
{
	struct rd_model *m = g->m;
	uint32_t nstr = prof_str_count(m->p), nfr = g->nfr;
	uint32_t *str_fn = calloc(nstr ? nstr : 1, sizeof(*str_fn));

	m->fns = malloc(((size_t)nfr + 1) * sizeof(*m->fns));
	if (!str_fn || !m->fns) {
		free(str_fn);
		return -ENOMEM;
	}
	m->fns[0] = (struct rd_fn){ 0 };
	m->nfn = 1;
	for (uint32_t id = 0; id < nfr; id++) {
		const struct prof_frame *fr = prof_frame_get(m->p, id);
		uint32_t name = fr && fr->name < nstr ? fr->name : 0;

		if (id && !str_fn[name]) {
			m->fns[m->nfn] = (struct rd_fn){
				.name = name,
				.frame = id,
				.row = fr && fr->kind != PROF_KIND_PROCESS &&
				       fr->kind != PROF_KIND_THREAD,
			};
			str_fn[name] = m->nfn++;
		}
		g->fi[id].fn = id ? str_fn[name] : 0;
		g->fi[id].cls = (uint8_t)rd_frame_class(fr);
		g->fi[id].lang = fr && fr->lang < PROF_LANG_COUNT ? fr->lang : 0;
	}
	free(str_fn);
	g->nfn = m->nfn;
	g->same = m->nfn == nfr;
	for (uint32_t f = 0; f < nfr && g->same; f++)
		g->same = g->fi[f].fn == f;
	return 0;
}

/* The function of each frame, kept by the tree when frames are not
 * functions one to one. 0 or -ENOMEM. */
static int set_fn_of(struct sums *g)
{
	struct rd_tree *t = &g->m->tree;

	if (g->same)
		return 0;
	if (!(t->fn_of = malloc((t->nfr ? t->nfr : 1) * sizeof(*t->fn_of))))
		return -ENOMEM;
	for (uint32_t f = 0; f < t->nfr; f++)
		t->fn_of[f] = g->fi[f].fn;
	if (!t->nfr)
		t->fn_of[0] = 0;
	return 0;
}

/* The arrays of both halves and of the result. 0 or -ENOMEM. */
static int sums_alloc(struct sums *g)
{
	size_t n = (size_t)g->nfn + 1;
	size_t bytes = (n * sizeof(struct fn_sum) + 63) / 64 * 64;
	size_t sbytes = (n * sizeof(struct fn_self) + 63) / 64 * 64;

	g->cand = malloc(n);
	g->own_yours = malloc(n * sizeof(*g->own_yours));
	if (!g->cand || !g->own_yours)
		return -ENOMEM;
	for (int k = 0; k < 2; k++) {
		struct half *h = &g->half[k];

		h->sum = aligned_alloc(64, bytes);
		h->self = aligned_alloc(64, sbytes);
		h->own_yours = malloc(n * sizeof(*h->own_yours));
		if (!h->sum || !h->self || !h->own_yours)
			return -ENOMEM;
	}
	return 0;
}

/* The candidate bits of function @f. */
static inline uint8_t fn_bits(const struct sums *g, uint32_t f)
{
	return f == 0 ? 0 : g->frame_bits[g->same ? f : g->m->fns[f].frame];
}

static inline uint32_t node_fn(const struct sums *g, uint32_t i)
{
	uint32_t fr = rd_tree_frame(g->t, i);

	return g->same ? fr : g->fi[fr].fn;
}

/* Notes the node at depth @d of the path, which has had KIDS_LIST / 2
 * children in this half. 0 or -ENOMEM. */
static int note_big(struct half *h, uint32_t d)
{
	if (h->nbig == h->big_cap) {
		uint32_t cap = h->big_cap ? h->big_cap * 2 : 64;
		uint32_t *b = realloc(h->big, cap * sizeof(*b));
		struct kid_rec *r;

		if (!b)
			return -ENOMEM;
		h->big = b;
		if (!(r = realloc(h->rec, cap * sizeof(*r))))
			return -ENOMEM;
		h->rec = r;
		h->big_cap = cap;
	}
	h->big[h->nbig] = h->pa.s[d].node;
	h->rec[h->nbig] = (struct kid_rec){ 0 };
	h->pa.slot[d] = h->nbig++;
	return 0;
}

/* Child @i (total @total) of the node at depth @d of the path, its @k-th
 * in this half, where k >= KIDS_LIST / 2: notes the node at the first
 * and keeps the child. The root (@d 0) is counted apart and its children
 * not kept. 0 or -ENOMEM. */
static int note_kid(struct half *h, uint32_t d, uint32_t k, uint32_t i,
		    uint64_t total)
{
	struct kid_rec *r;

	if (!d)
		return 0;
	if (k == KIDS_LIST / 2 && note_big(h, d) < 0)
		return -ENOMEM;
	r = &h->rec[h->pa.slot[d]];
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 64;
		uint32_t *kid = realloc(r->kid, cap * sizeof(*kid));
		uint64_t *tot;

		if (!kid)
			return -ENOMEM;
		r->kid = kid;
		if (!(tot = realloc(r->total, cap * sizeof(*tot))))
			return -ENOMEM;
		r->total = tot;
		r->cap = cap;
	}
	r->kid[r->n] = i;
	r->total[r->n++] = total;
	return 0;
}

/* Puts node @i of function @fn at depth @d of the path (room made),
 * below s[d - 1], whose candidates it inherits unless it is one. Returns
 * 1 when its total counts for @fn (no node above has @fn), keeping that
 * depth in the function's sums @f. Without branches on the data, which
 * would be mispredicted. */
static inline int path_put(struct step *s, uint32_t d, uint32_t i,
			   uint32_t fn, struct fn_sum *f)
{
	uint32_t at = f->at, up = at >> CAND_BITS;
	uint32_t yours = s[d - 1].yours, any = s[d - 1].any;
	int on = (up < d) & (s[up].fn == fn);

	s[d].node = i;
	s[d].fn = fn;
	s[d].yours = at & 1 ? fn : yours;
	s[d].any = at & 2 ? fn : any;
	f->at = on ? at : d << CAND_BITS | (at & CAND_MASK);
	return !on;
}

/* Room on the path for depths 0..@need-1 (which the sums keep in 30
 * bits); 0 or -ENOMEM. */
static int path_room(struct path *pa, size_t need)
{
	size_t cap = pa->cap ? pa->cap : 256;
	struct step *s;
	uint32_t *k;

	if (need <= pa->cap)
		return 0;
	if ((need - 1) >> (32 - CAND_BITS))
		return -ENOMEM; /* deeper than the sums' depths can say */
	while (cap < need)
		cap *= 2;
	if (cap >> (32 - CAND_BITS))
		cap = (size_t)1 << (32 - CAND_BITS);
	if (!(s = realloc(pa->s, cap * sizeof(*s))))
		return -ENOMEM;
	pa->s = s;
	if (!(k = realloc(pa->kids, cap * sizeof(*k))))
		return -ENOMEM;
	memset(k + pa->cap, 0, (cap - pa->cap) * sizeof(*k));
	pa->kids = k;
	if (!(k = realloc(pa->slot, cap * sizeof(*k))))
		return -ENOMEM;
	pa->slot = k;
	pa->cap = (uint32_t)cap;
	return 0;
}

/* Depth of node @i (the root's is 0). */
static uint32_t node_depth(const struct rd_tree *t, uint32_t i)
{
	uint32_t depth = 0;

	for (uint32_t a = i; a; a = rd_tree_parent(t, a))
		depth++;
	return depth;
}

/* Starts the sums and the path of half @h: the root at depth 0, and for
 * the second half the ancestors of its first node, root first. Returns
 * the depth of the last, or -ENOMEM. */
static int64_t walk_start(struct half *h)
{
	const struct sums *g = h->g;
	struct path *pa = &h->pa;
	int mid = 1 < h->lo && h->lo < h->hi;
	uint32_t depth = mid ? node_depth(g->t, rd_tree_parent(g->t, h->lo)) : 0;

	for (uint32_t f = 0; f < g->nfn; f++)
		h->sum[f] = (struct fn_sum){ .at = fn_bits(g, f) & CAND_MASK };
	memset(h->self, 0, ((size_t)g->nfn + 1) * sizeof(*h->self));
	memset(h->own_yours, 0, ((size_t)g->nfn + 1) * sizeof(*h->own_yours));
	memset(h->class_self, 0, sizeof(h->class_self));
	memset(h->lang_self, 0, sizeof(h->lang_self));
	if (path_room(pa, (size_t)depth + 2) < 0)
		return -ENOMEM;
	pa->s[0] = (struct step){ .fn = NONE, .yours = g->nfn, .any = g->nfn };
	for (uint32_t a = mid ? rd_tree_parent(g->t, h->lo) : 0, d = depth; a;
	     a = rd_tree_parent(g->t, a), d--)
		pa->s[d].node = a;
	for (uint32_t d = 1; d <= depth; d++) {
		uint32_t fn = node_fn(g, pa->s[d].node);

		path_put(pa->s, d, pa->s[d].node, fn, &h->sum[fn]);
	}
	return depth;
}

/* How far ahead the walk asks for a node's function sums, and for the
 * nodes themselves. */
#define AHEAD_FN 64u
#define AHEAD_NODE 256u

/* Either of two addresses, without a branch: @b when @which, else @a. */
static inline const void *pick(const void *a, const void *b, int which)
{
	uintptr_t m = -(uintptr_t)(which != 0);

	return (const void *)(((uintptr_t)a & ~m) | ((uintptr_t)b & m));
}

/* walk()'s loop over the nodes, with @same constant. Returns the depth
 * reached, or -ENOMEM. */
static inline __attribute__((always_inline)) int64_t
walk_nodes(struct half *h, uint32_t d, const int same)
{
	const struct sums *g = h->g;
	const struct rd_tree t = *g->t; /* a copy the sums cannot alias */
	const struct frame_info *fi = g->fi;
	struct fn_sum *sum = h->sum;
	struct fn_self *fs = h->self;
	uint64_t *own_yours = h->own_yours;
	struct step *s = h->pa.s;
	uint32_t *kids = h->pa.kids, cap = h->pa.cap;
	uint32_t hi = h->hi, ahead = hi > AHEAD_NODE ? hi - AHEAD_NODE : 0;

	for (uint32_t i = h->lo ? h->lo : 1; i < hi; i++) {
		uint32_t fr = rd_tree_frame(&t, i), parent = rd_tree_parent(&t, i);
		uint32_t fn = same ? fr : fi[fr].fn;
		uint64_t self = rd_tree_self(&t, i);
		struct fn_sum *f = &sum[fn];

		/* The functions come in random order: ask for their sums
		 * ahead (the self sums only for a node with a self), and
		 * for the nodes further ahead. */
		if (i < ahead) {
			uint32_t next = rd_tree_frame(&t, i + AHEAD_FN);

			next = same ? next : fi[next].fn;
			__builtin_prefetch(&sum[next], 1);
			__builtin_prefetch(pick(&sum[next], &fs[next],
						rd_tree_self(&t, i + AHEAD_FN) != 0), 1);
			__builtin_prefetch(&t.nd[i + AHEAD_NODE]);
		}
		if (!same) {
			h->class_self[fi[fr].cls] += self;
			h->lang_self[fi[fr].lang] += self;
		}
		while (s[d].node != parent && d)
			kids[d--] = 0;
		if (KIDS_LIST / 2 <= ++kids[d] &&
		    note_kid(h, d, kids[d], i, rd_tree_total(&t, i)) < 0)
			return -ENOMEM;
		if (++d == cap) {
			if (path_room(&h->pa, (size_t)d + 1) < 0)
				return -ENOMEM;
			s = h->pa.s;
			kids = h->pa.kids;
			cap = h->pa.cap;
		}
		f->total += path_put(s, d, i, fn, f) ? rd_tree_total(&t, i) : 0;
		f->nodes++;
		if (self) {
			fs[fn].self += self;
			own_yours[s[d].yours] += self;
			fs[s[d].any].own += self;
		}
	}
	h->root_kids = kids[0];
	return d;
}

/* Adds up the nodes lo..hi of half @h: self by class and language, each
 * function's self, nodes and total (counted once through recursion), and
 * the self each node gives its nearest candidates; notes the nodes with
 * many children. 0 or -ENOMEM. */
static int walk(struct half *h)
{
	int64_t d = walk_start(h);

	if (d < 0)
		return -ENOMEM;
	d = h->g->same ? walk_nodes(h, (uint32_t)d, 1) :
	    walk_nodes(h, (uint32_t)d, 0);
	return d < 0 ? -ENOMEM : 0;
}

/* Adds up the functions flo..fhi of half @h from both halves' sums into
 * the model: its sums, each one's candidate bits, (when functions are
 * frames) their self by class and language into @h's class sums, and
 * what the answer needs of them. */
static void add_up(struct half *h)
{
	struct sums *g = h->g;
	struct rd_fn *fns = g->m->fns;
	const struct half *a = &g->half[0], *b = &g->half[1];

	if (g->same) {
		memset(h->class_self, 0, sizeof(h->class_self));
		memset(h->lang_self, 0, sizeof(h->lang_self));
	}
	h->yours_total = h->best_y = h->best_a = 0;
	h->fn_y = h->fn_a = UINT32_MAX;
	for (uint32_t f = h->flo; f < h->fhi; f++) {
		uint64_t y = a->own_yours[f] + b->own_yours[f];

		fns[f].self = a->self[f].self + b->self[f].self;
		fns[f].total = a->sum[f].total + b->sum[f].total;
		fns[f].nodes = a->sum[f].nodes + b->sum[f].nodes;
		fns[f].own = a->self[f].own + b->self[f].own;
		g->own_yours[f] = y;
		g->cand[f] = fn_bits(g, f);
		h->yours_total += y;
		if (fns[f].row && h->best_y < y) {
			h->best_y = y;
			h->fn_y = f;
		}
		if (fns[f].row && h->best_a < fns[f].own) {
			h->best_a = fns[f].own;
			h->fn_a = f;
		}
		if (g->same) {
			h->class_self[g->fi[f].cls] += fns[f].self;
			h->lang_self[g->fi[f].lang] += fns[f].self;
		}
	}
}

static int cmp_run(const void *x, const void *y)
{
	const struct rd_kid_run *a = x, *b = y;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	return a->kid[0] < b->kid[0] ? -1 : a->kid[0] > b->kid[0];
}

/* The children lists of the nodes with many children (the root's
 * counted apart, as it is never on the path), from the children the
 * walk kept. 0 or -ENOMEM. */
static int list_kids(struct sums *g)
{
	const struct half *a = &g->half[0], *b = &g->half[1];
	uint32_t n = a->nbig + b->nbig, nruns = 0;
	uint32_t *nodes = malloc((n + 1) * sizeof(*nodes));
	struct rd_kid_run *runs = malloc((n ? n : 1) * sizeof(*runs));
	int rc = -ENOMEM;

	if (!nodes || !runs)
		goto out;
	n = 0;
	for (int k = 0; k < 2; k++) {
		const struct half *h = &g->half[k];

		for (uint32_t j = 0; j < h->nbig; j++) {
			nodes[n++] = h->big[j];
			runs[nruns++] = (struct rd_kid_run){ h->big[j], h->rec[j].n,
							     h->rec[j].kid,
							     h->rec[j].total };
		}
	}
	qsort(runs, nruns, sizeof(*runs), cmp_run);
	if (KIDS_LIST <= a->root_kids + b->root_kids)
		nodes[n++] = 0;
	rc = rd_tree_list_kids_runs(&g->m->tree, nodes, n, runs, nruns);
out:
	free(nodes);
	free(runs);
	return rc;
}

/* The second thread's steps: rate half of the frames, walk the second
 * half of the tree, add up the second half of the functions, make the
 * children lists. */
static void *second(void *arg)
{
	struct sums *g = arg;
	struct half *h = &g->half[1];

	rate_frames(g, RATE_FIRST(g->nfr), g->nfr);
	sums_wait(g);
	if (sums_ok(g) && walk(h) < 0)
		sums_fail(g);
	sums_wait(g);
	if (sums_ok(g))
		add_up(h);
	sums_wait(g);
	/* Not an error of the model: without the lists, walks read the
	 * sibling links (rd_tree_list_kids). */
	if (sums_ok(g))
		list_kids(g);
	return NULL;
}

/* The first thread's steps up to the answer, alone when !g->two. */
static void first(struct sums *g)
{
	struct half *h = &g->half[0];

	if (list_functions(g) < 0 || set_fn_of(g) < 0 || sums_alloc(g) < 0)
		sums_fail(g);
	rate_frames(g, 0, g->two ? RATE_FIRST(g->nfr) : g->nfr);
	h->fhi = g->two ? g->nfn / 2 : g->nfn;
	g->half[1].flo = h->fhi;
	g->half[1].fhi = g->nfn;
	sums_wait(g);
	if (sums_ok(g) && walk(h) < 0)
		sums_fail(g);
	if (!g->two && sums_ok(g) && walk(&g->half[1]) < 0)
		sums_fail(g);
	sums_wait(g);
	if (sums_ok(g))
		add_up(h);
	if (!g->two && sums_ok(g))
		add_up(&g->half[1]);
	sums_wait(g);
}

static void sums_free(struct sums *g)
{
	free(g->fi);
	free(g->frame_bits);
	free(g->cand);
	free(g->own_yours);
	for (int k = 0; k < 2; k++) {
		struct half *h = &g->half[k];

		free(h->sum);
		free(h->self);
		free(h->own_yours);
		for (uint32_t j = 0; j < h->nbig; j++) {
			free(h->rec[j].kid);
			free(h->rec[j].total);
		}
		free(h->rec);
		free(h->big);
		free(h->pa.s);
		free(h->pa.kids);
		free(h->pa.slot);
	}
}

/* The model's class and language sums from both halves, and the rest of
 * the model, the answer last. 0 or -ENOMEM. */
static int finish(struct sums *g)
{
	struct rd_model *m = g->m;
	const struct half *a = &g->half[0], *b = &g->half[1];
	/* The first half's functions come first: a tie goes to its row. */
	struct rd_answer_in in = {
		.own_yours = g->own_yours,
		.cand = g->cand,
		.yours_total = a->yours_total + b->yours_total,
		.best_yours = a->best_y < b->best_y ? b->fn_y : a->fn_y,
		.best_any = a->best_a < b->best_a ? b->fn_a : a->fn_a,
	};

	for (int c = 0; c < PROF_CLASS_COUNT; c++)
		m->class_self[c] = a->class_self[c] + b->class_self[c];
	for (int l = 0; l < PROF_LANG_COUNT; l++)
		m->lang_self[l] = a->lang_self[l] + b->lang_self[l];
	m->total = prof_total(m->p);
	m->nnodes = prof_node_count(m->p);
	if (!(m->fn_match = calloc(m->nfn ? m->nfn : 1, 1)))
		return -ENOMEM;
	return rd_answer_write(m, &in);
}

int rd_model_sum_up(struct rd_model *m)
{
	struct sums g = { .m = m, .t = &m->tree };
	uint32_t n = m->tree.n;
	pthread_t th;
	int rc;

	g.nfr = prof_frame_count(m->p);
	g.fi = malloc((g.nfr ? g.nfr : 1) * sizeof(*g.fi));
	g.frame_bits = malloc(g.nfr ? g.nfr : 1);
	if (!g.fi || !g.frame_bits) {
		sums_free(&g);
		return -ENOMEM;
	}
	for (int k = 0; k < 2; k++)
		g.half[k].g = &g;
	g.half[0].hi = n;
	g.half[1].lo = g.half[1].hi = n;
	if (RD_MODEL_SPLIT_MIN <= n && pthread_barrier_init(&g.bar, NULL, 2) == 0) {
		g.two = 1;
		g.half[0].hi = g.half[1].lo = n / 2;
		if (pthread_create(&th, NULL, second, &g) != 0) {
			pthread_barrier_destroy(&g.bar);
			g.two = 0;
			g.half[0].hi = g.half[1].lo = n;
		}
	}
	first(&g);
	rc = sums_ok(&g) ? finish(&g) : -ENOMEM;
	if (!g.two && sums_ok(&g))
		list_kids(&g);
	if (g.two) {
		pthread_join(th, NULL);
		pthread_barrier_destroy(&g.bar);
	}
	sums_free(&g);
	return rc;
}
