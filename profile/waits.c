/* SPDX-License-Identifier: MIT */
/* What a waiting stack waited in, and whether on a lock (waits.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "profile/waits.h"

/* The bare name: leading underscores and a compiler suffix (".isra.0",
 * ".constprop.0", ".cold", ...) dropped. Sets *@len to its length. */
static const char *bare(const char *name, size_t *len)
{
	const char *dot;

	while (*name == '_')
		name++;
	dot = strchr(name, '.');
	*len = dot ? (size_t)(dot - name) : strlen(name);
	return name;
}

static bool bare_is(const char *b, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(b, word, len);
}

static bool bare_starts(const char *b, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return n <= len && !memcmp(b, prefix, n);
}

/* Kernel functions every wait of a kind passes through on its way to the
 * scheduler, which say nothing of what was awaited (bare names; each
 * also stands for the names it begins). */
static const char *const helpers[] = {
	"wait_woken", "wait_for_completion", "wait_for_common", "do_wait_for_common",
	"wait_on_bit", "out_of_line_wait_on_bit", "bit_wait", "wait_event",
	"sk_wait_data", "skb_wait_for_more_packets", "futex_do_wait",
	"futex_wait_queue", "freezable_schedule", "do_sched_yield",
};

int prof_wait_passes(const char *name, const char *caller)
{
	size_t len, clen;
	const char *b = bare(name, &len), *c;

	/* The scheduler and its timed and I/O variants. */
	if (memmem(b, len, "schedule", 8) || memmem(b, len, "resched", 7))
		return 1;
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if (bare_starts(b, len, helpers[i]))
			return 1;
	if (!caller || !caller[0])
		return 0;
	/* __futex_wait under futex_wait, tcp_recvmsg_locked under
	 * tcp_recvmsg: the caller says it better. */
	c = bare(caller, &clen);
	return clen && clen <= len && !memcmp(b, c, clen) && (len == clen || b[clen] == '_');
}

size_t prof_wait_len(const struct prof_profile *p, const uint32_t *frames, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		const struct prof_frame *f = prof_frame_get(p, frames[i]);

		if (f && f->kind == PROF_KIND_USER &&
		    !strcmp(prof_str(p, f->name), PROF_WAKER_FRAME))
			return i;
	}
	return n;
}

size_t prof_wait_site(const struct prof_profile *p, const uint32_t *frames,
		      size_t n)
{
	size_t i = n = prof_wait_len(p, frames, n);

	while (i-- > 0) {
		const struct prof_frame *f = prof_frame_get(p, frames[i]);
		const struct prof_frame *up = i ? prof_frame_get(p, frames[i - 1]) : NULL;

		if (!f || f->kind != PROF_KIND_KERNEL ||
		    !prof_wait_passes(prof_str(p, f->name),
				      up && up->kind == PROF_KIND_KERNEL ? prof_str(p, up->name) : NULL))
			return i;
	}
	return n;
}

/* Bare names, each standing for the names it begins, of the kernel
 * functions a thread is in while it waits for a lock or a condition. */
static const char *const lock_prefixes[] = {
	/* futex(2): pthread mutexes, rwlocks, condition variables,
	 * semaphores, joins */
	"futex_wait", "futex_lock_pi", "do_futex", "x64_sys_futex",
	/* kernel mutexes, rt-mutexes, rw-semaphores, semaphores */
	"mutex_lock", "rt_mutex_slowlock", "rt_mutex_lock", "rwsem_down_",
	"percpu_rwsem_wait", "percpu_down_", "down_",
	/* flock(2), fcntl(2) F_SETLKW, lockf(3) */
	"locks_lock_", "flock_lock_", "posix_lock_inode_wait", "fcntl_setlk",
	"do_lock_file_wait", "x64_sys_flock",
};

int prof_wait_is_lock_frame(const char *name)
{
	size_t len;
	const char *b = bare(name, &len);

	/* down(): a semaphore's wait, as its variants down_*(). */
	if (bare_is(b, len, "down"))
		return 1;
	for (size_t i = 0; i < sizeof(lock_prefixes) / sizeof(lock_prefixes[0]); i++)
		if (bare_starts(b, len, lock_prefixes[i]))
			return 1;
	return 0;
}

int prof_wait_is_lock(const struct prof_profile *p, const uint32_t *frames,
		      size_t n)
{
	const struct prof_frame *leaf;
	bool lock = false;

	n = prof_wait_len(p, frames, n);
	leaf = n ? prof_frame_get(p, frames[n - 1]) : NULL;
	if (!leaf || !strcmp(prof_str(p, leaf->name), PROF_WAIT_CPU_FRAME))
		return 0;
	for (size_t i = 0; i < n && !lock; i++) {
		const struct prof_frame *f = prof_frame_get(p, frames[i]);

		lock = f && f->kind == PROF_KIND_KERNEL &&
		       prof_wait_is_lock_frame(prof_str(p, f->name));
	}
	return lock;
}

static uint64_t lock_value(const struct prof_profile *src, const uint32_t *frames,
			   size_t n, uint64_t value, void *arg)
{
	(void)arg;
	return prof_wait_is_lock(src, frames, n) ? value : 0;
}

int prof_keep_lock_waits(struct prof_profile *dst, const struct prof_profile *src)
{
	if (prof_meta_const(dst)->unit != prof_meta_const(src)->unit)
		return -EINVAL;
	return prof_merge_mapped(dst, src, lock_value, NULL);
}
