/* SPDX-License-Identifier: MIT */
/*
 * Sorting sibling lists by how frames read in folded text, so equal names
 * sit together and every writer's output is deterministic; sorting
 * key-value items, and the stacks prof_build() (build.c) makes a tree
 * of, by their frames' ranks (rank.c numbers the frames in that order).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"
#include "sort_impl.h"

/* Byte @i of a frame's folded spelling: name, "_[k]" for kernel frames,
 * then ';'. Returns -1 past the end. */
static int spelled_at(const struct prof_profile *p, const struct prof_frame *f,
		      size_t i)
{
	size_t len = p->str_len[f->name];

	if (i < len)
		return (unsigned char)p->strs[f->name][i];
	i -= len;
	if (f->kind == PROF_KIND_KERNEL) {
		if (i < 4)
			return (unsigned char)"_[k]"[i];
		i -= 4;
	}
	return i == 0 ? ';' : -1;
}

/* Compares two frames' folded spellings bytewise, so sorted siblings give
 * folded lines in the order of LC_ALL=C sort. */
static int spelled_cmp(const struct prof_profile *p,
		       const struct prof_frame *fa, const struct prof_frame *fb)
{
	size_t la = p->str_len[fa->name], lb = p->str_len[fb->name];
	size_t i = la < lb ? la : lb;
	int c = memcmp(p->strs[fa->name], p->strs[fb->name], i);

	if (c)
		return c;
	for (;; i++) {
		int ca = spelled_at(p, fa, i), cb = spelled_at(p, fb, i);

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (ca < 0)
			return 0;
	}
}

int sort_frame_cmp(const struct prof_profile *p, uint32_t a, uint32_t b)
{
	const struct prof_frame *fa = &p->frames[a], *fb = &p->frames[b];
	int c;

	if (a == b)
		return 0;
	c = spelled_cmp(p, fa, fb);
	if (c)
		return c;
	c = strcmp(p->strs[fa->module], p->strs[fb->module]);
	if (c)
		return c;
	c = strcmp(p->strs[fa->file], p->strs[fb->file]);
	if (c)
		return c;
	if (fa->line != fb->line)
		return fa->line < fb->line ? -1 : 1;
	if (fa->kind != fb->kind)
		return fa->kind < fb->kind ? -1 : 1;
	if (fa->cls != fb->cls)
		return fa->cls < fb->cls ? -1 : 1;
	if (fa->lang != fb->lang)
		return fa->lang < fb->lang ? -1 : 1;
	return 0;
}

static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct prof_profile *p = arg;
	uint32_t na = *(const uint32_t *)a, nb = *(const uint32_t *)b;

	return sort_frame_cmp(p, p->nodes[na].frame, p->nodes[nb].frame);
}

/* Sorts the children of @parent using @buf (room for all of them). */
static void sort_children(struct prof_profile *p, uint32_t parent,
			  uint32_t *buf)
{
	uint32_t n = 0, c, i;
	int ordered = 1;

	for (c = p->nodes[parent].child; c; c = p->nodes[c].sibling) {
		if (n && sort_frame_cmp(p, p->nodes[buf[n - 1]].frame,
				   p->nodes[c].frame) > 0)
			ordered = 0;
		buf[n++] = c;
	}
	if (ordered)
		return;
	qsort_r(buf, n, sizeof(*buf), node_cmp, p);
	p->nodes[parent].child = buf[0];
	for (i = 0; i + 1 < n; i++)
		p->nodes[buf[i]].sibling = buf[i + 1];
	p->nodes[buf[n - 1]].sibling = 0;
	if (!p->last_child_stale)
		p->last_child[parent] = buf[n - 1];
}

/* Relinks every sibling list in id order, which is the sorted order when
 * the ids follow the sorted tree's preorder. One pass down the nodes;
 * a parent comes before its children, so it is reset first. The last
 * children come out right. 0 or -ENOMEM. */
static int relink_by_id(struct prof_profile *p)
{
	struct prof_node *nd = p->nodes;
	uint32_t *last;

	if (prof_last_child_ready(p, p->nnodes, 0) < 0)
		return -ENOMEM;
	last = p->last_child;

	nd[0].child = 0;
	last[0] = 0;
	for (uint32_t id = 1; id < p->nnodes; id++) {
		uint32_t parent = nd[id].parent;

		nd[id].child = nd[id].sibling = 0;
		last[id] = 0;
		if (last[parent])
			nd[last[parent]].sibling = id;
		else
			nd[parent].child = id;
		last[parent] = id;
	}
	p->last_child_stale = 0;
	return 0;
}

int prof_sort(struct prof_profile *p)
{
	uint32_t *buf;

	if (p->sorted)
		return 0;
	if (p->pre_sorted) {
		if (relink_by_id(p) < 0)
			return -ENOMEM;
		p->sorted = 1;
		return 0;
	}
	buf = malloc((size_t)p->nnodes * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nnodes; i++)
		if (p->nodes[i].child)
			sort_children(p, i, buf);
	free(buf);
	p->sorted = 1;
	return 0;
}

/* ---- key-value items, sorted by key ------------------------------------- */

static void kv_insertion(struct kv *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct kv x = a[i];
		size_t j = i;

		for (; j && x.key < a[j - 1].key; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* sort_kv() by bytes, least significant first. */
static void sort_kv_lsd(struct kv *a, struct kv *tmp, size_t n)
{
	size_t cnt[8][256];
	struct kv *src = a, *dst = tmp;

	if (n < 64) {
		kv_insertion(a, n);
		return;
	}
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < n; i++) {
		uint64_t k = a[i].key;

		cnt[0][k & 0xff]++;
		cnt[1][k >> 8 & 0xff]++;
		cnt[2][k >> 16 & 0xff]++;
		cnt[3][k >> 24 & 0xff]++;
		cnt[4][k >> 32 & 0xff]++;
		cnt[5][k >> 40 & 0xff]++;
		cnt[6][k >> 48 & 0xff]++;
		cnt[7][k >> 56]++;
	}
	for (unsigned d = 0; d < 8; d++) {
		size_t sum = 0, *c = cnt[d];
		struct kv *t;

		if (c[(a[0].key >> (8 * d)) & 0xff] == n)
			continue;
		for (unsigned b = 0; b < 256; b++) {
			size_t k = c[b];

			c[b] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i].key >> (8 * d)) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Item counts from which sort_kv() first splits the items by their top
 * bits, so the byte passes run on small ranges, in the cache. */
#define KV_SPLIT_MIN ((size_t)1 << 16)
#define KV_SPLIT_BITS 11u

/* sort_kv() of many items: by their top bits into ranges, then each
 * range by sort_kv_lsd(). */
static void sort_kv_split(struct kv *a, struct kv *tmp, size_t n)
{
	uint64_t any = 0, all = ~0ull;
	size_t cnt[(1u << KV_SPLIT_BITS) + 1] = { 0 };
	unsigned top, shift;

	for (size_t i = 0; i < n; i++) {
		any |= a[i].key;
		all &= a[i].key;
	}
	if (any == all)
		return;
	/* The top KV_SPLIT_BITS bits where the keys differ. */
	top = 63 - (unsigned)__builtin_clzll(any ^ all);
	shift = top < KV_SPLIT_BITS ? 0 : top + 1 - KV_SPLIT_BITS;
	for (size_t i = 0; i < n; i++)
		cnt[1 + (a[i].key >> shift & ((1u << KV_SPLIT_BITS) - 1))]++;
	for (unsigned b = 0; b < 1u << KV_SPLIT_BITS; b++)
		cnt[b + 1] += cnt[b];
	for (size_t i = 0; i < n; i++)
		tmp[cnt[a[i].key >> shift & ((1u << KV_SPLIT_BITS) - 1)]++] = a[i];
	/* cnt[b] is now where bucket b + 1 starts. */
	for (unsigned b = 0; b < 1u << KV_SPLIT_BITS; b++) {
		size_t lo = b ? cnt[b - 1] : 0;

		sort_kv_lsd(tmp + lo, a + lo, cnt[b] - lo);
	}
	memcpy(a, tmp, n * sizeof(*a));
}

void sort_kv(struct kv *a, struct kv *tmp, size_t n)
{
	if (n < KV_SPLIT_MIN)
		sort_kv_lsd(a, tmp, n);
	else
		sort_kv_split(a, tmp, n);
}

/* ---- paths sorted by their frames' ranks (for prof_build) ---------------- */

/* Sorting queued paths: each is a record in @rec, its frame count, its
 * value's two halves, then its frame ids, sorted by their frames' ranks
 * (@rank, small enough to stay in the cache). */
struct path_sort {
	const uint32_t *rec;
	const uint32_t *rank;
	unsigned bits;   /* bits of one rank in a key */
	unsigned fields; /* ranks per key */
	/* The first key (from depth 0) holds the frames at depths 0 and 1
	 * by their codes (struct path_codes; NULL: by rank), then ranks, as
	 * many as fit; field f takes width[f] of its used bits. */
	const uint32_t *code[2];
	unsigned fields0, used0;
	unsigned char width[64];
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

/* The first key of path @o (see struct path_sort). */
static uint64_t path_key0(const struct path_sort *s, uint64_t o)
{
	const uint32_t *r = s->rec + o;
	uint64_t k = 0;

	for (unsigned f = 0; f < s->fields0; f++) {
		uint64_t v = 0;

		if (f < r[0])
			v = f < 2 && s->code[f] ? s->code[f][r[3 + f]]
						: s->rank[r[3 + f]];
		k = k << s->width[f] | v;
	}
	return k;
}

/* Leading fields two different first keys share. */
static size_t key0_same(const struct path_sort *s, uint64_t x, uint64_t y)
{
	unsigned at = (unsigned)__builtin_clzll(x ^ y) - (64 - s->used0), f = 0;

	for (; s->width[f] <= at; f++)
		at -= s->width[f];
	return f;
}

/* Fields of a first key before its path ends inside it. */
static size_t key0_len(const struct path_sort *s, uint64_t k)
{
	unsigned shift = s->used0, f = 0;

	for (; f < s->fields0; f++) {
		shift -= s->width[f];
		if (!(k >> shift & ((1ull << s->width[f]) - 1)))
			break;
	}
	return f;
}

/* Leading fields two different keys share. */
static size_t key_same(const struct path_sort *s, uint64_t x, uint64_t y)
{
	unsigned unused = 64 - s->bits * s->fields;

	return ((unsigned)__builtin_clzll(x ^ y) - unused) / s->bits;
}

/* Fields of a key before its path ends inside it (its last field is 0:
 * the ranks before the end are >= 1, those after 0). */
static size_t key_len(const struct path_sort *s, uint64_t k)
{
	return k ? s->fields - (unsigned)__builtin_ctzll(k) / s->bits : 0;
}

/* Frames paths @a and @b share from @depth on (they share those before). */
static size_t path_same(const struct path_sort *s, uint64_t a, uint64_t b,
			size_t depth)
{
	const uint32_t *ra = s->rec + a, *rb = s->rec + b;
	size_t j = depth;

	while (j < ra[0] && j < rb[0] && ra[3 + j] == rb[3 + j])
		j++;
	return j - depth;
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

/* A range of items whose paths agree before @depth; its first item
 * shares @same frames with the item before it. */
struct run {
	size_t lo, n, depth, same;
};

/* Sorts the run @r of @a (fewer than 16 items) with the compare and
 * leaves in each key its length and the frames it shares with the path
 * before (see sort_paths()). */
static void paths_few(const struct path_sort *s, struct kv *a, struct run r)
{
	struct kv *v = a + r.lo;

	for (size_t i = 1; i < r.n; i++) {
		struct kv x = v[i];
		size_t j = i;

		for (; j && path_cmp(s, kv_rec(x.val), kv_rec(v[j - 1].val),
				     r.depth) < 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	for (size_t i = 0; i < r.n; i++) {
		size_t same = i ? r.depth + path_same(s, kv_rec(v[i - 1].val),
						      kv_rec(v[i].val), r.depth)
				: r.same;

		v[i].key = same | (uint64_t)kv_len(s->rec, v[i].val) << 32;
	}
}

/* Takes the last pending run off @stack[0..sp), sorts it by a key of its
 * next few ranks and pushes the runs of equal keys that go on (each to be
 * sorted by the ranks after). The items whose place is final get in
 * their key their length and the frames they share with the path before
 * (see sort_paths()); their headers were just read. Runs are
 * disjoint ranges of @a, and a run uses the same range of @tmp. Returns
 * the new sp. */
static size_t run_step(const struct path_sort *s, struct kv *a,
		       struct kv *tmp, struct run *stack, size_t sp)
{
	struct run r = stack[--sp];
	struct kv *v = a + r.lo;
	int first = r.depth == 0; /* only the first run starts there */
	unsigned fields = first ? s->fields0 : s->fields;
	unsigned lastw = first ? s->width[fields - 1] : s->bits;
	uint64_t last = (1ull << lastw) - 1, prev = 0;

	if (r.n < 16) {
		paths_few(s, a, r);
		return sp;
	}
	for (size_t i = 0; i < r.n; i++) {
		if (i + 8 < r.n)
			__builtin_prefetch(s->rec + kv_rec(v[i + 8].val) + 3 + r.depth);
		v[i].key = first ? path_key0(s, kv_rec(v[i].val))
				 : path_key(s, kv_rec(v[i].val), r.depth);
	}
	sort_kv(v, tmp + r.lo, r.n);
	for (size_t i = 0, j; i < r.n; i = j) {
		uint64_t k = v[i].key;
		size_t same = !i      ? r.same
			      : first ? key0_same(s, prev, k)
				      : r.depth + key_same(s, prev, k);

		for (j = i + 1; j < r.n && v[j].key == k; j++)
			;
		prev = k;
		if (1 < j - i && (k & last)) {
			stack[sp++] = (struct run){ r.lo + i, j - i,
						    r.depth + fields, same };
			continue;
		}
		/* Equal keys that end inside are equal paths. */
		v[i].key = same | (uint64_t)kv_len(s->rec, v[i].val) << 32;
		for (size_t e = i + 1; e < j; e++) {
			uint64_t n = first ? key0_len(s, k) : r.depth + key_len(s, k);

			v[e].key = n | n << 32;
		}
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

/* Sorts by a key of the first ranks, then the runs left in two parts cut
 * by position, the second on a thread (runs never cross, so the parts
 * share nothing). @stack has room for n / 2 + 1 runs. */
static void paths_sort(const struct path_sort *s, struct kv *a,
		       struct kv *tmp, struct run *stack, size_t n,
		       atomic_int *first_done)
{
	struct runs_job x = { s, a, tmp, stack, 0 }, y = { s, a, tmp, NULL, 0 };
	size_t k = 0;
	pthread_t th;

	stack[0] = (struct run){ 0, n, 0, 0 };
	x.sp = run_step(s, a, tmp, stack, 1);
	if (first_done)
		atomic_store_explicit(first_done, 1, memory_order_relaxed);
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

/* Bits to hold 0..@x. */
static unsigned bits_for(uint32_t x)
{
	return x ? 64 - (unsigned)__builtin_clzll(x) : 1;
}

/* Lays out the first key: depths 0 and 1 by code (or rank), then ranks
 * while they fit. */
static void first_key_form(struct path_sort *s, const struct path_codes *c)
{
	unsigned used = 0, f = 0;

	for (; f < 64; f++) {
		unsigned w = s->bits;

		if (f < 2 && c && c->code[f]) {
			s->code[f] = c->code[f];
			w = bits_for(c->count[f]);
		}
		if (64 < used + w)
			break;
		s->width[f] = (unsigned char)w;
		used += w;
	}
	s->fields0 = f;
	s->used0 = used;
}

uint32_t sort_frame_codes(const uint8_t *seen, const uint32_t *by_rank,
			  uint32_t nframes, uint32_t *code)
{
	uint32_t n = 0;

	code[0] = 0;
	for (uint32_t r = 1; r < nframes; r++) {
		uint32_t f = by_rank[r];

		code[f] = seen[f] ? ++n : 0;
	}
	return n;
}

int sort_paths(const uint32_t *rec, const uint32_t *rank, uint32_t top,
	       const struct path_codes *codes, struct kv *a, struct kv *tmp,
	       size_t n, atomic_int *first_done)
{
	struct path_sort s = { .rec = rec, .rank = rank };
	struct run *stack;

	if (n == 0)
		return 0;
	stack = malloc((n / 2 + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	s.bits = bits_for(top);
	s.fields = 64 / s.bits;
	first_key_form(&s, codes);
	paths_sort(&s, a, tmp, stack, n, first_done);
	free(stack);
	return 0;
}
