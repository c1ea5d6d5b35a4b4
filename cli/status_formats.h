/* SPDX-License-Identifier: MIT */
/* hearth status --json and --prometheus: hearthd's status reply as JSON
 * and in the Prometheus text format, each field named once, here. */
#ifndef HEARTH_CLI_STATUS_FORMATS_H
#define HEARTH_CLI_STATUS_FORMATS_H

#include <stdio.h>

#include "agent/control_proto.h"

/* Writes @st as one JSON object to @f. */
void cli_status_json(FILE *f, const struct ctl_status *st);

/* Writes @st to @f as Prometheus text-format metrics (a node exporter
 * textfile collector reads them), with hearthd_up 1; NULL @st (hearthd
 * did not answer) writes hearthd_up 0 alone. */
void cli_status_prometheus(FILE *f, const struct ctl_status *st);

#endif
