/* SPDX-License-Identifier: MIT */
/*
 * metrics: hearthd's status figures (struct ctl_status) by name, each
 * named once here for JSON and for the Prometheus text format, and
 * written in that format to a stream or, whole, to a file that a node
 * exporter's textfile collector reads. Nothing here prints but to the
 * stream given.
 */
#ifndef HEARTH_METRICS_H
#define HEARTH_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/control_proto.h"

/* One field of struct ctl_status: its JSON key, its Prometheus metric,
 * and how each shows the integer: value / 10^decimals (ns as seconds,
 * thousandths of a percent as a percent or a ratio). */
struct metrics_field {
	size_t off;
	const char *json;
	unsigned json_decimals;
	const char *prom;
	const char *prom_type; /* "gauge" or "counter" */
	unsigned prom_decimals;
	const char *help;
};

/* The fields, CTL_STATUS_FIELDS of them, in struct ctl_status's order. */
extern const struct metrics_field metrics_fields[];

/* The value of field @f in @st. */
uint64_t metrics_value(const struct ctl_status *st, const struct metrics_field *f);

/* Writes @v / 10^@decimals to @f, exactly ("1.500" for 1500 and 3). */
void metrics_print_fixed(FILE *f, uint64_t v, unsigned decimals);

/* Writes @st to @f as Prometheus text-format metrics, with hearthd_up 1;
 * NULL @st (hearthd does not answer, or is stopping) writes hearthd_up 0
 * alone. */
void metrics_prometheus(FILE *f, const struct ctl_status *st);

/* Writes metrics_prometheus() of @st to @path whole or not at all: a new
 * file beside it (not ending in .prom, so a textfile collector skips it),
 * mode 0644, renamed over @path. Returns 0 or a negative errno. */
int metrics_write_file(const char *path, const struct ctl_status *st);

#endif
