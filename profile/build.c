/* SPDX-License-Identifier: MIT */
/*
 * Building a whole tree from stacks (prof_build): the stacks are sorted
 * by their frames' ranks in prof_sort() order (sort_paths()), so each
 * node is made once, in preorder, without the lookups that dominate big
 * loads. In sorted sibling order the stacks are cut in two parts made on
 * two threads: the second part knows from the sort where its ids start.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"
#include "sort_impl.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return UINT64_MAX - a < b ? UINT64_MAX : a + b;
}

/* A finished child waiting for its parent to finish: its id and the
 * first path (in @rec order, which is the input's) that reached it. */
struct kid {
	uint64_t first;
	uint32_t node;
};

/* What a part leaves for the nodes of the part before it, which it may
 * not write while that part runs: values to add, and the first child it
 * gives such a node (@child) or the node it puts after such a node. */
struct fix {
	uint32_t node, link;
	int child;
	uint64_t total, self;
};

/* The path being built, by depth + 1 (0 = the root). */
struct build {
	struct prof_profile *p;
	struct prof_node *nodes;
	uint32_t next; /* the next node's id */
	uint32_t *node;
	uint64_t *total, *self, *first;
	size_t *seg; /* where its children start in kids[] */
	struct kid *kids;
	size_t nkids;
	int reordered; /* some siblings came in another order than sorted */
	/* Siblings linked in sorted order as they are made: no kids[],
	 * seg[] or first[]; lastkid[] is each entry's last child so far. */
	int in_order;
	uint32_t *lastkid;
	/* In order, the nodes below @lo are the part before's: what goes to
	 * them waits in fixes[]. */
	uint32_t lo;
	struct fix *fixes;
	size_t nfixes;
	/* Pages of nodes below @faulted are faulted in; @end: the part's
	 * last node + 1. */
	size_t faulted, end;
	atomic_size_t *made; /* nodes made so far, for the helper */
};

static int kid_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct kid *)a)->first;
	uint64_t y = ((const struct kid *)b)->first;

	return x < y ? -1 : x > y;
}

/* Links the finished children of path entry @i in the order the input
 * first reached them (prof_add_stack()'s order). */
static void link_kids(struct build *b, size_t i)
{
	struct prof_node *nodes = b->nodes;
	struct kid *k = b->kids + b->seg[i];
	size_t m = b->nkids - b->seg[i];
	uint32_t x = b->node[i];

	if (m == 0) {
		nodes[x].child = 0;
		return;
	}
	for (size_t j = 1; j < m; j++) {
		if (k[j].first < k[j - 1].first) {
			qsort(k, m, sizeof(*k), kid_cmp);
			b->reordered = 1;
			break;
		}
	}
	nodes[x].child = k[0].node;
	for (size_t j = 0; j + 1 < m; j++)
		nodes[k[j].node].sibling = k[j + 1].node;
	nodes[k[m - 1].node].sibling = 0;
}

/* Path entry @i (>= 1) is complete: writes its node and hands its
 * values to its parent (in the input's sibling order). */
static void finish(struct build *b, size_t i)
{
	struct prof_node *nd = &b->nodes[b->node[i]];

	nd->total = b->total[i];
	nd->self = b->self[i];
	b->total[i - 1] = sat_add(b->total[i - 1], b->total[i]);
	link_kids(b, i);
	if (b->first[i] < b->first[i - 1])
		b->first[i - 1] = b->first[i];
	b->nkids = b->seg[i];
	b->kids[b->nkids++] = (struct kid){ b->first[i], b->node[i] };
}

/* Adds path @o, which shares @k frames with the path before (@open
 * entries deep), in the input's sibling order: leaves the entries it
 * does not share, makes the nodes it adds. Returns its depth. */
static size_t build_path(struct build *b, const uint32_t *rec, uint64_t o,
			 size_t k, size_t open)
{
	const uint32_t *r = rec + o;
	uint64_t v = (uint64_t)r[2] << 32 | r[1];
	size_t n = r[0];

	for (; k < open; open--)
		finish(b, open);
	for (size_t j = k; j < n; j++) {
		uint32_t id = b->next++;

		b->nodes[id] = (struct prof_node){ .frame = r[3 + j],
						   .parent = b->node[j] };
		b->node[j + 1] = id;
		b->total[j + 1] = b->self[j + 1] = 0;
		b->first[j + 1] = o;
		b->seg[j + 1] = b->nkids;
	}
	b->self[n] = sat_add(b->self[n], v);
	b->total[n] = sat_add(b->total[n], v);
	if (o < b->first[n])
		b->first[n] = o;
	return n;
}

/* Path entry @i (>= 1) is complete, in sorted order: writes its values
 * (or, with @shared, leaves them for the part before's node) and hands
 * them to its parent. */
static inline __attribute__((always_inline)) void
finish_sorted(struct build *b, size_t i, int shared)
{
	uint32_t x = b->node[i];

	b->total[i - 1] = sat_add(b->total[i - 1], b->total[i]);
	if (shared && x < b->lo) {
		b->fixes[b->nfixes++] = (struct fix){ .node = x,
						      .total = b->total[i],
						      .self = b->self[i] };
		return;
	}
	b->nodes[x].total = b->total[i];
	b->nodes[x].self = b->self[i];
}

/* build_path() in sorted sibling order: each node is linked after its
 * parent's last child when made; its values are written when it is
 * finished. @shared: the part starts on the part before's nodes (a
 * constant, so the first part's copy has no test for them). */
static inline __attribute__((always_inline)) size_t
path_sorted_how(struct build *b, const uint32_t *r, size_t k, size_t open,
		int shared)
{
	struct prof_node *nodes = b->nodes;
	uint64_t v = (uint64_t)r[2] << 32 | r[1];
	size_t n = r[0];

	for (; k < open; open--)
		finish_sorted(b, open, shared);
	for (size_t j = k; j < n; j++) {
		uint32_t id = b->next++, up = b->node[j], left = b->lastkid[j];
		struct prof_node *nd = &nodes[id];

		nd->frame = r[3 + j];
		nd->parent = up;
		nd->child = nd->sibling = 0;
		b->node[j + 1] = id;
		b->total[j + 1] = b->self[j + 1] = 0;
		b->lastkid[j] = id;
		b->lastkid[j + 1] = 0;
		if (shared && (left ? left : up) < b->lo)
			b->fixes[b->nfixes++] = (struct fix){
				.node = left ? left : up, .link = id, .child = !left
			};
		else if (left)
			nodes[left].sibling = id;
		else
			nodes[up].child = id;
	}
	b->self[n] = sat_add(b->self[n], v);
	b->total[n] = sat_add(b->total[n], v);
	return n;
}

static size_t path_sorted(struct build *b, const uint32_t *r, size_t k,
			  size_t open)
{
	return path_sorted_how(b, r, k, open, 0);
}

static size_t path_sorted_shared(struct build *b, const uint32_t *r, size_t k,
				 size_t open)
{
	return path_sorted_how(b, r, k, open, 1);
}

typedef uint32_t u32x4 __attribute__((vector_size(16)));

/* Nonzero when a frame id of @f[0..n) is not in 1..@top: 0 wraps past
 * top. Four at a time: most of a big load's frames pass here. */
static uint32_t frames_bad(const uint32_t *f, size_t n, uint32_t top)
{
	u32x4 acc = { 0 }, t = { top, top, top, top }, one = { 1, 1, 1, 1 };
	uint32_t bad = 0;
	size_t j = 0;

	for (; j + 4 <= n; j += 4) {
		u32x4 x;

		memcpy(&x, f + j, sizeof(x));
		acc |= (u32x4)(t <= x - one);
	}
	for (; j < n; j++)
		bad |= top <= f[j] - 1u;
	return bad | acc[0] | acc[1] | acc[2] | acc[3];
}

/* Checks the records, counts their frames and notes where each starts
 * and its frame count (@a[k].val, kv_path(); room for @nstacks) and
 * which frames they hold at depths 0 and 1 (@seen[f] and
 * @seen[nframes + f] set, zeroed by the caller); 0, -EINVAL, or -ENOMEM
 * for records too many for a val to say where they start. */
static int paths_check(const struct prof_profile *p, const uint32_t *rec,
		       size_t len, size_t nstacks, struct kv *a, uint8_t *seen,
		       size_t *frames, size_t *deepest)
{
	size_t o = 0, k = 0;
	uint32_t top = p->nframes - 1, bad = 0;

	*frames = *deepest = 0;
	if ((uint64_t)len >> KV_REC_BITS)
		return -ENOMEM; /* 4 TiB of records: more than a val says */
	for (; o < len && k < nstacks; k++) {
		size_t n;

		if (len - o < 3 || len - o - 3 < rec[o])
			return -EINVAL;
		n = rec[o];
		a[k].val = kv_path(o, (uint32_t)n);
		bad |= frames_bad(rec + o + 3, n, top);
		if (n && rec[o + 3] < p->nframes)
			seen[rec[o + 3]] = 1;
		if (1 < n && rec[o + 4] < p->nframes)
			seen[p->nframes + rec[o + 4]] = 1;
		*frames += n;
		if (*deepest < n)
			*deepest = n;
		o += 3 + n;
	}
	return o == len && k == nstacks && !bad ? 0 : -EINVAL;
}

/* A part's path arrays (for @d entries in build_alloc()). */
static void build_free(struct build *b)
{
	free(b->node);
	free(b->total);
	free(b->self);
	free(b->first);
	free(b->seg);
	free(b->kids);
	free(b->lastkid);
	free(b->fixes);
	b->node = b->lastkid = NULL;
	b->total = b->self = b->first = NULL;
	b->seg = NULL;
	b->kids = NULL;
	b->fixes = NULL;
}

static int build_alloc(struct build *b, size_t d, size_t nstacks)
{
	int ok;

	b->node = malloc(d * sizeof(*b->node));
	b->total = malloc(d * sizeof(*b->total));
	b->self = malloc(d * sizeof(*b->self));
	ok = b->node && b->total && b->self;
	if (b->in_order) {
		b->lastkid = malloc(d * sizeof(*b->lastkid));
		b->fixes = malloc(2 * d * sizeof(*b->fixes));
		ok = ok && b->lastkid && b->fixes;
	} else {
		b->first = malloc(d * sizeof(*b->first));
		b->seg = malloc(d * sizeof(*b->seg));
		b->kids = malloc((nstacks + 1) * sizeof(*b->kids));
		ok = ok && b->first && b->seg && b->kids;
	}
	if (ok)
		return 0;
	build_free(b);
	return -ENOMEM;
}

/* Nodes a part faults in ahead of the ones it makes, per request. */
#define FAULT_STEP ((size_t)1 << 15)

/* Keeps the part's pages faulted in ahead of its nodes. */
static void fault_ahead(struct build *b)
{
	while (b->faulted < b->end && b->faulted < b->next + 2 * FAULT_STEP) {
		size_t to = b->faulted + FAULT_STEP;

		if (b->end < to)
			to = b->end;
		if (build_populate(b->p, b->faulted, to) < 0) {
			b->faulted = b->end; /* the kernel faults them in */
			return;
		}
		b->faulted = to;
	}
}

/* One part of the sorted stacks: @a[from..to) (key: the frames each
 * shares with the stack before), made on entries left @open deep. */
struct part {
	struct build b;
	const uint32_t *rec;
	const struct kv *a;
	size_t from, to, open;
};

/* Makes the nodes of part @arg in order, then finishes its entries. */
static void *part_build(void *arg)
{
	struct part *t = arg;
	struct build *b = &t->b;
	size_t open = t->open;

	for (size_t i = t->from; i < t->to; i++) {
		uint64_t o = kv_rec(t->a[i].val);

		if (i + 16 < t->to) {
			__builtin_prefetch(t->rec + kv_rec(t->a[i + 16].val));
			__builtin_prefetch(t->rec + kv_rec(t->a[i + 16].val) + 16);
		}
		if (b->faulted < b->next + FAULT_STEP)
			fault_ahead(b);
		if (b->in_order && b->lo)
			open = path_sorted_shared(b, t->rec + o,
						  (uint32_t)t->a[i].key, open);
		else if (b->in_order)
			open = path_sorted(b, t->rec + o, (uint32_t)t->a[i].key,
					   open);
		else
			open = build_path(b, t->rec, o, (uint32_t)t->a[i].key, open);
		if (b->made && i % 1024 == 0)
			atomic_store_explicit(b->made, b->next,
					      memory_order_relaxed);
	}
	for (; open; open--) {
		if (b->in_order)
			finish_sorted(b, open, 1);
		else
			finish(b, open);
	}
	if (!b->in_order)
		link_kids(b, 0);
	return NULL;
}

/* Sets the entries of part @t as the part before leaves them after its
 * last stack @a[from - 1]: that stack's path and its node ids, found
 * from the stacks' lengths and shared frame counts, walking back from
 * @b->lo (the part's first id) until the path is complete. */
static void part_enter(struct part *t)
{
	struct build *b = &t->b;
	size_t top = t->a[t->from - 1].key >> 32, n = top;
	uint32_t id = b->lo;

	for (size_t i = t->from; top && i--;) {
		size_t k = (uint32_t)t->a[i].key, len = t->a[i].key >> 32;

		id -= (uint32_t)(len - k); /* stack i's first new node */
		for (; k < top; top--)
			b->node[top] = id + (uint32_t)(top - 1 - k);
	}
	b->node[0] = 0;
	for (size_t j = 0; j <= n; j++) {
		b->total[j] = b->self[j] = 0;
		b->lastkid[j] = j < n ? b->node[j + 1] : 0;
	}
	t->open = n;
	b->next = b->lo;
	if (b->faulted < b->lo)
		b->faulted = b->lo;
}

static void *part_enter_build(void *arg)
{
	part_enter(arg);
	return part_build(arg);
}

/* Gives the part before's nodes what part @b left for them. */
static void part_fix(struct build *b)
{
	struct prof_node *nodes = b->nodes;

	for (size_t i = 0; i < b->nfixes; i++) {
		const struct fix *f = &b->fixes[i];
		struct prof_node *nd = &nodes[f->node];

		if (f->link && f->child)
			nd->child = f->link;
		else if (f->link)
			nd->sibling = f->link;
		nd->total = sat_add(nd->total, f->total);
		nd->self = sat_add(nd->self, f->self);
	}
}

/* Starts part @t at the root. */
static void part_root(struct part *t)
{
	struct build *b = &t->b;

	b->next = b->p->nnodes;
	b->node[0] = 0;
	b->total[0] = b->self[0] = 0;
	t->open = 0;
	if (b->in_order) {
		b->lastkid[0] = 0;
	} else {
		b->first[0] = 0;
		b->seg[0] = 0;
		b->nkids = 0;
	}
}

/* Stacks from which the in-order stacks are made in two parts. */
#define PARTS_MIN ((size_t)1 << 14)

/* Where the second part starts, as an id, for parts that cost the same:
 * of the @n nodes from @first, those before @at have their pages faulted
 * in, and faulting a node's page in costs about 3/2 of making it (parts
 * cut where both cost the same with 1 ended 0.015-0.02 s apart, the
 * second later). With d nodes done and the cut at a: when a <= d, the
 * parts cost a and (n - a) + 3/2 (n - d); else a + 3/2 (a - d) and
 * 5/2 (n - a). */
static size_t cut_id(size_t first, size_t n, size_t at)
{
	size_t done = at <= first ? 0 : at - first < n ? at - first : n;

	if (5 * n <= 7 * done)
		return first + (5 * n - 3 * done) / 4;
	return first + n / 2 + 3 * done / 10;
}

/* Counts the nodes of the sorted stacks @a[0..n) (keys from
 * sort_paths()), which start at id @first. Where the stacks are cut in
 * two parts at @cut (BUILD_CUT_AUTO: where the parts cost the same,
 * cut_id()), notes at @lo the second part's first id; sets @cut to 0
 * when it cuts nothing. Returns the id after the last node. */
static size_t count_nodes(const struct kv *a, size_t n, size_t first,
			  size_t at, size_t *cut, uint32_t *lo)
{
	size_t end = first, want, id = first;

	for (size_t i = 0; i < n; i++)
		end += (a[i].key >> 32) - (uint32_t)a[i].key;
	if (*cut == 0)
		return end;
	want = *cut == BUILD_CUT_AUTO ? cut_id(first, end - first, at) : SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (i == *cut || (i && want <= id)) {
			*cut = i;
			*lo = (uint32_t)id;
			return end;
		}
		id += (a[i].key >> 32) - (uint32_t)a[i].key;
	}
	*cut = 0;
	return end;
}

/* Makes the nodes of the sorted stacks @a[0..n) in one part, or in two
 * cut at @cut (in order only) on two threads. With one part the helper
 * @h, if it runs, faults in the pages ahead of it; with two (the helper
 * stopped, nodes before @at faulted in) each part faults in its own. */
static void build_nodes(struct part *x, struct part *y, size_t n, size_t cut,
			struct build_ahead *h, size_t at, size_t end)
{
	struct prof_profile *p = x->b.p;
	pthread_t th;

	part_root(x);
	x->from = 0;
	x->to = cut ? cut : n;
	x->b.faulted = SIZE_MAX;
	x->b.end = end;
	if (!cut) {
		x->b.made = h->running ? &h->made : NULL;
		part_build(x);
		build_ahead_stop(h, p);
		p->nnodes = x->b.next;
	} else {
		x->b.faulted = at;
		if (x->b.faulted < x->b.next)
			x->b.faulted = x->b.next;
		y->from = cut;
		y->to = n;
		y->b.faulted = x->b.faulted;
		y->b.end = end;
		if (pthread_create(&th, NULL, part_enter_build, y) == 0) {
			part_build(x);
			pthread_join(th, NULL);
		} else {
			part_build(x);
			part_enter_build(y);
		}
		part_fix(&y->b);
		p->nnodes = y->b.next;
	}
	p->nodes[0].total = sat_add(p->nodes[0].total, x->b.total[0]);
	p->nodes[0].self = sat_add(p->nodes[0].self, x->b.self[0]);
	if (cut) {
		p->nodes[0].total = sat_add(p->nodes[0].total, y->b.total[0]);
		p->nodes[0].self = sat_add(p->nodes[0].self, y->b.self[0]);
	}
}

/* Ranking the frames (sort_frame_ranks()), on a thread while the stacks
 * are checked on big loads, or started ahead (prof_ranks_start()).
 * @rank has room for 4 * @nframes, the frames @p has (and keeps while
 * the job runs): the ranks, the frames by rank and two code tables
 * (stacks_sort()). */
struct prof_ranks {
	const struct prof_profile *p;
	uint32_t *rank;
	uint32_t nframes;
	int err, done, running;
	pthread_t th;
};

static void *ranks_run(void *arg)
{
	struct prof_ranks *j = arg;

	j->err = sort_frame_ranks(j->p, j->rank, j->rank + j->nframes);
	j->done = 1;
	return NULL;
}

/* The ranks, made on the thread or here. 0 or -ENOMEM. */
static int ranks_wait(struct prof_ranks *j)
{
	if (j->running)
		pthread_join(j->th, NULL);
	j->running = 0;
	if (!j->done)
		ranks_run(j);
	return j->err;
}

struct prof_ranks *prof_ranks_start(const struct prof_profile *p,
				    size_t nstacks)
{
	struct prof_ranks *r = nstacks < PARTS_MIN ? NULL : malloc(sizeof(*r));

	if (!r)
		return NULL;
	*r = (struct prof_ranks){ .p = p, .nframes = p->nframes };
	r->rank = malloc(4 * (size_t)p->nframes * sizeof(*r->rank));
	r->running = r->rank && pthread_create(&r->th, NULL, ranks_run, r) == 0;
	if (!r->running) {
		free(r->rank);
		free(r);
		return NULL;
	}
	return r;
}

void prof_ranks_free(struct prof_ranks *r)
{
	if (!r)
		return;
	if (r->running)
		pthread_join(r->th, NULL);
	free(r->rank);
	free(r);
}

/* The ranking of @lend, started ahead, if it was made for @p (which
 * did not change since: prof_ranks_start()); else NULL (a ranking of
 * another profile is freed). */
static struct prof_ranks *ranks_take(const struct prof_scratch *lend,
				     const struct prof_profile *p)
{
	struct prof_ranks *r = lend ? lend->ranks : NULL;

	if (r && (r->p != p || r->nframes != p->nframes)) {
		prof_ranks_free(r);
		r = NULL;
	}
	return r;
}

/* Sorts the stacks @a[0..n) by the ranks @rank (see struct prof_ranks),
 * the frames @seen at depths 0 and 1 (paths_check()) by their codes
 * (see sort_paths()). 0 or -ENOMEM. */
static int stacks_sort(const struct prof_profile *p, const uint32_t *rec,
		       const uint8_t *seen, uint32_t *rank, struct kv *a,
		       struct kv *tmp, size_t n, atomic_int *first_done)
{
	size_t nf = p->nframes;
	struct path_codes c = { { rank + 2 * nf, rank + 3 * nf }, { 0, 0 } };

	for (int d = 0; d < 2; d++)
		c.count[d] = sort_frame_codes(seen + d * nf, rank + nf,
					      (uint32_t)nf, rank + (2 + d) * nf);
	return sort_paths(rec, rank, (uint32_t)nf - 1, &c, a, tmp, n, first_done);
}

size_t prof_build_scratch_bytes(size_t nstacks)
{
	return 2 * (nstacks ? nstacks : 1) * sizeof(struct kv);
}

/* The sort's two arrays of @n items (at least one each): in @lend when it
 * holds both (*@own 0), else allocated (*@own 1). 0 or -ENOMEM. */
static int sort_room(const struct prof_scratch *lend, size_t n, struct kv **a,
		     struct kv **tmp, int *own)
{
	size_t m = n ? n : 1;

	*own = !lend || !lend->mem || lend->bytes < prof_build_scratch_bytes(n);
	if (!*own) {
		*a = lend->mem;
		*tmp = *a + m;
		return 0;
	}
	*a = malloc(m * sizeof(**a));
	*tmp = malloc(m * sizeof(**tmp));
	if (*a && *tmp)
		return 0;
	free(*a);
	free(*tmp);
	return -ENOMEM;
}

/* Checks the records (paths_check()) while the frames are ranked on a
 * thread @j (big loads). 0, -EINVAL or -ENOMEM. */
static int check_and_rank(struct prof_profile *p, const uint32_t *rec,
			  size_t len, size_t nstacks, struct kv *a,
			  uint8_t *seen, struct prof_ranks *j, size_t *frames,
			  size_t *deepest)
{
	int err;

	/* Not started ahead (ranks_take()): started here. (Only @running
	 * is read: a job started ahead writes the rest as it ends.) */
	if (!j->running && PARTS_MIN <= nstacks)
		j->running = pthread_create(&j->th, NULL, ranks_run, j) == 0;
	err = paths_check(p, rec, len, nstacks, a, seen, frames, deepest);
	if (j->running)
		pthread_join(j->th, NULL);
	j->running = 0;
	if (err < 0 || nstacks == 0)
		return err;
	return ranks_wait(j);
}

int prof_build_cut(struct prof_profile *p, const uint32_t *rec, size_t len,
		   size_t nstacks, int in_order, size_t cut,
		   const struct prof_scratch *lend)
{
	struct part x = { .rec = rec }, y = { .rec = rec };
	struct build_ahead h;
	size_t frames, deepest, end, at;
	struct kv *a, *tmp;
	uint8_t *seen = NULL;
	struct prof_ranks own_rj = { .p = p, .nframes = p->nframes };
	struct prof_ranks *early = ranks_take(lend, p);
	/* The ranking started ahead, or one of its own. */
	struct prof_ranks *rj = early ? early : &own_rj;
	int err = -ENOMEM, own;

	if (p->nnodes != 1 || sort_room(lend, nstacks, &a, &tmp, &own) < 0) {
		prof_ranks_free(early);
		return p->nnodes != 1 ? -EINVAL : -ENOMEM;
	}
	if (!early)
		own_rj.rank = malloc(4 * (size_t)p->nframes * sizeof(*own_rj.rank));
	seen = calloc(2 * (size_t)p->nframes, 1);
	if (!seen || !rj->rank)
		goto out_a;
	err = check_and_rank(p, rec, len, nstacks, a, seen, rj, &frames,
			     &deepest);
	if (err < 0 || nstacks == 0)
		goto out_a;
	err = -ENOMEM;
	if (cut == BUILD_CUT_AUTO)
		cut = nstacks < PARTS_MIN ? 0 : BUILD_CUT_AUTO;
	else if (nstacks <= cut)
		cut = 0;
	if (!in_order)
		cut = 0;
	x.a = y.a = a;
	x.b = (struct build){ .p = p, .nodes = NULL, .in_order = in_order };
	y.b = (struct build){ .p = p, .nodes = NULL, .in_order = in_order };
	if (build_alloc(&x.b, deepest + 1, nstacks) < 0)
		goto out_a;
	if (cut && build_alloc(&y.b, deepest + 1, nstacks) < 0)
		goto out_x;
	if (prof_nodes_room(p, frames) < 0)
		goto out_y;
	x.b.nodes = y.b.nodes = p->nodes;
	build_ahead_start(&h, p, (size_t)p->nnodes + frames);
	err = stacks_sort(p, rec, seen, rj->rank, a, tmp, nstacks, &h.first_done);
	if (own) {
		/* Not needed past the sort: the nodes take its room. */
		free(tmp);
		tmp = NULL;
	}
	if (err < 0) {
		build_ahead_stop(&h, p);
		goto out_y;
	}
	at = cut ? build_ahead_stop(&h, p) : 0;
	end = count_nodes(a, nstacks, p->nnodes, at, &cut, &y.b.lo);
	build_nodes(&x, &y, nstacks, cut, &h, at, end);
	prof_nodes_release_unused(p);
	p->sorted = !x.b.reordered;
	p->pre_sorted = 1;
out_y:
	build_free(&y.b);
out_x:
	build_free(&x.b);
out_a:
	prof_ranks_free(early);
	free(own_rj.rank);
	free(seen);
	if (own) {
		free(a);
		free(tmp);
	}
	return err;
}

int prof_build(struct prof_profile *p, const uint32_t *rec, size_t len,
	       size_t nstacks, int in_order, const struct prof_scratch *lend)
{
	return prof_build_cut(p, rec, len, nstacks, in_order, BUILD_CUT_AUTO,
			      lend);
}
