/* SPDX-License-Identifier: MIT */
/* daemon_requests: status, snapshot, mark and marks, answered from the
 * daemon's counters and the store. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/daemon_impl.h"
#include "agent/drain.h"
#include "agent/store_codec.h"
#include "agent/time_profiles.h"
#include "agent/trusted_dir.h"

/* The questions of time, cut out of both of a window's profiles. */
#define SNAP_OF_TIME (CTL_SNAP_WALL | CTL_SNAP_LOCKS | CTL_SNAP_THREADS)

void daemon_reply_err(struct daemon *d, uint64_t client, int err, const char *msg)
{
	size_t len = 0;
	uint8_t *b = ctl_reply_error(err, msg, &len);

	ctl_server_reply(d->srv, client, b, len);
}

static void status_push(struct daemon *d, struct ctl_status *st)
{
	struct push_stats ps;

	push_get_stats(d->push, &ps);
	st->push_on = d->push != NULL;
	st->push_windows = ps.windows;
	st->push_requests = ps.requests;
	st->push_bytes = ps.bytes;
	st->push_rejected = ps.rejected;
	st->push_retries = ps.retries;
	st->push_lag_ns = ps.lag_ns;
	st->push_pending = ps.pending;
	st->push_last_err = ps.last_err;
	st->push_last_status = ps.last_status;
	st->push_last_err_ns = ps.last_err_ns;
}

_Static_assert(CTL_DROP_CAUSES == DROP_CAUSES,
	       "struct ctl_status has a drop field per enum drop_cause (ctl_status_drop())");

/* Drops by cause: the last window's, and since start (the windows cut
 * and the open one). */
static void status_drops(struct daemon *d, const struct sampler_stats *ss,
			 struct ctl_status *st)
{
	struct drop_counts all = d->drops_acc, open;

	daemon_drops_open(d, ss, &open);
	for (int i = 0; i < DROP_CAUSES; i++) {
		all.n[i] += open.n[i];
		ctl_status_set_drop(st, (unsigned)i, false, all.n[i]);
		ctl_status_set_drop(st, (unsigned)i, true, d->drops_window.n[i]);
	}
	all.unkept += open.unkept;
	all.events += open.events;
	st->drop_unkept = all.unkept;
	st->drop_events = all.events;
	st->drops = drops_total(&all);
	st->window_drops = drops_total(&d->drops_window);
	st->stack_map_size = ss->stack_map_size ? ss->stack_map_size : d->cfg.stack_map_size;
}

void daemon_status(struct daemon *d, struct ctl_status *out)
{
	struct ctl_status st = { 0 };
	struct sampler_stats ss = { 0 };
	struct store_stats ts;

	if (d->smp) {
		struct sampler_module_cache mc;

		sampler_stats(d->smp, &ss);
		sampler_module_cache(d->smp, &mc);
		st.sym_modules = mc.modules;
		st.sym_module_bytes = mc.bytes;
		st.sym_module_limit = mc.limit;
		st.sym_evictions = mc.evictions;
	}
	store_get_stats(d->store, &ts);
	st.pid = (uint64_t)getpid();
	st.uptime_ns = daemon_mono_ns() - d->start_mono_ns;
	st.window_ns = d->cfg.window_ns;
	st.windows = ts.windows;
	st.store_bytes = ts.bytes;
	st.segments = ts.segments;
	st.samples = ss.samples;
	st.idle_samples = ss.idle_samples;
	st.offcpu_ns = ss.offcpu_ns;
	st.cpu_ns = daemon_cpu_ns();
	st.cpu_pct_milli = d->cpu_pct_milli;
	st.rss_bytes = daemon_rss_bytes();
	st.last_window_end_ns = d->last_end_ns;
	st.windows_skipped = d->windows_lost;
	st.windows_held = d->nheld;
	st.store_error = (uint64_t)(ts.last_error < 0 ? -ts.last_error : 0);
	st.retention_bytes = d->cfg.retention_bytes;
	st.retention_age_ns = d->cfg.retention_age_ns;
	st.clients = ctl_server_clients(d->srv);
	st.bpf_run_ns = ss.bpf_run_ns;
	st.bpf_run_cnt = ss.bpf_run_cnt;
	status_push(d, &st);
	status_drops(d, &ss, &st);
	st.unwind_mode = (uint64_t)d->cfg.unwind + 1;
	st.cfi_walks = ss.cfi_walks;
	st.cfi_no_table = ss.cfi_no_table;
	st.cfi_fallbacks = ss.cfi_no_table + ss.cfi_no_rule + ss.cfi_collisions;
	st.stack_copies = ss.stack_copies;
	st.copy_fallbacks = ss.copy_fallbacks;
	st.waits_reused = ss.waits_reused;
	st.cfi_processes = ss.cfi_processes;
	st.cfi_modules = ss.cfi_modules;
	st.cfi_bytes = ss.cfi_bytes;
	st.cfi_pool_bytes = ss.cfi_pool_bytes;
	st.oncpu_run_ns = ss.oncpu_run_ns;
	st.oncpu_run_cnt = ss.oncpu_run_cnt;
	st.offcpu_run_ns = ss.offcpu_run_ns;
	st.offcpu_run_cnt = ss.offcpu_run_cnt;
	*out = st;
}

static void do_status(struct daemon *d, uint64_t client)
{
	struct ctl_status st;
	size_t len = 0;
	uint8_t *b;

	daemon_status(d, &st);
	b = ctl_reply_status(&st, &len);
	ctl_server_reply(d->srv, client, b, len);
}

struct snap_ctx {
	struct prof_profile *out;
	struct prof_profile *on; /* elapsed time: the on-CPU side, else NULL */
	struct prof_profile *second; /* growth: the bytes beside, else NULL */
	struct store_codec_dst dst; /* which of a window's profiles go where */
	struct store_codec_merge merge;
	const struct ctl_snapshot_req *req;
	uint32_t windows;
	uint32_t undecodable;
	uint64_t first_ns;
	uint64_t last_ns;
	int err;
};

/* The snapshot's process filter: any of the pids, and the comm. */
static bool snap_keep(void *arg, const char *comm, size_t len, uint32_t pid)
{
	const struct ctl_snapshot_req *r = arg;
	bool ok = r->npids == 0;

	for (uint32_t i = 0; i < r->npids && !ok; i++)
		ok = r->pids[i] == pid;
	if (ok && r->comm[0])
		ok = len == strlen(r->comm) && memcmp(comm, r->comm, len) == 0;
	return ok;
}

/* One window, or a roll-up standing for many (see store.h). */
static int snap_part(const struct store_part *part, const void *payload,
		     size_t len, void *arg)
{
	struct snap_ctx *c = arg;
	struct store_window hdr;
	int rc = store_codec_window_merge_all(payload, len, &c->merge, &c->dst, &hdr);

	if (rc == -EBADMSG) {
		c->undecodable += part->windows;
		return 0;
	}
	if (rc)
		return c->err = rc;
	if (!c->windows || part->start_ns < c->first_ns)
		c->first_ns = part->start_ns;
	if (part->end_ns > c->last_ns)
		c->last_ns = part->end_ns;
	c->windows += part->windows;
	prof_meta(c->out)->drops += hdr.drops;
	return 0;
}

/* A store_scan() record as a part of its own (threads: the roll-ups
 * keep no thread rows). */
static int snap_window(uint64_t start_ns, uint64_t end_ns, const void *payload,
		       size_t len, void *arg)
{
	struct store_part part = { .start_ns = start_ns, .end_ns = end_ns,
				   .last_start_ns = start_ns, .windows = 1 };

	return snap_part(&part, payload, len, arg);
}

/* Threads: the waits still going at the end of the windows in @c, read
 * from the threads as they are now (the windows hold the waits that
 * ended), so a thread asleep all along has its row. Returns 0 or a
 * negative errno. */
static int snap_open_waits(struct daemon *d, const struct ctl_snapshot_req *r,
			   struct snap_ctx *c)
{
	/* The windows' times are the wall clock's, the sampler's the
	 * monotonic clock's. */
	uint64_t shift = daemon_now_ns() - daemon_mono_ns(), whole = 0;
	struct sampler_open_req q = {
		.pids = r->pids, .npids = r->npids, .comm = r->comm[0] ? r->comm : NULL,
		.from_ns = c->first_ns - shift, .to_ns = c->last_ns - shift,
	};
	char err[256];
	int rc;

	if (!d->smp || !c->windows || !d->cfg.off_cpu || !(shift < c->first_ns))
		return 0;
	rc = sampler_open_waits(d->smp, c->out, &q, &whole, err, sizeof(err));
	if (rc)
		daemon_log("a snapshot of threads: %s", err);
	return rc == -ENOMEM ? rc : 0;
}

/* A question of time (the flags say which) made from the merged windows
 * in @c, which it replaces. Returns 0 or a negative errno. */
static int snap_question(struct daemon *d, const struct ctl_snapshot_req *r,
			 struct snap_ctx *c)
{
	unsigned q = (r->flags & CTL_SNAP_WALL) ? PROF_Q_WALL :
		     (r->flags & CTL_SNAP_THREADS) ? PROF_Q_THREADS : PROF_Q_LOCKS;
	const struct prof_meta *m = prof_meta_const(c->out);
	struct prof_profile *p;
	int err = 0;

	if (c->on)
		store_codec_merge_totals(c->on);
	if (q == PROF_Q_THREADS && (err = snap_open_waits(d, r, c)) < 0)
		return err;
	/* Waits shorter than off_cpu_min_block are not in the windows: the
	 * elapsed time of a thread adds up to less than the span by them. */
	p = time_profile_new(q, c->on, d->cfg.frequency, c->out, m->duration_ns, &err);
	if (!p)
		return err;
	prof_meta(p)->start_ns = m->start_ns;
	prof_free(c->out);
	c->out = p;
	return 0;
}

void daemon_reply_profiles(struct daemon *d, uint64_t client, const struct prof_profile *p,
			   const struct prof_profile *second, struct ctl_snapshot_reply *rep)
{
	void *blob = NULL;
	size_t bloblen = 0, len = 0;
	uint8_t *b;
	int rc = store_codec_pair_pack(p, second, &blob, &bloblen);

	if (rc || bloblen > CTL_REPLY_MAX - 64) {
		free(blob);
		return daemon_reply_err(d, client, rc ? -rc : EFBIG, "the snapshot is too large to send");
	}
	rep->blob = blob;
	rep->blob_len = (uint32_t)bloblen;
	b = ctl_reply_snapshot(rep, &len);
	ctl_server_reply(d->srv, client, b, len);
	free(blob);
}

/* Where a window's profiles go for the snapshot @r asks for (@c's out,
 * on and second made). */
static void snap_dst(const struct ctl_snapshot_req *r, struct snap_ctx *c)
{
	if (r->flags & CTL_SNAP_GROWTH)
		c->dst = (struct store_codec_dst){ .growth_req = c->out, .growth_bytes = c->second };
	else if (r->flags & (CTL_SNAP_OFFCPU | SNAP_OF_TIME))
		c->dst = (struct store_codec_dst){ .on = c->on, .off = c->out };
	else
		c->dst = (struct store_codec_dst){ .on = c->out };
}

/* The profiles a snapshot of @r is merged into. Returns 0 or -ENOMEM. */
static int snap_new(const struct ctl_snapshot_req *r, struct snap_ctx *c)
{
	bool off = (r->flags & (CTL_SNAP_OFFCPU | SNAP_OF_TIME)) != 0;
	bool elapsed = (r->flags & (CTL_SNAP_WALL | CTL_SNAP_THREADS)) != 0;

	c->out = prof_new(off ? PROF_UNIT_NANOSECONDS : PROF_UNIT_SAMPLES);
	if (elapsed)
		c->on = prof_new(PROF_UNIT_SAMPLES);
	if (r->flags & CTL_SNAP_GROWTH)
		c->second = prof_new(PROF_UNIT_BYTES);
	if (!c->out || (elapsed && !c->on) ||
	    ((r->flags & CTL_SNAP_GROWTH) && !c->second))
		return -ENOMEM;
	snap_dst(r, c);
	return 0;
}

static void snap_free(struct snap_ctx *c)
{
	prof_free(c->out);
	prof_free(c->on);
	prof_free(c->second);
}

/* Cuts [since, until) out of the store and replies. */
static void snapshot_reply(struct daemon *d, uint64_t client,
			   const struct ctl_snapshot_req *r, uint64_t since,
			   uint64_t until)
{
	bool question = (r->flags & SNAP_OF_TIME) != 0;
	bool off = (r->flags & CTL_SNAP_OFFCPU) || question;
	bool threads = (r->flags & CTL_SNAP_THREADS) != 0;
	struct snap_ctx c = { .req = r };
	struct ctl_snapshot_reply rep = { 0 };
	struct store_scan_report sr;
	struct store_live live;
	struct prof_meta *m;
	bool live_ok;
	int rc;

	if (snap_new(r, &c) < 0) {
		snap_free(&c);
		return daemon_reply_err(d, client, ENOMEM, "hearthd ran out of memory");
	}
	c.merge = (struct store_codec_merge){ .keep = snap_keep, .arg = (void *)r,
					      .clear_pid = true, .defer_totals = true,
					      .keep_threads = threads };
	/* The newest windows, which no roll-up on disk holds yet, come merged
	 * from the store's memory; threads only from windows, the roll-ups
	 * keeping no thread rows. */
	live_ok = !threads && store_live_part(d->store, &live) == 0;
	rc = threads ? store_scan(d->cfg.state_dir, since, until, snap_window, &c, &sr) :
	     store_scan_merged_live(d->cfg.state_dir, since, until, live_ok ? &live : NULL,
				    snap_part, &c, &sr);
	if (rc < 0 || c.err) {
		snap_free(&c);
		return daemon_reply_err(d, client, rc < 0 ? -rc : -c.err,
					"hearthd could not read its store");
	}
	store_codec_merge_totals(c.out);
	if (c.second)
		store_codec_merge_totals(c.second);
	m = prof_meta(c.out);
	m->start_ns = c.windows ? c.first_ns : since;
	m->duration_ns = c.windows ? c.last_ns - c.first_ns : 0;
	m->hz = off || c.second ? 0 : d->cfg.frequency;
	m->off_cpu = off;
	rc = question ? snap_question(d, r, &c) : 0;
	prof_free(c.on);
	c.on = NULL;
	if (rc < 0) {
		snap_free(&c);
		return daemon_reply_err(d, client, -rc, "hearthd could not make the snapshot");
	}
	rep = (struct ctl_snapshot_reply){
		.from_ns = c.windows ? c.first_ns : since,
		.to_ns = c.windows ? c.last_ns : until,
		.windows = c.windows,
		.corrupt = (uint32_t)(sr.corrupt + c.undecodable),
		.torn = (uint32_t)sr.torn,
		.flags = r->flags,
	};
	if (sr.corrupt || c.undecodable)
		daemon_log("a snapshot skipped %llu damaged window(s); first in %s at offset %llu",
			   (unsigned long long)(sr.corrupt + c.undecodable),
			   sr.first_bad_seg[0] ? sr.first_bad_seg : "(payload)",
			   (unsigned long long)sr.first_bad_off);
	daemon_reply_profiles(d, client, c.out, c.second, &rep);
	snap_free(&c);
}

static void do_snapshot(struct daemon *d, uint64_t client,
			const struct ctl_snapshot_req *r)
{
	uint64_t now = daemon_now_ns();
	struct pending_snap *p;

	if (r->flags & CTL_SNAP_SESSIONS)
		return daemon_session_start(d, client, r);
	if (r->last_ns)
		return snapshot_reply(d, client, r, now > r->last_ns ? now - r->last_ns : 1, now + 1);
	if (!r->next_ns)
		return snapshot_reply(d, client, r, r->since_ns ? r->since_ns : 1,
				      r->until_ns ? r->until_ns : now + 1);
	if (d->npend == DAEMON_PENDING_MAX)
		return daemon_reply_err(d, client, EBUSY, "too many snapshots are waiting for data; try again");
	p = &d->pend[d->npend++];
	p->client = client;
	p->req = *r;
	p->since_ns = now;
	p->until_ns = now + r->next_ns;
}

void daemon_answer_pending(struct daemon *d, bool all)
{
	for (size_t i = 0; i < d->npend;) {
		struct pending_snap *p = &d->pend[i];

		if (!all && d->last_end_ns < p->until_ns) {
			i++;
			continue;
		}
		snapshot_reply(d, p->client, &p->req, p->since_ns, p->until_ns);
		d->pend[i] = d->pend[--d->npend];
	}
}

static void do_mark(struct daemon *d, uint64_t client, const struct ctl_request *req)
{
	/* A mark made now ends the open window: the windows before it and
	 * after it never share one, so a diff around it compares exactly
	 * the two sides (a window cut at the mark holds only what came
	 * before the reply). A mark given a time is only written down. */
	uint64_t at = req->u.mark.at_ns ? req->u.mark.at_ns : daemon_cut_now(d);
	uint8_t *b;
	size_t len = 0;
	int rc = store_mark_add(d->cfg.state_dir, req->u.mark.name, at);

	if (rc == -EPERM)
		return daemon_reply_err(d, client, -rc, "hearthd refused its marks file: " TRUSTED_DIR_RULE);
	if (rc)
		return daemon_reply_err(d, client, -rc, "hearthd could not store the mark");
	daemon_log("mark '%s' at %llu", req->u.mark.name, (unsigned long long)at);
	b = ctl_reply_mark(at, &len);
	ctl_server_reply(d->srv, client, b, len);
}

static void do_marks(struct daemon *d, uint64_t client)
{
	struct store_marks_report mr;
	struct store_mark *m = NULL;
	struct ctl_mark *cm;
	uint8_t *b;
	size_t n = 0, len = 0;
	int rc = store_marks_read(d->cfg.state_dir, &m, &n, &mr);

	if (rc)
		return daemon_reply_err(d, client, -rc, "hearthd could not read the marks");
	/* A damaged mark is reported, to the log and to the client. */
	if (mr.bad || mr.header_bad)
		daemon_log("the marks file is damaged: %llu mark(s) could not be read%s",
			   (unsigned long long)mr.bad, mr.header_bad ? ", its header is damaged" : "");
	cm = calloc(n ? n : 1, sizeof(*cm));
	if (!cm) {
		free(m);
		return daemon_reply_err(d, client, ENOMEM, "hearthd ran out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		cm[i].at_ns = m[i].at_ns;
		memcpy(cm[i].name, m[i].name, sizeof(cm[i].name));
	}
	b = ctl_reply_marks(cm, n, mr.bad > UINT32_MAX ? UINT32_MAX : (uint32_t)mr.bad, &len);
	ctl_server_reply(d->srv, client, b, len);
	free(cm);
	free(m);
}

void daemon_on_request(void *arg, uint64_t client, const struct ctl_request *req)
{
	struct daemon *d = arg;

	switch (req->type) {
	case CTL_STATUS:
		return do_status(d, client);
	case CTL_SNAPSHOT:
		return do_snapshot(d, client, &req->u.snap);
	case CTL_MARK:
		return do_mark(d, client, req);
	case CTL_MARKS:
		return do_marks(d, client);
	default:
		return daemon_reply_err(d, client, EINVAL, "unknown request type");
	}
}
