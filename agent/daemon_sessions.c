/* SPDX-License-Identifier: MIT */
/* daemon_sessions: the snapshots hearthd answers from an on-demand
 * session rather than from the store, because what they need costs too
 * much to attach all the time: allocator probes (daemon_memory.c) and
 * who woke each wait (a sampler of the session's own, with the waking
 * program the always-on sampler leaves out, since it would run at every
 * wake-up on the host). Each attaches for the next seconds only, and
 * detaches when the time is up, when its client leaves, or at shutdown. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/daemon_impl.h"
#include "agent/drops.h"
#include "agent/memory.h"
#include "agent/time_profiles.h"

/* A session's samples are taken this often while it runs (the kernel's
 * maps do not fill, processes that exit are still named). */
#define SESSION_DRAIN_NS 1000000000ull

void daemon_session_free(struct session *s)
{
	mem_close(s->t);
	sampler_close(s->smp);
	prof_free(s->bytes);
	prof_free(s->objects);
	prof_free(s->on);
	prof_free(s->off);
	memset(s, 0, sizeof(*s));
}

/* The question of time @flags ask beside the wakers (0: off-CPU). */
static unsigned waker_question(uint32_t flags)
{
	return flags & CTL_SNAP_WALL ? PROF_Q_WALL : flags & CTL_SNAP_LOCKS ? PROF_Q_LOCKS : 0;
}

/* The session's sampler: the daemon's settings, but only the chosen
 * processes, each wait with its waker, and for wall and locks every
 * wait, those begun before the start and going at the end included (as
 * hearth record --waker counts them). */
static void waker_opts(const struct daemon *d, const struct ctl_snapshot_req *r,
		       struct sampler_opts *o, char cfi_dir[DAEMON_CFI_DIR_MAX])
{
	bool question = waker_question(r->flags) != 0;

	daemon_sampler_opts(d, o, cfi_dir);
	o->on_cpu = (r->flags & CTL_SNAP_WALL) != 0;
	o->off_cpu = true;
	o->wakers = true;
	o->edges = question;
	if (question)
		o->min_block_ns = 0;
	o->npids = r->npids;
	for (uint32_t i = 0; i < r->npids; i++)
		o->pids[i] = (pid_t)r->pids[i];
	snprintf(o->comm, sizeof(o->comm), "%s", r->comm);
	/* (as snapshots of the store: no pid in the process row, no
	 * thread rows) */
	o->pid_rows = false;
	o->per_thread = false;
	/* Its own stack maps, sized for what it chose, and the daemon's
	 * budget of modules: a wait's waker may be any process on the host
	 * (a timer's interrupt wakes a sleeper in whatever task ran), and a
	 * smaller cache reads the same large modules again at every drain. */
	o->stack_map_size = 0;
}

/* Into free slot @s: a sampler noting each wait's waker. Returns 0, or
 * -1 after replying the error to @client. */
static int waker_open(struct daemon *d, struct session *s, uint64_t client,
		      const struct ctl_snapshot_req *r)
{
	struct sampler_opts o;
	char cfi_dir[DAEMON_CFI_DIR_MAX], err[512], msg[600];
	uint64_t t0;

	waker_opts(d, r, &o, cfi_dir);
	s->off = prof_new(PROF_UNIT_NANOSECONDS);
	s->on = o.on_cpu ? prof_new(PROF_UNIT_SAMPLES) : NULL;
	if (!s->off || (o.on_cpu && !s->on)) {
		daemon_reply_err(d, client, ENOMEM, "hearthd ran out of memory");
		return -1;
	}
	s->smp = sampler_open(&o, err, sizeof(err));
	if (!s->smp)
		goto fail;
	sampler_set_exclude(s->smp, (const char (*)[16])d->cfg.exclude_comm, d->cfg.nexclude);
	t0 = daemon_mono_ns();
	if (o.edges && sampler_edges_begin(s->smp, &t0, err, sizeof(err)) < 0)
		goto fail;
	s->start_mono_ns = t0;
	daemon_log("noting who wakes the waits of %s for %llu s",
		   r->npids ? "the chosen processes" : r->comm[0] ? r->comm : "every process",
		   (unsigned long long)(r->next_ns / 1000000000ull));
	return 0;
fail:
	snprintf(msg, sizeof(msg), "hearthd cannot note who wakes each wait: %s", err);
	daemon_reply_err(d, client, EINVAL, msg);
	return -1;
}

/* Ends waker session @s: its programs are detached first, so that what
 * it answers is exactly what was counted; the waits still going are
 * counted up to now (wall, locks); then replies. */
static void waker_answer(struct daemon *d, struct session *s)
{
	unsigned q = waker_question(s->req.flags);
	uint64_t t1 = daemon_mono_ns(), elapsed = t1 - s->start_mono_ns;
	uint64_t start = daemon_now_ns() - elapsed;
	struct ctl_snapshot_reply rep = { .from_ns = start, .to_ns = start + elapsed,
					  .flags = s->req.flags };
	struct prof_profile *out = NULL;
	struct sampler_stats st;
	struct drop_counts dc;
	int rc;

	if (q)
		sampler_edges_close(s->smp, t1);
	sampler_stop(s->smp);
	rc = sampler_drain(s->smp, s->on, s->off);
	if (!rc && q)
		rc = sampler_edges_end(s->smp, s->off, t1);
	sampler_stats(s->smp, &st);
	drops_of(&st, &dc);
	prof_meta(s->off)->off_cpu = true;
	prof_meta(s->off)->drops = drops_total(&dc);
	if (!rc && q) {
		if (s->on)
			prof_meta(s->on)->hz = d->cfg.frequency;
		out = time_profile_new(q, s->on, d->cfg.frequency, s->off, elapsed, &rc);
	}
	if (rc < 0) {
		daemon_reply_err(d, s->client, -rc, "hearthd could not take the waits and their wakers");
		return;
	}
	if (!out) {
		out = s->off;
		s->off = NULL;
		prof_meta(out)->duration_ns = elapsed;
	}
	prof_meta(out)->start_ns = start;
	daemon_reply_profiles(d, s->client, out, NULL, &rep);
	prof_free(out);
}

void daemon_session_start(struct daemon *d, uint64_t client, const struct ctl_snapshot_req *r)
{
	struct session *s;
	int rc;

	if (d->nsess == DAEMON_SESSIONS_MAX)
		return daemon_reply_err(d, client, EBUSY,
					"hearthd runs 4 snapshots of allocations or wakers already; try again when one is done");
	s = &d->sess[d->nsess];
	rc = r->flags & CTL_SNAP_WAKER ? waker_open(d, s, client, r) :
	     daemon_mem_open(d, s, client, r);
	if (rc < 0)
		return daemon_session_free(s);
	s->client = client;
	s->req = *r;
	if (!s->start_mono_ns)
		s->start_mono_ns = daemon_mono_ns();
	s->drained_mono_ns = daemon_mono_ns();
	s->start_ns = daemon_now_ns() - (s->drained_mono_ns - s->start_mono_ns);
	s->until_mono_ns = s->start_mono_ns + r->next_ns;
	d->nsess++;
}

/* Whether session @s's chosen processes all exited (a session of every
 * process, or of a name, runs its whole time). */
static bool session_done(const struct session *s)
{
	if (s->t)
		return !mem_alive(s->t);
	return s->req.npids && !sampler_chosen_alive(s->smp);
}

static int session_drain(struct session *s)
{
	return s->t ? mem_drain(s->t, s->bytes, s->objects) : sampler_drain(s->smp, s->on, s->off);
}

void daemon_session_tick(struct daemon *d, bool all)
{
	for (size_t i = 0; i < d->nsess;) {
		struct session *s = &d->sess[i];
		uint64_t now = daemon_mono_ns();
		int rc = s->t ? mem_poll(s->t, 0) : sampler_poll(s->smp, 0);

		if (!ctl_server_has_client(d->srv, s->client)) {
			/* asked, then gone: what it attached goes now, not at the end */
			daemon_log(s->t ? "the client of an allocation snapshot left; its probes are removed" :
				   "the client of a waker snapshot left; its programs are detached");
		} else if (rc < 0 && rc != -EINTR) {
			daemon_reply_err(d, s->client, -rc, s->t ? "hearthd could not take the allocation samples" :
					 "hearthd could not take the waits and their wakers");
		} else if (all || now >= s->until_mono_ns || session_done(s)) {
			if (s->t)
				daemon_mem_answer(d, s);
			else
				waker_answer(d, s);
		} else {
			if (now - s->drained_mono_ns >= SESSION_DRAIN_NS && session_drain(s) == 0)
				s->drained_mono_ns = now;
			i++;
			continue;
		}
		daemon_session_free(s);
		d->sess[i] = d->sess[--d->nsess];
	}
}
