/* SPDX-License-Identifier: MIT */
/* The allocation probes' user-space side: load, attach, keep, weigh. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/mem_stacks.h"
#include "agent/ring_reader.h"
#include "agent/memory.h"
#include "agent/preflight.h"
#include "agent/ring_poll.h"
#include "agent/stack_build.h"
#include "bpf/memory.h"
#include "bpf/memory.skel.h"
#include "symbolize/elf_funcs.h"
#include "symbolize/symbolize.h"

/* The kernel's numbers (include/uapi/linux/bpf.h) that the system's
 * headers may predate. */
#define ATTACH_UPROBE_SESSION 57

/* BPF_LINK_CREATE's attributes for an uprobe_multi link, as union
 * bpf_attr lays them out. */
struct uprobe_multi_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
};

static const char *const fn_names[HEARTH_MEM_FN_COUNT] = {
	[HEARTH_MEM_MALLOC] = "malloc",
	[HEARTH_MEM_CALLOC] = "calloc",
	[HEARTH_MEM_REALLOC] = "realloc",
	[HEARTH_MEM_POSIX_MEMALIGN] = "posix_memalign",
	[HEARTH_MEM_ALIGNED_ALLOC] = "aligned_alloc",
	[HEARTH_MEM_MEMALIGN] = "memalign",
	[HEARTH_MEM_FREE] = "free",
};

struct mem_proc {
	pid_t pid;
	int link_fd;
	int pidfd;
};

struct mem_tracer {
	struct mem_opts opts;
	struct memory_bpf *skel;
	struct ring_reader *rb;
	struct mem_proc procs[MEM_MAX_PIDS];
	size_t nprocs;
	struct sym_ctx *sym;
	struct stack_builder *builder;
	struct mem_stacks stacks;
	double mean;
	uint64_t lost;
	uint64_t until;  /* the poll's deadline (ring_poll.h) */
	int rc;          /* the first error a sample met, 0 = none */
};

static int on_event(void *ctx, void *data, size_t len)
{
	struct mem_tracer *t = ctx;
	int rc;

	if (len < sizeof(struct hearth_mem_event))
		return 0;
	rc = mem_stacks_add(&t->stacks, data);
	if (rc < 0) {
		t->lost++;
		if (!t->rc)
			t->rc = rc;
	}
	return ring_poll_past(t->until);
}

/* Where to place the probe of the function at file offset @off of the
 * file on @fd. x86-64 uprobes emulate a push or a jump but step any other
 * first instruction out of line, a second trap: glibc's free begins with
 * test %rdi,%rdi, and its probe cost ten times malloc's, which begins
 * with a push. A test of the first argument followed by a conditional
 * jump, which every call reaches with the argument and the stack as they
 * came, moves the probe to that jump. */
static uint64_t probe_offset(int fd, uint64_t off)
{
	uint8_t b[5];

	if (fd < 0 || pread(fd, b, sizeof(b), (off_t)off) != (ssize_t)sizeof(b))
		return off;
	if (b[0] == 0x48 && b[1] == 0x85 && b[2] == 0xff &&
	    (b[3] == 0x74 || b[3] == 0x75 || (b[3] == 0x0f && (b[4] & 0xf0) == 0x80)))
		return off + 3;
	return off;
}

/* Probes the allocator of @pid. Returns 0, or -1 with a sentence. */
static int attach_pid(struct mem_tracer *t, pid_t pid, char *err, size_t errlen)
{
	uint64_t offs[HEARTH_MEM_FN_COUNT], use[HEARTH_MEM_FN_COUNT], cookies[HEARTH_MEM_FN_COUNT];
	char path[4096];
	struct uprobe_multi_attr a = { 0 };
	struct mem_proc *p = &t->procs[t->nprocs];
	uint32_t n = 0;
	int rc = sym_proc_func_offsets(pid, fn_names, HEARTH_MEM_FN_COUNT, path,
				       sizeof(path), offs), fd;

	if (rc == -ENOENT) {
		snprintf(err, errlen,
			 "process %d maps no module that defines malloc (a static binary without symbols?): nothing to probe",
			 (int)pid);
		return -1;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the modules of process %d (%s)", (int)pid,
			 strerror(-rc));
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	for (uint32_t f = 0; f < HEARTH_MEM_FN_COUNT; f++) {
		bool dup = false;

		if (!offs[f] || (f == HEARTH_MEM_FREE && !t->opts.held))
			continue;
		/* aligned_alloc is memalign in some libcs: one probe each. */
		for (uint32_t k = 0; k < n; k++)
			dup |= use[k] == offs[f];
		if (dup)
			continue;
		use[n] = offs[f];
		cookies[n++] = f;
	}
	for (uint32_t k = 0; k < n; k++)
		use[k] = probe_offset(fd, use[k]);
	if (fd >= 0)
		close(fd);
	a.prog_fd = (uint32_t)bpf_program__fd(t->skel->progs.mem_call);
	a.attach_type = ATTACH_UPROBE_SESSION;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)use;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = n;
	a.pid = (uint32_t)pid;
	p->link_fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	if (p->link_fd < 0) {
		snprintf(err, errlen, "cannot probe the allocator of process %d in %s (%s)",
			 (int)pid, path, strerror(errno));
		return -1;
	}
	p->pid = pid;
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	t->nprocs++;
	/* Its mappings now, should it exit before its stacks are named. */
	sym_proc_load(t->sym, pid);
	return 0;
}

/* Opens, tunes and loads the programs. Returns 0, or -1 with a sentence. */
static int load(struct mem_tracer *t, char *err, size_t errlen)
{
	struct memory_bpf *k;
	int rc;

	t->skel = k = memory_bpf__open();
	if (!k) {
		snprintf(err, errlen, "cannot open the BPF programs (%s)", strerror(errno));
		return -1;
	}
	t->mean = mem_intervals((uint64_t *)k->rodata->intervals, HEARTH_MEM_INTERVALS,
				t->opts.sample_bytes);
	k->rodata->track_held = t->opts.held;
	bpf_map__set_max_entries(k->maps.live, t->opts.held ? t->opts.live_max : 1);
	bpf_program__set_expected_attach_type(k->progs.mem_call,
					      (enum bpf_attach_type)ATTACH_UPROBE_SESSION);
	rc = memory_bpf__load(k);
	if (rc) {
		snprintf(err, errlen,
			 "the kernel refused hearth's allocation probes (%s): they need uprobe sessions (BPF_TRACE_UPROBE_SESSION, Linux 6.13 and later); HEARTH_DEBUG_BPF=1 shows the verifier's log",
			 strerror(-rc));
		return -1;
	}
	t->rb = ring_reader_new(bpf_map__fd(k->maps.events), on_event, t);
	if (!t->rb) {
		snprintf(err, errlen, "cannot open the sample ring buffer (%s)", strerror(errno));
		return -1;
	}
	return 0;
}

struct mem_tracer *mem_open(const struct mem_opts *opts, char *err, size_t errlen)
{
	struct mem_tracer *t = calloc(1, sizeof(*t));
	struct sym_options so = { .demangle = 1 };

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->opts = *opts;
	for (size_t i = 0; i < MEM_MAX_PIDS; i++)
		t->procs[i].link_fd = t->procs[i].pidfd = -1;
	if (!t->opts.sample_bytes)
		t->opts.sample_bytes = MEM_SAMPLE_BYTES;
	if (!t->opts.live_max)
		t->opts.live_max = MEM_LIVE_MAX;
	if (!opts->npids || opts->npids > MEM_MAX_PIDS) {
		snprintf(err, errlen, "choose 1 to %d processes to probe", MEM_MAX_PIDS);
		goto err;
	}
	if (preflight_check(false, err, errlen) < 0)
		goto err;
	preflight_libbpf_quiet();
	so.debuginfod = opts->debuginfod;
	t->sym = sym_new(&so);
	t->builder = stack_builder_new();
	if (!t->sym || !t->builder) {
		snprintf(err, errlen, "out of memory");
		goto err;
	}
	if (load(t, err, errlen) < 0)
		goto err;
	mem_stacks_init(&t->stacks, t->mean, opts->per_thread, opts->held);
	for (size_t i = 0; i < opts->npids; i++)
		if (attach_pid(t, opts->pids[i], err, errlen) < 0)
			goto err;
	return t;
err:
	mem_close(t);
	return NULL;
}

int mem_poll(struct mem_tracer *t, int timeout_ms)
{
	int rc = ring_poll(t->rb, timeout_ms, &t->until);

	return rc < 0 ? rc : t->rc;
}

struct add_ctx {
	struct mem_tracer *t;
	struct prof_profile *bytes, *objects;
};

static int add_stack(void *arg, const struct mem_stack *s, const uint64_t *ips,
		     uint64_t bytes, uint64_t objects)
{
	struct add_ctx *c = arg;
	struct stack_input in = {
		.tgid = s->tgid, .tid = s->tid, .comm = s->comm, .tcomm = s->tcomm,
		.uips = ips, .nu = s->nu, .per_thread = c->t->opts.per_thread,
	};
	int rc = 0;

	if (c->bytes && bytes)
		rc = stack_builder_add_memo(c->t->builder, c->t->sym, c->bytes, &in, bytes);
	if (!rc && c->objects && objects)
		rc = stack_builder_add_memo(c->t->builder, c->t->sym, c->objects, &in, objects);
	return rc;
}

int mem_drain(struct mem_tracer *t, struct prof_profile *bytes,
	      struct prof_profile *objects)
{
	struct add_ctx c = { t, bytes, objects };

	stack_builder_next_epoch(t->builder);
	sym_window_begin(t->sym);
	return mem_stacks_take(&t->stacks, add_stack, &c);
}

/* The sample numbers in the live map, in *@out (malloc'd). Returns how
 * many, or a negative errno. */
static long live_seqs(struct mem_tracer *t, uint64_t **out)
{
	int fd = bpf_map__fd(t->skel->maps.live);
	struct hearth_mem_live_key k, next;
	size_t n = 0, cap = 1024;
	uint64_t *v = malloc(cap * sizeof(*v));
	void *prev = NULL;

	if (!v)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (n == cap) {
			uint64_t *w = realloc(v, cap * 2 * sizeof(*v));

			if (!w) {
				free(v);
				return -ENOMEM;
			}
			v = w;
			cap *= 2;
		}
		if (bpf_map_lookup_elem(fd, &k, &v[n]) == 0)
			n++;
	}
	*out = v;
	return (long)n;
}

int mem_held(struct mem_tracer *t, struct prof_profile *bytes,
	     struct prof_profile *objects)
{
	struct add_ctx c = { t, bytes, objects };
	uint64_t *live = NULL;
	long n;
	int rc;

	if (!t->opts.held)
		return -EINVAL;
	n = live_seqs(t, &live);
	if (n < 0)
		return (int)n;
	stack_builder_next_epoch(t->builder);
	rc = mem_stacks_held(&t->stacks, live, (size_t)n, add_stack, &c);
	free(live);
	return rc;
}

void mem_stop(struct mem_tracer *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nprocs; i++) {
		if (t->procs[i].link_fd >= 0)
			close(t->procs[i].link_fd);
		t->procs[i].link_fd = -1;
	}
	/* (no probe adds to it now: all of it, whatever the deadline) */
	t->until = UINT64_MAX;
	if (t->rb)
		ring_reader_consume(t->rb);
}

bool mem_alive(const struct mem_tracer *t)
{
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct mem_proc *p = &t->procs[i];

		if (p->pidfd >= 0 ? syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) == 0
				  : kill(p->pid, 0) == 0)
			return true;
	}
	return false;
}

void mem_stats(const struct mem_tracer *t, struct mem_stats *st)
{
	uint64_t c[HEARTH_MEM_CNT_MAX];

	memset(st, 0, sizeof(*st));
	st->procs = (uint32_t)t->nprocs;
	st->mean = t->mean;
	st->lost = t->lost;
	preflight_percpu_sum(bpf_map__fd(t->skel->maps.counters), HEARTH_MEM_CNT_MAX, c);
	st->calls = c[HEARTH_MEM_CNT_CALLS];
	st->bytes = c[HEARTH_MEM_CNT_BYTES];
	st->samples = c[HEARTH_MEM_CNT_SAMPLES];
	st->frees = c[HEARTH_MEM_CNT_FREES];
	st->drop_events = c[HEARTH_MEM_CNT_DROP_EVENTS];
	st->drop_live = c[HEARTH_MEM_CNT_DROP_LIVE];
	st->drop_state = c[HEARTH_MEM_CNT_DROP_STATE];
}

void mem_close(struct mem_tracer *t)
{
	if (!t)
		return;
	mem_stop(t);
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pidfd >= 0)
			close(t->procs[i].pidfd);
	ring_reader_free(t->rb);
	memory_bpf__destroy(t->skel);
	mem_stacks_free(&t->stacks);
	stack_builder_free(t->builder);
	sym_free(t->sym);
	free(t);
}
