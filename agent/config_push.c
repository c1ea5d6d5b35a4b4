/* SPDX-License-Identifier: MIT */
/* config_push: the push_* keys of hearthd.conf, parsed and range-checked. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/config.h"

#define NS_PER_S 1000000000ull

/* Bytes a push string may hold: printable ASCII without spaces. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

/* "" (push off) or http[s]://host[:port][/path]: no query or fragment,
 * since "/ingest?..." is appended. */
static int set_url(struct hearthd_config *c, const char *v)
{
	size_t n = strlen(v), skip;

	if (n == 0) {
		c->push_url[0] = 0;
		return 0;
	}
	if (!(n < sizeof(c->push_url)) || !printable(v) || strpbrk(v, "?#"))
		return -EINVAL;
	if (!strncmp(v, "http://", 7))
		skip = 7;
	else if (!strncmp(v, "https://", 8))
		skip = 8;
	else
		return -EINVAL;
	if (v[skip] == 0 || v[skip] == '/' || v[skip] == ':')
		return -EINVAL;
	memcpy(c->push_url, v, n + 1);
	while (n > skip && c->push_url[n - 1] == '/')
		c->push_url[--n] = 0;
	return 0;
}

static int set_format(struct hearthd_config *c, const char *v)
{
	if (!strcmp(v, "pyroscope")) {
		c->push_format = CONFIG_PUSH_PYROSCOPE;
		return 0;
	}
	return !strcmp(v, "otlp") ? -EOPNOTSUPP : -EINVAL;
}

static int set_auth_file(struct hearthd_config *c, const char *v)
{
	size_t n = strlen(v);

	if (n && (v[0] != '/' || !(n < sizeof(c->push_auth_file))))
		return -EINVAL;
	memcpy(c->push_auth_file, v, n + 1);
	return 0;
}

/* Tenant ids as Pyroscope and Mimir take them: printable, no '/'. */
static int set_tenant(struct hearthd_config *c, const char *v)
{
	size_t n = strlen(v);

	if (n > CONFIG_PUSH_TENANT_MAX || !printable(v) || strchr(v, '/') ||
	    !strcmp(v, ".") || !strcmp(v, ".."))
		return -EINVAL;
	memcpy(c->push_tenant, v, n + 1);
	return 0;
}

bool config_push_label_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || !(n < CONFIG_PUSH_LABEL_LEN) || ('0' <= s[0] && s[0] <= '9'))
		return false;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* A value the ingest API's name carries unchanged: printable, and none of
 * the bytes that delimit its label set. */
static bool label_value_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < CONFIG_PUSH_LABEL_LEN && printable(s) &&
	       !strpbrk(s, ",{}=\"\\");
}

/* "key=value, key=value": comma- or space-separated pairs. */
static int set_labels(struct hearthd_config *c, const char *v)
{
	struct config_push_label out[CONFIG_PUSH_LABELS_MAX];
	char buf[CONFIG_PUSH_LABELS_MAX * 2 * CONFIG_PUSH_LABEL_LEN], *save, *tok;
	size_t n = 0;

	if (!(strlen(v) < sizeof(buf)))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || n == CONFIG_PUSH_LABELS_MAX)
			return -EINVAL;
		*eq = 0;
		if (!config_push_label_name_ok(tok) || !label_value_ok(eq + 1))
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(out[i].key, tok))
				return -EINVAL;
		snprintf(out[n].key, sizeof(out[n].key), "%s", tok);
		snprintf(out[n].value, sizeof(out[n].value), "%s", eq + 1);
		n++;
	}
	memcpy(c->push_labels, out, n * sizeof(out[0]));
	c->npush_labels = n;
	return 0;
}

static int set_timeout(struct hearthd_config *c, const char *v)
{
	uint64_t ns;

	if (config_parse_duration(v, &ns) || ns < NS_PER_S || ns > 300 * NS_PER_S)
		return -EINVAL;
	c->push_timeout_ns = ns;
	return 0;
}

int config_push_apply(struct hearthd_config *c, const char *k, const char *v)
{
	if (!strcmp(k, "push_url"))
		return set_url(c, v);
	if (!strcmp(k, "push_format"))
		return set_format(c, v);
	if (!strcmp(k, "push_auth_file"))
		return set_auth_file(c, v);
	if (!strcmp(k, "push_tenant"))
		return set_tenant(c, v);
	if (!strcmp(k, "push_labels"))
		return set_labels(c, v);
	if (!strcmp(k, "push_timeout"))
		return set_timeout(c, v);
	return -ENOENT;
}
