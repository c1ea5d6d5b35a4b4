/* SPDX-License-Identifier: MIT */
/* What a waiting stack waited in, and which waits are lock waits, on the
 * kernel paths this kernel gives (recorded with hearth record --off-cpu). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/waits.h"

/* Adds @value to the stack @folded ("a;b_[k];c_[k]", root first) of @p;
 * fills @ids with its frames and returns how many. */
static size_t add(struct prof_profile *p, const char *folded, uint64_t value, uint32_t *ids)
{
	char buf[2048], *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", folded);
	for (char *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		struct prof_frame f = { 0 };
		size_t l = strlen(t);

		if (l > 4 && !strcmp(t + l - 4, "_[k]")) {
			t[l - 4] = '\0';
			f.kind = PROF_KIND_KERNEL;
			f.cls = PROF_CLASS_WAITING;
		}
		f.name = prof_intern_cstr(p, t);
		ids[n++] = prof_frame_intern(p, &f);
	}
	assert_int_not_equal(prof_add_stack(p, ids, n, value), UINT32_MAX);
	return n;
}

#define SYSCALL "entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];"

static const char *const futex = "app;waiter;lock_and_wait;___pthread_mutex_lock;" SYSCALL
	"__x64_sys_futex_[k];do_futex_[k];futex_wait_[k];__futex_wait_[k];futex_do_wait_[k];"
	"schedule_[k];__schedule_[k]";
static const char *const sleep_ = "app;sleeper;" SYSCALL
	"__x64_sys_clock_nanosleep_[k];common_nsleep_[k];hrtimer_nanosleep_[k];do_nanosleep_[k];"
	"schedule_[k];__schedule_[k]";
static const char *const pipe_ = "app;reader;read;" SYSCALL
	"ksys_read_[k];vfs_read_[k];pipe_read_[k];schedule_[k];__schedule_[k]";
static const char *const epoll = "app;loop;epoll_wait;" SYSCALL
	"__x64_sys_epoll_wait_[k];do_epoll_wait_[k];ep_poll_[k];schedule_hrtimeout_range_clock_[k];"
	"schedule_[k];__schedule_[k]";
static const char *const tcp = "app;serve;recv;" SYSCALL
	"__x64_sys_recvfrom_[k];__sys_recvfrom_[k];inet_recvmsg_[k];tcp_recvmsg_[k];"
	"tcp_recvmsg_locked_[k];sk_wait_data_[k];wait_woken_[k];schedule_timeout_[k];"
	"schedule_[k];__schedule_[k]";
static const char *const flock_ = "app;locker;flock;" SYSCALL
	"__x64_sys_flock_[k];locks_lock_inode_wait_[k];schedule_[k];__schedule_[k]";
static const char *const kmutex = "app;writer;write;" SYSCALL
	"ksys_write_[k];vfs_write_[k];__mutex_lock_slowpath_[k];__mutex_lock.constprop.0_[k];"
	"schedule_preempt_disabled_[k];schedule_[k];__schedule_[k]";
static const char *const rwsem = "app;writer;write;" SYSCALL
	"ksys_write_[k];vfs_write_[k];ext4_buffered_write_iter_[k];down_write_[k];"
	"rwsem_down_write_slowpath_[k];schedule_[k];__schedule_[k]";
static const char *const cpu = "app;spin;asm_sysvec_apic_timer_interrupt_[k];"
	"irqentry_exit_to_user_mode_[k];schedule_[k];__schedule_[k];[waiting for a CPU]_[k]";
/* Preempted inside a futex call: waiting for a CPU, not for the lock. */
static const char *const cpu_in_futex = "app;waiter;" SYSCALL
	"__x64_sys_futex_[k];do_futex_[k];preempt_schedule_irq_[k];__schedule_[k];"
	"[waiting for a CPU]_[k]";

/* The waker's stack above a wait (record --waker), leaf first: its
 * futex_wake and do_futex are no part of the wait. */
#define WOKEN_BY_UNLOCK ";--;try_to_wake_up_[k];wake_up_q_[k];futex_wake_[k];do_futex_[k];" \
	"__x64_sys_futex_[k];__lll_lock_wake;pthread_mutex_unlock;release;holder;app"

static const char *site_of(const char *folded)
{
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS);
	uint32_t ids[64];
	size_t n = add(p, folded, 1, ids), i = prof_wait_site(p, ids, n);
	static char out[64];

	assert_true(i < n);
	snprintf(out, sizeof(out), "%s", prof_str(p, prof_frame_get(p, ids[i])->name));
	prof_free(p);
	return out;
}

static void test_site(void **state)
{
	(void)state;
	assert_string_equal(site_of(futex), "futex_wait");
	assert_string_equal(site_of(sleep_), "do_nanosleep");
	assert_string_equal(site_of(pipe_), "pipe_read");
	assert_string_equal(site_of(epoll), "ep_poll");
	assert_string_equal(site_of(tcp), "tcp_recvmsg");
	assert_string_equal(site_of(flock_), "locks_lock_inode_wait");
	assert_string_equal(site_of(kmutex), "__mutex_lock.constprop.0");
	assert_string_equal(site_of(rwsem), "rwsem_down_write_slowpath");
	assert_string_equal(site_of(cpu), "[waiting for a CPU]");
	assert_string_equal(site_of("app;reader;read;" SYSCALL "ksys_read_[k];vfs_read_[k];"
				    "pipe_read_[k];schedule_[k];__schedule_[k]" WOKEN_BY_UNLOCK),
			    "pipe_read");
	/* Without kernel frames the leaf is the site. */
	assert_string_equal(site_of("app;sleeper;nanosleep"), "nanosleep");
}

static void test_passes(void **state)
{
	(void)state;
	assert_true(prof_wait_passes("__schedule", "schedule"));
	assert_true(prof_wait_passes("io_schedule_timeout", "folio_wait_bit_common"));
	assert_true(prof_wait_passes("__futex_wait", "futex_wait"));
	assert_true(prof_wait_passes("tcp_recvmsg_locked", "tcp_recvmsg"));
	assert_true(prof_wait_passes("wait_woken.cold", "sk_wait_data"));
	assert_false(prof_wait_passes("futex_wait", "do_futex"));
	assert_false(prof_wait_passes("pipe_read", "vfs_read"));
	assert_false(prof_wait_passes("pipe_read", NULL));
	/* A name that merely begins like its caller's, without a '_'. */
	assert_false(prof_wait_passes("futex_waitv", "futex_wait"));
}

static void test_locks(void **state)
{
	const char *const locks[] = { futex, flock_, kmutex, rwsem };
	const char *const others[] = { sleep_, pipe_, epoll, tcp, cpu, cpu_in_futex,
				       "app;sleeper;nanosleep" };
	struct prof_profile *p = prof_new(PROF_UNIT_NANOSECONDS), *l = prof_new(PROF_UNIT_NANOSECONDS);
	struct prof_profile *s = prof_new(PROF_UNIT_SAMPLES);
	uint32_t ids[64];

	(void)state;
	for (size_t i = 0; i < 4; i++)
		assert_true(prof_wait_is_lock(p, ids, add(p, locks[i], 1000 << i, ids)));
	for (size_t i = 0; i < 7; i++)
		assert_false(prof_wait_is_lock(p, ids, add(p, others[i], 1, ids)));
	assert_int_equal(prof_keep_lock_waits(l, p), 0);
	assert_int_equal(prof_total(l), 1000 + 2000 + 4000 + 8000);
	assert_int_equal(prof_keep_lock_waits(s, p), -EINVAL);
	/* A waker's frames play no part in what the wait was. */
	assert_true(prof_wait_is_lock(p, ids, add(p, "app;waiter;lock_and_wait;___pthread_mutex_lock;"
				      SYSCALL "__x64_sys_futex_[k];do_futex_[k];futex_wait_[k];"
				      "schedule_[k];__schedule_[k]" WOKEN_BY_UNLOCK, 1, ids)));
	assert_false(prof_wait_is_lock(p, ids, add(p, "app;reader;read;" SYSCALL "ksys_read_[k];"
				       "pipe_read_[k];schedule_[k];__schedule_[k]" WOKEN_BY_UNLOCK,
				       1, ids)));
	assert_false(prof_wait_is_lock(p, ids, add(p, "app;spin;schedule_[k];__schedule_[k];"
				       "[waiting for a CPU]_[k]" WOKEN_BY_UNLOCK, 1, ids)));
	assert_true(prof_wait_is_lock_frame("down"));
	assert_true(prof_wait_is_lock_frame("__down_common"));
	assert_true(prof_wait_is_lock_frame("fcntl_setlk"));
	assert_false(prof_wait_is_lock_frame("download_thing"));
	assert_false(prof_wait_is_lock_frame("do_nanosleep"));
	prof_free(p);
	prof_free(l);
	prof_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_site),
		cmocka_unit_test(test_passes),
		cmocka_unit_test(test_locks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
