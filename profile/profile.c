/* SPDX-License-Identifier: MIT */
/*
 * The profile's life cycle and its call tree, its sibling order included
 * (the strings and frames it interns are in intern.c, a whole tree made
 * at once in build.c).
 *
 * Open-addressing hash tables (linear probing, power-of-two sizes, slot
 * value 0 = empty) index the strings, the frames and the tree's edges.
 * The edge table is keyed by (parent node, frame), so prof_add_stack() costs
 * one probe per frame: O(depth) per sample whatever the tree's size, and
 * less when the stack shares a prefix with the previous one. Nodes
 * appended in bulk (prof_child_append, prof_merge) join the edge table
 * only when a later lookup needs them.
 */
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "profile_impl.h"

/* ---- hashing ------------------------------------------------------------ */

static uint64_t hash_edge(uint32_t parent, uint32_t frame)
{
	return prof_mix64(((uint64_t)parent << 32) | frame);
}

/* Tables and arrays of this size or more ask for huge pages: their
 * accesses are random, and 4 KiB pages make each one a TLB miss too. */
#define HUGE_SIZE (4u << 20)
#define HUGE_PAGE (2u << 20)

void prof_want_huge(void *a, size_t size)
{
	uintptr_t lo = ((uintptr_t)a + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)a + size) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (HUGE_SIZE <= size && lo < hi)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

/* calloc() that asks for huge pages when big; free with free(). */
void *prof_big_calloc(size_t n, size_t size)
{
	void *a;

	if (n == 0 || size == 0 || (SIZE_MAX - HUGE_PAGE) / size < n)
		return calloc(n, size);
	if (n * size < HUGE_SIZE) {
		/* Cache-line aligned: tables probe a line at a time. The
		 * memset writes pages calloc() might have left untouched;
		 * the tables that come here fill them all at a quarter full
		 * anyway. */
		size_t bytes = (n * size + 63) & ~(size_t)63;

		a = aligned_alloc(64, bytes);
		if (a)
			memset(a, 0, bytes);
		return a;
	}
	a = aligned_alloc(HUGE_PAGE, (n * size + HUGE_PAGE - 1) &
				     ~(size_t)(HUGE_PAGE - 1));
	if (!a)
		return NULL;
	prof_want_huge(a, n * size);
	memset(a, 0, n * size);
	return a;
}

/* Grows an array of @size-byte elements to hold @need, asking for huge
 * pages with @huge (for arrays read and written in random order; those
 * written front to back fault in faster without). 0 or -ENOMEM. */
int prof_grow_how(void **arr, uint32_t *cap, uint64_t need, size_t size,
		    int huge)
{
	uint64_t n = *cap ? *cap : 16;
	void *a;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if ((uint64_t)UINT32_MAX < n || SIZE_MAX / size < n)
		return -ENOMEM;
	a = realloc(*arr, n * size);
	if (!a)
		return -ENOMEM;
	if (huge)
		prof_want_huge(a, n * size);
	*arr = a;
	*cap = (uint32_t)n;
	return 0;
}

int prof_grow_size(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *a;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (SIZE_MAX / 2 / size < n)
			return -ENOMEM;
		n *= 2;
	}
	a = realloc(*arr, n * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = n;
	return 0;
}

int prof_grow(void **arr, uint32_t *cap, uint64_t need, size_t size)
{
	return prof_grow_how(arr, cap, need, size, 1);
}

/* ---- life cycle ------------------------------------------------------------ */

struct prof_profile *prof_new(enum prof_unit unit)
{
	struct prof_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->meta.unit = unit;
	p->strs = calloc(16, sizeof(*p->strs));
	p->str_len = calloc(16, sizeof(*p->str_len));
	p->frames = calloc(16, sizeof(*p->frames));
	p->nodes = calloc(16, sizeof(*p->nodes));
	p->last_child = calloc(16, sizeof(*p->last_child));
	if (!p->strs || !p->str_len || !p->frames ||
	    !p->nodes || !p->last_child) {
		prof_free(p);
		return NULL;
	}
	p->str_cap = p->frame_cap = p->node_cap = p->last_child_cap = 16;
	p->strs[0] = "";
	p->nstr = p->nframes = p->nnodes = 1;
	p->edges_indexed = 1;
	p->sorted = 1;
	return p;
}

void prof_free(struct prof_profile *p)
{
	if (!p)
		return;
	while (p->chunks) {
		struct str_chunk *next = p->chunks->next;

		free(p->chunks);
		p->chunks = next;
	}
	free(p->strs);
	free(p->str_len);
	free(p->last_frames);
	free(p->last_nodes);
	free(p->str_index.slots);
	free(p->frames);
	free(p->frame_index.slots);
	free(p->mappings);
	free(p->mapping_index.slots);
	free(p->places);
	free(p->nodes);
	free(p->last_child);
	free(p->edge_index.slots);
	free(p);
}

struct prof_meta *prof_meta(struct prof_profile *p)
{
	return &p->meta;
}

const struct prof_meta *prof_meta_const(const struct prof_profile *p)
{
	return &p->meta;
}

/* ---- the call tree ------------------------------------------------------------- */

/* Makes room so that @extra more edges fit under a 3/4 load factor.
 * Returns 0 or -ENOMEM. */
static int edge_reserve(struct edge_table *t, uint32_t extra)
{
	uint64_t need = (uint64_t)t->used + extra;
	uint64_t cap = t->cap ? t->cap : MIN_TABLE;
	struct edge_slot *slots;

	while (cap * 3 < need * 4)
		cap *= 2;
	if (cap == t->cap)
		return 0;
	if ((uint64_t)UINT32_MAX < cap)
		return -ENOMEM;
	slots = prof_big_calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->cap; i++) {
		const struct edge_slot *sl = &t->slots[i];
		uint64_t j;

		if (!sl->id)
			continue;
		j = hash_edge(sl->parent, sl->frame) & (cap - 1);
		while (slots[j].id)
			j = (j + 1) & (cap - 1);
		slots[j] = *sl;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = (uint32_t)cap;
	return 0;
}

/* Stores edge (@parent, @frame) -> @id; room must have been reserved. */
static void edge_insert(struct edge_table *t, uint32_t parent, uint32_t frame,
			uint32_t id)
{
	uint32_t mask = t->cap - 1, j = (uint32_t)hash_edge(parent, frame) & mask;

	while (t->slots[j].id)
		j = (j + 1) & mask;
	t->slots[j] = (struct edge_slot){ parent, frame, id, 0 };
	t->used++;
}

/* Looks (parent, frame) up in the edge index only; 0 when absent. */
static uint32_t edge_lookup(const struct prof_profile *p, uint32_t parent,
			    uint32_t frame)
{
	const struct edge_slot *slots = p->edge_index.slots;
	uint32_t mask, j;

	if (!p->edge_index.cap)
		return 0;
	mask = p->edge_index.cap - 1;
	for (j = (uint32_t)hash_edge(parent, frame) & mask; slots[j].id;
	     j = (j + 1) & mask)
		if (slots[j].parent == parent && slots[j].frame == frame)
			return slots[j].id;
	return 0;
}

uint32_t prof_child_find(const struct prof_profile *p, uint32_t parent,
			 uint32_t frame)
{
	uint32_t id;

	if (p->edges_indexed < p->nnodes) {
		/* Appended without the index (prof_child_append): scan. */
		if (p->nnodes <= parent)
			return 0;
		for (id = p->nodes[parent].child; id; id = p->nodes[id].sibling)
			if (p->nodes[id].frame == frame)
				return id;
		return 0;
	}
	return edge_lookup(p, parent, frame);
}

/* Indexes the nodes appended by prof_child_append(). 0 or -ENOMEM. */
static int edges_index(struct prof_profile *p)
{
	if (p->nnodes <= p->edges_indexed)
		return 0;
	if (edge_reserve(&p->edge_index, p->nnodes - p->edges_indexed) < 0)
		return -ENOMEM;
	for (uint32_t id = p->edges_indexed; id < p->nnodes; id++)
		edge_insert(&p->edge_index, p->nodes[id].parent,
			    p->nodes[id].frame, id);
	p->edges_indexed = p->nnodes;
	return 0;
}

/* Rebuilds every node's last child from the sibling links. */
static void last_child_rebuild(struct prof_profile *p)
{
	for (uint32_t id = 0; id < p->nnodes; id++) {
		uint32_t c = p->nodes[id].child;

		while (c && p->nodes[c].sibling)
			c = p->nodes[c].sibling;
		p->last_child[id] = c;
	}
}

int prof_last_child_ready(struct prof_profile *p, uint64_t need, int rebuild)
{
	if (need < p->nnodes)
		need = p->nnodes;
	if (prof_grow_how((void **)&p->last_child, &p->last_child_cap, need,
		     sizeof(*p->last_child), 0) < 0)
		return -ENOMEM;
	if (rebuild && p->last_child_stale) {
		last_child_rebuild(p);
		p->last_child_stale = 0;
	}
	return 0;
}

/* Makes room for @extra more nodes in the arrays and, with @indexed, the
 * edge index (brought up to date), so the following node_child() or
 * node_append() calls cannot fail; with @links, the last children too
 * (for appending). Returns 0 or -ENOMEM. */
static int nodes_reserve_how(struct prof_profile *p, size_t extra, int indexed,
			     int links)
{
	uint64_t need = (uint64_t)p->nnodes + extra;

	if ((uint64_t)UINT32_MAX - 1 < need)
		return -ENOMEM;
	if (indexed && (edges_index(p) < 0 ||
			edge_reserve(&p->edge_index, (uint32_t)extra) < 0))
		return -ENOMEM;
	if (prof_grow_how((void **)&p->nodes, &p->node_cap, need, sizeof(*p->nodes),
		     indexed) < 0)
		return -ENOMEM;
	if (links)
		return prof_last_child_ready(p, need, 1);
	p->last_child_stale = 1;
	return 0;
}

int prof_nodes_room(struct prof_profile *p, size_t extra)
{
	uint64_t need = (uint64_t)p->nnodes + extra;

	if ((uint64_t)UINT32_MAX - 1 < need)
		return -ENOMEM;
	p->last_child_stale = 1;
	/* Huge pages: a big tree's nodes are most of a load's fresh memory,
	 * and a fault a 4 KiB page costs more than making the nodes. */
	return prof_grow_how((void **)&p->nodes, &p->node_cap, need,
			     sizeof(*p->nodes), 1);
}

static int nodes_reserve(struct prof_profile *p, size_t extra)
{
	return nodes_reserve_how(p, extra, 1, 1);
}

/* Appends a new child of @parent for @frame, without the index. */
static uint32_t node_append(struct prof_profile *p, uint32_t parent,
			    uint32_t frame)
{
	uint32_t id = p->nnodes++;

	p->nodes[id] = (struct prof_node){ .frame = frame, .parent = parent };
	p->last_child[id] = 0;
	if (p->last_child[parent])
		p->nodes[p->last_child[parent]].sibling = id;
	else
		p->nodes[parent].child = id;
	p->last_child[parent] = id;
	p->sorted = 0;
	p->pre_sorted = 0;
	return id;
}

/* Returns the child of @parent for @frame, appending a new one when none
 * exists. Room must have been reserved with nodes_reserve(). */
static uint32_t node_child(struct prof_profile *p, uint32_t parent,
			   uint32_t frame)
{
	uint32_t id = prof_child_find(p, parent, frame);

	if (id)
		return id;
	id = node_append(p, parent, frame);
	edge_insert(&p->edge_index, parent, frame, id);
	p->edges_indexed = p->nnodes;
	return id;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return UINT64_MAX - a < b ? UINT64_MAX : a + b;
}

/* Makes the last-stack cache hold @n entries; 0 or -ENOMEM. */
static int last_reserve(struct prof_profile *p, size_t n)
{
	size_t cap = p->last_cap ? p->last_cap : 64;
	uint32_t *f, *nd;

	if (n <= p->last_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	f = realloc(p->last_frames, cap * sizeof(*f));
	if (f)
		p->last_frames = f;
	nd = realloc(p->last_nodes, cap * sizeof(*nd));
	if (nd)
		p->last_nodes = nd;
	if (!f || !nd)
		return -ENOMEM;
	p->last_cap = cap;
	return 0;
}

/* How many edge slots add_chain() prefetches ahead of the insert. */
#define CHAIN_AHEAD 16u

/* Appends the chain @frames[0..n) under @parent, which has none of its
 * first frame's child, so every node is new and no lookup is needed. The
 * new edges' hashes are known before the nodes exist (ids are consecutive),
 * so their slots are prefetched ahead and the cache misses of a big index
 * overlap instead of queueing. Room must have been reserved. Returns the
 * leaf. */
static uint32_t add_chain(struct prof_profile *p, uint32_t parent,
			  const uint32_t *frames, size_t n, uint64_t value,
			  size_t depth, int cache)
{
	uint32_t first = p->nnodes, mask = p->edge_index.cap - 1, cur = parent;
	const struct edge_slot *slots = p->edge_index.slots;

	for (size_t i = 0; i < n && i < CHAIN_AHEAD; i++)
		__builtin_prefetch(&slots[(uint32_t)hash_edge(
			i ? first + (uint32_t)i - 1 : parent, frames[i]) & mask], 1);
	for (size_t i = 0; i < n; i++) {
		size_t ahead = i + CHAIN_AHEAD;

		if (ahead < n)
			__builtin_prefetch(&slots[(uint32_t)hash_edge(
				first + (uint32_t)ahead - 1, frames[ahead]) & mask], 1);
		cur = node_append(p, cur, frames[i]);
		edge_insert(&p->edge_index, p->nodes[cur].parent, frames[i], cur);
		p->nodes[cur].total = value;
		if (cache) {
			p->last_frames[depth + i] = frames[i];
			p->last_nodes[depth + i] = cur;
		}
	}
	p->edges_indexed = p->nnodes;
	return cur;
}

uint32_t prof_add_stack(struct prof_profile *p, const uint32_t *frames,
			size_t n, uint64_t value)
{
	uint32_t cur = 0;
	size_t k = 0, i;
	int cache;

	for (i = 0; i < n; i++)
		if (frames[i] == 0 || p->nframes <= frames[i])
			return UINT32_MAX;
	while (k < n && k < p->last_n && p->last_frames[k] == frames[k])
		k++;
	if (nodes_reserve(p, n - k) < 0)
		return UINT32_MAX;
	/* Without room to remember this stack, forget the last one. */
	cache = last_reserve(p, n) == 0;
	p->nodes[0].total = sat_add(p->nodes[0].total, value);
	for (i = 0; i < n; i++) {
		uint32_t id = i < k ? p->last_nodes[i] :
				      prof_child_find(p, cur, frames[i]);

		if (!id)
			break;
		cur = id;
		p->nodes[cur].total = sat_add(p->nodes[cur].total, value);
		if (cache) {
			p->last_frames[i] = frames[i];
			p->last_nodes[i] = cur;
		}
	}
	if (i < n)
		cur = add_chain(p, cur, frames + i, n - i, value, i, cache);
	p->nodes[cur].self = sat_add(p->nodes[cur].self, value);
	p->last_n = cache ? n : 0;
	return cur;
}

uint32_t prof_child_get(struct prof_profile *p, uint32_t parent,
			uint32_t frame)
{
	uint32_t id;

	if (p->nnodes <= parent || frame == 0 || p->nframes <= frame)
		return UINT32_MAX;
	id = prof_child_find(p, parent, frame);
	if (id)
		return id;
	if (nodes_reserve(p, 1) < 0)
		return UINT32_MAX;
	return node_child(p, parent, frame);
}

uint32_t prof_child_append(struct prof_profile *p, uint32_t parent,
			   uint32_t frame)
{
	if (p->nnodes <= parent || frame == 0 || p->nframes <= frame)
		return UINT32_MAX;
	if (nodes_reserve_how(p, 1, 0, 1) < 0)
		return UINT32_MAX;
	return node_append(p, parent, frame);
}

int prof_node_add(struct prof_profile *p, uint32_t node, uint64_t total,
		  uint64_t self)
{
	if (p->nnodes <= node)
		return -EINVAL;
	p->nodes[node].total = sat_add(p->nodes[node].total, total);
	p->nodes[node].self = sat_add(p->nodes[node].self, self);
	return 0;
}

const struct prof_node *prof_node_get(const struct prof_profile *p,
				      uint32_t id)
{
	return id < p->nnodes ? &p->nodes[id] : NULL;
}

uint32_t prof_node_count(const struct prof_profile *p)
{
	return p->nnodes;
}

size_t prof_memory(const struct prof_profile *p)
{
	size_t b = sizeof(*p);

	for (const struct str_chunk *c = p->chunks; c; c = c->next)
		b += sizeof(*c) + c->cap;
	b += (size_t)p->str_cap * (sizeof(*p->strs) + sizeof(*p->str_len));
	b += (size_t)p->str_index.cap * sizeof(*p->str_index.slots);
	b += (size_t)p->frame_cap * sizeof(*p->frames);
	b += (size_t)p->frame_index.cap * sizeof(*p->frame_index.slots);
	b += (size_t)p->mapping_cap * sizeof(*p->mappings);
	b += (size_t)p->mapping_index.cap * sizeof(*p->mapping_index.slots);
	b += (size_t)p->place_cap * sizeof(*p->places);
	b += (size_t)p->node_cap * sizeof(*p->nodes);
	b += (size_t)p->last_child_cap * sizeof(*p->last_child);
	b += (size_t)p->edge_index.cap * sizeof(*p->edge_index.slots);
	b += p->last_cap * (sizeof(*p->last_frames) + sizeof(*p->last_nodes));
	return b;
}

const struct prof_node *prof_nodes(const struct prof_profile *p)
{
	return p->nodes;
}

int prof_ids_preorder(const struct prof_profile *p)
{
	return p->sorted && p->pre_sorted;
}

uint64_t prof_total(const struct prof_profile *p)
{
	return p->nodes[0].total;
}

/* ---- sibling order ---------------------------------------------------------- */

static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct prof_profile *p = arg;

	return prof_frame_cmp(p, p->nodes[*(const uint32_t *)a].frame,
			 p->nodes[*(const uint32_t *)b].frame);
}

/* Sorts the children of @parent using @buf (room for all of them). */
static void sort_children(struct prof_profile *p, uint32_t parent,
			  uint32_t *buf)
{
	uint32_t n = 0, c;
	int ordered = 1;

	for (c = p->nodes[parent].child; c; c = p->nodes[c].sibling) {
		if (n && prof_frame_cmp(p, p->nodes[buf[n - 1]].frame,
				   p->nodes[c].frame) > 0)
			ordered = 0;
		buf[n++] = c;
	}
	if (ordered)
		return;
	qsort_r(buf, n, sizeof(*buf), node_cmp, p);
	p->nodes[parent].child = buf[0];
	for (uint32_t i = 0; i + 1 < n; i++)
		p->nodes[buf[i]].sibling = buf[i + 1];
	p->nodes[buf[n - 1]].sibling = 0;
	if (!p->last_child_stale)
		p->last_child[parent] = buf[n - 1];
}

/* Relinks every sibling list in id order, which is the sorted order when
 * the ids follow the sorted tree's preorder. A parent comes before its
 * children, so it is reset first. 0 or -ENOMEM. */
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

/* ---- merge and walk ------------------------------------------------------------------ */

int prof_merge(struct prof_profile *dst, const struct prof_profile *src)
{
	uint32_t *fmap = NULL, *nmap = NULL, base;
	int err = -ENOMEM;

	if (dst->meta.unit != src->meta.unit || dst == src)
		return -EINVAL;
	fmap = calloc(src->nframes, sizeof(*fmap));
	nmap = calloc(src->nnodes, sizeof(*nmap));
	if (!fmap || !nmap)
		goto out;
	for (uint32_t f = 1; f < src->nframes; f++) {
		fmap[f] = prof_frame_copy(dst, src, f);
		if (fmap[f] == UINT32_MAX)
			goto out;
	}
	if (edges_index(dst) < 0 || nodes_reserve_how(dst, src->nnodes, 0, 1) < 0)
		goto out;
	base = dst->nnodes;
	/* A parent's id is always smaller than its children's. Nodes made
	 * here (ids >= base) have only children made here: those are
	 * appended without a lookup, and the index catches up lazily. The
	 * older nodes are all in the index, and no pair (parent, frame) is
	 * looked up twice, so the index alone answers. */
	for (uint32_t i = 1; i < src->nnodes; i++) {
		const struct prof_node *sn = &src->nodes[i];
		uint32_t dp = nmap[sn->parent], f = fmap[sn->frame];
		uint32_t d = dp < base ? edge_lookup(dst, dp, f) : 0;

		nmap[i] = d ? d : node_append(dst, dp, f);
	}
	for (uint32_t i = 0; i < src->nnodes; i++) {
		const struct prof_node *sn = &src->nodes[i];
		uint32_t d = nmap[i];

		dst->nodes[d].total = sat_add(dst->nodes[d].total, sn->total);
		dst->nodes[d].self = sat_add(dst->nodes[d].self, sn->self);
	}
	dst->meta.duration_ns = sat_add(dst->meta.duration_ns,
					src->meta.duration_ns);
	dst->meta.drops = sat_add(dst->meta.drops, src->meta.drops);
	if (src->meta.start_ns &&
	    (!dst->meta.start_ns || src->meta.start_ns < dst->meta.start_ns))
		dst->meta.start_ns = src->meta.start_ns;
	err = 0;
out:
	free(fmap);
	free(nmap);
	return err;
}

struct mapped {
	struct prof_profile *dst;
	uint32_t *fmap; /* src frame -> dst frame, 0 = not copied yet */
	uint32_t *path;
	uint32_t cap;
	prof_value_fn fn;
	void *arg;
};

static int add_mapped(const struct prof_profile *src, const uint32_t *frames,
		      size_t n, uint64_t value, void *arg)
{
	struct mapped *m = arg;
	uint64_t v = m->fn(src, frames, n, value, m->arg);

	if (!v)
		return 0;
	if (prof_grow((void **)&m->path, &m->cap, (uint64_t)n + 1, sizeof(*m->path)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!m->fmap[frames[i]])
			m->fmap[frames[i]] = prof_frame_copy(m->dst, src, frames[i]);
		if (m->fmap[frames[i]] == UINT32_MAX)
			return -ENOMEM;
		m->path[i] = m->fmap[frames[i]];
	}
	return prof_add_stack(m->dst, m->path, n, v) == UINT32_MAX ? -ENOMEM : 0;
}

int prof_merge_mapped(struct prof_profile *dst, const struct prof_profile *src,
		      prof_value_fn fn, void *arg)
{
	struct mapped m = { .dst = dst, .fn = fn, .arg = arg };
	int rc;

	if (dst == src)
		return -EINVAL;
	m.fmap = calloc(src->nframes, sizeof(*m.fmap));
	if (!m.fmap)
		return -ENOMEM;
	rc = prof_walk_stacks(src, add_mapped, &m);
	free(m.fmap);
	free(m.path);
	return rc;
}

int prof_walk_stacks(const struct prof_profile *p, prof_stack_fn fn,
		     void *arg)
{
	uint32_t *path = NULL, cap = 0, node, depth = 0;
	int ret = 0;

	if (p->nodes[0].self) {
		ret = fn(p, NULL, 0, p->nodes[0].self, arg);
		if (ret)
			return ret;
	}
	node = p->nodes[0].child;
	while (node) {
		if (prof_grow((void **)&path, &cap, (uint64_t)depth + 1,
			 sizeof(*path)) < 0) {
			ret = -ENOMEM;
			break;
		}
		path[depth] = p->nodes[node].frame;
		if (p->nodes[node].self) {
			ret = fn(p, path, depth + 1, p->nodes[node].self, arg);
			if (ret)
				break;
		}
		if (p->nodes[node].child) {
			node = p->nodes[node].child;
			depth++;
			continue;
		}
		while (node && !p->nodes[node].sibling) {
			node = p->nodes[node].parent;
			depth--;
		}
		if (node)
			node = p->nodes[node].sibling;
	}
	free(path);
	return ret;
}
