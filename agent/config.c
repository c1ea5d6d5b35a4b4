/* SPDX-License-Identifier: MIT */
/* config: hearthd.conf and flag values, parsed and range-checked. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/config.h"
#include "agent/sampler.h"
#include "symbolize/debuginfod.h"

#define CONFIG_FILE_MAX (1u << 20)
#define NS_PER_S 1000000000ull

void config_defaults(struct hearthd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/hearth");
	snprintf(c->socket_path, sizeof(c->socket_path), "/run/hearth/control.sock");
	snprintf(c->socket_group, sizeof(c->socket_group), "hearth");
	c->window_ns = 10 * NS_PER_S;
	c->retention_age_ns = 24ull * 3600 * NS_PER_S;
	c->retention_bytes = 1ull << 30;
	c->frequency = 99;
	c->on_cpu = true;
	c->off_cpu = true;
	c->off_cpu_min_block_ns = 1000000;
	c->kernel_stacks = true;
	c->memory_growth = true;
	c->unwind = SAMPLER_UNWIND_AUTO;
	c->unwind_memory = SAMPLER_CFI_BYTES;
	c->stack_map_size = SAMPLER_STACK_MAP_SIZE;
	c->max_clients = 16;
	c->full_disk_hold_ns = 5 * 60 * NS_PER_S;
	c->symbol_cache_bytes = 32ull << 20;
	c->rollup_memory = 16ull << 20;
	c->push_timeout_ns = 10 * NS_PER_S;
}

int config_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *sfx; uint64_t mult; } units[] = {
		{ "", NS_PER_S }, { "s", NS_PER_S }, { "ms", 1000000ull },
		{ "us", 1000ull }, { "m", 60 * NS_PER_S }, { "h", 3600 * NS_PER_S },
		{ "d", 86400 * NS_PER_S },
	};
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; '0' <= *p && *p <= '9'; p++) {
		if ((UINT64_MAX - 9) / 10 < whole)
			return -EINVAL;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return -EINVAL;
		/* Digits past the twelfth are below a nanosecond of any unit. */
		for (; '0' <= *p && *p <= '9'; p++)
			if (scale < 1000000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t part;

		if (strcmp(p, units[i].sfx) != 0)
			continue;
		part = (uint64_t)((unsigned __int128)frac * units[i].mult / scale);
		if (UINT64_MAX / units[i].mult < whole ||
		    UINT64_MAX - whole * units[i].mult < part)
			return -EINVAL;
		*ns = whole * units[i].mult + part;
		return 0;
	}
	return -EINVAL;
}

int config_parse_size(const char *s, uint64_t *bytes)
{
	static const char sfx[] = "KMGT";
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		const char *p = strchr(sfx, *end);

		if (!p || !*p || (end[1] && strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "B") != 0))
			return -EINVAL;
		for (const char *q = sfx; q <= p; q++)
			mult *= 1024;
	}
	if (v > UINT64_MAX / mult)
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

int config_parse_bool(const char *s, bool *v)
{
	static const char *yes[] = { "yes", "true", "on", "1" };
	static const char *no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]))
			return *v = true, 0;
		if (!strcasecmp(s, no[i]))
			return *v = false, 0;
	}
	return -EINVAL;
}

static int set_string(char *dst, size_t cap, const char *v, bool path)
{
	size_t n = strlen(v);

	if (n == 0 || !(n < cap) || (path && v[0] != '/'))
		return -EINVAL;
	memcpy(dst, v, n + 1);
	return 0;
}

static int set_u32(uint32_t *dst, const char *v, unsigned long lo, unsigned long hi)
{
	unsigned long x;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -EINVAL;
	*dst = (uint32_t)x;
	return 0;
}

static int set_excludes(struct hearthd_config *c, const char *v)
{
	char buf[CONFIG_EXCLUDE_MAX * (CONFIG_COMM_LEN + 1) + 1], *save, *tok;
	size_t n = 0;

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
		if (n == CONFIG_EXCLUDE_MAX || !(strlen(tok) < CONFIG_COMM_LEN))
			return -EINVAL;
		snprintf(c->exclude_comm[n++], CONFIG_COMM_LEN, "%s", tok);
	}
	c->nexclude = n;
	return 0;
}

static int set_unwind(struct hearthd_config *c, const char *v)
{
	if (!strcmp(v, "fp"))
		c->unwind = SAMPLER_UNWIND_FP;
	else if (!strcmp(v, "dwarf"))
		c->unwind = SAMPLER_UNWIND_DWARF;
	else if (!strcmp(v, "auto"))
		c->unwind = SAMPLER_UNWIND_AUTO;
	else
		return -EINVAL;
	return 0;
}

/* Servers as DEBUGINFOD_URLS spells them; empty: the environment's. */
static int set_debuginfod_urls(struct hearthd_config *c, const char *v)
{
	char err[8];

	if (!(strlen(v) < sizeof(c->debuginfod_urls)) ||
	    (*v && sym_debuginfod_urls_check(v, err, sizeof(err)) < 0))
		return -EINVAL;
	snprintf(c->debuginfod_urls, sizeof(c->debuginfod_urls), "%s", v);
	return 0;
}

/* An absolute path, or "" for none. */
static int set_prometheus_file(struct hearthd_config *c, const char *v)
{
	if (!*v) {
		c->prometheus_file[0] = '\0';
		return 0;
	}
	return set_string(c->prometheus_file, sizeof(c->prometheus_file), v, true);
}

/* At least 1 MiB (a few libraries), at most 4 GiB. */
static int set_unwind_memory(struct hearthd_config *c, const char *v)
{
	uint64_t b;

	if (config_parse_size(v, &b) || b < (1u << 20) || b > (4ull << 30))
		return -EINVAL;
	c->unwind_memory = b;
	return 0;
}

static int set_window(struct hearthd_config *c, const char *v)
{
	uint64_t ns;

	if (config_parse_duration(v, &ns) || ns < 100000000ull || ns > 3600 * NS_PER_S)
		return -EINVAL;
	c->window_ns = ns;
	return 0;
}

/* One key; returns 0, -ENOENT (unknown key) or -EINVAL (bad value). */
static int apply(struct hearthd_config *c, const char *k, const char *v)
{
	if (!strcmp(k, "state_dir"))
		return set_string(c->state_dir, sizeof(c->state_dir), v, true);
	if (!strcmp(k, "socket"))
		return set_string(c->socket_path, sizeof(c->socket_path), v, true);
	if (!strcmp(k, "socket_group"))
		return set_string(c->socket_group, sizeof(c->socket_group), v, false);
	if (!strcmp(k, "window"))
		return set_window(c, v);
	if (!strcmp(k, "retention_age"))
		return config_parse_duration(v, &c->retention_age_ns);
	if (!strcmp(k, "retention_size"))
		return config_parse_size(v, &c->retention_bytes);
	if (!strcmp(k, "symbol_cache"))
		return config_parse_size(v, &c->symbol_cache_bytes);
	if (!strcmp(k, "rollup_memory"))
		return config_parse_size(v, &c->rollup_memory);
	if (!strcmp(k, "full_disk_hold"))
		return config_parse_duration(v, &c->full_disk_hold_ns);
	if (!strcmp(k, "frequency"))
		return set_u32(&c->frequency, v, 1, 10000);
	if (!strcmp(k, "on_cpu"))
		return config_parse_bool(v, &c->on_cpu);
	if (!strcmp(k, "off_cpu"))
		return config_parse_bool(v, &c->off_cpu);
	if (!strcmp(k, "off_cpu_min_block"))
		return config_parse_duration(v, &c->off_cpu_min_block_ns);
	if (!strcmp(k, "kernel_stacks"))
		return config_parse_bool(v, &c->kernel_stacks);
	if (!strcmp(k, "memory_growth"))
		return config_parse_bool(v, &c->memory_growth);
	if (!strcmp(k, "unwind"))
		return set_unwind(c, v);
	if (!strcmp(k, "unwind_memory"))
		return set_unwind_memory(c, v);
	if (!strcmp(k, "stack_map_size"))
		return set_u32(&c->stack_map_size, v, SAMPLER_STACK_MAP_MIN, SAMPLER_STACK_MAP_MAX);
	if (!strcmp(k, "exclude_comm"))
		return set_excludes(c, v);
	if (!strcmp(k, "max_clients"))
		return set_u32(&c->max_clients, v, 1, 1024);
	if (!strcmp(k, "debuginfod_urls"))
		return set_debuginfod_urls(c, v);
	if (!strcmp(k, "prometheus_file"))
		return set_prometheus_file(c, v);
	return config_push_apply(c, k, v);
}

int config_set(struct hearthd_config *c, const char *key, const char *value,
	       char *err, size_t errlen)
{
	char k[32];
	size_t n = strlen(key);
	int rc;

	if (!(n < sizeof(k))) {
		snprintf(err, errlen, "'%.40s' is not a hearthd setting", key);
		return -EINVAL;
	}
	for (size_t i = 0; i <= n; i++)
		k[i] = key[i] == '-' ? '_' : key[i];
	rc = apply(c, k, value);
	if (rc == -ENOENT)
		snprintf(err, errlen, "'%s' is not a hearthd setting", k);
	else if (rc == -EOPNOTSUPP)
		snprintf(err, errlen, "%s", CONFIG_PUSH_OTLP_WHY);
	else if (rc)
		snprintf(err, errlen, "'%.200s' is not a valid value for %s", value, k);
	return rc ? -EINVAL : 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

static int parse_line(struct hearthd_config *c, char *line, char *err, size_t errlen)
{
	char *eq, *key, *val, *hash;
	size_t vl;

	hash = line[0] == '#' ? line : strstr(line, " #");
	if (hash)
		*hash = 0;
	line = trim(line);
	if (!*line)
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		snprintf(err, errlen, "expected 'key = value'");
		return -EINVAL;
	}
	*eq = 0;
	key = trim(line);
	val = trim(eq + 1);
	vl = strlen(val);
	if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
		val[vl - 1] = 0;
		val++;
	}
	return config_set(c, key, val, err, errlen);
}

int config_parse(struct hearthd_config *c, const char *text, size_t len,
		 char *err, size_t errlen)
{
	char line[1024], msg[256];
	size_t pos = 0;
	unsigned lineno = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		lineno++;
		if (!(n < sizeof(line)) || memchr(text + pos, 0, n)) {
			snprintf(err, errlen, "line %u: line too long or not text", lineno);
			return -EINVAL;
		}
		memcpy(line, text + pos, n);
		line[n] = 0;
		if (parse_line(c, line, msg, sizeof(msg)) < 0) {
			snprintf(err, errlen, "line %u: %s", lineno, msg);
			return -EINVAL;
		}
		pos += n + 1;
	}
	return 0;
}

int config_load(struct hearthd_config *c, const char *path, char *err,
		size_t errlen)
{
	char *buf;
	ssize_t n;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s (%s)", path, strerror(-rc));
		return rc;
	}
	buf = malloc(CONFIG_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "out of memory reading %s", path);
		return -ENOMEM;
	}
	n = read(fd, buf, CONFIG_FILE_MAX + 1);
	close(fd);
	if (n < 0 || n > (ssize_t)CONFIG_FILE_MAX) {
		free(buf);
		snprintf(err, errlen, "cannot read %s (%s)", path,
			 n < 0 ? strerror(errno) : "larger than 1 MiB");
		return n < 0 ? -EIO : -EFBIG;
	}
	rc = config_parse(c, buf, (size_t)n, err, errlen);
	free(buf);
	return rc;
}
