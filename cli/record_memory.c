/* SPDX-License-Identifier: MIT */
/* hearth record --alloc / --held: probe the chosen processes' allocator,
 * then write where memory was allocated, or what still holds it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/memory.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/record_loop.h"
#include "cli/record_memory.h"
#include "profile/profile.h"
#include "render/format.h"

/* Samples are named this often, while their processes still run. */
#define DRAIN_INTERVAL_NS 1000000000ULL

static void progress(const struct record_mem_args *a, const struct mem_stats *st,
		     uint64_t elapsed)
{
	char bytes[32];

	rd_fmt_value(bytes, sizeof(bytes), st->bytes, PROF_UNIT_BYTES);
	if (a->duration_ns)
		fprintf(stderr, "\r\033[Khearth: recording %.1f/%.0f s, %llu allocations (%s), %llu samples",
			elapsed / 1e9, a->duration_ns / 1e9, (unsigned long long)st->calls, bytes,
			(unsigned long long)st->samples);
	else
		fprintf(stderr, "\r\033[Khearth: recording %.1f s (Ctrl-C stops), %llu allocations (%s), %llu samples",
			elapsed / 1e9, (unsigned long long)st->calls, bytes,
			(unsigned long long)st->samples);
}

static void summary(const struct mem_stats *st, uint64_t elapsed)
{
	char bytes[32], mean[32];

	rd_fmt_value(bytes, sizeof(bytes), st->bytes, PROF_UNIT_BYTES);
	rd_fmt_value(mean, sizeof(mean), (uint64_t)(st->mean + 0.5), PROF_UNIT_BYTES);
	fprintf(stderr,
		"hearth: %llu allocations (%s) in %u processes over %.2f s, %llu sampled (one every %s on average), %llu of them freed; drops: %llu ring full, %llu live map full, %llu no thread state, %llu kept\n",
		(unsigned long long)st->calls, bytes, st->procs, elapsed / 1e9,
		(unsigned long long)st->samples, mean, (unsigned long long)st->frees,
		(unsigned long long)st->drop_events, (unsigned long long)st->drop_live,
		(unsigned long long)st->drop_state, (unsigned long long)st->lost);
}

/* Keeps samples until the end; the allocations go into @bytes and
 * @objects. Returns 0 or a negative errno. */
static int loop(struct mem_tracer *t, const struct record_mem_args *a,
		struct prof_profile *bytes, struct prof_profile *objects,
		uint64_t start, uint64_t *elapsed)
{
	bool tty = isatty(STDERR_FILENO);
	uint64_t last_drain = start;
	struct mem_stats st;
	int rc = 0;

	while (!record_loop_exiting) {
		uint64_t now = record_loop_now(CLOCK_MONOTONIC);

		*elapsed = now - start;
		if ((a->duration_ns && *elapsed >= a->duration_ns) || !mem_alive(t))
			break;
		rc = mem_poll(t, record_loop_sleep_ms(a->duration_ns, DRAIN_INTERVAL_NS, tty, now,
						      start, last_drain));
		if (rc < 0 && rc != -EINTR)
			break;
		rc = 0;
		now = record_loop_now(CLOCK_MONOTONIC);
		if (now - last_drain >= DRAIN_INTERVAL_NS) {
			if ((rc = mem_drain(t, bytes, objects)) < 0)
				break;
			last_drain = now;
		}
		if (tty) {
			mem_stats(t, &st);
			progress(a, &st, now - start);
		}
	}
	*elapsed = record_loop_now(CLOCK_MONOTONIC) - start;
	mem_stop(t);
	if (tty)
		fputs("\r\033[K", stderr);
	return rc ? rc : mem_drain(t, bytes, objects);
}

static void set_meta(struct prof_profile *p, unsigned question, uint64_t start,
		     uint64_t elapsed, const struct mem_stats *st)
{
	struct prof_meta *m = prof_meta(p);

	m->question = question;
	m->start_ns = start;
	m->duration_ns = elapsed;
	m->drops = st->drop_events + st->drop_live + st->drop_state + st->lost;
}

int cli_record_memory(const struct record_mem_args *a)
{
	struct mem_opts o = {
		.npids = a->npids, .sample_bytes = a->sample_bytes,
		.held = a->question == PROF_Q_HELD, .per_thread = a->per_thread,
	};
	struct prof_profile *bytes = prof_new(PROF_UNIT_BYTES);
	struct prof_profile *objects = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *hb = NULL, *ho = NULL;
	struct mem_tracer *t = NULL;
	struct mem_stats st;
	uint64_t start, start_mono, elapsed = 0;
	char err[512];
	int rc, status = 1;

	if (!bytes || !objects) {
		cli_error("out of memory.");
		goto out;
	}
	memcpy(o.pids, a->pids, a->npids * sizeof(*a->pids));
	record_loop_signals();
	t = mem_open(&o, err, sizeof(err));
	if (!t) {
		cli_error("%s.", err);
		goto out;
	}
	start_mono = record_loop_now(CLOCK_MONOTONIC);
	start = record_loop_now(CLOCK_REALTIME);
	rc = loop(t, a, bytes, objects, start_mono, &elapsed);
	if (rc == 0 && o.held) {
		hb = prof_new(PROF_UNIT_BYTES);
		ho = prof_new(PROF_UNIT_SAMPLES);
		rc = hb && ho ? mem_held(t, hb, ho) : -ENOMEM;
	}
	mem_stats(t, &st);
	if (rc < 0) {
		cli_error("recording failed: %s.", strerror(-rc));
		goto out;
	}
	set_meta(o.held ? hb : bytes, a->question, start, elapsed, &st);
	if (cli_write_profile_pair(a->output, o.held ? hb : bytes, o.held ? ho : objects,
				   a->out_flags) == 0)
		status = 0;
	summary(&st, elapsed);
out:
	mem_close(t);
	prof_free(bytes);
	prof_free(objects);
	prof_free(hb);
	prof_free(ho);
	return status;
}
