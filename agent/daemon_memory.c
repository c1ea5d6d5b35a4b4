/* SPDX-License-Identifier: MIT */
/* daemon_memory: the questions of memory hearthd answers. Where memory
 * grows is recorded always, into every window (system call tracepoints,
 * cheap); where it is allocated and what holds it only on demand, for
 * the next seconds of chosen processes (uprobes cost every call). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/daemon_impl.h"
#include "agent/mem_growth.h"
#include "agent/memory.h"
#include "agent/store_codec.h"

/* Requests whose stacks are copied and unwound with DWARF, a second per
 * CPU; past them the frame-pointer walk stands in. An exec storm asks
 * for memory thousands of times a second, each in a process new to the
 * unwinder: hearthd's own cost is kept below record's budget. */
#define DAEMON_GROWTH_COPIES 100

/* exclude_comm: their requests are not stored either. (The sampler
 * holds the list as configured now, reloads included.) */
static bool growth_skip(void *arg, const char *comm)
{
	struct daemon *d = arg;

	return d->smp && sampler_excluded(d->smp, comm);
}

void daemon_growth_open(struct daemon *d)
{
	/* Its modules beside the sampler's: half of symbol_cache more, not
	 * a budget of their own (the requests come from the processes the
	 * sampler sees too). An eighth (4 MiB by default) held libc and
	 * little else: under an exec storm each batch of requests evicted
	 * and read again the modules of the one before, 40% of hearthd's
	 * CPU. */
	struct growth_opts o = { .exclude_tgid = getpid(), .pid_rows = true,
				 .debuginfod = d->dbgd, .skip = growth_skip, .skip_arg = d,
				 .symbol_cache = d->cfg.symbol_cache_bytes / 2 + 1,
				 .copies_per_sec = DAEMON_GROWTH_COPIES };
	char err[512];

	if (!d->cfg.memory_growth)
		return;
	d->growth = growth_open(&o, err, sizeof(err));
	if (!d->growth)
		daemon_log("not recording requests for more memory: %s", err);
}

uint64_t daemon_growth_ring_full(struct daemon *d)
{
	struct growth_stats st;

	if (!d->growth)
		return 0;
	growth_stats(d->growth, &st);
	return st.drop_events;
}

/* Requests that could not be kept (out of memory) are said the first
 * time, then at most every GROWTH_SAY_NS while they go on. (Those lost
 * to a full ring are a cause of drops: daemon.c says them.) */
#define GROWTH_SAY_NS (600ull * 1000000000ull)

static void say_growth_lost(struct daemon *d)
{
	struct growth_stats st;
	uint64_t lost, now = daemon_mono_ns();

	growth_stats(d->growth, &st);
	lost = st.lost;
	if (lost == d->growth_lost || (d->growth_said_ns && now - d->growth_said_ns < GROWTH_SAY_NS))
		return;
	daemon_log("requests for more memory not kept (out of memory): %llu since start",
		   (unsigned long long)lost);
	d->growth_lost = lost;
	d->growth_said_ns = now;
}

int daemon_growth_drain(struct daemon *d, struct store_window *w)
{
	struct prof_profile *ps[2];

	if (!d->growth)
		return 0;
	/* (what waits in the ring belongs to this window too) */
	growth_poll(d->growth, 0);
	say_growth_lost(d);
	w->growth_req = prof_new(PROF_UNIT_SAMPLES);
	w->growth_bytes = prof_new(PROF_UNIT_BYTES);
	if (!w->growth_req || !w->growth_bytes)
		return -ENOMEM;
	ps[0] = w->growth_req;
	ps[1] = w->growth_bytes;
	for (int i = 0; i < 2; i++) {
		struct prof_meta *m = prof_meta(ps[i]);

		m->start_ns = w->start_ns;
		m->duration_ns = w->end_ns - w->start_ns;
		m->question = PROF_Q_GROWTH;
	}
	return growth_drain(d->growth, w->growth_req, w->growth_bytes);
}

int daemon_mem_open(struct daemon *d, struct session *s, uint64_t client,
		    const struct ctl_snapshot_req *r)
{
	struct mem_opts o = { .npids = r->npids, .sample_bytes = r->sample_bytes,
			      .held = (r->flags & CTL_SNAP_HELD) != 0, .debuginfod = d->dbgd };
	char err[512], msg[600];

	for (uint32_t i = 0; i < r->npids; i++)
		o.pids[i] = (pid_t)r->pids[i];
	s->bytes = prof_new(PROF_UNIT_BYTES);
	s->objects = prof_new(PROF_UNIT_SAMPLES);
	if (!s->bytes || !s->objects) {
		daemon_reply_err(d, client, ENOMEM, "hearthd ran out of memory");
		return -1;
	}
	s->t = mem_open(&o, err, sizeof(err));
	if (!s->t) {
		snprintf(msg, sizeof(msg), "hearthd cannot probe allocations: %s", err);
		daemon_reply_err(d, client, EINVAL, msg);
		return -1;
	}
	daemon_log("probing the allocator of %u process(es) for %llu s", r->npids,
		   (unsigned long long)(r->next_ns / 1000000000ull));
	return 0;
}

void daemon_mem_answer(struct daemon *d, struct session *s)
{
	bool held = (s->req.flags & CTL_SNAP_HELD) != 0;
	struct prof_profile *hb = NULL, *ho = NULL, *out, *out2;
	uint64_t now = daemon_now_ns();
	struct ctl_snapshot_reply rep = { .from_ns = s->start_ns, .to_ns = now,
					  .flags = s->req.flags };
	struct mem_stats st;
	struct prof_meta *m;
	int rc;

	mem_stop(s->t);
	rc = mem_drain(s->t, s->bytes, s->objects);
	if (!rc && held) {
		hb = prof_new(PROF_UNIT_BYTES);
		ho = prof_new(PROF_UNIT_SAMPLES);
		rc = hb && ho ? mem_held(s->t, hb, ho) : -ENOMEM;
	}
	if (rc < 0) {
		daemon_reply_err(d, s->client, -rc, "hearthd could not take the allocation samples");
		goto out;
	}
	out = held ? hb : s->bytes;
	out2 = held ? ho : s->objects;
	mem_stats(s->t, &st);
	m = prof_meta(out);
	m->question = held ? PROF_Q_HELD : PROF_Q_ALLOC;
	m->start_ns = s->start_ns;
	m->duration_ns = now > s->start_ns ? now - s->start_ns : 0;
	m->drops = st.drop_events + st.drop_live + st.drop_state + st.lost;
	daemon_reply_profiles(d, s->client, out, out2, &rep);
out:
	prof_free(hb);
	prof_free(ho);
}
