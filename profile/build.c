/* SPDX-License-Identifier: MIT */
/*
 * A whole tree built at once from stacks (prof_build), the way big files
 * load fast: every frame is ranked in prof_sort() order, the stacks are
 * sorted by their frames' ranks, and each node is then made once, in
 * preorder, without the lookups that would dominate (one per frame of
 * every stack, at random in a big index).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return UINT64_MAX - a < b ? UINT64_MAX : a + b;
}

/* ---- parts on threads -------------------------------------------------- */

void prof_run_parts(void *(*fn)(void *), void *args, size_t size, unsigned n)
{
	pthread_t *th = n > 1 ? calloc(n, sizeof(*th)) : NULL;
	char *ok = n > 1 ? calloc(n, 1) : NULL;

	for (unsigned i = 1; th && ok && i < n; i++)
		ok[i] = pthread_create(&th[i], NULL, fn, (char *)args + i * size) == 0;
	fn(args);
	for (unsigned i = 1; i < n; i++) {
		if (ok && ok[i])
			pthread_join(th[i], NULL);
		else
			fn((char *)args + i * size);
	}
	free(th);
	free(ok);
}

/* ---- items sorted by key ---------------------------------------------- */

/* Sorts @a[0..n) by key, stable: least significant byte first, skipping
 * the bytes where every key agrees. @tmp has room for n. */
static void sort_lsd(struct prof_item *a, struct prof_item *tmp, size_t n)
{
	size_t cnt[8][256] = { { 0 } };
	struct prof_item *src = a, *dst = tmp;

	for (size_t i = 1; n < 32 && i < n; i++) {
		struct prof_item x = a[i];
		size_t j = i;

		for (; j && x.key < a[j - 1].key; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
	if (n < 32)
		return;
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < 8; d++)
			cnt[d][a[i].key >> (8 * d) & 0xff]++;
	for (unsigned d = 0; d < 8; d++) {
		size_t sum = 0, *c = cnt[d];
		struct prof_item *t;

		if (c[a[0].key >> (8 * d) & 0xff] == n)
			continue;
		for (unsigned b = 0; b < 256; b++) {
			size_t k = c[b];

			c[b] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[src[i].key >> (8 * d) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Top key bits that split many items into ranges first, so the byte
 * passes run on small ranges, in the cache. */
#define SPLIT_BITS 11u

/* sort_lsd() of many items: by their top differing bits, then each range. */
static void sort_kv(struct prof_item *a, struct prof_item *tmp, size_t n)
{
	size_t cnt[(1u << SPLIT_BITS) + 1] = { 0 };
	uint64_t any = 0, all = ~0ull, mask = (1u << SPLIT_BITS) - 1;
	unsigned top, shift;

	if (n < ((size_t)1 << 16)) {
		sort_lsd(a, tmp, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		any |= a[i].key;
		all &= a[i].key;
	}
	if (any == all)
		return;
	top = 63 - (unsigned)__builtin_clzll(any ^ all);
	shift = top < SPLIT_BITS ? 0 : top + 1 - SPLIT_BITS;
	for (size_t i = 0; i < n; i++)
		cnt[1 + (a[i].key >> shift & mask)]++;
	for (unsigned b = 0; b < mask + 1; b++)
		cnt[b + 1] += cnt[b];
	for (size_t i = 0; i < n; i++)
		tmp[cnt[a[i].key >> shift & mask]++] = a[i];
	/* cnt[b] is now where range b + 1 starts. */
	for (unsigned b = 0; b < mask + 1; b++) {
		size_t lo = b ? cnt[b - 1] : 0;

		sort_lsd(tmp + lo, a + lo, cnt[b] - lo);
	}
	memcpy(a, tmp, n * sizeof(*a));
}

/* ---- frames ranked --------------------------------------------------- */

/* Bytes @at to @at + 7 of frame @f's spelling, big-endian, zero-padded:
 * a smaller key means a smaller spelling from @at on. */
static uint64_t spelled_key(const struct prof_profile *p, uint32_t f, size_t at)
{
	const struct prof_frame *fr = &p->frames[f];
	const unsigned char *s = (const unsigned char *)p->strs[fr->name];
	uint64_t k = 0;

	if (at + 8 <= p->str_len[fr->name]) {
		for (size_t i = 0; i < 8; i++)
			k = k << 8 | s[at + i];
		return k;
	}
	for (size_t i = 0; i < 8; i++) {
		int c = prof_spelled_at(p, fr, at + i);

		k = k << 8 | (uint64_t)(c < 0 ? 0 : c);
	}
	return k;
}

static int rank_cmp(const void *a, const void *b, void *arg)
{
	return prof_frame_cmp(arg, (uint32_t)((const struct prof_item *)a)->at,
			 (uint32_t)((const struct prof_item *)b)->at);
}

/* Orders @a[0..n), frames whose spellings agree before byte 8 * @round
 * (their last key was @key), by the next 8 bytes while the spellings go
 * on, a few rounds, then by frame_cmp(): frames that share a long
 * prefix (namespaces) are sorted by keys, not by compares that each
 * read two strings. @tmp has room for n. */
static void rank_ties(const struct prof_profile *p, struct prof_item *a,
		      struct prof_item *tmp, size_t n, uint64_t key, unsigned round)
{
	/* A zero last byte: both spellings ended (or hold a NUL). */
	if ((key & 0xff) == 0 || round == 8 || n < 8) {
		qsort_r(a, n, sizeof(*a), rank_cmp, (void *)p);
		return;
	}
	for (size_t i = 0; i < n; i++)
		a[i].key = spelled_key(p, (uint32_t)a[i].at, 8 * (size_t)round);
	sort_kv(a, tmp, n);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (1 < j - i)
			rank_ties(p, a + i, tmp, j - i, a[i].key, round + 1);
	}
}

/* Numbers every frame of @p in prof_sort() order into @rank (from 1;
 * frame 0, the root's, gets 0). 0 or -ENOMEM. */
static int rank_frames(const struct prof_profile *p, uint32_t *rank)
{
	size_t n = p->nframes - 1;
	struct prof_item *a = malloc((n + 1) * sizeof(*a));
	struct prof_item *tmp = malloc((n + 1) * sizeof(*tmp));

	if (!a || !tmp) {
		free(a);
		free(tmp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (struct prof_item){ spelled_key(p, (uint32_t)i + 1, 0), i + 1 };
	sort_kv(a, tmp, n);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (1 < j - i)
			rank_ties(p, a + i, tmp, j - i, a[i].key, 1);
	}
	rank[0] = 0;
	for (size_t i = 0; i < n; i++)
		rank[a[i].at] = (uint32_t)i + 1;
	free(a);
	free(tmp);
	return 0;
}

/* ---- stacks sorted by their frames' ranks ------------------------------ */

/* Sorting stacks: a key packs the ranks of @fields frames of a stack,
 * @bits each, most significant first, 0 past the stack's end (so a
 * stack sorts before the stacks it leads to). */
struct path_sort {
	const uint32_t *rec, *rank;
	unsigned bits, fields;
};

static const uint32_t *item_rec(const struct path_sort *s, uint64_t at)
{
	return s->rec + (at & (((uint64_t)1 << PROF_ITEM_BITS) - 1));
}

/* The stack's frame count, from its item when short enough. */
static uint32_t item_len(const struct path_sort *s, uint64_t at)
{
	uint32_t n = (uint32_t)(at >> PROF_ITEM_BITS);

	return n < PROF_ITEM_LEN_MAX ? n : item_rec(s, at)[0];
}

static uint64_t path_key(const struct path_sort *s, uint64_t at, size_t depth)
{
	const uint32_t *r = item_rec(s, at);
	uint64_t k = 0;

	for (size_t j = depth; j < depth + s->fields; j++)
		k = k << s->bits | (j < r[0] ? s->rank[r[3 + j]] : 0);
	return k;
}

static int path_cmp(const struct path_sort *s, uint64_t a, uint64_t b,
		    size_t depth, size_t *same)
{
	const uint32_t *ra = item_rec(s, a), *rb = item_rec(s, b);
	size_t j = depth;

	for (; j < ra[0] && j < rb[0] && ra[3 + j] == rb[3 + j]; j++)
		;
	*same = j;
	if (j == ra[0] || j == rb[0])
		return (j < rb[0]) - (j < ra[0]);
	return s->rank[ra[3 + j]] < s->rank[rb[3 + j]] ? -1 : 1;
}

/* Items @lo..@lo + n whose stacks agree before @depth; the first shares
 * @same frames with the item before it. */
struct run {
	size_t lo, n, depth, same;
};

/* The item's key once its place is final: the frames it shares with
 * the item before, and its own frame count. */
static uint64_t final_key(size_t same, uint32_t len)
{
	return same | (uint64_t)len << 32;
}

/* Sorts the run @r of few items by compares and finishes their keys. */
static void run_few(const struct path_sort *s, struct prof_item *a, struct run r)
{
	struct prof_item *v = a + r.lo;
	size_t same;

	for (size_t i = 1; i < r.n; i++) {
		struct prof_item x = v[i];
		size_t j = i;

		for (; j && path_cmp(s, x.at, v[j - 1].at, r.depth, &same) < 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	for (size_t i = 0; i < r.n; i++) {
		if (i)
			path_cmp(s, v[i - 1].at, v[i].at, r.depth, &same);
		v[i].key = final_key(i ? same : r.same, item_len(s, v[i].at));
	}
}

/* Sorts the run @r by a key of its next ranks; pushes the groups of
 * equal keys whose stacks go on onto @stack (at @sp), finishes the keys
 * of the items whose place is final. Returns the new sp. */
static size_t run_step(const struct path_sort *s, struct prof_item *a,
		       struct prof_item *tmp, struct run r, struct run *stack,
		       size_t sp)
{
	struct prof_item *v = a + r.lo;
	unsigned unused = 64 - s->bits * s->fields;
	uint64_t last = ((uint64_t)1 << s->bits) - 1, prev = 0;

	if (r.n < 16) {
		run_few(s, a, r);
		return sp;
	}
	for (size_t i = 0; i < r.n; i++) {
		if (i + 8 < r.n)
			__builtin_prefetch(item_rec(s, v[i + 8].at) + 3 + r.depth);
		v[i].key = path_key(s, v[i].at, r.depth);
	}
	sort_kv(v, tmp + r.lo, r.n);
	for (size_t i = 0, j; i < r.n; i = j) {
		uint64_t k = v[i].key;
		size_t same = i ? r.depth + ((unsigned)__builtin_clzll(prev ^ k) -
					     unused) / s->bits : r.same;

		for (j = i + 1; j < r.n && v[j].key == k; j++)
			;
		prev = k;
		if (1 < j - i && (k & last)) {
			stack[sp++] = (struct run){ r.lo + i, j - i,
						    r.depth + s->fields, same };
			continue;
		}
		/* Equal keys that end inside the key are equal stacks. */
		for (size_t e = i; e < j; e++) {
			uint32_t len = item_len(s, v[e].at);

			v[e].key = final_key(e == i ? same : len, len);
		}
	}
	return sp;
}

/* Sorts the items by their stacks' frames' @rank (largest @top) and
 * leaves in each key the frames it shares with the item before and its
 * own frame count. 0 or -ENOMEM. */
static int sort_stacks(const uint32_t *rec, const uint32_t *rank, uint32_t top,
		       struct prof_item *a, size_t n)
{
	struct path_sort s = { rec, rank, 64 - (unsigned)__builtin_clzll(top | 1), 0 };
	struct prof_item *tmp = malloc(n * sizeof(*tmp));
	struct run *stack = malloc((n / 2 + 1) * sizeof(*stack));
	size_t sp = 1;

	if (!tmp || !stack) {
		free(tmp);
		free(stack);
		return -ENOMEM;
	}
	s.fields = 64 / s.bits;
	stack[0] = (struct run){ 0, n, 0, 0 };
	while (sp) {
		sp--;
		sp = run_step(&s, a, tmp, stack[sp], stack, sp);
	}
	free(tmp);
	free(stack);
	return 0;
}

/* ---- the tree, made in order ------------------------------------------ */

/* What a part leaves for the nodes of the part before it, which that part
 * may still write: values to add, and a first child (@child) or next
 * sibling (@link) it gives such a node. */
struct fix {
	uint32_t node, link;
	int child;
	uint64_t total, self;
};

/* A part of the sorted items, @a[from..to), made from id @next on; the
 * path being built, by depth + 1 (0 = the root): its nodes, the values
 * gathered under them so far, each one's last child. Nodes below @lo are
 * the part before's: what goes to them waits in @fixes. */
struct path {
	struct prof_node *nodes;
	const uint32_t *rec;
	const struct prof_item *a;
	size_t from, to;
	uint32_t next, lo;
	uint32_t *node, *last;
	uint64_t *total, *self;
	/* Without @first: none. Else each entry's first stack (the least
	 * record offset: records lie in text order) and per node, once
	 * finished, @firsts. */
	uint64_t *first, *firsts;
	struct fix *fixes;
	size_t nfix;
};

static const uint32_t *rec_of(const struct path *b, size_t i)
{
	return b->rec + (b->a[i].at & (((uint64_t)1 << PROF_ITEM_BITS) - 1));
}

/* Path entry @i (>= 1) is complete: its node gets its values (or a fix
 * does), its parent its total. */
static void finish(struct path *b, size_t i)
{
	uint32_t x = b->node[i];

	b->total[i - 1] = sat_add(b->total[i - 1], b->total[i]);
	if (x < b->lo) {
		b->fixes[b->nfix++] = (struct fix){ x, 0, 0, b->total[i], b->self[i] };
		return;
	}
	b->nodes[x].total = b->total[i];
	b->nodes[x].self = b->self[i];
	if (b->first) {
		b->firsts[x] = b->first[i];
		if (b->first[i] < b->first[i - 1])
			b->first[i - 1] = b->first[i];
	}
}

/* Makes the nodes of part @arg, then finishes its entries. */
static void *make_nodes(void *arg)
{
	struct path *b = arg;
	struct prof_node *nodes = b->nodes;
	size_t open = b->from ? (uint32_t)b->a[b->from].key : 0;

	for (size_t i = b->from; i < b->to; i++) {
		const uint32_t *r = rec_of(b, i);
		size_t k = (uint32_t)b->a[i].key, len = b->a[i].key >> 32;
		uint64_t v = (uint64_t)r[2] << 32 | r[1];

		if (i + 8 < b->to)
			__builtin_prefetch(rec_of(b, i + 8));
		for (; k < open; open--)
			finish(b, open);
		for (size_t j = k; j < len; j++) {
			uint32_t id = b->next++, up = b->node[j], left = b->last[j];

			nodes[id] = (struct prof_node){ .frame = r[3 + j], .parent = up };
			if ((left ? left : up) < b->lo)
				b->fixes[b->nfix++] = (struct fix){ left ? left : up, id, !left, 0, 0 };
			else if (left)
				nodes[left].sibling = id;
			else
				nodes[up].child = id;
			b->last[j] = id;
			b->node[j + 1] = id;
			b->last[j + 1] = 0;
			b->total[j + 1] = b->self[j + 1] = 0;
			if (b->first)
				b->first[j + 1] = UINT64_MAX;
		}
		open = len;
		if (b->first && b->a[i].at << (64 - PROF_ITEM_BITS) < b->first[len])
			b->first[len] = b->a[i].at << (64 - PROF_ITEM_BITS);
		b->self[len] = sat_add(b->self[len], v);
		b->total[len] = sat_add(b->total[len], v);
	}
	for (; open; open--)
		finish(b, open);
	return NULL;
}

/* Sets the path of part @b, which starts at item b->from on the nodes the
 * part before made (from id b->lo): the entries the first item shares
 * with the item before, found from the items' lengths and shared counts
 * walking back from b->lo, and each one's last child. */
static void part_enter(struct path *b)
{
	const struct prof_item *a = b->a;
	size_t k = (uint32_t)a[b->from].key, top = a[b->from - 1].key >> 32;
	uint32_t id = b->lo;

	if (k + 1 < top)
		top = k + 1;
	for (size_t i = b->from; top && i--;) {
		size_t ki = (uint32_t)a[i].key, len = a[i].key >> 32;

		id -= (uint32_t)(len - ki); /* item i's first new node */
		for (; ki < top; top--)
			b->node[top] = id + (uint32_t)(top - 1 - ki);
	}
	b->node[0] = 0;
	for (size_t j = 0; j <= k; j++) {
		b->total[j] = b->self[j] = 0;
		b->last[j] = j < (a[b->from - 1].key >> 32) ? b->node[j + 1] : 0;
	}
}

/* Gives the part before's nodes what part @b left for them. */
static void part_fix(struct prof_node *nodes, const struct path *b)
{
	for (size_t i = 0; i < b->nfix; i++) {
		const struct fix *f = &b->fixes[i];

		if (f->link && f->child)
			nodes[f->node].child = f->link;
		else if (f->link)
			nodes[f->node].sibling = f->link;
		nodes[f->node].total = sat_add(nodes[f->node].total, f->total);
		nodes[f->node].self = sat_add(nodes[f->node].self, f->self);
	}
}

/* Path arrays for @deep + 1 entries. 0 or -ENOMEM. */
static int path_alloc(struct path *b, size_t deep)
{
	b->node = malloc((deep + 2) * sizeof(*b->node));
	b->last = malloc((deep + 2) * sizeof(*b->last));
	b->total = malloc((deep + 2) * sizeof(*b->total));
	b->self = malloc((deep + 2) * sizeof(*b->self));
	b->fixes = malloc(2 * (deep + 2) * sizeof(*b->fixes));
	return b->node && b->last && b->total && b->self && b->fixes ? 0 : -ENOMEM;
}

static void path_free(struct path *b)
{
	free(b->node);
	free(b->last);
	free(b->total);
	free(b->self);
	free(b->first);
	free(b->firsts);
	free(b->fixes);
}

/* Items from which the nodes are made in two parts, on two threads. */
#define PARTS_MIN ((size_t)1 << 16)

/* Makes the nodes of the sorted items @a[0..n) (@made of them, from id
 * 1): in two parts of about as many nodes on two threads when many and
 * @two, else in one. */
static void build_nodes(struct prof_profile *p, struct path *x, struct path *y,
			size_t n, size_t made, int two)
{
	uint32_t id = 1;
	size_t cut = 0;

	for (size_t i = 0; two && PARTS_MIN <= n && i < n; i++) {
		if (made / 2 <= id - 1u && (uint32_t)x->a[i].key) {
			cut = i;
			break;
		}
		id += (uint32_t)((x->a[i].key >> 32) - (uint32_t)x->a[i].key);
	}
	x->from = 0;
	x->to = cut ? cut : n;
	x->next = 1;
	x->node[0] = x->last[0] = 0;
	x->total[0] = x->self[0] = 0;
	if (x->first)
		x->first[0] = UINT64_MAX;
	if (!cut) {
		make_nodes(x);
	} else {
		y->from = cut;
		y->to = n;
		y->next = y->lo = id;
		part_enter(y);
		prof_run_parts(make_nodes, x, (char *)y - (char *)x, 2);
		part_fix(p->nodes, y);
	}
	p->nodes[0].total = sat_add(x->total[0], cut ? y->total[0] : 0);
	p->nodes[0].self = sat_add(x->self[0], cut ? y->self[0] : 0);
	p->nnodes = (uint32_t)made + 1;
}

static int first_cmp(const void *a, const void *b, void *arg)
{
	const uint64_t *firsts = arg;
	uint64_t x = firsts[*(const uint32_t *)a], y = firsts[*(const uint32_t *)b];

	return (x > y) - (x < y);
}

/* Links every node's children in the order the stacks first reached
 * them (@firsts), as prof_add_stack() of each stack would, using @buf
 * (room for every node). Returns 1 when some came out of sorted order. */
static int relink_first(struct prof_profile *p, const uint64_t *firsts,
			uint32_t *buf)
{
	struct prof_node *nd = p->nodes;
	int moved = 0;

	for (uint32_t x = 0; x < p->nnodes; x++) {
		uint32_t n = 0;
		int ordered = 1;

		for (uint32_t c = nd[x].child; c; c = nd[c].sibling) {
			ordered &= !n || firsts[buf[n - 1]] < firsts[c];
			buf[n++] = c;
		}
		if (ordered)
			continue;
		moved = 1;
		qsort_r(buf, n, sizeof(*buf), first_cmp, (void *)firsts);
		nd[x].child = buf[0];
		for (uint32_t i = 0; i + 1 < n; i++)
			nd[buf[i]].sibling = buf[i + 1];
		nd[buf[n - 1]].sibling = 0;
	}
	return moved;
}

int prof_build(struct prof_profile *p, const uint32_t *rec,
	       struct prof_item *items, size_t n, int in_order)
{
	uint32_t *rank = malloc((size_t)p->nframes * sizeof(*rank));
	struct path b[2] = { { .rec = rec, .a = items }, { .rec = rec, .a = items } };
	uint32_t *buf = NULL;
	size_t made = 0, deep = 0;
	int err = -ENOMEM;

	if (p->nnodes != 1) {
		free(rank);
		return -EINVAL;
	}
	if (!rank || rank_frames(p, rank) < 0 ||
	    (n && sort_stacks(rec, rank, p->nframes - 1, items, n) < 0))
		goto out;
	for (size_t i = 0; i < n; i++) {
		made += (items[i].key >> 32) - (uint32_t)items[i].key;
		if (deep < items[i].key >> 32)
			deep = items[i].key >> 32;
	}
	if (!in_order) {
		/* Room to relink in the text's order, made before the nodes. */
		b[0].first = malloc((deep + 2) * sizeof(*b[0].first));
		b[0].firsts = malloc((made + 1) * sizeof(*b[0].firsts));
		buf = malloc((made + 1) * sizeof(*buf));
	}
	if (path_alloc(&b[0], deep) < 0 || (in_order && path_alloc(&b[1], deep) < 0) ||
	    (!in_order && (!b[0].first || !b[0].firsts || !buf)) ||
	    (uint64_t)UINT32_MAX - 1 < made || prof_nodes_room(p, made) < 0)
		goto out;
	b[0].nodes = b[1].nodes = p->nodes;
	/* Text order needs the first stacks of one walk: one part. */
	build_nodes(p, &b[0], &b[1], n, made, in_order);
	p->pre_sorted = 1;
	p->sorted = in_order || !relink_first(p, b[0].firsts, buf);
	err = 0;
out:
	free(rank);
	path_free(&b[0]);
	path_free(&b[1]);
	free(buf);
	return err;
}
