/* SPDX-License-Identifier: MIT */
/*
 * debuginfod_fetch: the worker that fetches debug files by build-id
 * through libdebuginfod, one at a time, off the symbolizing thread.
 *
 * libdebuginfod is loaded with dlopen, as elfutils' own libdwfl does, and
 * never unloaded (its libcurl keeps global state). A fetch is given up
 * from its progress callback: when the owner cancels or stops, or when no
 * byte came for the stall time (before a server answers, that is the
 * time since the fetch began). libdebuginfod marks such a give-up in its
 * cache as "not on the servers" for ten minutes; that mark is removed,
 * since a silent server is not a missing file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "symbolize/debuginfod.h"
#include "symbolize/sym_internal.h"
#include "symbolize/symbolize.h"

#define NS 1000000000ull
#define BACKOFF_FIRST_NS (30 * NS)
#define BACKOFF_MAX_NS (600 * NS)

struct dbgd_lib {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
			      char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
};

struct entry {
	uint8_t id[SYM_BUILD_ID_MAX];
	uint8_t len;
	uint8_t state;       /* enum sym_debuginfod_state */
	char module[64];
	char *path;          /* READY: the file in the cache */
	uint64_t retry_ns;   /* FAILED: asked again from then on */
	uint64_t seq;        /* PENDING: queue order */
};

struct sym_debuginfod {
	struct dbgd_lib lib;
	struct sym_debuginfod_opts opts;
	char urls[320];      /* for sentences */
	char cache_dir[4096];

	pthread_mutex_t mu;
	pthread_cond_t work; /* the worker waits for a build-id */
	pthread_cond_t done; /* waiters wait for a fetch to end */
	pthread_t thread;
	bool started;
	bool stopping;

	struct entry *e;
	size_t n, cap;
	uint64_t seq;
	long busy;           /* index of the entry taken, -1 = none: set
			      * until its note is delivered */
	bool in_flight;      /* busy's fetch is under way */
	uint32_t waiting, fetched, failed;
	uint64_t paused_until; /* monotonic ns: servers unreachable till then */
	unsigned down_rounds;
	bool down;

	atomic_bool cancel;  /* the fetch in flight is to stop */
	atomic_bool down_flag; /* down, for readers without the lock */
	atomic_uint_fast64_t gen;
	atomic_uint_fast64_t bytes;

	/* the worker's own, for the progress callback */
	uint64_t t_last;
	long last_a;
	bool committed;
	bool stalled;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

enum sym_debuginfod_failure sym_debuginfod_classify(int err, bool stalled)
{
	if (stalled)
		return SYM_DEBUGINFOD_UNREACHABLE;
	switch (-err) {
	case ENOENT:
		return SYM_DEBUGINFOD_NOT_FOUND;
	case ECONNREFUSED: case EHOSTUNREACH: case ENETUNREACH:
	case ENETDOWN: case ECONNRESET: case ECONNABORTED: case ETIME:
	case ETIMEDOUT:
		return SYM_DEBUGINFOD_UNREACHABLE;
	default:
		return SYM_DEBUGINFOD_ERROR;
	}
}

uint64_t sym_debuginfod_backoff_ns(unsigned failures)
{
	uint64_t t = BACKOFF_FIRST_NS;

	for (unsigned i = 1; i < failures && t < BACKOFF_MAX_NS; i++)
		t *= 2;
	return t < BACKOFF_MAX_NS ? t : BACKOFF_MAX_NS;
}

static int lib_load(struct dbgd_lib *l)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		return -ENOENT;
	*(void **)&l->begin = dlsym(h, "debuginfod_begin");
	*(void **)&l->end = dlsym(h, "debuginfod_end");
	*(void **)&l->find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&l->set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&l->set_user_data = dlsym(h, "debuginfod_set_user_data");
	if (!l->begin || !l->end || !l->find_debuginfo || !l->set_progressfn ||
	    !l->set_user_data)
		return -ENOSYS; /* a library older than 0.179: left loaded */
	return 0;
}


/* The fetcher a client works for. The callback gets only the client;
 * the library is already loaded, so this takes another reference to it
 * for the look-up and gives it back. */
static struct sym_debuginfod *fetcher_of(debuginfod_client *c)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_LAZY | RTLD_NOLOAD);
	void *(*get)(debuginfod_client *) = NULL;
	void *d = NULL;

	if (!h)
		return NULL;
	*(void **)&get = dlsym(h, "debuginfod_get_user_data");
	if (get)
		d = get(c);
	dlclose(h);
	return d;
}

/* libdebuginfod's progress callback, about once a second: nonzero stops
 * the fetch. Before a server answers, @a counts loops and @b is 0; then
 * @a is the bytes received and @b the size (-1 when unknown). */
static int on_progress(debuginfod_client *c, long a, long b)
{
	struct sym_debuginfod *d = fetcher_of(c);
	uint64_t now = mono_ns();

	if (!d)
		return 0;
	if (atomic_load(&d->cancel))
		return 1;
	if (b != 0 && !d->committed) {
		d->committed = true;
		d->t_last = now;
		d->last_a = -1;
	}
	if (d->committed && a != d->last_a) {
		d->last_a = a;
		d->t_last = now;
		atomic_store(&d->bytes, a > 0 ? (uint64_t)a : 0);
	}
	if (now - d->t_last > d->opts.stall_ns) {
		d->stalled = true;
		return 1;
	}
	return 0;
}

/* The PENDING entry asked for first that may be fetched, or -1. */
static long next_pending(const struct sym_debuginfod *d)
{
	long best = -1;

	for (size_t i = 0; i < d->n; i++)
		if (d->e[i].state == SYM_DEBUGINFOD_PENDING &&
		    (best < 0 || d->e[i].seq < d->e[best].seq))
			best = (long)i;
	return best;
}

static void leave_pending(struct sym_debuginfod *d, struct entry *e,
			  enum sym_debuginfod_state to)
{
	e->state = (uint8_t)to;
	d->waiting--;
	if (to == SYM_DEBUGINFOD_READY)
		d->fetched++;
	else if (to == SYM_DEBUGINFOD_FAILED)
		d->failed++;
	atomic_fetch_add(&d->gen, 1);
}

/* Records the result of fetching entry @i (@rc: an fd or -errno, @path
 * the cache file) and writes a sentence into @note when one is due.
 * Called with the lock held. */
static void finish(struct sym_debuginfod *d, long i, int rc, char *path,
		   bool cancelled, char *note, size_t notelen)
{
	struct entry *e = &d->e[i];
	char id[2 * SYM_BUILD_ID_MAX + 1];
	const char *mod = e->module[0] ? e->module : "a module";
	uint64_t now = mono_ns();

	note[0] = '\0';
	sym_build_id_hex(e->id, e->len, id);
	if (rc >= 0) {
		free(e->path);
		e->path = path;
		leave_pending(d, e, SYM_DEBUGINFOD_READY);
		if (d->down) {
			snprintf(note, notelen, "debuginfod: %s answers again", d->urls);
			atomic_store(&d->down_flag, false);
			atomic_fetch_add(&d->gen, 1);
		}
		d->down = false;
		d->down_rounds = 0;
		return;
	}
	free(path);
	if (cancelled) {
		leave_pending(d, e, SYM_DEBUGINFOD_NONE);
		return;
	}
	switch (sym_debuginfod_classify(rc, d->stalled)) {
	case SYM_DEBUGINFOD_UNREACHABLE:
		/* stays queued; everything waits for the pause */
		d->down_rounds++;
		d->paused_until = now + sym_debuginfod_backoff_ns(d->down_rounds);
		if (!d->down)
			snprintf(note, notelen,
				 "debuginfod: cannot reach %s (%s); frames wait for their names, fetching again in %llu s",
				 d->urls, d->stalled ? (d->committed ? "the download stalled" : "no answer") :
				 strerror(-rc),
				 (unsigned long long)(sym_debuginfod_backoff_ns(d->down_rounds) / NS));
		if (!d->down) {
			atomic_store(&d->down_flag, true);
			atomic_fetch_add(&d->gen, 1);
		}
		d->down = true;
		return;
	case SYM_DEBUGINFOD_NOT_FOUND:
		snprintf(note, notelen, "debuginfod: no debug file for %s (build-id %s) on %s",
			 mod, id, d->urls);
		break;
	case SYM_DEBUGINFOD_ERROR:
		snprintf(note, notelen, "debuginfod: cannot fetch the debug file of %s (build-id %s): %s",
			 mod, id, strerror(-rc));
		break;
	}
	e->retry_ns = now + SYM_DEBUGINFOD_RETRY_NS;
	leave_pending(d, e, SYM_DEBUGINFOD_FAILED);
}

/* Removes the "not on the servers" mark libdebuginfod leaves when a
 * fetch is given up, and the folder it made. */
static void unmark(const struct sym_debuginfod *d, const char *id)
{
	char path[4096 + 160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/debuginfo", d->cache_dir, id);
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(path);
	snprintf(path, sizeof(path), "%s/%s", d->cache_dir, id);
	rmdir(path); /* when empty */
}

/* After a download: the bound, and READY entries whose file it deleted
 * go back to NONE (asked again when needed). Lock not held. */
static void apply_bound(struct sym_debuginfod *d, const char *keep)
{
	uint64_t freed = 0;

	if (sym_debuginfod_cache_trim(d->cache_dir, d->opts.cache_max_bytes,
				      keep, &freed) != 0 || freed == 0)
		return;
	pthread_mutex_lock(&d->mu);
	for (size_t i = 0; i < d->n; i++) {
		struct entry *e = &d->e[i];
		struct stat st;

		if (e->state == SYM_DEBUGINFOD_READY && stat(e->path, &st) != 0) {
			e->state = SYM_DEBUGINFOD_NONE;
			d->fetched--;
		}
	}
	pthread_mutex_unlock(&d->mu);
}

/* Fetches entry @i (lock not held; the entry's id and module are copied
 * in @id/@len/@module by the caller). Returns an fd or -errno, the cache
 * path in *@path. */
static int fetch_one(struct sym_debuginfod *d, debuginfod_client *c,
		     const uint8_t *id, int len, char **path)
{
	d->t_last = mono_ns();
	d->last_a = 0;
	d->committed = false;
	d->stalled = false;
	atomic_store(&d->bytes, 0);
	*path = NULL;
	if (!c)
		return -ENOMEM;
	d->lib.set_user_data(c, d);
	return d->lib.find_debuginfo(c, id, len, path);
}

/* Takes the next entry to fetch, waiting for one (and for a pause to
 * end). Returns its index, or -1 when stopping. Lock held. */
static long take(struct sym_debuginfod *d)
{
	for (;;) {
		if (d->stopping)
			return -1;
		long i = next_pending(d);
		uint64_t now = mono_ns();

		if (i >= 0 && now >= d->paused_until)
			return i;
		if (i < 0) {
			pthread_cond_wait(&d->work, &d->mu);
			continue;
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t left = d->paused_until - now;
		ts.tv_sec += (time_t)(left / NS);
		ts.tv_nsec += (long)(left % NS);
		if (ts.tv_nsec >= (long)NS) {
			ts.tv_sec++;
			ts.tv_nsec -= (long)NS;
		}
		pthread_cond_timedwait(&d->work, &d->mu, &ts);
	}
}

static void *worker(void *arg)
{
	struct sym_debuginfod *d = arg;
	debuginfod_client *c = d->lib.begin();
	char note[768];

	if (c)
		d->lib.set_progressfn(c, on_progress);
	apply_bound(d, NULL); /* a cache left over the bound */
	pthread_mutex_lock(&d->mu);
	for (;;) {
		long i = take(d);
		if (i < 0)
			break;
		uint8_t id[SYM_BUILD_ID_MAX];
		int len = d->e[i].len;
		char idhex[2 * SYM_BUILD_ID_MAX + 1], *path = NULL;

		memcpy(id, d->e[i].id, (size_t)len);
		d->busy = i;
		d->in_flight = true;
		atomic_store(&d->cancel, false);
		pthread_mutex_unlock(&d->mu);

		int rc = fetch_one(d, c, id, len, &path);
		bool cancelled = atomic_load(&d->cancel);
		sym_build_id_hex(id, (size_t)len, idhex);
		if (rc >= 0) {
			close(rc);
			/* its last use, for the bound (libdebuginfod dates
			 * the file as the server does) */
			utimensat(AT_FDCWD, path, (const struct timespec[2]){
				{ .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } }, 0);
			if (d->committed)
				apply_bound(d, path);
		} else if (cancelled || d->stalled) {
			unmark(d, idhex);
		}
		pthread_mutex_lock(&d->mu);
		finish(d, i, rc, rc >= 0 ? path : NULL, cancelled, note, sizeof(note));
		d->in_flight = false;
		if (rc < 0)
			free(path);
		/* the note before waiters wake: a wait that ends has its
		 * sentences said */
		if (note[0] && d->opts.note) {
			pthread_mutex_unlock(&d->mu);
			d->opts.note(d->opts.note_arg, note);
			pthread_mutex_lock(&d->mu);
		}
		d->busy = -1;
		atomic_store(&d->bytes, 0);
		pthread_cond_broadcast(&d->done);
	}
	pthread_mutex_unlock(&d->mu);
	if (c)
		d->lib.end(c);
	return NULL;
}

/* The cache folder libdebuginfod will use, from the environment. */
static int cache_dir_from_env(char *out, size_t len)
{
	const char *home = getenv("HOME");
	char legacy[4096];
	struct stat st;

	snprintf(legacy, sizeof(legacy), "%s/.debuginfod_client_cache",
		 home && *home ? home : "");
	return sym_debuginfod_cache_dir(getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR),
					getenv("XDG_CACHE_HOME"), home,
					stat(legacy, &st) == 0, out, len);
}

static int start_worker(struct sym_debuginfod *d)
{
	sigset_t all, old;
	int rc;

	/* signals are the main thread's: the worker blocks them all */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&d->thread, NULL, worker, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

struct sym_debuginfod *sym_debuginfod_new(const struct sym_debuginfod_opts *o,
					  char *err, size_t errlen)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	struct sym_debuginfod *d;
	int rc;

	if (sym_debuginfod_urls_check(urls, err, errlen) < 0)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (o)
		d->opts = *o;
	if (!d->opts.cache_max_bytes)
		d->opts.cache_max_bytes = SYM_DEBUGINFOD_CACHE_MAX;
	if (!d->opts.stall_ns)
		d->opts.stall_ns = SYM_DEBUGINFOD_STALL_NS;
	snprintf(d->urls, sizeof(d->urls), "%s", urls);
	d->busy = -1;
	pthread_mutex_init(&d->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->work, &ca);
	pthread_cond_init(&d->done, &ca);
	pthread_condattr_destroy(&ca);
	if (cache_dir_from_env(d->cache_dir, sizeof(d->cache_dir)) != 0) {
		snprintf(err, errlen, "the debuginfod cache folder's name is too long");
		goto err_free;
	}
	rc = lib_load(&d->lib);
	if (rc) {
		snprintf(err, errlen, rc == -ENOENT ?
			 "cannot load %s, needed for debuginfod (Debian package libdebuginfod1)" :
			 "%s is too old for hearth (elfutils 0.179 or later is needed)",
			 DEBUGINFOD_SONAME);
		goto err_free;
	}
	rc = start_worker(d);
	if (rc) {
		snprintf(err, errlen, "cannot start the debuginfod thread (%s)", strerror(-rc));
		goto err_free;
	}
	d->started = true;
	return d;
err_free:
	sym_debuginfod_free(d);
	return NULL;
}

void sym_debuginfod_free(struct sym_debuginfod *d)
{
	if (!d)
		return;
	if (d->started) {
		pthread_mutex_lock(&d->mu);
		d->stopping = true;
		atomic_store(&d->cancel, true);
		pthread_cond_broadcast(&d->work);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->thread, NULL);
	}
	for (size_t i = 0; i < d->n; i++)
		free(d->e[i].path);
	free(d->e);
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->done);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

static long find(const struct sym_debuginfod *d, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->e[i].len == len && memcmp(d->e[i].id, id, len) == 0)
			return (long)i;
	return -1;
}

/* Queues entry @e. Lock held. */
static void enqueue(struct sym_debuginfod *d, struct entry *e)
{
	e->state = SYM_DEBUGINFOD_PENDING;
	e->seq = ++d->seq;
	d->waiting++;
	pthread_cond_signal(&d->work);
}

/* A new entry for @id, or NULL when there is no room. Lock held. */
static struct entry *add(struct sym_debuginfod *d, const uint8_t *id, size_t len)
{
	if (d->n >= SYM_DEBUGINFOD_MAX_FILES)
		return NULL;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct entry *e = realloc(d->e, cap * sizeof(*e));

		if (!e)
			return NULL;
		d->e = e;
		d->cap = cap;
	}
	struct entry *e = &d->e[d->n++];
	*e = (struct entry){ .len = (uint8_t)len };
	memcpy(e->id, id, len);
	return e;
}

int sym_debuginfod_get(struct sym_debuginfod *d, const uint8_t *id,
		       size_t len, const char *module, char *path,
		       size_t pathlen)
{
	int st;

	if (len == 0 || len > SYM_BUILD_ID_MAX)
		return SYM_DEBUGINFOD_NONE;
	pthread_mutex_lock(&d->mu);
	long i = find(d, id, len);
	struct entry *e = i >= 0 ? &d->e[i] : add(d, id, len);
	if (!e) {
		pthread_mutex_unlock(&d->mu);
		return SYM_DEBUGINFOD_NONE;
	}
	if (module && !e->module[0])
		snprintf(e->module, sizeof(e->module), "%s", module);
	if (e->state == SYM_DEBUGINFOD_NONE ||
	    (e->state == SYM_DEBUGINFOD_FAILED && mono_ns() >= e->retry_ns)) {
		if (e->state == SYM_DEBUGINFOD_FAILED)
			d->failed--;
		enqueue(d, e);
	}
	st = e->state;
	if (st == SYM_DEBUGINFOD_READY && path) {
		size_t n = strlen(e->path);

		if (n < pathlen)
			memcpy(path, e->path, n + 1);
		else
			st = SYM_DEBUGINFOD_FAILED;
	}
	pthread_mutex_unlock(&d->mu);
	return st;
}

uint64_t sym_debuginfod_generation(const struct sym_debuginfod *d)
{
	return atomic_load(&((struct sym_debuginfod *)d)->gen);
}

bool sym_debuginfod_unreachable(const struct sym_debuginfod *d)
{
	return atomic_load(&((struct sym_debuginfod *)d)->down_flag);
}

void sym_debuginfod_progress(struct sym_debuginfod *d,
			     struct sym_debuginfod_progress *p)
{
	pthread_mutex_lock(&d->mu);
	*p = (struct sym_debuginfod_progress){
		.waiting = d->waiting, .fetched = d->fetched,
		.failed = d->failed, .bytes = atomic_load(&d->bytes),
		.unreachable = d->down,
	};
	if (d->in_flight)
		snprintf(p->module, sizeof(p->module), "%s", d->e[d->busy].module);
	pthread_mutex_unlock(&d->mu);
}

uint32_t sym_debuginfod_wait(struct sym_debuginfod *d, uint64_t timeout_ns)
{
	struct timespec ts;
	uint32_t left;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(timeout_ns / NS);
	ts.tv_nsec += (long)(timeout_ns % NS);
	if (ts.tv_nsec >= (long)NS) {
		ts.tv_sec++;
		ts.tv_nsec -= (long)NS;
	}
	pthread_mutex_lock(&d->mu);
	while (((d->waiting > 0 && !d->down) || d->busy >= 0) &&
	       pthread_cond_timedwait(&d->done, &d->mu, &ts) == 0)
		;
	left = d->waiting;
	pthread_mutex_unlock(&d->mu);
	return left;
}

void sym_debuginfod_cancel(struct sym_debuginfod *d)
{
	pthread_mutex_lock(&d->mu);
	for (size_t i = 0; i < d->n; i++)
		if (d->e[i].state == SYM_DEBUGINFOD_PENDING &&
		    !((long)i == d->busy && d->in_flight))
			leave_pending(d, &d->e[i], SYM_DEBUGINFOD_NONE);
	if (d->in_flight)
		atomic_store(&d->cancel, true);
	pthread_mutex_unlock(&d->mu);
}

int sym_debuginfod_ready_at(struct sym_debuginfod *d, size_t i, char *module,
			    size_t modlen, char *path, size_t pathlen)
{
	int rc = 0;

	pthread_mutex_lock(&d->mu);
	if (i >= d->n) {
		rc = -ENOENT;
	} else if (d->e[i].state == SYM_DEBUGINFOD_READY &&
		   strlen(d->e[i].path) < pathlen) {
		snprintf(module, modlen, "%s", d->e[i].module);
		snprintf(path, pathlen, "%s", d->e[i].path);
		rc = 1;
	}
	pthread_mutex_unlock(&d->mu);
	return rc;
}
