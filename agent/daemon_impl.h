/* SPDX-License-Identifier: MIT */
/* daemon_impl: the daemon's state, shared by daemon.c (loop, windows) and
 * daemon_requests.c (control requests). Internal to hearthd. */
#ifndef HEARTH_DAEMON_IMPL_H
#define HEARTH_DAEMON_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/config.h"
#include "agent/control_server.h"
#include "agent/drops.h"
#include "agent/daemon.h"
#include "agent/push.h"
#include "agent/sampler.h"
#include "agent/store.h"

#define DAEMON_PENDING_MAX 64
#define DAEMON_POLLFDS_MAX 1100
/* On-demand snapshots at once (allocation probes, wakers): each holds
 * what it attached and a client slot. */
#define DAEMON_SESSIONS_MAX 4

struct growth;
struct mem_tracer;
struct store_window;

/* A snapshot of the next seconds, answered once a window covers it. */
struct pending_snap {
	uint64_t client;
	struct ctl_snapshot_req req;
	uint64_t since_ns;
	uint64_t until_ns;
};

/* An on-demand snapshot of the next seconds: what the always-on sampler
 * does not attach (its cost would be paid all the time), attached for
 * it alone until until_mono_ns (or until its processes all exit):
 * either the chosen processes' allocator probed (--alloc, --held), or
 * a sampler of its own that notes who woke each wait (--waker). */
struct session {
	uint64_t client;
	struct ctl_snapshot_req req;
	struct mem_tracer *t;       /* allocations: the probes, else NULL */
	struct prof_profile *bytes, *objects; /* allocated, drained each second */
	struct sampler *smp;        /* wakers: the session's sampler, else NULL */
	struct prof_profile *on, *off; /* its samples and waits, drained each second */
	uint64_t start_ns;          /* CLOCK_REALTIME */
	uint64_t start_mono_ns, until_mono_ns, drained_mono_ns;
};

/* A packed window the store could not take yet. */
struct held_window {
	uint64_t start_ns;
	uint64_t end_ns;
	void *blob;
	size_t len;
};

struct daemon {
	const struct daemon_args *args;
	struct hearthd_config cfg;
	struct sampler *smp;
	struct sym_debuginfod *dbgd; /* NULL: no debuginfod servers */
	struct store *store;
	struct ctl_server *srv;
	struct push *push;          /* NULL: push off */
	struct growth *growth;      /* NULL: memory_growth off, or it failed */
	uint64_t growth_lost;       /* requests not kept, as last said */
	uint64_t growth_ring_cut;   /* requests lost to a full ring, at the
				     * last cut */
	uint64_t growth_said_ns;    /* when they were (CLOCK_MONOTONIC) */
	bool rollup_bound_said;     /* the journal said rollup_memory was reached */
	int sigfd;
	bool stopping;

	uint64_t start_mono_ns;
	uint64_t win_start_ns;      /* CLOCK_REALTIME start of the open window */
	uint64_t next_cut_mono_ns;
	uint64_t last_end_ns;

	struct sampler_stats last_stats;
	/* Drops by cause: the last window's, and since start up to it
	 * (across sampler restarts on a reload). */
	struct drop_counts drops_window;
	struct drop_counts drops_acc;
	unsigned drops_named;       /* causes the journal has named (bits) */
	uint64_t drops_said_ns;     /* when it last counted them */
	uint64_t cpu_pct_milli;
	uint64_t last_cpu_ns;
	uint64_t last_cpu_mono_ns;

	struct pending_snap pend[DAEMON_PENDING_MAX];
	size_t npend;
	struct session sess[DAEMON_SESSIONS_MAX];
	size_t nsess;

	bool store_failing;
	unsigned store_ok_streak;
	/* Windows held while the store fails, oldest first, written in order
	 * once it takes data again (full_disk_hold). */
	struct held_window *held;
	size_t nheld, held_cap;
	uint64_t windows_lost;      /* dropped: the hold was full, or none */
	bool hold_full_logged;
	bool metrics_failing;       /* prometheus_file could not be written */
	uint64_t ev_count[CTL_EV_COUNT];
	uint64_t watchdog_usec;
	uint64_t test_hang_ns;      /* HEARTHD_TEST_HANG_AFTER, 0 = off */
	struct pollfd fds[DAEMON_POLLFDS_MAX];
};

/* Cuts the open window now (a mark's instant, so that no window holds
 * time on both sides of it) and starts the next full window there.
 * Returns the cut's wall-clock time, or now when nothing samples. */
uint64_t daemon_cut_now(struct daemon *d);
void daemon_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t daemon_now_ns(void);
uint64_t daemon_mono_ns(void);
uint64_t daemon_cpu_ns(void);
uint64_t daemon_rss_bytes(void);

/* The fetcher of debug files when debuginfod servers are named (the
 * config's debuginfod_urls, else DEBUGINFOD_URLS), caching under the
 * state directory; NULL when none are, or when it cannot start (said in
 * one log line). Sets the environment libdebuginfod reads: call before
 * any other thread starts. */
struct sym_debuginfod *daemon_debuginfod_open(const struct hearthd_config *c);

/* The sampler's options as the configuration sets them, the unwind
 * tables' cache folder written into @cfi_dir (which they point to). */
#define DAEMON_CFI_DIR_MAX (CONFIG_PATH_MAX + 8)
void daemon_sampler_opts(const struct daemon *d, struct sampler_opts *o,
			 char cfi_dir[DAEMON_CFI_DIR_MAX]);

/* Replies an error: @err (positive errno) and one sentence. */
void daemon_reply_err(struct daemon *d, uint64_t client, int err, const char *msg);

/* Replies a snapshot of @p (and @second beside it, a memory question's
 * second values; may be NULL) with @rep's range and counts. */
void daemon_reply_profiles(struct daemon *d, uint64_t client, const struct prof_profile *p,
			   const struct prof_profile *second, struct ctl_snapshot_reply *rep);

/* Starts recording requests for more memory, when memory_growth is on;
 * when it cannot, says why in one log line and goes on without. */
void daemon_growth_open(struct daemon *d);

/* Requests for more memory lost to a full ring since start (0 without
 * growth). */
uint64_t daemon_growth_ring_full(struct daemon *d);

/* The drops by cause since the last window's cut into @out: the
 * sampler's, from its counters @s, and the growth ring's. */
void daemon_drops_open(struct daemon *d, const struct sampler_stats *s, struct drop_counts *out);

/* Moves the requests seen since the last call into @w's growth profiles
 * (made here; none without growth). Returns 0 or a negative errno. */
int daemon_growth_drain(struct daemon *d, struct store_window *w);

/* Starts the on-demand session @r asks for (allocations, wakers) for
 * the next @r->next_ns and replies then, or replies an error now. */
void daemon_session_start(struct daemon *d, uint64_t client, const struct ctl_snapshot_req *r);

/* Takes the sessions' samples, and answers those whose time is up or
 * whose processes all exited (every one when @all, at shutdown); what
 * they attached is detached first. A session whose client left is
 * ended without an answer. */
void daemon_session_tick(struct daemon *d, bool all);

/* Closes everything session @s holds and zeroes it. */
void daemon_session_free(struct session *s);

/* Into free slot @s: probes the allocator of @r's pids. Returns 0, or -1
 * after replying the error to @client. */
int daemon_mem_open(struct daemon *d, struct session *s, uint64_t client,
		    const struct ctl_snapshot_req *r);

/* Ends allocation session @s: the probes go first, so that what it
 * answers is exactly what was counted; then replies. */
void daemon_mem_answer(struct daemon *d, struct session *s);

/* hearthd's figures now, as `hearth status` shows them, into @st. */
void daemon_status(struct daemon *d, struct ctl_status *st);

/* The control socket's request callback (ctl_request_fn). */
void daemon_on_request(void *arg, uint64_t client, const struct ctl_request *req);

/* Answers the pending --next snapshots that the stored windows now cover
 * (all of them when @all, at shutdown). */
void daemon_answer_pending(struct daemon *d, bool all);

#endif /* HEARTH_DAEMON_IMPL_H */
