/* SPDX-License-Identifier: MIT */
/* hearth record --json: the run's summary as one JSON object. */
#ifndef HEARTH_CLI_RECORD_JSON_H
#define HEARTH_CLI_RECORD_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/sampler.h"

/* Writes to @f the figures of the summary line (and of the unwinding line
 * when @unwind is not SAMPLER_UNWIND_FP): what was sampled over
 * @elapsed_ns, where it went (@output) and whether it was @written. */
void cli_record_json(FILE *f, const struct sampler_stats *st, uint64_t elapsed_ns,
		     enum sampler_unwind unwind, const char *output, bool written);

#endif
