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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/sampler_impl.h"
#include "agent/ring_reader.h"
#include "bpf/sampler.h"
#include "bpf/unwind.h"
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

#define BATCH 1024
/* Time a drain spends on the stack copies waiting at its flip. */
#define DRAIN_COPIES_NS (500ull * 1000 * 1000)

/* Calls @fn(key, value, @arg) for every entry of hash map @fd (keys of
 * @ksz bytes, values of @vsz), deleting it after when @del (no program
 * writes to the map meanwhile). Returns 0, -ENOMEM or @fn's error. */
typedef int (*entry_fn)(const void *key, const void *val, void *arg);

/* The old way, a lookup (and a delete) per entry, for kernels without
 * batch operations on hash maps. */
static int scan_one_by_one(int fd, size_t ksz, size_t vsz, bool del,
			   entry_fn fn, void *arg)
{
	uint8_t key[sizeof(struct hearth_sig_key)], next[sizeof(struct hearth_sig_key)];
	uint8_t val[sizeof(struct hearth_offcpu_start) + sizeof(struct hearth_value)];
	void *prev = NULL;
	int rc;

	if (sizeof(key) < ksz || sizeof(val) < vsz)
		return -EINVAL;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		if (bpf_map_lookup_elem(fd, next, val) == 0 && (rc = fn(next, val, arg)))
			return rc;
		if (del) {
			/* the next first key, until none is left */
			if (bpf_map_delete_elem(fd, next))
				return -errno;
			continue;
		}
		memcpy(key, next, ksz);
		prev = key;
	}
	return 0;
}

static int scan_map(int fd, size_t ksz, size_t vsz, bool del, entry_fn fn, void *arg)
{
	uint8_t *keys = malloc(BATCH * ksz), *vals = malloc(BATCH * vsz);
	uint64_t token[8];
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	void *in = NULL;
	int ret = -ENOMEM;

	while (keys && vals) {
		__u32 n = BATCH;
		int rc = del ? bpf_map_lookup_and_delete_batch(fd, in, token, keys, vals, &n, &opts)
			     : bpf_map_lookup_batch(fd, in, token, keys, vals, &n, &opts);
		int err = rc < 0 ? errno : 0;

		if (rc < 0 && err != ENOENT && n == 0) {
			ret = in ? -err : scan_one_by_one(fd, ksz, vsz, del, fn, arg);
			break;
		}
		ret = 0;
		for (__u32 i = 0; ret == 0 && i < n; i++)
			ret = fn(keys + i * ksz, vals + i * vsz, arg);
		if (ret || rc < 0) {
			if (!ret && err != ENOENT)
				ret = -err;
			break;
		}
		in = token;
	}
	free(keys);
	free(vals);
	return ret;
}

static int append_entry(const void *key, const void *val, void *arg)
{
	struct entries *out = arg;

	if (entries_reserve(out, 1) < 0)
		return -ENOMEM;
	memcpy(entry_key(out, out->len), key, out->ksz);
	memcpy(entry_val(out, out->len), val, out->vsz);
	out->len++;
	return 0;
}

/* Reads and deletes every entry of counts map @fd into @out, a batch of
 * entries per system call. No program writes to it meanwhile (its side is
 * inactive). Returns 0 or a negative errno. */
static int take_counts(int fd, struct entries *out)
{
	return scan_map(fd, out->ksz, out->vsz, true, append_entry, out);
}

struct ref_scan {
	struct id_list *ids;
	uint32_t gen;
};

static int ref_push(struct ref_scan *r, uint32_t gen, int32_t kstack, int32_t ustack)
{
	if (gen != r->gen)
		return 0;
	return ids_push(r->ids, kstack) < 0 || ids_push(r->ids, ustack) < 0 ? -ENOMEM : 0;
}

/* A waker's stacks were taken on the side active at its wake-up, which
 * may not be its wait's. */
static int ref_waker(struct ref_scan *r, const struct hearth_waker *w)
{
	return w->seen ? ref_push(r, w->gen, w->kstack, w->ustack) : 0;
}

static int ref_start(const void *key, const void *val, void *arg)
{
	const struct hearth_offcpu_start *st = val;

	(void)key;
	return ref_push(arg, st->gen, st->kstack, st->ustack) ||
	       ref_waker(arg, &st->waker) ? -ENOMEM : 0;
}

static int ref_count(const void *key, const void *val, void *arg)
{
	const struct hearth_key *k = key;

	(void)val;
	return ref_push(arg, k->gen, k->kstack, k->ustack) ||
	       ref_waker(arg, &k->waker) ? -ENOMEM : 0;
}

static int ref_sig(const void *key, const void *val, void *arg)
{
	const struct hearth_sig_key *k = key;

	(void)val;
	return ref_push(arg, k->gen, k->kstack, k->ustack);
}

/* Stack ids of side @gen still referenced after the flip: by waits not yet
 * ended, and by waits that ended into the new side's counts. */
static int referenced_ids(struct sampler *s, uint32_t gen, struct id_list *ids)
{
	struct sampler_bpf *k = s->skel;
	struct ref_scan r = { .ids = ids, .gen = gen };
	int rc;

	rc = scan_map(bpf_map__fd(k->maps.offcpu_start), sizeof(uint32_t),
		      sizeof(struct hearth_offcpu_start), false, ref_start, &r);
	if (!rc)
		rc = scan_map(bpf_map__fd(gen ? k->maps.counts0 : k->maps.counts1),
			      sizeof(struct hearth_key), sizeof(struct hearth_value), false,
			      ref_count, &r);
	if (!rc)
		rc = scan_map(bpf_map__fd(gen ? k->maps.sig_counts0 : k->maps.sig_counts1),
			      sizeof(struct hearth_sig_key), sizeof(struct hearth_value), false,
			      ref_sig, &r);
	if (rc)
		return rc;
	if (ids->len)
		qsort(ids->v, ids->len, sizeof(*ids->v), cmp_s32);
	return 0;
}

/* Deletes the keys of stack map @fd that no id in @keep refers to; a
 * key k is referred to as (k | @flag). */
static void clear_unkept(int fd, const struct id_list *keep, int32_t flag)
{
	struct id_list dead = { 0 };
	int32_t id, next, ref;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		ref = next | flag;
		if ((!keep->len || !bsearch(&ref, keep->v, keep->len, sizeof(*keep->v), cmp_s32)) &&
		    ids_push(&dead, next) < 0)
			goto out;
		id = next;
		prev = &id;
	}
	for (size_t i = 0; i < dead.len; i++)
		bpf_map_delete_elem(fd, &dead.v[i]);
out:
	free(dead.v);
}

/* Deletes the ids of side @gen's stack maps (and walked stacks) that
 * nothing refers to any more. */
static void clear_stacks(struct sampler *s, uint32_t gen)
{
	struct sampler_bpf *k = s->skel;
	struct id_list keep = { 0 };

	/* Only waits hold stack ids across a flip: without off-CPU, every
	 * id of the side just read is dead. */
	if (s->opts.off_cpu && referenced_ids(s, gen, &keep) < 0)
		goto out; /* keeping everything is safe, only wasteful */
	clear_unkept(bpf_map__fd(gen ? k->maps.stacks1 : k->maps.stacks0), &keep, 0);
	if (s->opts.unwind == SAMPLER_UNWIND_AUTO)
		clear_unkept(bpf_map__fd(gen ? k->maps.walked1 : k->maps.walked0), &keep,
			     HEARTH_USTACK_WALKED);
out:
	free(keep.v);
}

/* Starts a drain's stack reads: none read yet. Returns 0 or -ENOMEM. */
static int reads_begin(struct sampler *s)
{
	struct stack_reads *r = &s->drain.reads;

	r->len = 0;
	if (!r->nids) {
		uint32_t n = bpf_map__max_entries(s->skel->maps.stacks0);

		r->at[0] = calloc(n, sizeof(*r->at[0]));
		r->at[1] = calloc(n, sizeof(*r->at[1]));
		if (!r->at[0] || !r->at[1]) {
			drain_state_free(&s->drain);
			return -ENOMEM;
		}
		r->nids = n;
		return 0;
	}
	memset(r->at[0], 0, r->nids * sizeof(*r->at[0]));
	memset(r->at[1], 0, r->nids * sizeof(*r->at[1]));
	return 0;
}

/* Remembers stack @id of side @gen, @n addresses at @ips, for the rest of
 * the drain. Out of memory (or out of range), it is simply read again. */
static void reads_put(struct stack_reads *r, uint32_t gen, int32_t id,
		      const uint64_t *ips, size_t n)
{
	if (!((uint32_t)id < r->nids) || !(r->len + n + 1 < UINT32_MAX))
		return;
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 4096;
		uint64_t *v;

		while (cap < r->len + n + 1)
			cap *= 2;
		v = realloc(r->ips, cap * sizeof(*v));
		if (!v)
			return;
		r->ips = v;
		r->cap = cap;
	}
	r->at[gen][id] = (uint32_t)r->len + 1;
	r->ips[r->len++] = n;
	memcpy(r->ips + r->len, ips, n * sizeof(*ips));
	r->len += n;
}

/* Number of leading non-zero addresses in a stack map value. */
static size_t stack_len(const uint64_t *ips)
{
	size_t n = 0;

	while (n < HEARTH_STACK_DEPTH && ips[n])
		n++;
	return n;
}

/* Reads walked stack @id of side @gen into @ips; returns its length. */
static size_t read_walked(struct sampler *s, uint32_t gen, int32_t id, uint64_t *ips)
{
	int fd = bpf_map__fd(gen ? s->skel->maps.walked1 : s->skel->maps.walked0);
	uint32_t key = (uint32_t)id & HEARTH_WALKED_KEY_MASK;
	struct hearth_walked w;

	if (bpf_map_lookup_elem(fd, &key, &w) != 0)
		return 0;
	memcpy(ips, w.ips, sizeof(w.ips));
	return stack_len(ips);
}

/* Reads stack @id of side @gen into @ips straight from the maps; returns
 * its length (0 if none). */
static size_t lookup_stack(struct sampler *s, uint32_t gen, int32_t id, uint64_t *ips)
{
	int fd = bpf_map__fd(gen ? s->skel->maps.stacks1 : s->skel->maps.stacks0);

	if (id < 0)
		return 0;
	if (id & HEARTH_USTACK_WALKED)
		return read_walked(s, gen, id, ips);
	memset(ips, 0, HEARTH_STACK_DEPTH * sizeof(*ips));
	if (bpf_map_lookup_elem(fd, &id, ips) != 0)
		return 0;
	return stack_len(ips);
}

/* Reads stack @id of side @gen into @ips (once a drain: entries of many
 * threads share stacks); returns its length (0 if none). */
static size_t read_stack(struct sampler *s, uint32_t gen, int32_t id, uint64_t *ips)
{
	struct stack_reads *r = &s->drain.reads;
	size_t n;

	if (id < 0 || (id & HEARTH_USTACK_WALKED))
		return lookup_stack(s, gen, id, ips);
	if ((uint32_t)id < r->nids && r->at[gen][id]) {
		const uint64_t *at = r->ips + r->at[gen][id] - 1;

		memcpy(ips, at + 1, at[0] * sizeof(*ips));
		return at[0];
	}
	n = lookup_stack(s, gen, id, ips);
	if (n)
		reads_put(r, gen, id, ips, n);
	return n;
}

bool sampler_excluded(const struct sampler *s, const char *comm)
{
	const char *name = comm[0] ? comm : "[unknown]";

	for (size_t i = 0; i < s->nexclude; i++)
		if (!strncmp(s->exclude[i], name, sizeof(s->exclude[i])))
			return true;
	return false;
}

/* The profile an entry of @kind goes to (NULL: that kind is off), after
 * counting its process and wait time. */
static struct prof_profile *entry_profile(struct sampler *s, uint32_t tgid, uint32_t kind,
					  const struct hearth_value *val,
					  struct prof_profile *oncpu, struct prof_profile *offcpu)
{
	bool off = kind != HEARTH_ON_CPU;
	struct prof_profile *p = off ? offcpu : oncpu;

	if (!p)
		return NULL;
	pid_set_add(&s->seen, tgid);
	if (off)
		s->stats.offcpu_ns += val->ns;
	return p;
}

/* Whether stack id @id says its stack was lost for lack of room. */
static bool id_lost(int32_t id)
{
	return id == HEARTH_STACK_COLLISION || id == HEARTH_STACK_FULL ||
	       id == HEARTH_STACK_NO_ROOM;
}

static int add_stack(struct sampler *s, struct prof_profile *p, struct stack_input *in,
		     const struct hearth_value *val, uint32_t kind)
{
	in->comm = val->comm;
	in->tcomm = val->tcomm;
	in->off_cpu = kind != HEARTH_ON_CPU;
	in->involuntary = kind == HEARTH_OFF_CPU_INVOLUNTARY;
	in->per_thread = s->opts.per_thread;
	in->pid_row = s->opts.pid_rows;
	/* The same stacks come back drain after drain: each is symbolized
	 * once and remembered. */
	return stack_builder_add_memo(s->builder, s->sym, p, in,
				      in->off_cpu ? val->ns : val->count);
}

/* Counts the entry of @tgid when its user frames could not be named:
 * its process was gone before its mappings were read. */
static void count_unnamed(struct sampler *s, uint32_t tgid, size_t nu,
			  const struct hearth_value *val)
{
	if (nu && !sym_proc_named(s->sym, (pid_t)tgid))
		s->stats.unnamed += val->count;
}

/* The process name of waker @w of a wait of process @tgid (named @comm):
 * read from /proc into @buf when it is another process. */
static const char *waker_comm(const struct hearth_waker *w, uint32_t tgid,
			      const char *comm, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	if (w->tgid == tgid)
		return comm;
	if (w->tgid == 0)
		return "[interrupt or idle]";
	snprintf(path, sizeof(path), "/proc/%u/comm", w->tgid);
	buf[0] = '\0';
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

const struct stack_waker *sampler_waker_input(struct sampler *s, const struct hearth_waker *w,
					      uint32_t tgid, const char *comm, bool in_drain,
					      struct sampler_waker_buf *buf)
{
	size_t (*read)(struct sampler *, uint32_t, int32_t, uint64_t *) =
		in_drain ? read_stack : lookup_stack;

	if (!w->seen)
		return NULL;
	buf->w = (struct stack_waker){ .tgid = w->tgid, .uips = buf->uips, .kips = buf->kips };
	buf->w.nu = read(s, w->gen, w->ustack, buf->uips);
	buf->w.nk = read(s, w->gen, w->kstack, buf->kips);
	buf->w.comm = waker_comm(w, tgid, comm, buf->comm, sizeof(buf->comm));
	return &buf->w;
}

static int add_entry(struct sampler *s, const struct hearth_key *k,
		     const struct hearth_value *val, struct prof_profile *oncpu,
		     struct prof_profile *offcpu)
{
	uint64_t uips[HEARTH_STACK_DEPTH], kips[HEARTH_STACK_DEPTH];
	struct stack_input in = { .tgid = k->tgid, .tid = k->pid, .uips = uips, .kips = kips };
	struct prof_profile *p = entry_profile(s, k->tgid, k->kind, val, oncpu, offcpu);
	struct sampler_waker_buf waker;
	struct sampler_py_buf py;
	int rc;

	if (!p || (s->nexclude && sampler_excluded(s, val->comm)))
		return 0;
	if (k->kind != HEARTH_ON_CPU)
		in.waker = sampler_waker_input(s, &k->waker, k->tgid, val->comm, true, &waker);
	if (k->kind == HEARTH_OFF_CPU_EDGE)
		return sampler_edge_add(s, p, k->tgid, k->pid, val, in.waker);
	/* Lost, not empty: the shares of the stacks kept stay unbiased. */
	in.lost = id_lost(k->kstack) || id_lost(k->ustack);
	if (in.lost)
		return add_stack(s, p, &in, val, k->kind);
	sampler_py_input(s, k->py, k->tgid, &in, &py);
	in.nu = read_stack(s, k->gen, k->ustack, uips);
	in.nk = read_stack(s, k->gen, k->kstack, kips);
	rc = add_stack(s, p, &in, val, k->kind);
	count_unnamed(s, k->tgid, in.nu, val);
	return rc;
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
	struct prof_profile *p;
	struct sampler_waker_buf waker;
	struct sampler_py_buf py;
	int rc;

	if (!known)
		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.sig_seen), &k->sig);
	p = entry_profile(s, k->sig.tgid, k->kind, val, oncpu, offcpu);
	if (!p || (s->nexclude && sampler_excluded(s, val->comm)))
		return 0;
	in.lost = id_lost(k->kstack) || (!known && id_lost(k->ustack));
	if (in.lost)
		return add_stack(s, p, &in, val, k->kind);
	if (known) {
		in.uips = known;
	} else {
		in.uips = uips;
		in.nu = read_stack(s, k->gen, k->ustack, uips);
	}
	in.nk = read_stack(s, k->gen, k->kstack, kips);
	in.waker = sampler_waker_input(s, &k->waker, k->sig.tgid, val->comm, true, &waker);
	sampler_py_input(s, k->py, k->sig.tgid, &in, &py);
	rc = add_stack(s, p, &in, val, k->kind);
	count_unnamed(s, k->sig.tgid, in.nu, val);
	return rc;
}

/* Forgets the first @n exited processes (their samples are all drained)
 * and keeps the ones that exited since. */
static void forget_gone(struct sampler *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sym_proc_forget(s->sym, s->gone[i]);
		sym_unwind_forget(s->unw, s->gone[i]);
		sampler_py_forget(s, s->gone[i]);
		if (s->cfi)
			cfi_tables_forget(s->cfi, s->gone[i]);
		stack_builder_forget_tgid(s->builder, (uint32_t)s->gone[i]);
	}
	/* Exits whose events were lost. */
	if (s->cfi)
		cfi_tables_sweep(s->cfi);
	if (n == 0)
		return;
	memmove(s->gone, s->gone + n, (s->ngone - n) * sizeof(*s->gone));
	s->ngone -= n;
	s->gone_covered = s->gone_covered > n ? s->gone_covered - n : 0;
}

/* The BPF programs' write counter, summed over CPUs, in *@out. Returns
 * false when it cannot be read. */
static bool read_writes(const struct sampler *s, uint64_t *out)
{
	uint64_t vals[MAX_CPUS];
	uint32_t idx = HEARTH_CNT_WRITES;

	*out = 0;
	if (!(s->npossible <= MAX_CPUS) ||
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.counters), &idx, vals))
		return false;
	for (int c = 0; c < s->npossible; c++)
		*out += vals[c];
	return true;
}

/* Reads side @old's counts into the profiles. */
static int take_side(struct sampler *s, uint32_t old, struct prof_profile *oncpu,
		     struct prof_profile *offcpu)
{
	struct entries got = { .ksz = sizeof(struct hearth_key), .vsz = sizeof(struct hearth_value) };
	struct entries sigs = { .ksz = sizeof(struct hearth_sig_key), .vsz = sizeof(struct hearth_value) };
	int rc = reads_begin(s);

	if (rc == 0)
		rc = take_counts(bpf_map__fd(old ? s->skel->maps.counts1 : s->skel->maps.counts0),
				 &got);
	/* What the counts map had no room for, as lost entries. */
	if (rc == 0)
		rc = take_counts(bpf_map__fd(old ? s->skel->maps.lost1 : s->skel->maps.lost0),
				 &got);
	if (rc == 0)
		rc = take_counts(bpf_map__fd(old ? s->skel->maps.sig_counts1
						 : s->skel->maps.sig_counts0), &sigs);
	/* The entries taken are gone from the kernel: one that cannot be
	 * added must not take the rest with it, so every one is tried and
	 * the first error is returned. */
	for (size_t i = 0; i < got.len; i++) {
		int e;

		/* Symbolizing a busy window takes a while: meanwhile, keep
		 * caching the mappings of processes that just started, before
		 * the short-lived ones are gone. */
		if (i % 256 == 255)
			ring_reader_consume(s->rb_procs);
		e = add_entry(s, entry_key(&got, i), entry_val(&got, i), oncpu, offcpu);
		if (e && rc == 0)
			rc = e;
	}
	for (size_t i = 0; i < sigs.len; i++) {
		int e = add_sig_entry(s, entry_key(&sigs, i), entry_val(&sigs, i), oncpu, offcpu);

		if (e && rc == 0)
			rc = e;
	}
	free(got.buf);
	free(sigs.buf);
	return rc;
}

int sampler_drain(struct sampler *s, struct prof_profile *oncpu,
		  struct prof_profile *offcpu)
{
	struct drain_state *d = &s->drain;
	uint32_t old = s->skel->bss->active;
	uint64_t before = 0, after = 0;
	bool quiet, have_before;
	size_t gone;
	int rc = 0;

	/* Processes that exited before the flip have all their samples in
	 * the side we are about to read: they are forgotten after it (and
	 * after their copies, below). */
	sampler_poll(s, 0);
	gone = s->ngone;
	have_before = read_writes(s, &before);
	/* Before the flip: a wait site remembered from now on names the
	 * new sequence, and one named by the old side is invalid. */
	__atomic_store_n(&s->skel->bss->flip_seq, s->skel->bss->flip_seq + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&s->skel->bss->active, !old, __ATOMIC_SEQ_CST);
	usleep(FLIP_GRACE_US);
	/* Forks, execs and stack copies up to the flip: every sample's
	 * process is known, and every signature counted on the old side has
	 * its unwind (exits seen now wait for the next drain). */
	/* Bounded: when copies come faster than they unwind (a loaded host
	 * under an exec storm), the ring never empties, and the window must
	 * still close; copies left over go to the next window. Once the
	 * sampler is stopped there is no next window, and the ring only
	 * empties: the last drain takes every copy. */
	sampler_consume_for(s, s->stopped ? 0 : DRAIN_COPIES_NS);
	/* A process's last waits can be copies still in the ring behind a
	 * loaded host's backlog when the bound above cut the consume short:
	 * unwound after their process is forgotten, they would lose all its
	 * user frames (and seconds later). Only processes whose copies are
	 * all taken are forgotten; the others wait for a consume that
	 * empties the ring: the newest SAMPLER_GONE_HOLD of them at most
	 * (an exec storm, the backlog's usual cause, ends thousands of
	 * processes a window; the oldest have had the longest for theirs). */
	if (gone > s->gone_covered) {
		size_t keep_from = s->ngone > SAMPLER_GONE_HOLD ? s->ngone - SAMPLER_GONE_HOLD : 0;

		size_t upto = s->gone_covered > keep_from ? s->gone_covered : keep_from;

		if (upto < gone)
			gone = upto;
	}
	/* Every write to the old side came after the flip that made it
	 * active and before the end of this grace: with the counter where
	 * it was at that flip, the side is empty, and its stack map holds
	 * only ids a clear already kept (still safe to keep). A sleeping
	 * target's drain then makes no walk at all. */
	quiet = d->known[old] && read_writes(s, &after) && after == d->writes_at_flip[old];
	d->writes_at_flip[!old] = before;
	d->known[!old] = have_before;
	/* Stacks are cleared only after a complete read: counts a failed
	 * read left in the map still point at them, and a cleared id may be
	 * reused for another stack before they are read. */
	if (!quiet) {
		rc = take_side(s, old, oncpu, offcpu);
		if (rc == 0)
			clear_stacks(s, old);
	}
	if (rc == 0)
		rc = sampler_take_pending(s, oncpu, offcpu);
	/* The profiles given may be freed now. */
	stack_builder_next_epoch(s->builder);
	sym_window_begin(s->sym);
	forget_gone(s, gone);
	return rc;
}

void drain_state_free(struct drain_state *d)
{
	free(d->reads.at[0]);
	free(d->reads.at[1]);
	free(d->reads.ips);
	memset(&d->reads, 0, sizeof(d->reads));
}

void sampler_module_cache(const struct sampler *s, struct sampler_module_cache *mc)
{
	struct sym_stats st;

	sym_stats(s->sym, &st);
	mc->modules = st.modules;
	mc->bytes = st.budget_bytes;
	mc->limit = st.budget_limit;
	mc->evictions = st.evictions;
}
