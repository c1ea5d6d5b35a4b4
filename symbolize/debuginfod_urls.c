/* SPDX-License-Identifier: MIT */
/*
 * debuginfod_urls: the settings libdebuginfod reads from the environment,
 * checked and resolved the way it does: the server list and the cache
 * folder.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "symbolize/debuginfod.h"

static bool has_scheme(const char *u, size_t n)
{
	static const char *const schemes[] = { "http://", "https://", "file://" };

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t k = strlen(schemes[i]);

		/* something must follow the scheme: a host, or a path */
		if (n > k && strncasecmp(u, schemes[i], k) == 0)
			return true;
	}
	return false;
}

int sym_debuginfod_urls_check(const char *urls, char *err, size_t errlen)
{
	const char *p = urls ? urls : "";
	int n = 0;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		size_t k = strcspn(p, " \t\n");
		bool printable = true;

		for (size_t i = 0; i < k; i++)
			if ((unsigned char)p[i] < 0x21 || p[i] == 0x7f || p[i] == '"')
				printable = false;
		if (!printable || !has_scheme(p, k)) {
			snprintf(err, errlen,
				 "'%.*s' is not a debuginfod server: give http://, https:// or file:// URLs separated by spaces",
				 (int)(k < 200 ? k : 200), p);
			return -EINVAL;
		}
		n++;
		p += k;
	}
	if (n == 0) {
		snprintf(err, errlen, "no debuginfod server is named");
		return -EINVAL;
	}
	return n;
}

static bool set(const char *s)
{
	return s && *s;
}

int sym_debuginfod_cache_dir(const char *cache_path, const char *xdg,
			     const char *home, bool legacy_exists, char *out,
			     size_t len)
{
	const char *h = set(home) ? home : "/";
	int n;

	/* "/" + ".cache" must not read "//.cache" */
	const char *sep = h[strlen(h) - 1] == '/' ? "" : "/";
	if (set(cache_path))
		n = snprintf(out, len, "%s", cache_path);
	else if (legacy_exists)
		n = snprintf(out, len, "%s%s.debuginfod_client_cache", h, sep);
	else if (set(xdg))
		n = snprintf(out, len, "%s/debuginfod_client", xdg);
	else
		n = snprintf(out, len, "%s%s.cache/debuginfod_client", h, sep);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
