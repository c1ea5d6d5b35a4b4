/* SPDX-License-Identifier: MIT */
/*
 * Draining the sampler: flip the active side, let in-flight programs finish,
 * read and clear the idle side, symbolize.
 *
 * Stack maps are cleared with care: an off-CPU wait that began before the
 * flip still holds stack ids in the old side's stack map, and will write
 * them into the new side's counts when the thread wakes. Those ids are kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/sampler_impl.h"
#include "bpf/sampler.h"
#include "bpf/sampler.skel.h"

struct entry {
	struct hearth_key key;
	struct hearth_value val;
};

struct entries {
	struct entry *v;
	size_t len, cap;
};

static int entries_push(struct entries *e, const struct hearth_key *k,
			const struct hearth_value *val)
{
	if (e->len == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 1024;
		struct entry *v = realloc(e->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		e->v = v;
		e->cap = cap;
	}
	e->v[e->len].key = *k;
	e->v[e->len].val = *val;
	e->len++;
	return 0;
}

/* Reads every entry of counts map @fd into @out, then deletes them. No
 * program writes to it during this (its side is inactive). */
static int take_counts(int fd, struct entries *out)
{
	struct hearth_key key, next;
	struct hearth_value val;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &val) == 0 &&
		    entries_push(out, &next, &val) < 0)
			return -ENOMEM;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < out->len; i++)
		bpf_map_delete_elem(fd, &out->v[i].key);
	return 0;
}

static int cmp_s32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

struct id_list {
	int32_t *v;
	size_t len, cap;
};

static int ids_push(struct id_list *l, int32_t id)
{
	if (id < 0)
		return 0;
	if (l->len == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		int32_t *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->len++] = id;
	return 0;
}

/* Stack ids of side @gen still referenced after the flip: by waits not yet
 * ended, and by waits that ended into the new side's counts. */
static int referenced_ids(struct sampler *s, uint32_t gen, struct id_list *ids)
{
	int start_fd = bpf_map__fd(s->skel->maps.offcpu_start);
	int counts_fd = bpf_map__fd(gen ? s->skel->maps.counts0 : s->skel->maps.counts1);
	uint32_t tid, next;
	struct hearth_offcpu_start st;
	struct hearth_key key, knext;
	struct hearth_value val;
	void *prev = NULL;

	while (bpf_map_get_next_key(start_fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(start_fd, &next, &st) == 0 && st.gen == gen &&
		    (ids_push(ids, st.kstack) < 0 || ids_push(ids, st.ustack) < 0))
			return -ENOMEM;
		tid = next;
		prev = &tid;
	}
	prev = NULL;
	while (bpf_map_get_next_key(counts_fd, prev, &knext) == 0) {
		if (bpf_map_lookup_elem(counts_fd, &knext, &val) == 0 && knext.gen == gen &&
		    (ids_push(ids, knext.kstack) < 0 || ids_push(ids, knext.ustack) < 0))
			return -ENOMEM;
		key = knext;
		prev = &key;
	}
	qsort(ids->v, ids->len, sizeof(*ids->v), cmp_s32);
	return 0;
}

static void clear_stacks(struct sampler *s, uint32_t gen)
{
	int fd = bpf_map__fd(gen ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	struct id_list keep = { 0 }, dead = { 0 };
	int32_t id, next;
	void *prev = NULL;

	if (referenced_ids(s, gen, &keep) < 0)
		goto out; /* keeping everything is safe, only wasteful */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (!bsearch(&next, keep.v, keep.len, sizeof(*keep.v), cmp_s32) &&
		    ids_push(&dead, next) < 0)
			break;
		id = next;
		prev = &id;
	}
	for (size_t i = 0; i < dead.len; i++)
		bpf_map_delete_elem(fd, &dead.v[i]);
out:
	free(keep.v);
	free(dead.v);
}

/* Number of leading non-zero addresses in a stack map value. */
static size_t stack_len(const uint64_t *ips)
{
	size_t n = 0;

	while (n < HEARTH_STACK_DEPTH && ips[n])
		n++;
	return n;
}

static int add_entry(struct sampler *s, const struct entry *e,
		     struct prof_profile *oncpu, struct prof_profile *offcpu)
{
	uint64_t uips[HEARTH_STACK_DEPTH], kips[HEARTH_STACK_DEPTH];
	const struct hearth_key *k = &e->key;
	int fd = bpf_map__fd(k->gen ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	bool off = k->kind != HEARTH_ON_CPU;
	struct prof_profile *p = off ? offcpu : oncpu;
	struct stack_input in = {
		.tgid = k->tgid,
		.tid = k->pid,
		.comm = e->val.comm,
		.tcomm = e->val.tcomm,
		.uips = uips,
		.kips = kips,
		.off_cpu = off,
		.involuntary = k->kind == HEARTH_OFF_CPU_INVOLUNTARY,
		.per_thread = s->opts.per_thread,
	};

	if (!p)
		return 0;
	memset(uips, 0, sizeof(uips));
	memset(kips, 0, sizeof(kips));
	if (k->ustack >= 0 && bpf_map_lookup_elem(fd, &k->ustack, uips) == 0)
		in.nu = stack_len(uips);
	if (k->kstack >= 0 && bpf_map_lookup_elem(fd, &k->kstack, kips) == 0)
		in.nk = stack_len(kips);
	pid_set_add(&s->seen, k->tgid);
	return stack_builder_add(s->builder, s->sym, p, &in,
				 off ? e->val.ns : e->val.count);
}

static void forget_gone(struct sampler *s)
{
	for (size_t i = 0; i < s->ngone; i++)
		sym_proc_forget(s->sym, s->gone[i]);
	s->ngone = 0;
}

int sampler_drain(struct sampler *s, struct prof_profile *oncpu,
		  struct prof_profile *offcpu)
{
	uint32_t old = s->skel->bss->active;
	struct entries got = { 0 };
	int rc;

	/* Exits seen so far belong to processes whose samples are in the
	 * side we are about to read: handle events first, forget after. */
	sampler_poll(s, 0);
	__atomic_store_n(&s->skel->bss->active, !old, __ATOMIC_SEQ_CST);
	usleep(FLIP_GRACE_US);
	rc = take_counts(bpf_map__fd(old ? s->skel->maps.counts1 : s->skel->maps.counts0),
			 &got);
	for (size_t i = 0; rc == 0 && i < got.len; i++)
		rc = add_entry(s, &got.v[i], oncpu, offcpu);
	clear_stacks(s, old);
	free(got.v);
	forget_gone(s);
	return rc;
}
