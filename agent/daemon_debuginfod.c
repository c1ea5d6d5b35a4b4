/* SPDX-License-Identifier: MIT */
/* daemon_debuginfod: hearthd's fetcher of debug files by build-id. */
#include <stdio.h>
#include <stdlib.h>

#include "agent/daemon_impl.h"
#include "symbolize/debuginfod.h"

static void note(void *arg, const char *sentence)
{
	(void)arg;
	daemon_log("%s", sentence);
}

struct sym_debuginfod *daemon_debuginfod_open(const struct hearthd_config *c)
{
	const char *env = getenv("DEBUGINFOD_URLS"), *timeout = getenv("DEBUGINFOD_TIMEOUT");
	struct sym_debuginfod_opts o = { .note = note };
	char urls[CONFIG_URLS_MAX], cache[CONFIG_PATH_MAX + 16], err[300];
	struct sym_debuginfod *d;

	snprintf(urls, sizeof(urls), "%s", c->debuginfod_urls[0] ? c->debuginfod_urls :
		 env ? env : "");
	if (!urls[0])
		return NULL;
	/* libdebuginfod reads both from the environment, and no other
	 * thread runs yet: the cache is hearthd's own, under the state
	 * directory (the one place its service may write). */
	snprintf(cache, sizeof(cache), "%s/debuginfod", c->state_dir);
	if (setenv("DEBUGINFOD_URLS", urls, 1) != 0 ||
	    setenv("DEBUGINFOD_CACHE_PATH", cache, 1) != 0) {
		daemon_log("debuginfod: out of memory; stripped binaries stay unnamed");
		return NULL;
	}
	if (timeout && atoi(timeout) > 0) /* whole seconds, as libdebuginfod */
		o.stall_ns = (uint64_t)atoi(timeout) * 1000000000ull;
	d = sym_debuginfod_new(&o, err, sizeof(err));
	if (!d)
		daemon_log("debuginfod: %s; stripped binaries stay unnamed", err);
	else
		daemon_log("debuginfod: debug files missing on this host come from %s, kept in %s (at most %llu MiB)",
			   urls, cache, (unsigned long long)(SYM_DEBUGINFOD_CACHE_MAX >> 20));
	return d;
}
