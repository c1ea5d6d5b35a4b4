/* SPDX-License-Identifier: MIT */
/* hearth status --json (see status_formats.h); the names are
 * agent/metrics.c's. */
#include <stddef.h>
#include <string.h>

#include "agent/metrics.h"
#include "cli/json.h"
#include "cli/status_formats.h"

void cli_status_json(FILE *f, const struct ctl_status *st)
{
	struct cli_json j;

	cli_json_start(&j, f);
	cli_json_object(&j, NULL);
	for (size_t i = 0; i < CTL_STATUS_FIELDS; i++)
		cli_json_fixed(&j, metrics_fields[i].json, metrics_value(st, &metrics_fields[i]),
			       metrics_fields[i].json_decimals);
	cli_json_str(&j, "store_error_message",
		     st->store_error ? strerror((int)st->store_error) : NULL);
	cli_json_end(&j);
}
