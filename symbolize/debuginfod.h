/* SPDX-License-Identifier: MIT */
/*
 * debuginfod: debug files fetched by build-id from debuginfod servers
 * (Debian, Ubuntu, Fedora and Arch run public ones), so stripped
 * distribution binaries get names and file:line.
 *
 * A sym_debuginfod owns one worker thread that fetches one file at a time
 * through libdebuginfod (loaded with dlopen when a fetcher is made, so a
 * hearth without servers configured loads neither it nor libcurl).
 * Symbolizing never waits for it: sym_debuginfod_get() queues a build-id
 * and answers at once; a sym_ctx given the fetcher (sym_options) names a
 * module's frames from the moment its file is there.
 *
 * libdebuginfod 0.188 takes its settings from the environment only: the
 * servers (DEBUGINFOD_URLS, spaces between them) and the cache folder
 * (DEBUGINFOD_CACHE_PATH, else its default under $XDG_CACHE_HOME or
 * $HOME/.cache). Set them before sym_debuginfod_new() and leave them
 * while the fetcher lives. The cache is kept under a size bound, least
 * recently used files deleted first.
 *
 * Failures never stall and are not retried in a loop: a build-id the
 * servers do not have is one note and is asked again after an hour; a
 * server that cannot be reached (refused, unreachable, silent) is one
 * note, and fetching pauses, 30 s at first, doubling up to 10 min, with
 * the queue kept. Notes are sentences handed to the owner's callback,
 * from the worker thread; nothing here prints.
 */
#ifndef HEARTH_SYM_DEBUGINFOD_H
#define HEARTH_SYM_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../profile/profile.h"

/* The cache bound when the options give none. */
#define SYM_DEBUGINFOD_CACHE_MAX ((uint64_t)2 << 30)
/* A fetch that gets no byte for this long is given up (options' stall_ns
 * 0; DEBUGINFOD_TIMEOUT sets it for the command and the daemon). */
#define SYM_DEBUGINFOD_STALL_NS (30ull * 1000000000ull)
/* A build-id the servers did not have is asked again after this long. */
#define SYM_DEBUGINFOD_RETRY_NS (3600ull * 1000000000ull)
/* Build-ids remembered at most (asked, fetched or failed); past it a new
 * one is not asked for. */
#define SYM_DEBUGINFOD_MAX_FILES 8192

enum sym_debuginfod_state {
	SYM_DEBUGINFOD_NONE = 0,    /* not asked for (no room, no build-id) */
	SYM_DEBUGINFOD_PENDING = 1, /* queued or being fetched */
	SYM_DEBUGINFOD_READY = 2,   /* in the cache */
	SYM_DEBUGINFOD_FAILED = 3,  /* not found, or the fetch failed */
};

struct sym_debuginfod_opts {
	uint64_t cache_max_bytes; /* 0 = SYM_DEBUGINFOD_CACHE_MAX */
	uint64_t stall_ns;        /* 0 = SYM_DEBUGINFOD_STALL_NS */
	/* Called from the worker thread with one sentence (no newline)
	 * per failure or recovery; may be NULL. */
	void (*note)(void *arg, const char *sentence);
	void *note_arg;
};

struct sym_debuginfod;

/* Loads libdebuginfod and starts the worker. Returns NULL with one
 * sentence in @err when DEBUGINFOD_URLS is unset or empty, names no valid
 * server, libdebuginfod.so.1 cannot be loaded, or the thread cannot
 * start. */
struct sym_debuginfod *sym_debuginfod_new(const struct sym_debuginfod_opts *o,
					  char *err, size_t errlen);

/* Stops the fetch under way (its partial file is removed), joins the
 * worker and frees @d. Accepts NULL. */
void sym_debuginfod_free(struct sym_debuginfod *d);

/* The state of the debug file with build-id @id (@len bytes). A build-id
 * not asked for yet, or failed longer ago than SYM_DEBUGINFOD_RETRY_NS,
 * is queued (the answer is then PENDING); @module (a basename, may be
 * NULL) names it in notes and progress. On READY the file's path is
 * written to @path (@pathlen bytes; READY becomes FAILED when it does not
 * fit). Never blocks on the network. Thread-safe. */
int sym_debuginfod_get(struct sym_debuginfod *d, const uint8_t *id,
		       size_t len, const char *module, char *path,
		       size_t pathlen);

/* A number that grows each time a build-id stops being PENDING, and
 * when the servers are found unreachable or answer again: a caller
 * holding PENDING ones asks again only when it changed. */
uint64_t sym_debuginfod_generation(const struct sym_debuginfod *d);

/* Whether fetching is paused because the servers could not be reached
 * (PENDING build-ids then wait for them to answer again). */
bool sym_debuginfod_unreachable(const struct sym_debuginfod *d);

struct sym_debuginfod_progress {
	uint32_t waiting;     /* PENDING build-ids, the one in flight too */
	uint32_t fetched;     /* READY ones */
	uint32_t failed;      /* FAILED ones */
	uint64_t bytes;       /* received of the file in flight */
	bool unreachable;     /* paused: the servers could not be reached */
	char module[64];      /* the file in flight, "" when none */
};

/* Fills @p with what the fetcher is doing. Thread-safe. */
void sym_debuginfod_progress(struct sym_debuginfod *d,
			     struct sym_debuginfod_progress *p);

/* Waits until nothing is PENDING, the servers are found unreachable, or
 * @timeout_ns passed. Returns the number still PENDING (0 when done). */
uint32_t sym_debuginfod_wait(struct sym_debuginfod *d, uint64_t timeout_ns);

/* Gives up everything PENDING: the fetch under way stops (its partial
 * file removed) and queued build-ids go back to NONE (asked again by the
 * next sym_debuginfod_get()). */
void sym_debuginfod_cancel(struct sym_debuginfod *d);

/* Renames, in a copy of @p, the frames left unnamed ("module+0xaddr")
 * in modules whose debug file is now READY: each becomes the function
 * (and its inlined calls, file and line) that the debug file names at
 * that address; @demangle as sym_options.demangle. A module name shared
 * by two fetched files is left as it is. Returns the copy (*@renamed
 * frames renamed, may be 0), or NULL with errno set. */
struct prof_profile *sym_debuginfod_rename(struct sym_debuginfod *d,
					   const struct prof_profile *p,
					   int demangle, size_t *renamed);

/* ---- pure parts, exposed for tests ---- */

/* Checks a server list as DEBUGINFOD_URLS spells it (URLs separated by
 * spaces; http://, https:// or file://). Returns how many URLs (>= 1), or
 * -EINVAL with one sentence in @err (none, or one that is not a URL of
 * those schemes). */
int sym_debuginfod_urls_check(const char *urls, char *err, size_t errlen);

/* libdebuginfod 0.188's cache folder from its environment: @cache_path
 * (DEBUGINFOD_CACHE_PATH) when set, else $HOME/.debuginfod_client_cache
 * when @legacy_exists, else @xdg (XDG_CACHE_HOME)/debuginfod_client, else
 * @home/.cache/debuginfod_client (NULL or empty values count as unset;
 * HOME unset is "/"). Returns 0, or -ENAMETOOLONG. */
int sym_debuginfod_cache_dir(const char *cache_path, const char *xdg,
			     const char *home, bool legacy_exists, char *out,
			     size_t len);

/* One file of the cache, for the bound. */
struct sym_cache_file {
	uint64_t bytes;
	uint64_t used_ns;  /* last use: the later of access and change */
	bool keep;         /* never evicted (the file just fetched) */
	bool evict;        /* out: delete it */
};

/* Marks for eviction the least recently used files (ties: the larger
 * first) until the rest holds at most @max bytes; kept files are never
 * marked. Returns the bytes that stay. */
uint64_t sym_debuginfod_cache_plan(struct sym_cache_file *f, size_t n,
				   uint64_t max);

/* Applies the bound to the cache folder @dir (libdebuginfod's layout:
 * DIR/<build-id>/<file>; symbolic links are neither followed nor
 * counted), never deleting @keep (may be NULL). Adds the bytes deleted to
 * *@freed. Returns 0 or a negative errno. */
int sym_debuginfod_cache_trim(const char *dir, uint64_t max,
			      const char *keep, uint64_t *freed);

/* What a failed fetch means. */
enum sym_debuginfod_failure {
	SYM_DEBUGINFOD_NOT_FOUND = 0,   /* the servers do not have it */
	SYM_DEBUGINFOD_UNREACHABLE = 1, /* no server answered: pause */
	SYM_DEBUGINFOD_ERROR = 2,       /* anything else about this file */
};
/* Classifies libdebuginfod's result @err (a negative errno) of a fetch
 * that we @stalled (gave up for lack of progress). */
enum sym_debuginfod_failure sym_debuginfod_classify(int err, bool stalled);

/* The pause after @failures (>= 1) unreachable rounds in a row: 30 s,
 * doubling, at most 10 min. */
uint64_t sym_debuginfod_backoff_ns(unsigned failures);

#endif /* HEARTH_SYM_DEBUGINFOD_H */
