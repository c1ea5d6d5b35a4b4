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

/* Entries taken from a counts map: keys and values side by side. */
struct entries {
	uint8_t *buf;
	size_t len, cap;
	size_t ksz, vsz;
};

static void *entry_key(const struct entries *e, size_t i)
{
	return e->buf + i * (e->ksz + e->vsz);
}

static struct hearth_value *entry_val(const struct entries *e, size_t i)
{
	return (struct hearth_value *)(e->buf + i * (e->ksz + e->vsz) + e->ksz);
}

static int entries_reserve(struct entries *out, size_t more)
{
	size_t cap = out->cap ? out->cap : 1024;
	uint8_t *buf;

	if (out->len + more <= out->cap)
		return 0;
	while (cap < out->len + more)
		cap *= 2;
	buf = realloc(out->buf, cap * (out->ksz + out->vsz));
	if (!buf)
		return -ENOMEM;
	out->buf = buf;
	out->cap = cap;
	return 0;
}

/* The old way, one lookup and one delete per entry, for kernels without
 * batch operations on hash maps. */
static int take_counts_one_by_one(int fd, struct entries *out)
{
	uint8_t key[sizeof(struct hearth_sig_key)], next[sizeof(struct hearth_sig_key)];
	void *prev = NULL;
	size_t first = out->len;

	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if (entries_reserve(out, 1) < 0)
			return -ENOMEM;
		if (bpf_map_lookup_elem(fd, next, entry_val(out, out->len)) == 0) {
			memcpy(entry_key(out, out->len), next, out->ksz);
			out->len++;
		}
		memcpy(key, next, out->ksz);
		prev = key;
	}
	for (size_t i = first; i < out->len; i++)
		bpf_map_delete_elem(fd, entry_key(out, i));
	return 0;
}

#define BATCH 1024

/* Reads and deletes every entry of counts map @fd into @out, a batch of
 * entries per system call. No program writes to it meanwhile (its side is
 * inactive). Returns 0 or -ENOMEM. */
static int take_counts(int fd, struct entries *out)
{
	uint8_t *keys = malloc(BATCH * out->ksz);
	struct hearth_value *vals = malloc(BATCH * sizeof(*vals));
	uint8_t token[sizeof(struct hearth_sig_key)];
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	void *in = NULL;
	int ret = -ENOMEM;

	while (keys && vals) {
		__u32 n = BATCH;
		int rc = bpf_map_lookup_and_delete_batch(fd, in, token, keys, vals, &n, &opts);
		int err = rc < 0 ? errno : 0;

		if (rc < 0 && err != ENOENT && n == 0) {
			ret = in ? -err : take_counts_one_by_one(fd, out);
			break;
		}
		if (entries_reserve(out, n) < 0)
			break;
		for (__u32 i = 0; i < n; i++) {
			memcpy(entry_key(out, out->len), keys + i * out->ksz, out->ksz);
			*entry_val(out, out->len) = vals[i];
			out->len++;
		}
		if (rc < 0) {
			ret = err == ENOENT ? 0 : -err;
			break;
		}
		in = token;
	}
	free(keys);
	free(vals);
	return ret;
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
	int sig_fd = bpf_map__fd(gen ? s->skel->maps.sig_counts0 : s->skel->maps.sig_counts1);
	struct hearth_key key, knext;
	struct hearth_sig_key skey, snext;
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
	prev = NULL;
	while (bpf_map_get_next_key(sig_fd, prev, &snext) == 0) {
		if (bpf_map_lookup_elem(sig_fd, &snext, &val) == 0 && snext.gen == gen &&
		    (ids_push(ids, snext.kstack) < 0 || ids_push(ids, snext.ustack) < 0))
			return -ENOMEM;
		skey = snext;
		prev = &skey;
	}
	if (ids->len)
		qsort(ids->v, ids->len, sizeof(*ids->v), cmp_s32);
	return 0;
}

static void clear_stacks(struct sampler *s, uint32_t gen)
{
	int fd = bpf_map__fd(gen ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	struct id_list keep = { 0 }, dead = { 0 };
	int32_t id, next;
	void *prev = NULL;

	/* Only waits hold stack ids across a flip: without off-CPU, every
	 * id of the side just read is dead (and the maps need no scan). */
	if (s->opts.off_cpu && referenced_ids(s, gen, &keep) < 0)
		goto out; /* keeping everything is safe, only wasteful */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if ((!keep.len || !bsearch(&next, keep.v, keep.len, sizeof(*keep.v), cmp_s32)) &&
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

/* Reads stack @id of side @gen into @ips; returns its length (0 if none). */
static size_t read_stack(struct sampler *s, uint32_t gen, int32_t id, uint64_t *ips)
{
	int fd = bpf_map__fd(gen ? s->skel->maps.stacks1 : s->skel->maps.stacks0);

	memset(ips, 0, HEARTH_STACK_DEPTH * sizeof(*ips));
	if (id < 0 || bpf_map_lookup_elem(fd, &id, ips) != 0)
		return 0;
	return stack_len(ips);
}

static int add_stack(struct sampler *s, struct stack_input *in,
		     const struct hearth_value *val, uint32_t kind,
		     struct prof_profile *oncpu, struct prof_profile *offcpu)
{
	bool off = kind != HEARTH_ON_CPU;
	struct prof_profile *p = off ? offcpu : oncpu;

	if (!p)
		return 0;
	in->comm = val->comm;
	in->tcomm = val->tcomm;
	in->off_cpu = off;
	in->involuntary = kind == HEARTH_OFF_CPU_INVOLUNTARY;
	in->per_thread = s->opts.per_thread;
	pid_set_add(&s->seen, in->tgid);
	if (off)
		s->stats.offcpu_ns += val->ns;
	return stack_builder_add(s->builder, s->sym, p, in, off ? val->ns : val->count);
}

static int add_entry(struct sampler *s, const struct hearth_key *k,
		     const struct hearth_value *val, struct prof_profile *oncpu,
		     struct prof_profile *offcpu)
{
	uint64_t uips[HEARTH_STACK_DEPTH], kips[HEARTH_STACK_DEPTH];
	struct stack_input in = { .tgid = k->tgid, .tid = k->pid, .uips = uips, .kips = kips };

	in.nu = read_stack(s, k->gen, k->ustack, uips);
	in.nk = read_stack(s, k->gen, k->kstack, kips);
	return add_stack(s, &in, val, k->kind, oncpu, offcpu);
}

/* A wait known by signature: its user stack is the remembered unwind. The
 * kernel counts a signature only once user space holds its unwind, and the
 * old generation is kept across a rotation, so a miss is rare: the wait
 * then keeps its kernel frames, and the kernel forgets the signature so
 * the next such wait is copied again. */
static int add_sig_entry(struct sampler *s, const struct hearth_sig_key *k,
			 const struct hearth_value *val, struct prof_profile *oncpu,
			 struct prof_profile *offcpu)
{
	uint64_t uips[HEARTH_STACK_DEPTH], kips[HEARTH_STACK_DEPTH];
	struct stack_input in = { .tgid = k->sig.tgid, .tid = k->sig.tid, .kips = kips };
	const uint64_t *known = sampler_sig_unwind(s, &k->sig, &in.nu);

	if (known) {
		in.uips = known;
	} else {
		in.uips = uips;
		in.nu = read_stack(s, k->gen, k->ustack, uips);
		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.sig_seen), &k->sig);
	}
	in.nk = read_stack(s, k->gen, k->kstack, kips);
	return add_stack(s, &in, val, k->kind, oncpu, offcpu);
}

/* Forgets the first @n exited processes (their samples are all drained)
 * and keeps the ones that exited since. */
static void forget_gone(struct sampler *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sym_proc_forget(s->sym, s->gone[i]);
		sym_unwind_forget(s->unw, s->gone[i]);
		sampler_fp_forget(s, s->gone[i]);
	}
	if (n == 0)
		return;
	memmove(s->gone, s->gone + n, (s->ngone - n) * sizeof(*s->gone));
	s->ngone -= n;
}

int sampler_drain(struct sampler *s, struct prof_profile *oncpu,
		  struct prof_profile *offcpu)
{
	uint32_t old = s->skel->bss->active;
	struct entries got = { .ksz = sizeof(struct hearth_key), .vsz = sizeof(struct hearth_value) };
	struct entries sigs = { .ksz = sizeof(struct hearth_sig_key), .vsz = sizeof(struct hearth_value) };
	size_t gone;
	int rc;

	/* Processes that exited before the flip have all their samples in
	 * the side we are about to read: they are forgotten after it. */
	sampler_poll(s, 0);
	gone = s->ngone;
	__atomic_store_n(&s->skel->bss->active, !old, __ATOMIC_SEQ_CST);
	usleep(FLIP_GRACE_US);
	/* Forks, execs and stack copies up to the flip: every sample's
	 * process is known, and every signature counted on the old side has
	 * its unwind (exits seen now wait for the next drain). */
	ring_buffer__consume(s->rb);
	rc = take_counts(bpf_map__fd(old ? s->skel->maps.counts1 : s->skel->maps.counts0),
			 &got);
	if (rc == 0)
		rc = take_counts(bpf_map__fd(old ? s->skel->maps.sig_counts1
						 : s->skel->maps.sig_counts0), &sigs);
	for (size_t i = 0; rc == 0 && i < got.len; i++) {
		/* Symbolizing a busy window takes a while: meanwhile, keep
		 * caching the mappings of processes that just started, before
		 * the short-lived ones are gone. */
		if (i % 256 == 255)
			ring_buffer__consume(s->rb_procs);
		rc = add_entry(s, entry_key(&got, i), entry_val(&got, i), oncpu, offcpu);
	}
	for (size_t i = 0; rc == 0 && i < sigs.len; i++)
		rc = add_sig_entry(s, entry_key(&sigs, i), entry_val(&sigs, i), oncpu, offcpu);
	clear_stacks(s, old);
	free(got.buf);
	free(sigs.buf);
	if (rc == 0)
		rc = sampler_take_pending(s, oncpu, offcpu);
	forget_gone(s, gone);
	return rc;
}
