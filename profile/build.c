/* SPDX-License-Identifier: MIT */
/*
 * Building a whole tree from stacks (prof_build): the stacks are sorted
 * by their frames' ranks in prof_sort() order, so each node is made once,
 * in preorder, without the lookups that dominate big loads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "profile_impl.h"
#include "sort_impl.h"

/* Sorting queued paths (see prof_build()): each is a record in @rec,
 * its frame count, its value's two halves, then its frame ids, sorted by
 * their frames' ranks (@rank, small enough to stay in the cache). */
struct path_sort {
	const uint32_t *rec;
	const uint32_t *rank;
	unsigned bits;   /* bits of one rank in a key */
	unsigned fields; /* ranks per key */
};

/* Path @o's ranks from @depth on, packed most significant first; 0 past
 * the end of the path, so a path sorts before the paths it leads to. */
static uint64_t path_key(const struct path_sort *s, uint64_t o, size_t depth)
{
	const uint32_t *r = s->rec + o;
	uint64_t k = 0;

	for (unsigned f = 0; f < s->fields; f++) {
		size_t j = depth + f;

		k = k << s->bits | (j < r[0] ? s->rank[r[3 + j]] : 0);
	}
	return k;
}

static int path_cmp(const struct path_sort *s, uint64_t a, uint64_t b,
		    size_t depth)
{
	const uint32_t *ra = s->rec + a, *rb = s->rec + b;

	for (size_t j = depth;; j++) {
		uint32_t x, y;

		if (ra[0] <= j || rb[0] <= j)
			return ra[0] <= j ? (rb[0] <= j ? 0 : -1) : 1;
		x = s->rank[ra[3 + j]];
		y = s->rank[rb[3 + j]];
		if (x != y)
			return x < y ? -1 : 1;
	}
}

/* A range of items whose paths agree before @depth. */
struct run {
	size_t lo, n, depth;
};

/* Sorts @a[lo..lo+n) (paths equal before @depth) by their ranks, with the
 * compare for few items. */
static void paths_few(const struct path_sort *s, struct kv *a, size_t n,
		      size_t depth)
{
	for (size_t i = 1; i < n; i++) {
		struct kv x = a[i];
		size_t j = i;

		for (; j && path_cmp(s, x.val, a[j - 1].val, depth) < 0; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* Takes the last pending run off @stack[0..sp), sorts it by a key of its
 * next few ranks and pushes the runs of equal keys that go on (each to be
 * sorted by the ranks after). Runs are disjoint ranges of @a, and a run
 * uses the same range of @tmp. Returns the new sp. */
static size_t run_step(const struct path_sort *s, struct kv *a,
		       struct kv *tmp, struct run *stack, size_t sp)
{
	struct run r = stack[--sp];
	struct kv *v = a + r.lo;

	if (r.n < 16) {
		paths_few(s, v, r.n, r.depth);
		return sp;
	}
	for (size_t i = 0; i < r.n; i++) {
		if (i + 8 < r.n)
			__builtin_prefetch(s->rec + v[i + 8].val + 3 + r.depth);
		v[i].key = path_key(s, v[i].val, r.depth);
	}
	sort_kv(v, tmp + r.lo, r.n);
	for (size_t i = 0, j; i < r.n; i = j) {
		for (j = i + 1; j < r.n && v[j].key == v[i].key; j++)
			;
		/* Equal keys that end inside are equal paths. */
		if (1 < j - i && (v[i].key & ((1ull << s->bits) - 1)))
			stack[sp++] = (struct run){ r.lo + i, j - i,
						    r.depth + s->fields };
	}
	return sp;
}

/* The runs of one part of the items, sorted on a thread. */
struct runs_job {
	const struct path_sort *s;
	struct kv *a, *tmp;
	struct run *stack;
	size_t sp;
};

static void *runs_sort(void *arg)
{
	struct runs_job *j = arg;

	while (j->sp)
		j->sp = run_step(j->s, j->a, j->tmp, j->stack, j->sp);
	return NULL;
}

/* Item counts from which the runs left after the first key are sorted in
 * two parts, on two threads. */
#define SORT_SPLIT_MIN ((size_t)1 << 16)

/* Sorts the items @a[0..n) (val = a path's record) by their paths'
 * ranks: by a key of the next few ranks, then each run of equal keys
 * by the ranks after, until the paths differ or end. @tmp has room for
 * n items, @stack for n / 2 + 1 runs. On big inputs the runs left after
 * the first key are cut in two parts by position, the second sorted on
 * a thread (runs never cross, so the parts share nothing). */
static void paths_sort(const struct path_sort *s, struct kv *a,
		       struct kv *tmp, struct run *stack, size_t n)
{
	struct runs_job x = { s, a, tmp, stack, 0 }, y = { s, a, tmp, NULL, 0 };
	size_t k = 0;
	pthread_t th;

	stack[0] = (struct run){ 0, n, 0 };
	x.sp = run_step(s, a, tmp, stack, 1);
	while (k < x.sp && stack[k].lo < n / 2)
		k++;
	if (SORT_SPLIT_MIN <= n && k < x.sp &&
	    (y.stack = malloc(((n - stack[k].lo) / 2 + 1) * sizeof(*y.stack)))) {
		y.sp = x.sp - k;
		memcpy(y.stack, stack + k, y.sp * sizeof(*y.stack));
		x.sp = k;
		if (pthread_create(&th, NULL, runs_sort, &y) == 0) {
			runs_sort(&x);
			pthread_join(th, NULL);
		} else {
			runs_sort(&x);
			runs_sort(&y);
		}
		free(y.stack);
		return;
	}
	runs_sort(&x);
}

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

/* The path being built, by depth + 1 (0 = the root). */
struct build {
	struct prof_profile *p;
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
	atomic_size_t *made; /* nodes made so far, for the helper below */
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
	struct prof_node *nodes = b->p->nodes;
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
 * values to its parent. */
static void finish(struct build *b, size_t i)
{
	struct prof_node *nd = &b->p->nodes[b->node[i]];

	nd->total = b->total[i];
	nd->self = b->self[i];
	b->total[i - 1] = sat_add(b->total[i - 1], b->total[i]);
	if (b->in_order)
		return;
	link_kids(b, i);
	if (b->first[i] < b->first[i - 1])
		b->first[i - 1] = b->first[i];
	b->nkids = b->seg[i];
	b->kids[b->nkids++] = (struct kid){ b->first[i], b->node[i] };
}

/* Adds path @o (after the path @prev, @open entries deep): leaves the
 * entries it shares, makes the nodes it adds. Returns its depth. */
static size_t build_path(struct build *b, const uint32_t *rec, uint64_t o,
			 const uint32_t *prev, size_t open)
{
	const uint32_t *r = rec + o;
	uint64_t v = (uint64_t)r[2] << 32 | r[1];
	struct prof_profile *p = b->p;
	size_t n = r[0], k = 0;

	while (k < n && k < open && r[3 + k] == prev[3 + k])
		k++;
	for (; k < open; open--)
		finish(b, open);
	for (size_t j = k; j < n; j++) {
		uint32_t id = p->nnodes++;

		p->nodes[id] = (struct prof_node){ .frame = r[3 + j],
						   .parent = b->node[j] };
		b->node[j + 1] = id;
		b->total[j + 1] = b->self[j + 1] = 0;
		if (b->in_order) {
			if (b->lastkid[j])
				p->nodes[b->lastkid[j]].sibling = id;
			else
				p->nodes[b->node[j]].child = id;
			b->lastkid[j] = id;
			b->lastkid[j + 1] = 0;
			continue;
		}
		b->first[j + 1] = o;
		b->seg[j + 1] = b->nkids;
	}
	b->self[n] = sat_add(b->self[n], v);
	b->total[n] = sat_add(b->total[n], v);
	if (!b->in_order && o < b->first[n])
		b->first[n] = o;
	return n;
}

/* Checks the records, counts their frames and notes where each starts
 * (@a[k].val, room for @nstacks); 0 or -EINVAL. */
static int paths_check(const struct prof_profile *p, const uint32_t *rec,
		       size_t len, size_t nstacks, struct kv *a,
		       size_t *frames, size_t *deepest)
{
	size_t o = 0, k = 0;

	*frames = *deepest = 0;
	for (; o < len && k < nstacks; k++) {
		size_t n;

		if (len - o < 3 || len - o - 3 < rec[o])
			return -EINVAL;
		a[k].val = o;
		n = rec[o];
		for (size_t j = 0; j < n; j++)
			if (rec[o + 3 + j] == 0 || p->nframes <= rec[o + 3 + j])
				return -EINVAL;
		*frames += n;
		if (*deepest < n)
			*deepest = n;
		o += 3 + n;
	}
	return o == len && k == nstacks ? 0 : -EINVAL;
}

struct build_mem {
	uint32_t *rank, *by_rank;
	struct kv *a, *tmp;
	struct run *stack;
	struct build b;
};

static void build_mem_free(struct build_mem *m)
{
	free(m->rank);
	free(m->by_rank);
	free(m->a);
	free(m->tmp);
	free(m->stack);
	free(m->b.node);
	free(m->b.total);
	free(m->b.self);
	free(m->b.first);
	free(m->b.seg);
	free(m->b.kids);
	free(m->b.lastkid);
}

static int build_mem_alloc(struct build_mem *m, size_t nframes,
			   size_t nstacks, size_t deepest, int in_order)
{
	size_t d = deepest + 1;
	int ok;

	m->rank = malloc(nframes * sizeof(*m->rank));
	m->by_rank = malloc(nframes * sizeof(*m->by_rank));
	m->tmp = malloc(nstacks * sizeof(*m->tmp));
	m->stack = malloc((nstacks / 2 + 1) * sizeof(*m->stack));
	m->b.node = malloc(d * sizeof(*m->b.node));
	m->b.total = malloc(d * sizeof(*m->b.total));
	m->b.self = malloc(d * sizeof(*m->b.self));
	ok = m->rank && m->by_rank && m->a && m->tmp && m->stack &&
	     m->b.node && m->b.total && m->b.self;
	if (in_order) {
		m->b.lastkid = malloc(d * sizeof(*m->b.lastkid));
		ok = ok && m->b.lastkid;
	} else {
		m->b.first = malloc(d * sizeof(*m->b.first));
		m->b.seg = malloc(d * sizeof(*m->b.seg));
		m->b.kids = malloc((nstacks + 1) * sizeof(*m->b.kids));
		ok = ok && m->b.first && m->b.seg && m->b.kids;
	}
	if (ok)
		return 0;
	build_mem_free(m);
	return -ENOMEM;
}

/* ---- faulting in the nodes ahead of the builder ---------------------------
 *
 * On big loads most of making nodes is the kernel handing out fresh pages
 * for them. A helper thread asks for the pages (MADV_POPULATE_WRITE) ahead
 * of the builder, on the other core: during the sort it starts on the
 * first ones, then it keeps at most AHEAD nodes ahead of the count the
 * builder publishes. It never writes the array itself; the pages it
 * faulted in past the last node are given back when the build ends. */
#define AHEAD ((size_t)1 << 22)   /* nodes: 128 MiB of them */
#define STEP ((size_t)1 << 16)    /* nodes per request */
#define HELP_MIN ((size_t)1 << 17) /* smaller loads go without */

struct ahead {
	char *nodes;
	size_t from, cap; /* node indexes */
	size_t at;        /* nodes before it are faulted in (when joined) */
	atomic_size_t made;
	atomic_int done;
};

#ifdef MADV_POPULATE_WRITE
static int populate(char *base, size_t size, size_t lo, size_t hi)
{
	uintptr_t page = 4096, a = (uintptr_t)(base + lo * size) & ~(page - 1);
	uintptr_t b = (uintptr_t)(base + hi * size);

	return madvise((void *)a, b - a, MADV_POPULATE_WRITE);
}

static void *populate_ahead(void *arg)
{
	struct ahead *h = arg;
	size_t at = h->from;
	/* The builder makes about 40 nodes a microsecond: a millisecond's nap
	 * costs little of the AHEAD nodes' lead, and few wake-ups. */
	const struct timespec nap = { 0, 1000000 };

	while (at < h->cap && !atomic_load_explicit(&h->done, memory_order_relaxed)) {
		size_t made = atomic_load_explicit(&h->made, memory_order_relaxed);
		size_t to = at + STEP < h->cap ? at + STEP : h->cap;

		if (made + AHEAD < to) {
			nanosleep(&nap, NULL);
			continue;
		}
		if (populate(h->nodes, sizeof(struct prof_node), at, to) < 0)
			break;
		at = to;
		h->at = at;
	}
	return NULL;
}

/* Gives back the whole pages of @base's entries [@lo, @hi) (of @size
 * bytes each), which hold no data. */
static void release(char *base, size_t size, size_t lo, size_t hi)
{
	uintptr_t page = 4096;
	uintptr_t a = ((uintptr_t)(base + lo * size) + page - 1) & ~(page - 1);
	uintptr_t b = (uintptr_t)(base + hi * size) & ~(page - 1);

	if (a < b)
		(void)madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Stops the helper started for @p; what it faulted in past the last node
 * is given back after the build (prof_nodes_release_unused()). */
static void ahead_stop(struct ahead *h, pthread_t th, struct prof_profile *p)
{
	atomic_store(&h->done, 1);
	pthread_join(th, NULL);
	if (p->nodes_faulted < h->at)
		p->nodes_faulted = (uint32_t)h->at;
}

void prof_nodes_release_unused(struct prof_profile *p)
{
	if (p->nnodes < p->nodes_faulted && p->nodes_faulted <= p->node_cap)
		release((char *)p->nodes, sizeof(struct prof_node), p->nnodes,
			p->nodes_faulted);
	p->nodes_faulted = 0;
}

/* Starts the helper for the node array of @p, which has room for @cap
 * nodes; 1 when it runs. */
static int ahead_start(struct ahead *h, pthread_t *th, struct prof_profile *p,
		       size_t cap)
{
	if (cap < HELP_MIN)
		return 0;
	h->nodes = (char *)p->nodes;
	/* Pages faulted in already (by the parser's helper) are skipped. */
	h->from = h->at = p->nnodes < p->nodes_faulted ? p->nodes_faulted : p->nnodes;
	if (cap <= h->from)
		return 0;
	h->cap = cap;
	atomic_init(&h->made, p->nnodes);
	atomic_init(&h->done, 0);
	return pthread_create(th, NULL, populate_ahead, h) == 0;
}
#else
static int ahead_start(struct ahead *h, pthread_t *th, struct prof_profile *p,
		       size_t cap)
{
	(void)h;
	(void)th;
	(void)p;
	(void)cap;
	return 0;
}

static void ahead_stop(struct ahead *h, pthread_t th, struct prof_profile *p)
{
	(void)h;
	(void)th;
	(void)p;
}

void prof_nodes_release_unused(struct prof_profile *p)
{
	p->nodes_faulted = 0;
}
#endif

/* Makes the nodes of the sorted paths in @m->a[0..n), in that order. */
static void build_all(struct build_mem *m, const uint32_t *rec, size_t n)
{
	struct build *b = &m->b;
	struct prof_profile *p = b->p;
	const uint32_t *prev = rec;
	size_t open = 0;

	b->node[0] = 0;
	b->total[0] = b->self[0] = 0;
	if (b->in_order) {
		b->lastkid[0] = 0;
	} else {
		b->first[0] = 0;
		b->seg[0] = 0;
		b->nkids = 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (i + 16 < n) {
			__builtin_prefetch(rec + m->a[i + 16].val);
			__builtin_prefetch(rec + m->a[i + 16].val + 16);
		}
		open = build_path(b, rec, m->a[i].val, prev, open);
		prev = rec + m->a[i].val;
		if (b->made && i % 1024 == 0)
			atomic_store_explicit(b->made, p->nnodes,
					      memory_order_relaxed);
	}
	for (; open; open--)
		finish(b, open);
	if (!b->in_order)
		link_kids(b, 0);
	p->nodes[0].total = sat_add(p->nodes[0].total, b->total[0]);
	p->nodes[0].self = sat_add(p->nodes[0].self, b->self[0]);
}

int prof_build(struct prof_profile *p, const uint32_t *rec, size_t len,
	       size_t nstacks, int in_order)
{
	struct build_mem m = { 0 };
	struct path_sort s = { .rec = rec };
	size_t frames, deepest;
	uint32_t top = p->nframes - 1;
	struct ahead h;
	pthread_t th;
	int helped;

	if (p->nnodes != 1)
		return -EINVAL;
	m.a = malloc((nstacks ? nstacks : 1) * sizeof(*m.a));
	if (!m.a)
		return -ENOMEM;
	if (paths_check(p, rec, len, nstacks, m.a, &frames, &deepest) < 0) {
		free(m.a);
		return -EINVAL;
	}
	if (nstacks == 0) {
		free(m.a);
		return 0;
	}
	if (build_mem_alloc(&m, p->nframes, nstacks, deepest, in_order) < 0)
		return -ENOMEM;
	if (prof_nodes_room(p, frames) < 0) {
		build_mem_free(&m);
		return -ENOMEM;
	}
	helped = ahead_start(&h, &th, p, (size_t)p->nnodes + frames);
	if (sort_frame_ranks(p, m.rank, m.by_rank) < 0) {
		if (helped)
			ahead_stop(&h, th, p);
		build_mem_free(&m);
		return -ENOMEM;
	}
	s.rank = m.rank;
	s.bits = top ? 64 - (unsigned)__builtin_clzll(top) : 1;
	s.fields = 64 / s.bits;
	paths_sort(&s, m.a, m.tmp, m.stack, nstacks);
	m.b.p = p;
	m.b.in_order = in_order;
	m.b.made = helped ? &h.made : NULL;
	build_all(&m, rec, nstacks);
	if (helped)
		ahead_stop(&h, th, p);
	prof_nodes_release_unused(p);
	p->sorted = !m.b.reordered;
	p->pre_sorted = 1;
	build_mem_free(&m);
	return 0;
}
