/* SPDX-License-Identifier: MIT */
/* hearth record --alloc, --held, --growth: probe the chosen processes'
 * allocator, or watch the memory system calls, then write where memory
 * was allocated, what still holds it, or where it grew. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/mem_growth.h"
#include "agent/memory.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/record_loop.h"
#include "cli/record_memory.h"
#include "profile/profile.h"
#include "render/format.h"

/* Samples are named this often, while their processes still run. */
#define DRAIN_INTERVAL_NS 1000000000ULL

/* What a recording of memory reads from: the allocation probes or the
 * system calls, each seen through the same few calls. The profiles are
 * the question's own values (bytes; requests) and the second ones
 * (objects; bytes). */
struct source {
	struct mem_tracer *mem;
	struct growth *growth;
};

static int src_poll(struct source *s, int ms)
{
	return s->mem ? mem_poll(s->mem, ms) : growth_poll(s->growth, ms);
}

static int src_drain(struct source *s, struct prof_profile *own, struct prof_profile *second)
{
	return s->mem ? mem_drain(s->mem, own, second) : growth_drain(s->growth, own, second);
}

static bool src_alive(const struct source *s, size_t npids)
{
	if (s->mem)
		return mem_alive(s->mem);
	return !npids || growth_alive(s->growth);
}

static void src_stop(struct source *s)
{
	if (s->mem)
		mem_stop(s->mem);
	else
		growth_stop(s->growth);
}

/* What the progress line and the summary say: "N allocations (SIZE), N
 * samples", "N requests (SIZE)". */
static void src_figures(const struct source *s, char *buf, size_t n)
{
	char bytes[32];

	if (s->mem) {
		struct mem_stats st;

		mem_stats(s->mem, &st);
		rd_fmt_value(bytes, sizeof(bytes), st.bytes, PROF_UNIT_BYTES);
		snprintf(buf, n, "%llu allocations (%s), %llu samples",
			 (unsigned long long)st.calls, bytes, (unsigned long long)st.samples);
	} else {
		struct growth_stats st;

		growth_stats(s->growth, &st);
		rd_fmt_value(bytes, sizeof(bytes), st.bytes, PROF_UNIT_BYTES);
		snprintf(buf, n, "%llu requests for more memory (%s)",
			 (unsigned long long)st.requests, bytes);
	}
}

static void progress(const struct record_mem_args *a, const struct source *s, uint64_t elapsed)
{
	char fig[128];

	src_figures(s, fig, sizeof(fig));
	if (a->duration_ns)
		fprintf(stderr, "\r\033[Khearth: recording %.1f/%.0f s, %s", elapsed / 1e9,
			a->duration_ns / 1e9, fig);
	else
		fprintf(stderr, "\r\033[Khearth: recording %.1f s (Ctrl-C stops), %s",
			elapsed / 1e9, fig);
}

/* The summary line; the drops, for the profile's metadata. */
static uint64_t summary(const struct source *s, uint64_t elapsed)
{
	char bytes[32], mean[32];

	if (s->mem) {
		struct mem_stats st;

		mem_stats(s->mem, &st);
		rd_fmt_value(bytes, sizeof(bytes), st.bytes, PROF_UNIT_BYTES);
		rd_fmt_value(mean, sizeof(mean), (uint64_t)(st.mean + 0.5), PROF_UNIT_BYTES);
		fprintf(stderr,
			"hearth: %llu allocations (%s) in %u processes over %.2f s, %llu sampled (one every %s on average), %llu of them freed; drops: %llu ring full, %llu live map full, %llu no thread state, %llu kept\n",
			(unsigned long long)st.calls, bytes, st.procs, elapsed / 1e9,
			(unsigned long long)st.samples, mean, (unsigned long long)st.frees,
			(unsigned long long)st.drop_events, (unsigned long long)st.drop_live,
			(unsigned long long)st.drop_state, (unsigned long long)st.lost);
		return st.drop_events + st.drop_live + st.drop_state + st.lost;
	} else {
		struct growth_stats st;

		growth_stats(s->growth, &st);
		rd_fmt_value(bytes, sizeof(bytes), st.bytes, PROF_UNIT_BYTES);
		fprintf(stderr,
			"hearth: %llu requests for more memory (%s: %llu brk, %llu mmap, %llu mremap) over %.2f s; %llu stacks unwound whole, %llu past the copy budget; drops: %llu ring full, %llu kept\n",
			(unsigned long long)st.requests, bytes, (unsigned long long)st.brk,
			(unsigned long long)st.mmap, (unsigned long long)st.mremap, elapsed / 1e9,
			(unsigned long long)st.unwound, (unsigned long long)st.no_copy,
			(unsigned long long)st.drop_events, (unsigned long long)st.lost);
		return st.drop_events + st.lost;
	}
}

/* Keeps samples until the end, into @own and @second. Returns 0 or a
 * negative errno. */
static int loop(struct source *s, const struct record_mem_args *a, struct prof_profile *own,
		struct prof_profile *second, uint64_t start, uint64_t *elapsed)
{
	bool tty = isatty(STDERR_FILENO);
	uint64_t last_drain = start;
	int rc = 0;

	while (!record_loop_exiting) {
		uint64_t now = record_loop_now(CLOCK_MONOTONIC);

		*elapsed = now - start;
		if ((a->duration_ns && *elapsed >= a->duration_ns) || !src_alive(s, a->npids))
			break;
		rc = src_poll(s, record_loop_sleep_ms(a->duration_ns, DRAIN_INTERVAL_NS, tty, now,
						      start, last_drain));
		if (rc < 0 && rc != -EINTR)
			break;
		rc = 0;
		now = record_loop_now(CLOCK_MONOTONIC);
		if (now - last_drain >= DRAIN_INTERVAL_NS) {
			if ((rc = src_drain(s, own, second)) < 0)
				break;
			last_drain = now;
		}
		if (tty)
			progress(a, s, now - start);
	}
	*elapsed = record_loop_now(CLOCK_MONOTONIC) - start;
	src_stop(s);
	if (tty)
		fputs("\r\033[K", stderr);
	return rc ? rc : src_drain(s, own, second);
}

/* Opens the source of @a's question. Returns 0, or -1 after saying why. */
static int src_open(struct source *s, const struct record_mem_args *a)
{
	char err[512];

	if (a->question == PROF_Q_GROWTH) {
		struct growth_opts o = { .npids = a->npids, .exclude_tgid = getpid(),
					 .per_thread = a->per_thread };

		memcpy(o.pids, a->pids, a->npids * sizeof(*a->pids));
		s->growth = growth_open(&o, err, sizeof(err));
	} else {
		struct mem_opts o = {
			.npids = a->npids, .sample_bytes = a->sample_bytes,
			.held = a->question == PROF_Q_HELD, .per_thread = a->per_thread,
		};

		memcpy(o.pids, a->pids, a->npids * sizeof(*a->pids));
		s->mem = mem_open(&o, err, sizeof(err));
	}
	if (s->mem || s->growth)
		return 0;
	cli_error("%s.", err);
	return -1;
}

int cli_record_memory(const struct record_mem_args *a)
{
	bool growth = a->question == PROF_Q_GROWTH, held = a->question == PROF_Q_HELD;
	/* alloc: bytes, then objects; growth: requests, then bytes */
	struct prof_profile *own = prof_new(growth ? PROF_UNIT_SAMPLES : PROF_UNIT_BYTES);
	struct prof_profile *second = prof_new(growth ? PROF_UNIT_BYTES : PROF_UNIT_SAMPLES);
	struct prof_profile *hb = NULL, *ho = NULL, *out, *out2;
	struct source s = { 0 };
	uint64_t start, start_mono, elapsed = 0;
	struct prof_meta *m;
	int rc, status = 1;

	if (!own || !second) {
		cli_error("out of memory.");
		goto out;
	}
	record_loop_signals();
	if (src_open(&s, a) < 0)
		goto out;
	start_mono = record_loop_now(CLOCK_MONOTONIC);
	start = record_loop_now(CLOCK_REALTIME);
	rc = loop(&s, a, own, second, start_mono, &elapsed);
	if (rc == 0 && held) {
		hb = prof_new(PROF_UNIT_BYTES);
		ho = prof_new(PROF_UNIT_SAMPLES);
		rc = hb && ho ? mem_held(s.mem, hb, ho) : -ENOMEM;
	}
	if (rc < 0) {
		cli_error("recording failed: %s.", strerror(-rc));
		goto out;
	}
	out = held ? hb : own;
	out2 = held ? ho : second;
	m = prof_meta(out);
	m->question = a->question;
	m->start_ns = start;
	m->duration_ns = elapsed;
	m->drops = summary(&s, elapsed);
	if (cli_write_profile_pair(a->output, out, out2, a->out_flags) == 0)
		status = 0;
out:
	mem_close(s.mem);
	growth_close(s.growth);
	prof_free(own);
	prof_free(second);
	prof_free(hb);
	prof_free(ho);
	return status;
}
