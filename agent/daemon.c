/* SPDX-License-Identifier: MIT */
/* daemon: the poll loop, window cuts, config reloads and systemd. */
#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/statvfs.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "agent/daemon_impl.h"
#include "agent/mem_growth.h"
#include "agent/memory.h"
#include "agent/metrics.h"
#include "agent/store_codec.h"
#include "agent/trusted_dir.h"
#include "symbolize/debuginfod.h"

/* Process events (exec, fork, exit) are taken at most this often: a new
 * process's mappings are read then, before a short-lived one is gone.
 * Each wake-up costs hearthd CPU time (tens of microseconds in a VM), so
 * this is the trade between naming processes that live under a tenth of a
 * second and hearthd's own cost on a host that starts processes all day. */
#define POLL_MS 100
/* With no event waiting and no client, the loop sleeps up to this long
 * (the watchdog and the next window cut shorten it): an idle host wakes
 * hearthd about once a second, not ten times. Clients' deadlines are
 * checked every POLL_MS while any is connected. */
#define IDLE_POLL_MS 1000
#define STORE_OK_STREAK 3
/* ...and the file system must have this much room again: a nearly full
 * one takes small windows into the slack of a file's last page, many in
 * a row, without anyone having freed space. */
#define STORE_RESUME_FREE (256 * 1024)
/* The most windows full_disk_hold keeps, whatever the window length. */
#define HOLD_MAX 100000
#define FLUSH_MS 2000

void daemon_log(const char *fmt, ...)
{
	va_list ap;

	flockfile(stderr); /* one line, whole, beside the push thread's */
	fputs("hearthd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t daemon_now_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t daemon_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t daemon_cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

uint64_t daemon_rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Logs the 1st, 10th, 100th, ... event of a kind, so a flood of bad
 * clients cannot flood the journal. */
static void on_ctl_event(void *arg, enum ctl_event ev, const char *detail)
{
	struct daemon *d = arg;
	uint64_t n = ++d->ev_count[ev];
	uint64_t p = 1;

	while (p < n && p <= UINT64_MAX / 10)
		p *= 10;
	if (p == n)
		daemon_log("%s%s", detail, n > 1 ? " (and others like it since start)" : "");
}

static int load_config(const struct daemon_args *a, struct hearthd_config *c)
{
	const char *path = a->config_path ? a->config_path : CONFIG_DEFAULT_PATH;
	char err[300];
	int rc;

	config_defaults(c);
	rc = config_load(c, path, err, sizeof(err));
	if (rc == -ENOENT && !a->config_required)
		rc = 0;
	if (rc) {
		daemon_log("%s: %s", path, err);
		return rc;
	}
	for (size_t i = 0; i < a->noverrides; i++) {
		rc = config_set(c, a->overrides[i].key, a->overrides[i].value, err, sizeof(err));
		if (rc) {
			daemon_log("--%s: %s", a->overrides[i].key, err);
			return rc;
		}
	}
	return 0;
}

static void sampler_opts_from(const struct hearthd_config *c, struct sampler_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hz = c->frequency;
	o->on_cpu = c->on_cpu;
	o->off_cpu = c->off_cpu;
	o->min_block_ns = c->off_cpu_min_block_ns;
	o->kernel_stacks = c->kernel_stacks;
	/* A window's process rows carry their pid straight from the kernel's
	 * tgid (snapshots filter on it, store_codec_window_merge() clears it),
	 * and a thread row each thread, for snapshots of threads (the other
	 * merges leave them out). */
	o->pid_rows = true;
	o->per_thread = true;
	o->unwind = (enum sampler_unwind)c->unwind;
	o->cfi_bytes = c->unwind_memory;
	o->stack_map_size = c->stack_map_size;
	o->exclude_tgid = getpid();
	o->symbol_cache = c->symbol_cache_bytes;
}

static void store_limits_from(const struct hearthd_config *c, struct store_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->max_age_ns = c->retention_age_ns;
	l->max_bytes = c->retention_bytes;
	l->rollup_bytes = c->rollup_memory;
}

void daemon_sampler_opts(const struct daemon *d, struct sampler_opts *o,
			 char cfi_dir[DAEMON_CFI_DIR_MAX])
{
	sampler_opts_from(&d->cfg, o);
	o->debuginfod = d->dbgd;
	/* Compiled unwind tables survive a restart beside the store. */
	if (snprintf(cfi_dir, DAEMON_CFI_DIR_MAX, "%s/cfi", d->cfg.state_dir) < DAEMON_CFI_DIR_MAX)
		o->cfi_cache_dir = cfi_dir;
}

static int open_sampler(struct daemon *d)
{
	struct sampler_opts o;
	char err[256] = "", cfi_dir[DAEMON_CFI_DIR_MAX];

	daemon_sampler_opts(d, &o, cfi_dir);
	d->smp = sampler_open(&o, err, sizeof(err));
	if (!d->smp) {
		daemon_log("%s", err[0] ? err : "the sampler could not start");
		return -1;
	}
	sampler_set_exclude(d->smp, (const char (*)[16])d->cfg.exclude_comm, d->cfg.nexclude);
	memset(&d->last_stats, 0, sizeof(d->last_stats));
	return 0;
}

static gid_t group_id(const char *name)
{
	struct group *g = getgrnam(name);

	return g ? g->gr_gid : (gid_t)-1;
}

static int open_server(struct daemon *d)
{
	struct ctl_server_opts o = {
		.path = d->cfg.socket_path,
		.gid = group_id(d->cfg.socket_group),
		.max_clients = d->cfg.max_clients,
		.on_request = daemon_on_request,
		.on_event = on_ctl_event,
		.arg = d,
	};
	int err = 0;

	if (o.gid == (gid_t)-1)
		daemon_log("group '%s' does not exist: only root may use %s",
			   d->cfg.socket_group, d->cfg.socket_path);
	d->srv = ctl_server_open(&o, &err);
	if (!d->srv) {
		daemon_log("cannot listen on %s (%s)", d->cfg.socket_path,
			   err == -EADDRINUSE ? "another hearthd answers there" : strerror(-err));
		return -1;
	}
	return 0;
}

static void push_log(void *arg, const char *line)
{
	(void)arg;
	daemon_log("%s", line);
}

/* Starts the push thread when push_url is set; after open_signals(), so
 * the thread is born with the signals blocked. */
static int open_push(struct daemon *d)
{
	char err[400];

	if (!d->cfg.push_url[0])
		return 0;
	d->push = push_start(&d->cfg, push_log, d, err, sizeof(err));
	if (!d->push) {
		daemon_log("%s", err);
		return -1;
	}
	daemon_log("pushing windows to %s", d->cfg.push_url);
	return 0;
}

static int open_signals(struct daemon *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	sigdelset(&set, SIGPIPE);
	d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->sigfd < 0 ? -errno : 0;
}

/* Moves the sampler's data into a window shaped for the store: the
 * sampler builds it so (pid in the process row, excluded processes left
 * out), nothing is copied. */
static int build_window(struct daemon *d, struct store_window *w)
{
	int rc;

	if (d->cfg.on_cpu && !(w->oncpu = prof_new(PROF_UNIT_SAMPLES)))
		return -ENOMEM;
	if (d->cfg.off_cpu && !(w->offcpu = prof_new(PROF_UNIT_NANOSECONDS)))
		return -ENOMEM;
	rc = sampler_drain(d->smp, w->oncpu, w->offcpu);
	return rc ? rc : daemon_growth_drain(d, w);
}

/* The journal names each cause of drops the first time it comes, with
 * the setting that avoids it, and counts them again at most every
 * DROPS_SAY_NS while they go on. */
#define DROPS_SAY_NS (600ull * 1000000000ull)

static void say_drops(struct daemon *d, const struct drop_counts *win)
{
	struct drop_settings set = { .who = DROP_FOR_DAEMON,
				     .stack_map_size = d->cfg.stack_map_size,
				     .unwind = (enum sampler_unwind)d->cfg.unwind };
	char last[400], all[400], advice[512];
	bool any = false;

	for (int i = 0; i < DROP_CAUSES; i++) {
		if (!win->n[i])
			continue;
		any = true;
		if (d->drops_named & 1u << i)
			continue;
		d->drops_named |= 1u << i;
		d->drops_said_ns = daemon_mono_ns();
		daemon_log("drops: %llu %s in the last window: %s",
			   (unsigned long long)win->n[i], drops_name((enum drop_cause)i),
			   drops_advice((enum drop_cause)i, win, &set, advice, sizeof(advice)));
	}
	if (!any || daemon_mono_ns() - d->drops_said_ns < DROPS_SAY_NS)
		return;
	d->drops_said_ns = daemon_mono_ns();
	daemon_log("drops in the last window: %s; since start: %s",
		   drops_list(win, last, sizeof(last)), drops_list(&d->drops_acc, all, sizeof(all)));
}

void daemon_drops_open(struct daemon *d, const struct sampler_stats *s, struct drop_counts *out)
{
	struct drop_counts now, before;

	drops_of(s, &now);
	drops_of(&d->last_stats, &before);
	now.n[DROP_GROWTH_RING] = daemon_growth_ring_full(d);
	before.n[DROP_GROWTH_RING] = d->growth_ring_cut;
	drops_sub(&now, &before, out);
}

/* The window's drops by cause, from the counters since the last cut. */
static void count_drops(struct daemon *d, const struct sampler_stats *s)
{
	daemon_drops_open(d, s, &d->drops_window);
	d->growth_ring_cut += d->drops_window.n[DROP_GROWTH_RING];
	for (int i = 0; i < DROP_CAUSES; i++)
		d->drops_acc.n[i] += d->drops_window.n[i];
	d->drops_acc.unkept += d->drops_window.unkept;
	d->drops_acc.events += d->drops_window.events;
	say_drops(d, &d->drops_window);
}

static void fill_counters(struct daemon *d, struct store_window *w)
{
	struct sampler_stats s;
	struct prof_profile *ps[2] = { w->oncpu, w->offcpu };

	sampler_stats(d->smp, &s);
	w->samples = s.samples - d->last_stats.samples;
	w->idle_samples = s.idle_samples - d->last_stats.idle_samples;
	w->offcpu_ns = s.offcpu_ns - d->last_stats.offcpu_ns;
	count_drops(d, &s);
	w->drops = drops_total(&d->drops_window);
	d->last_stats = s;
	for (int i = 0; i < 2; i++) {
		struct prof_meta *m;

		if (!ps[i])
			continue;
		m = prof_meta(ps[i]);
		m->start_ns = w->start_ns;
		m->duration_ns = w->end_ns - w->start_ns;
		m->hz = i == 0 ? d->cfg.frequency : 0;
		m->off_cpu = (uint32_t)i;
		m->drops = w->drops;
	}
}

/* True when the state directory's file system has room for more than
 * the slack of a page (or when that cannot be told). */
static bool store_has_room(const struct daemon *d)
{
	struct statvfs sv;

	if (statvfs(d->cfg.state_dir, &sv) != 0)
		return true;
	return (uint64_t)sv.f_bavail * sv.f_frsize >= STORE_RESUME_FREE;
}

/* Logs a failing store once per episode: an episode ends only after
 * STORE_OK_STREAK windows in a row were written with room on the disk
 * (a nearly full disk can take a small window now and then). */
static void store_result(struct daemon *d, int rc)
{
	if (rc) {
		if (!d->store_failing)
			daemon_log("cannot store windows in %s (%s); still sampling, holding windows in memory until writing works again",
				   d->cfg.state_dir, strerror(-rc));
		d->store_failing = true;
		d->store_ok_streak = 0;
		return;
	}
	if (d->store_failing && !store_has_room(d)) {
		d->store_ok_streak = 0;
		return;
	}
	if (d->store_failing && ++d->store_ok_streak >= STORE_OK_STREAK) {
		daemon_log("writing windows again: the store accepts data");
		d->store_failing = false;
	}
}

/* A window is in the store: the push may send it (windows held while the
 * disk was full included, when they are written at last). */
static void window_stored(struct daemon *d, uint64_t start_ns, uint64_t end_ns, size_t len)
{
	struct store_stats st;

	push_notify(d->push, end_ns);
	store_get_stats(d->store, &st);
	if (st.rollups_bounded && !d->rollup_bound_said) {
		/* Once: it goes on as long as the host's stacks do. */
		daemon_log("roll-ups reached rollup_memory (%.1f MiB): they now stand for fewer "
			   "windows each, so long snapshots read more records (nothing is lost); "
			   "a larger rollup_memory keeps them whole",
			   (double)d->cfg.rollup_memory / (1 << 20));
		d->rollup_bound_said = true;
	}
	if (getenv("HEARTHD_LOG_WINDOWS"))
		daemon_log("stored window %llu %llu (%zu bytes)", (unsigned long long)start_ns,
			   (unsigned long long)end_ns, len);
}

/* How many windows full_disk_hold keeps (0: none). */
static size_t hold_limit(const struct daemon *d)
{
	uint64_t n;

	if (!d->cfg.full_disk_hold_ns || !d->cfg.window_ns)
		return 0;
	n = d->cfg.full_disk_hold_ns / d->cfg.window_ns;
	return n < 1 ? 1 : n > HOLD_MAX ? HOLD_MAX : (size_t)n;
}

static void drop_oldest_held(struct daemon *d)
{
	free(d->held[0].blob);
	memmove(d->held, d->held + 1, (d->nheld - 1) * sizeof(*d->held));
	d->nheld--;
	d->windows_lost++;
	if (!d->hold_full_logged)
		daemon_log("the windows held in memory reached full_disk_hold; dropping the oldest");
	d->hold_full_logged = true;
}

/* Keeps a packed window (taking @blob) until the store takes data again.
 * Past full_disk_hold the oldest held window is dropped and counted. */
static void hold_window(struct daemon *d, uint64_t start_ns, uint64_t end_ns,
			void *blob, size_t len)
{
	size_t lim = hold_limit(d);

	while (d->nheld && d->nheld >= lim)
		drop_oldest_held(d);
	if (!lim) {
		free(blob);
		d->windows_lost++;
		return;
	}
	if (d->nheld == d->held_cap) {
		size_t cap = d->held_cap ? d->held_cap * 2 : 16;
		struct held_window *h = realloc(d->held, cap * sizeof(*h));

		if (!h) {
			free(blob);
			d->windows_lost++;
			return;
		}
		d->held = h;
		d->held_cap = cap;
	}
	d->held[d->nheld++] = (struct held_window){ start_ns, end_ns, blob, len };
}

/* Writes the held windows, oldest first, until one fails. Returns 0 once
 * none is left, or the store's error. */
static int write_held(struct daemon *d)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < d->nheld; i++) {
		struct held_window *h = &d->held[i];

		rc = store_append(d->store, h->start_ns, h->end_ns, h->blob, h->len);
		if (rc)
			break;
		window_stored(d, h->start_ns, h->end_ns, h->len);
		free(h->blob);
	}
	if (i) {
		memmove(d->held, d->held + i, (d->nheld - i) * sizeof(*d->held));
		d->nheld -= i;
		daemon_log("wrote %zu window(s) held in memory while the store could not write", i);
	}
	if (!d->nheld)
		d->hold_full_logged = false;
	return rc;
}

/* A window the store refused for what it is (too large), not for where it
 * goes: holding it would block every later one. */
static bool store_refused_window(int rc)
{
	return rc == -EFBIG || rc == -EINVAL;
}

/* Stores a packed window (taking @blob) after those held, or holds it. */
static void store_window(struct daemon *d, uint64_t start_ns, uint64_t end_ns,
			 void *blob, size_t len)
{
	int rc = d->nheld ? write_held(d) : 0;

	if (!rc)
		rc = store_append(d->store, start_ns, end_ns, blob, len);
	if (!rc) {
		window_stored(d, start_ns, end_ns, len);
		free(blob);
	} else if (store_refused_window(rc)) {
		free(blob);
		d->windows_lost++;
	} else {
		hold_window(d, start_ns, end_ns, blob, len);
	}
	store_result(d, rc);
}

/* At exit: the held windows get a last chance, then are counted lost. */
static void release_held(struct daemon *d)
{
	if (d->nheld && write_held(d) != 0)
		daemon_log("%zu window(s) held in memory are lost: the store still cannot write", d->nheld);
	for (size_t i = 0; i < d->nheld; i++)
		free(d->held[i].blob);
	free(d->held);
	d->held = NULL;
	d->nheld = d->held_cap = 0;
}

/* Cuts the open window: drain, store, answer waiting snapshots. */
static void cut_window(struct daemon *d)
{
	struct store_window w = { .start_ns = d->win_start_ns, .end_ns = daemon_now_ns() };
	void *blob = NULL;
	size_t len = 0;
	int rc;

	if (w.end_ns < w.start_ns)
		w.end_ns = w.start_ns; /* the wall clock stepped back */
	rc = build_window(d, &w);
	if (rc)
		daemon_log("draining the sampler failed (%s); this window is lost", strerror(-rc));
	else {
		fill_counters(d, &w);
		rc = store_codec_window_pack(&w, &blob, &len);
		if (!rc) {
			store_window(d, w.start_ns, w.end_ns, blob, len);
		} else {
			d->windows_lost++;
			daemon_log("packing a window failed (%s); this window is lost", strerror(-rc));
		}
	}
	d->last_end_ns = w.end_ns;
	d->win_start_ns = w.end_ns;
	store_window_clear(&w);
	daemon_answer_pending(d, false);
	/* A window's working memory (its profiles, the stacks drained, the
	 * mappings of processes that exited) is freed here in pieces all
	 * over the heap, and glibc gives back only the top of each arena:
	 * without this, RSS stays at the largest window ever seen and
	 * creeps up as the pieces fragment. Once a window: a few ms. */
	malloc_trim(0);
}

uint64_t daemon_cut_now(struct daemon *d)
{
	if (!d->smp)
		return daemon_now_ns();
	cut_window(d);
	d->next_cut_mono_ns = daemon_mono_ns() + d->cfg.window_ns;
	return d->last_end_ns;
}

static void update_cpu(struct daemon *d)
{
	uint64_t cpu = daemon_cpu_ns(), mono = daemon_mono_ns();

	if (mono > d->last_cpu_mono_ns && cpu >= d->last_cpu_ns)
		d->cpu_pct_milli = (cpu - d->last_cpu_ns) * 100000ull /
				   (mono - d->last_cpu_mono_ns);
	d->last_cpu_ns = cpu;
	d->last_cpu_mono_ns = mono;
}

static void notify_status(struct daemon *d)
{
	struct store_stats st;

	store_get_stats(d->store, &st);
	sd_notifyf(0, "STATUS=%llu windows stored (%llu MiB), cpu %llu.%02llu%%, %s",
		   (unsigned long long)st.windows,
		   (unsigned long long)(st.bytes >> 20),
		   (unsigned long long)(d->cpu_pct_milli / 1000),
		   (unsigned long long)(d->cpu_pct_milli % 1000 / 10),
		   d->store_failing ? "NOT WRITING (store failing)" : "writing");
}

/* Rewrites prometheus_file, when set, with the figures now (@up) or
 * with hearthd_up 0 alone (stopping). A failure is one log line until a
 * write works again. */
static void write_metrics(struct daemon *d, bool up)
{
	struct ctl_status st;
	int rc;

	if (!d->cfg.prometheus_file[0])
		return;
	if (up)
		daemon_status(d, &st);
	rc = metrics_write_file(d->cfg.prometheus_file, up ? &st : NULL);
	if (rc && !d->metrics_failing)
		daemon_log("cannot write %s (%s); trying again each window",
			   d->cfg.prometheus_file, strerror(-rc));
	else if (!rc && d->metrics_failing)
		daemon_log("writing %s again", d->cfg.prometheus_file);
	d->metrics_failing = rc != 0;
}

static bool sampler_changed(const struct hearthd_config *a, const struct hearthd_config *b)
{
	struct sampler_opts x, y;

	sampler_opts_from(a, &x);
	sampler_opts_from(b, &y);
	return memcmp(&x, &y, sizeof(x)) != 0;
}

/* SIGHUP: re-read the file, re-apply the flags. Paths stay as started. */
static void reload(struct daemon *d)
{
	struct hearthd_config c;
	struct store_limits l;

	sd_notify(0, "RELOADING=1");
	if (load_config(d->args, &c)) {
		daemon_log("reload failed; keeping the running configuration");
		sd_notify(0, "READY=1");
		return;
	}
	memcpy(c.state_dir, d->cfg.state_dir, sizeof(c.state_dir));
	memcpy(c.socket_path, d->cfg.socket_path, sizeof(c.socket_path));
	if (strcmp(c.debuginfod_urls, d->cfg.debuginfod_urls) != 0)
		daemon_log("debuginfod_urls changes on a restart; keeping %s",
			   d->cfg.debuginfod_urls[0] ? d->cfg.debuginfod_urls : "the environment's");
	memcpy(c.debuginfod_urls, d->cfg.debuginfod_urls, sizeof(c.debuginfod_urls));
	if (sampler_changed(&d->cfg, &c)) {
		cut_window(d);
		sampler_close(d->smp);
		d->smp = NULL;
		d->cfg = c;
		if (open_sampler(d))
			d->stopping = true;
	}
	d->cfg = c;
	if (d->smp)
		sampler_set_exclude(d->smp, (const char (*)[16])d->cfg.exclude_comm,
				    d->cfg.nexclude);
	store_limits_from(&c, &l);
	store_set_limits(d->store, &l);
	/* The push restarts on every reload: it re-reads the auth file. */
	push_stop(d->push);
	d->push = NULL;
	if (open_push(d))
		daemon_log("push stays off until the configuration is fixed");
	d->next_cut_mono_ns = daemon_mono_ns() + d->cfg.window_ns;
	daemon_log("configuration reloaded");
	sd_notify(0, "READY=1");
}

static void read_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			reload(d);
		else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			d->stopping = true;
	}
}

static void pet_watchdog(struct daemon *d, uint64_t *last)
{
	uint64_t now = daemon_mono_ns();

	if (!d->watchdog_usec || now - *last < d->watchdog_usec * 1000 / 4)
		return;
	sd_notify(0, "WATCHDOG=1");
	*last = now;
}

/* How long the loop may sleep from @now (CLOCK_MONOTONIC ns): at most
 * @cap_ns, and not past the next window cut. */
static int poll_timeout(const struct daemon *d, uint64_t now, uint64_t cap_ns)
{
	uint64_t left = d->next_cut_mono_ns > now ? d->next_cut_mono_ns - now : 0;

	if (cap_ns < left)
		left = cap_ns;
	return (int)((left + 999999) / 1000000);
}

/* Fills @fds[0..) with the signal descriptor, the sampler's event rings
 * and the growth requests' ring when they may be taken now (POLL_MS after
 * the last take), and the control socket's; *@ring is the rings' index
 * (0 when left out), *@grow the growth ring's, and *@cap_ns how long the
 * loop may sleep. Returns how many. */
static size_t poll_set(struct daemon *d, uint64_t now, uint64_t last_take,
		       size_t *ring, size_t *grow, uint64_t *cap_ns)
{
	struct pollfd *fds = d->fds;
	uint64_t every = POLL_MS * 1000000ull;
	size_t n = 1;

	*cap_ns = IDLE_POLL_MS * 1000000ull;
	*ring = *grow = 0;
	fds[0] = (struct pollfd){ .fd = d->sigfd, .events = POLLIN };
	if (d->smp && now - last_take >= every) {
		*ring = n;
		fds[n++] = (struct pollfd){ .fd = sampler_poll_fd(d->smp), .events = POLLIN };
		if (d->growth) {
			*grow = n;
			fds[n++] = (struct pollfd){ .fd = growth_poll_fd(d->growth),
						    .events = POLLIN };
		}
	} else if (d->smp && last_take + every - now < *cap_ns) {
		*cap_ns = last_take + every - now;
	}
	if (ctl_server_clients(d->srv) && every < *cap_ns)
		*cap_ns = every;
	if (d->watchdog_usec && d->watchdog_usec * 1000 / 4 < *cap_ns)
		*cap_ns = d->watchdog_usec * 1000 / 4;
	return n + ctl_server_pollfds(d->srv, fds + n, DAEMON_POLLFDS_MAX - n);
}

/* Test-only fault switch: HEARTHD_TEST_HANG_AFTER=SECONDS hangs the main
 * loop that long after start, so a test sees systemd's watchdog act. */
static uint64_t test_hang_after(void)
{
	const char *v = getenv("HEARTHD_TEST_HANG_AFTER");
	unsigned long long s;
	char *end;

	if (!v || !*v)
		return 0;
	errno = 0;
	s = strtoull(v, &end, 10);
	return errno || *end || s == 0 || s > 86400 ? 0 : s * 1000000000ull;
}

static void test_fault(const struct daemon *d)
{
	if (!d->test_hang_ns || daemon_mono_ns() - d->start_mono_ns < d->test_hang_ns)
		return;
	daemon_log("HEARTHD_TEST_HANG_AFTER: hanging the main loop now (test fault)");
	for (;;)
		pause();
}

static void loop(struct daemon *d)
{
	struct pollfd *fds = d->fds;
	uint64_t last_pet = 0, last_take = 0;

	while (!d->stopping) {
		uint64_t now = daemon_mono_ns(), cap;
		size_t ring, grow, n = poll_set(d, now, last_take, &ring, &grow, &cap);
		size_t rings = (ring > 0) + (grow > 0);
		bool events;

		if (poll(fds, n, poll_timeout(d, now, cap)) < 0 && errno != EINTR) {
			daemon_log("poll failed (%s)", strerror(errno));
			break;
		}
		events = (ring && fds[ring].revents) || (grow && fds[grow].revents);
		if (fds[0].revents)
			read_signals(d);
		ctl_server_dispatch(d->srv, fds + 1 + rings, n - 1 - rings,
				    daemon_mono_ns() / 1000000);
		if (d->smp && events) {
			sampler_poll(d->smp, 0);
			if (d->growth)
				growth_poll(d->growth, 0);
			last_take = daemon_mono_ns();
		}
		daemon_session_tick(d, false);
		if (d->smp && daemon_mono_ns() >= d->next_cut_mono_ns) {
			last_take = daemon_mono_ns(); /* the drain takes the events */
			cut_window(d);
			d->next_cut_mono_ns += d->cfg.window_ns;
			if (d->next_cut_mono_ns < daemon_mono_ns())
				d->next_cut_mono_ns = daemon_mono_ns() + d->cfg.window_ns;
			store_retain(d->store, daemon_now_ns());
			update_cpu(d);
			notify_status(d);
			write_metrics(d, true);
		}
		pet_watchdog(d, &last_pet);
		test_fault(d);
	}
}

/* At exit: give the last replies up to FLUSH_MS to reach their clients. */
static void flush_clients(struct daemon *d)
{
	uint64_t until = daemon_mono_ns() / 1000000 + FLUSH_MS;

	while (ctl_server_clients(d->srv) && daemon_mono_ns() / 1000000 < until) {
		size_t n = ctl_server_pollfds(d->srv, d->fds, DAEMON_POLLFDS_MAX);

		d->fds[0].events = 0; /* accept nobody new */
		if (poll(d->fds, n, POLL_MS) < 0 && errno != EINTR)
			break;
		ctl_server_dispatch(d->srv, d->fds, n, daemon_mono_ns() / 1000000);
	}
}

static int start(struct daemon *d)
{
	struct store_limits l;
	int err = 0;

	if (load_config(d->args, &d->cfg))
		return -1;
	if (open_signals(d) < 0) {
		daemon_log("cannot set up signal handling (%s)", strerror(errno));
		return -1;
	}
	store_limits_from(&d->cfg, &l);
	d->store = store_open(d->cfg.state_dir, &l, &err);
	if (!d->store) {
		if (err == -EPERM)
			daemon_log("refusing the state directory %s: %s", d->cfg.state_dir,
				   TRUSTED_DIR_RULE);
		else
			daemon_log("cannot open the state directory %s (%s)", d->cfg.state_dir,
				   err == -EBUSY ? "another hearthd writes there" : strerror(-err));
		return -1;
	}
	d->dbgd = daemon_debuginfod_open(&d->cfg);
	if (open_sampler(d) || open_server(d) || open_push(d))
		return -1;
	daemon_growth_open(d);
	return 0;
}

int daemon_run(const struct daemon_args *a)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct store_stats st;
	uint64_t usec = 0;
	int status = 1;

	if (!d) {
		daemon_log("out of memory");
		return 1;
	}
	d->args = a;
	d->sigfd = -1;
	d->test_hang_ns = test_hang_after();
	d->start_mono_ns = daemon_mono_ns();
	if (start(d) == 0) {
		if (sd_watchdog_enabled(0, &usec) > 0)
			d->watchdog_usec = usec;
		d->win_start_ns = daemon_now_ns();
		d->next_cut_mono_ns = daemon_mono_ns() + d->cfg.window_ns;
		d->last_cpu_ns = daemon_cpu_ns();
		d->last_cpu_mono_ns = daemon_mono_ns();
		store_get_stats(d->store, &st);
		daemon_log("sampling; %llu windows in %s; control socket %s",
			   (unsigned long long)st.windows, d->cfg.state_dir, d->cfg.socket_path);
		sd_notify(0, "READY=1");
		notify_status(d);
		write_metrics(d, true);
		loop(d);
		sd_notify(0, "STOPPING=1");
		/* The current window is not lost; sampling stops first, so
		 * it holds exactly what the counters counted. */
		if (d->smp) {
			sampler_stop(d->smp);
			cut_window(d);
		}
		release_held(d);
		daemon_answer_pending(d, true);
		daemon_session_tick(d, true);
		flush_clients(d);
		write_metrics(d, false);
		status = d->smp ? 0 : 1;
		daemon_log("stopped");
	}
	push_stop(d->push);
	ctl_server_close(d->srv);
	/* Growth's and the allocation sessions' last reads ask the sampler
	 * which processes are excluded: they close before it. */
	growth_close(d->growth);
	for (size_t i = 0; i < d->nsess; i++)
		daemon_session_free(&d->sess[i]);
	sampler_close(d->smp);
	sym_debuginfod_free(d->dbgd);
	store_close(d->store);
	if (d->sigfd >= 0)
		close(d->sigfd);
	free(d);
	return status;
}
