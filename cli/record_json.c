/* SPDX-License-Identifier: MIT */
/* hearth record --json (see record_json.h). */
#include "agent/drops.h"
#include "cli/json.h"
#include "cli/record_json.h"

void cli_record_json(FILE *f, const struct sampler_stats *st, uint64_t elapsed_ns,
		     enum sampler_unwind unwind, const char *output, bool written)
{
	static const char *const modes[] = { [SAMPLER_UNWIND_FP] = "fp",
		[SAMPLER_UNWIND_DWARF] = "dwarf", [SAMPLER_UNWIND_AUTO] = "auto" };
	static const char *const cause_keys[DROP_CAUSES] = {
		"stack_collisions", "stack_map_full", "aggregation_map_full",
		"ring_full", "copy_budget", "unnamed",
		NULL, /* growth ring full: hearthd's growth, not the sampler's */
	};
	struct drop_counts dc;
	struct cli_json j;

	cli_json_start(&j, f);
	cli_json_object(&j, NULL);
	cli_json_u64(&j, "samples", st->samples);
	cli_json_u64(&j, "idle_samples", st->idle_samples);
	cli_json_u64(&j, "offcpu_waits", st->offcpu_events);
	cli_json_u64(&j, "offcpu_ns", st->offcpu_ns);
	cli_json_u64(&j, "processes", st->processes);
	cli_json_u64(&j, "duration_ns", elapsed_ns);
	cli_json_object(&j, "drops");
	cli_json_u64(&j, "stack", st->drop_stack);
	cli_json_u64(&j, "map_full", st->drop_map_full);
	cli_json_u64(&j, "events", st->drop_events);
	drops_of(st, &dc);
	for (int i = 0; i < DROP_CAUSES; i++)
		if (cause_keys[i])
			cli_json_u64(&j, cause_keys[i], dc.n[i]);
	cli_json_end(&j);
	cli_json_object(&j, "unwind");
	cli_json_str(&j, "mode", (unsigned)unwind < sizeof(modes) / sizeof(modes[0]) ?
		     modes[unwind] : "unknown");
	cli_json_u64(&j, "dwarf_unwinds", st->stack_copies);
	cli_json_u64(&j, "complete", st->unwind_complete);
	cli_json_u64(&j, "unwind_ns", st->unwind_ns);
	cli_json_u64(&j, "reused", st->sig_hits);
	cli_json_u64(&j, "fp_fallbacks", st->copy_fallbacks);
	cli_json_end(&j);
	cli_json_str(&j, "output", output);
	cli_json_bool(&j, "written", written);
	cli_json_end(&j);
}
