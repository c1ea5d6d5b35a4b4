/* SPDX-License-Identifier: MIT */
/* drops: the sampler's losses by cause, and what avoids them (drops.h). */
#include <stdio.h>
#include <string.h>

#include "agent/drops.h"
#include "agent/stack_build.h"

void drops_of(const struct sampler_stats *st, struct drop_counts *out)
{
	memset(out, 0, sizeof(*out));
	out->n[DROP_STACK_COLLISION] = st->lost_collision;
	out->n[DROP_STACK_FULL] = st->lost_stack_full;
	out->n[DROP_MAP_FULL] = st->drop_map_full;
	out->n[DROP_RING_FULL] = st->drop_events + st->copy_ring_full;
	out->n[DROP_COPY_BUDGET] = st->copy_fallbacks > st->copy_ring_full
		? st->copy_fallbacks - st->copy_ring_full : 0;
	out->n[DROP_UNNAMED] = st->unnamed;
	out->unkept = st->lost_unkept;
	out->events = st->drop_events;
}

void drops_sub(const struct drop_counts *a, const struct drop_counts *b,
	       struct drop_counts *out)
{
	for (int i = 0; i < DROP_CAUSES; i++)
		out->n[i] = b->n[i] < a->n[i] ? a->n[i] - b->n[i] : 0;
	out->unkept = b->unkept < a->unkept ? a->unkept - b->unkept : 0;
	out->events = b->events < a->events ? a->events - b->events : 0;
}

uint64_t drops_total(const struct drop_counts *c)
{
	return c->n[DROP_STACK_COLLISION] + c->n[DROP_STACK_FULL] + c->n[DROP_MAP_FULL] +
	       c->events + c->n[DROP_GROWTH_RING];
}

const char *drops_name(enum drop_cause c)
{
	static const char *const names[DROP_CAUSES] = {
		[DROP_STACK_COLLISION] = "stack map collisions",
		[DROP_STACK_FULL] = "stack map full",
		[DROP_MAP_FULL] = "aggregation map full",
		[DROP_RING_FULL] = "ring full",
		[DROP_COPY_BUDGET] = "over the copy budget",
		[DROP_UNNAMED] = "symbolization gave up",
		[DROP_GROWTH_RING] = "growth ring full",
	};

	return (unsigned)c < DROP_CAUSES ? names[c] : "unknown";
}

/* The stack map's advice: a larger map or shorter windows. */
static void stack_advice(const struct drop_settings *set, char *buf, size_t len)
{
	if (set->who == DROP_FOR_DAEMON)
		snprintf(buf, len, "a larger stack_map_size (now %llu) or a shorter window avoids them",
			 (unsigned long long)set->stack_map_size);
	else
		snprintf(buf, len, "a larger --stack-map-size (now %llu) avoids them",
			 (unsigned long long)set->stack_map_size);
}

const char *drops_advice(enum drop_cause c, const struct drop_counts *n,
			 const struct drop_settings *set, char *buf, size_t len)
{
	bool daemon = set->who == DROP_FOR_DAEMON;
	char how[160];

	stack_advice(set, how, sizeof(how));
	switch (c) {
	case DROP_STACK_COLLISION:
	case DROP_STACK_FULL:
		snprintf(buf, len, "kept as %s; %s", STACK_LOST_FRAME, how);
		break;
	case DROP_MAP_FULL:
		snprintf(buf, len, "kept per thread as %s (%llu in no profile); %s",
			 STACK_LOST_FRAME, (unsigned long long)n->unkept, how);
		break;
	case DROP_RING_FULL:
		snprintf(buf, len, "process events lost (short-lived processes may go unnamed) or "
			 "stacks not copied (frame pointers used); %s fell behind its rings%s",
			 daemon ? "hearthd" : "hearth",
			 set->unwind == SAMPLER_UNWIND_DWARF
			 ? (daemon ? ": unwind = auto copies far fewer stacks"
				   : ": --unwind auto copies far fewer stacks") : "");
		break;
	case DROP_COPY_BUDGET:
		snprintf(buf, len, "walked by frame pointers instead; %s",
			 set->unwind == SAMPLER_UNWIND_AUTO
			 ? "these are the in-kernel walker's fallbacks past 256 a second per CPU "
			   "(tables not loaded yet, rules it cannot follow)"
			 : daemon ? "unwind = auto walks them in the kernel"
				  : "--unwind auto walks them in the kernel");
		break;
	case DROP_UNNAMED:
		snprintf(buf, len, "their processes were gone before their mappings were read; "
			 "no setting avoids it (a full process event ring makes it likelier)");
		break;
	case DROP_GROWTH_RING:
		/* The ring holds thousands of requests (4 MiB a CPU): it fills
		 * only while hearthd gets no CPU for seconds. */
		snprintf(buf, len, "requests for more memory lost, in no growth profile; %s fell "
			 "behind their ring (it had no CPU for a while)%s",
			 daemon ? "hearthd" : "hearth",
			 daemon ? ": memory_growth = no stops recording them" : "");
		break;
	default:
		snprintf(buf, len, "unknown");
	}
	return buf;
}

const char *drops_list(const struct drop_counts *c, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < DROP_CAUSES; i++) {
		int k;

		if (!c->n[i] || !(at < len))
			continue;
		k = snprintf(buf + at, len - at, "%s%llu %s", at ? ", " : "",
			     (unsigned long long)c->n[i], drops_name((enum drop_cause)i));
		at += k > 0 ? (size_t)k : 0;
	}
	if (!at)
		snprintf(buf, len, "none");
	return buf;
}
