/* SPDX-License-Identifier: MIT */
/* The answer for each question of time: waits named by what they waited
 * in (never the scheduler), elapsed time, threads, locks, and what an
 * empty profile says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"
#include "render/model.h"

/* C library functions of the stacks below: the system's. */
static const char libc[] = " write memcpy read epoll_wait pthread_mutex_lock pthread_cond_wait ";

/* Adds @value to @folded ("proc;thread-1;f;g_[k]", root first): the first
 * frame is the process row; "name-N" frames right under it are thread
 * rows when @threads; "_[k]" marks a kernel frame, waiting unless the
 * stack is @running; libc's are the system's, the others your code; from
 * a "--" on, a waker's frames, all waiting (as hearth record --waker
 * writes them). */
static void add(struct prof_profile *p, const char *folded, uint64_t value, int threads,
		int running)
{
	char buf[1024], *save = NULL;
	uint32_t ids[64];
	size_t n = 0;
	int woken = 0;

	snprintf(buf, sizeof(buf), "%s", folded);
	for (char *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		struct prof_frame f = { .kind = PROF_KIND_USER, .cls = PROF_CLASS_YOURS };
		size_t l = strlen(t);

		woken |= !strcmp(t, "--");
		if (woken) {
			if (l > 4 && !strcmp(t + l - 4, "_[k]")) {
				t[l - 4] = '\0';
				f.kind = PROF_KIND_KERNEL;
			}
			f.cls = PROF_CLASS_WAITING;
		} else if (n == 0) {
			f.kind = PROF_KIND_PROCESS;
			f.cls = 0;
		} else if (n == 1 && threads) {
			f.kind = PROF_KIND_THREAD;
			f.cls = 0;
		} else if (l > 4 && !strcmp(t + l - 4, "_[k]")) {
			t[l - 4] = '\0';
			f.kind = PROF_KIND_KERNEL;
			f.cls = running ? PROF_CLASS_SYSTEM : PROF_CLASS_WAITING;
		} else if (t[0] == '(') {
			f.kind = PROF_KIND_KERNEL;
			f.cls = PROF_CLASS_WAITING;
		} else {
			char word[128];

			snprintf(word, sizeof(word), " %s ", t);
			if (strstr(libc, word))
				f.cls = PROF_CLASS_SYSTEM;
		}
		f.name = prof_intern_cstr(p, t);
		ids[n++] = prof_frame_intern(p, &f);
	}
	assert_int_not_equal(prof_add_stack(p, ids, n, value), UINT32_MAX);
}

#define FUTEX "do_futex_[k];futex_wait_[k];__futex_wait_[k];futex_do_wait_[k];schedule_[k];__schedule_[k]"
#define SLEEP "hrtimer_nanosleep_[k];do_nanosleep_[k];schedule_[k];__schedule_[k]"
#define PIPE "vfs_read_[k];pipe_read_[k];schedule_[k];__schedule_[k]"
#define EPOLL "do_epoll_wait_[k];ep_poll_[k];schedule_hrtimeout_range_clock_[k];schedule_[k];__schedule_[k]"

static struct rd_model *model(struct prof_profile *p, uint64_t secs, unsigned question, int off)
{
	struct prof_meta *m = prof_meta(p);
	struct rd_model *r;

	m->duration_ns = secs * 1000000000ULL;
	m->question = question;
	m->off_cpu = (uint32_t)off;
	r = rd_model_new(p);
	assert_non_null(r);
	return r;
}

static const char *card(const struct rd_model *m, int i)
{
	return i < m->ncards ? rd_model_fn_name(m, m->cards[i].fn) : "";
}

/* Off-CPU: the sentence and the cards name the wait's site. */
static void test_waits_named(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	struct rd_model *m;

	(void)state;
	add(p, "app;main;idle_wait;" FUTEX, 180, 0, 0);
	add(p, "app;main;serve;" PIPE, 500, 0, 0);
	add(p, "app;main;serve;" EPOLL, 300, 0, 0);
	add(p, "app;main;pause_a_bit;" SLEEP, 20, 0, 0);
	m = model(p, 10, PROF_Q_USUAL, 1);
	assert_string_equal(m->answer, "Over 10 s, 80% of the waiting time was under serve, "
			    "mostly waiting in pipe_read (50%).");
	assert_null(strstr(m->answer, "schedule"));
	/* Your code first (by what it answers for), then the sites. */
	assert_string_equal(card(m, 0), "serve");
	assert_string_equal(card(m, 1), "idle_wait");
	assert_string_equal(card(m, 2), "pause_a_bit");
	rd_model_free(m);
	prof_free(p);
	/* Without your code holding a share: the sites are the cards. */
	p = prof_new(PROF_UNIT_NANOSECONDS);
	add(p, "app;" FUTEX, 600, 0, 0);
	add(p, "app;" EPOLL, 300, 0, 0);
	add(p, "app;" SLEEP, 100, 0, 0);
	m = model(p, 10, PROF_Q_USUAL, 1);
	assert_string_equal(card(m, 0), "futex_wait");
	assert_string_equal(card(m, 1), "ep_poll");
	assert_string_equal(card(m, 2), "do_nanosleep");
	rd_model_free(m);
	prof_free(p);
}

/* Elapsed time: running and waiting in one profile, the waiting part of
 * the answer's function said as a share of it. */
static void test_wall(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	struct rd_model *m;

	(void)state;
	add(p, "nginx;main;ngx_process_events;epoll_wait;" EPOLL, 400, 0, 0);
	add(p, "nginx;main;ngx_process_events;ngx_parse", 100, 0, 1);
	add(p, "nginx;main;ngx_log;write", 500, 0, 1);
	m = model(p, 30, PROF_Q_WALL, 0);
	assert_string_equal(m->answer, "Over 30 s, 50% of the elapsed time of nginx's threads "
			    "was in ngx_log, mostly inside write (50%).");
	rd_model_free(m);
	prof_free(p);
	p = prof_new(PROF_UNIT_NANOSECONDS);
	add(p, "nginx;main;ngx_process_events;epoll_wait;" EPOLL, 400, 0, 0);
	add(p, "nginx;main;ngx_process_events;ngx_parse", 80, 0, 1);
	add(p, "nginx;main;ngx_log", 20, 0, 1);
	m = model(p, 30, PROF_Q_WALL, 0);
	assert_string_equal(m->answer, "Over 30 s, 96% of the elapsed time of nginx's threads "
			    "was in ngx_process_events, 83% of it waiting in ep_poll.");
	rd_model_free(m);
	prof_free(p);
}

static void test_locks(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	struct rd_model *m;

	(void)state;
	add(p, "db;main;commit;pthread_mutex_lock;" FUTEX, 750, 0, 0);
	add(p, "db;main;flush;pthread_cond_wait;" FUTEX, 250, 0, 0);
	m = model(p, 30, PROF_Q_LOCKS, 1);
	assert_string_equal(m->answer, "Over 30 s, 75% of the time waiting on locks was under "
			    "commit, mostly waiting in futex_wait (75%).");
	rd_model_free(m);
	prof_free(p);
}

/* record --waker: above each wait, "--" and the waker's stack, leaf
 * first. The answer still speaks of the waits: the waker's frames are
 * what the wait waited for, not where the time went. */
#define WOKEN ";--;try_to_wake_up_[k];futex_wake_[k];do_futex_[k];pthread_mutex_unlock;" \
	"release;holder;db"

static void test_waker(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	struct rd_model *m;

	(void)state;
	add(p, "db;main;commit;pthread_mutex_lock;" FUTEX WOKEN, 750, 0, 0);
	add(p, "db;main;flush;pthread_cond_wait;" FUTEX WOKEN, 250, 0, 0);
	m = model(p, 30, PROF_Q_LOCKS, 1);
	assert_string_equal(m->answer, "Over 30 s, 75% of the time waiting on locks was under "
			    "commit, mostly waiting in futex_wait (75%).");
	for (int i = 0; i < m->ncards; i++)
		assert_true(strcmp(card(m, i), "holder") && strcmp(card(m, i), "release") &&
			    strcmp(card(m, i), "db"));
	assert_string_equal(card(m, 0), "commit");
	rd_model_free(m);
	prof_free(p);
}

/* The questions of memory: bytes allocated and held, requests for more. */
static void test_memory(void **state)
{
	static const struct {
		unsigned q;
		const char *want;
	} cases[] = {
		{ PROF_Q_ALLOC, "Over 30 s, 75% of the memory allocated came from cache_insert, "
				"mostly inside memcpy (75%)." },
		{ PROF_Q_HELD, "Over 30 s, 75% of the memory in use was allocated under cache_insert, "
			       "mostly inside memcpy (75%)." },
		{ PROF_Q_GROWTH, "Over 30 s, 75% of the requests for more memory came from "
				 "cache_insert, mostly inside memcpy (75%)." },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct prof_profile *p = prof_new(cases[i].q == PROF_Q_GROWTH ? PROF_UNIT_SAMPLES
									     : PROF_UNIT_BYTES);
		struct rd_model *m;

		add(p, "app;main;cache_insert;memcpy", 750, 0, 1);
		add(p, "app;main;parse", 250, 0, 1);
		m = model(p, 30, cases[i].q, 0);
		assert_string_equal(m->answer, cases[i].want);
		rd_model_free(m);
		prof_free(p);
	}
}

static void test_threads(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	struct rd_model *m;
	char t[256];

	(void)state;
	for (int i = 1; i <= 8; i++) {
		snprintf(t, sizeof(t), "nginx;worker-%d;main;ngx_worker;epoll_wait;" EPOLL, i);
		add(p, t, 900, 1, 0);
		snprintf(t, sizeof(t), "nginx;worker-%d;main;ngx_worker;ngx_parse", i);
		add(p, t, 100, 1, 1);
	}
	add(p, "nginx;worker-9;main;ngx_http_process_request;memcpy", 800, 1, 1);
	add(p, "nginx;worker-9;main;ngx_http_process_request;" PIPE, 200, 1, 0);
	add(p, "nginx;worker-10;main;ngx_wait_child;read;(blocked the whole snapshot);" PIPE,
	    1000, 1, 0);
	m = model(p, 5, PROF_Q_THREADS, 0);
	assert_string_equal(m->answer, "Of nginx's 10 threads, 9 were mostly waiting (in ep_poll) "
			    "and 1 mostly running (in ngx_http_process_request); 1 was blocked "
			    "the whole snapshot.");
	rd_model_free(m);
	prof_free(p);
	/* Several processes, all waiting. */
	p = prof_new(PROF_UNIT_NANOSECONDS);
	add(p, "a;a-1;main;" SLEEP, 1000, 1, 0);
	add(p, "b;b-2;main;" SLEEP, 1000, 1, 0);
	m = model(p, 5, PROF_Q_THREADS, 0);
	assert_string_equal(m->answer, "Of the 2 threads of 2 processes, all were mostly waiting "
			    "(in do_nanosleep).");
	rd_model_free(m);
	prof_free(p);
}

/* Each question's empty profile says what that means. */
static void test_empty(void **state)
{
	static const struct {
		unsigned q;
		int off;
		uint64_t secs;
		const char *want;
	} cases[] = {
		{ PROF_Q_LOCKS, 1, 30, "Nothing waited on a lock in these 30 seconds." },
		{ PROF_Q_WALL, 0, 30, "Nothing ran or waited in these 30 seconds." },
		{ PROF_Q_THREADS, 0, 5, "No thread was seen in these 5 seconds." },
		{ PROF_Q_ALLOC, 0, 30, "Nothing was allocated in these 30 seconds." },
		{ PROF_Q_HELD, 0, 30, "No memory allocated in these 30 seconds was still in use at "
				      "its end." },
		{ PROF_Q_GROWTH, 0, 30, "The service did not ask for more memory in these 30 seconds: "
					"its memory was steady." },
		{ PROF_Q_USUAL, 1, 1, "Nothing waited in this second." },
		{ PROF_Q_USUAL, 0, 0, "Nothing was recorded in this profile." },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct prof_profile *p = prof_new(cases[i].off || cases[i].q ? PROF_UNIT_NANOSECONDS
									   : PROF_UNIT_SAMPLES);
		struct rd_model *m = model(p, cases[i].secs, cases[i].q, cases[i].off);

		assert_string_equal(m->answer, cases[i].want);
		assert_int_equal(m->ncards, 0);
		rd_model_free(m);
		prof_free(p);
	}
}

/* The question travels in hearth's folded files, and the answer with it. */
static void test_question_travels(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS), *q = prof_new(PROF_UNIT_SAMPLES);
	struct rd_model *m;
	char *text = NULL, err[128];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	add(p, "db;main;commit;pthread_mutex_lock;" FUTEX, 750, 0, 0);
	prof_meta(p)->question = PROF_Q_LOCKS;
	prof_meta(p)->off_cpu = 1;
	prof_meta(p)->duration_ns = 30000000000ULL;
	assert_non_null(f);
	assert_int_equal(prof_folded_write(p, f, PROF_FOLDED_META), 0);
	fclose(f);
	assert_non_null(strstr(text, " question=locks #\n"));
	assert_int_equal(prof_folded_parse(q, text, len, 1, err, sizeof(err)), 0);
	assert_int_equal(prof_meta(q)->question, PROF_Q_LOCKS);
	m = rd_model_new(q);
	assert_non_null(m);
	assert_string_equal(m->answer, "Over 30 s, 100% of the time waiting on locks was under "
			    "commit, mostly waiting in futex_wait (100%).");
	rd_model_free(m);
	prof_free(p);
	prof_free(q);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_named),
		cmocka_unit_test(test_wall),
		cmocka_unit_test(test_locks),
		cmocka_unit_test(test_waker),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_question_travels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
