/* SPDX-License-Identifier: MIT */
/* hearth status --json: hearthd's status reply as JSON, each field named
 * once, in agent/metrics.c (which writes --prometheus). */
#ifndef HEARTH_CLI_STATUS_FORMATS_H
#define HEARTH_CLI_STATUS_FORMATS_H

#include <stdio.h>

#include "agent/control_proto.h"

/* Writes @st as one JSON object to @f. */
void cli_status_json(FILE *f, const struct ctl_status *st);

#endif
