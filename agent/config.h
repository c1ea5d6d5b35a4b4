/* SPDX-License-Identifier: MIT */
/*
 * config: hearthd's settings, from /etc/hearth/hearthd.conf and flags.
 *
 * The file is "key = value" lines; '#' starts a comment; blank lines are
 * ignored; values may be quoted with "". Every key is also a flag:
 * "--key-name VALUE" with '_' written as '-'. Durations take ms, s, m, h,
 * d suffixes (a bare number is seconds); sizes take K, M, G, T (powers of
 * 1024; a bare number is bytes); booleans are yes/no, true/false, on/off,
 * 1/0. Nothing here prints.
 */
#ifndef HEARTH_CONFIG_H
#define HEARTH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_DEFAULT_PATH "/etc/hearth/hearthd.conf"
#define CONFIG_PATH_MAX 256
#define CONFIG_EXCLUDE_MAX 32
#define CONFIG_COMM_LEN 16
#define CONFIG_URLS_MAX 1024
#define CONFIG_PUSH_URL_MAX 512
#define CONFIG_PUSH_TENANT_MAX 150
#define CONFIG_PUSH_LABELS_MAX 16
#define CONFIG_PUSH_LABEL_LEN 64

enum config_push_format {
	CONFIG_PUSH_PYROSCOPE = 0,  /* Pyroscope's HTTP ingest API, pprof */
};

/* One static push label, `key=value`. */
struct config_push_label {
	char key[CONFIG_PUSH_LABEL_LEN];
	char value[CONFIG_PUSH_LABEL_LEN];
};

struct hearthd_config {
	char state_dir[CONFIG_PATH_MAX];
	char socket_path[108];            /* sun_path's size */
	char socket_group[64];
	uint64_t window_ns;
	uint64_t retention_age_ns;        /* 0 = keep forever */
	uint64_t retention_bytes;         /* 0 = no limit */
	uint32_t frequency;               /* on-CPU Hz */
	bool on_cpu;
	bool off_cpu;
	uint64_t off_cpu_min_block_ns;
	bool kernel_stacks;
	bool memory_growth;               /* record requests for more memory */
	int unwind;                       /* enum sampler_unwind */
	uint64_t unwind_memory;           /* auto: kernel memory for the
					   * in-kernel unwinder's tables */
	uint32_t stack_map_size;          /* distinct stacks the kernel holds
					   * per window (sampler_opts) */
	char exclude_comm[CONFIG_EXCLUDE_MAX][CONFIG_COMM_LEN];
	size_t nexclude;
	uint32_t max_clients;
	uint64_t symbol_cache_bytes;      /* the symbolizer's module cache */
	uint64_t rollup_memory;           /* the open roll-up's merge (store_limits
					   * rollup_bytes); 0 = no bound */
	uint64_t full_disk_hold_ns;       /* windows kept in memory while the
					   * store cannot write; 0 = none */
	char debuginfod_urls[CONFIG_URLS_MAX]; /* "" = DEBUGINFOD_URLS */
	/* hearthd's health in the Prometheus text format, rewritten each
	 * window, for a node exporter's textfile collector; "" = none. */
	char prometheus_file[CONFIG_PATH_MAX];
	/* Push (agent/push.h): an empty URL means no network at all. */
	char push_url[CONFIG_PUSH_URL_MAX];
	int push_format;                  /* enum config_push_format */
	char push_auth_file[CONFIG_PATH_MAX]; /* "" = no credentials */
	char push_tenant[CONFIG_PUSH_TENANT_MAX + 1]; /* X-Scope-OrgID, "" = none */
	struct config_push_label push_labels[CONFIG_PUSH_LABELS_MAX];
	size_t npush_labels;
	uint64_t push_timeout_ns;         /* one request, connecting included */
};

/* Fills @c with the documented defaults. */
void config_defaults(struct hearthd_config *c);

/* Sets @key (underscores or dashes) to @value. Returns 0, or -EINVAL with
 * one sentence in @err (unknown key, bad value, out of range). */
int config_set(struct hearthd_config *c, const char *key, const char *value,
	       char *err, size_t errlen);

/* Applies every "key = value" line of @text[0..len). Returns 0, or -EINVAL
 * with "line N: ..." in @err; lines before the bad one stay applied. */
int config_parse(struct hearthd_config *c, const char *text, size_t len,
		 char *err, size_t errlen);

/* Reads @path (at most 1 MiB) and applies it with config_parse(). Returns
 * 0, -ENOENT when the file does not exist (@c untouched), -EINVAL as
 * config_parse(), or another negative errno with a sentence in @err. */
int config_load(struct hearthd_config *c, const char *path, char *err,
		size_t errlen);

/* Parsers shared with the flags and the hearth command. Each returns 0
 * or -EINVAL. The one duration grammar: a number, decimals allowed, with
 * us, ms, s, m, h or d (a bare number is seconds): "90", "1.5s", "500ms",
 * "2d". */
int config_parse_duration(const char *s, uint64_t *ns);
int config_parse_size(const char *s, uint64_t *bytes);
int config_parse_bool(const char *s, bool *v);

/* Applies one push_* key (config_push.c). Returns 0, -ENOENT when @key is
 * not a push key, -EINVAL for a bad value, or -EOPNOTSUPP for
 * push_format = otlp (not implemented: CONFIG_PUSH_OTLP_WHY says why). */
int config_push_apply(struct hearthd_config *c, const char *key,
		      const char *value);

#define CONFIG_PUSH_OTLP_WHY \
	"push_format = otlp is not supported: the OTLP profiles signal is still in development upstream; use pyroscope, which Pyroscope, Grafana Cloud Profiles and Grafana Alloy accept"

/* True when @s is a valid push label name: [A-Za-z_][A-Za-z0-9_]*, at
 * most CONFIG_PUSH_LABEL_LEN - 1 bytes. */
bool config_push_label_name_ok(const char *s);

#endif /* HEARTH_CONFIG_H */
