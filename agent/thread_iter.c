/* SPDX-License-Identifier: MIT */
/* A pass over the chosen threads with a BPF task iterator. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/thread_iter.h"
#include "bpf/threads.skel.h"

struct thread_iter {
	struct threads_bpf *skel;
	struct bpf_link *link;
	uint8_t *buf; /* records read but not handed out yet */
	size_t len, cap;
};

struct thread_iter *thread_iter_open(const struct thread_iter_opts *o, char *err,
				     size_t errlen)
{
	struct thread_iter *it = calloc(1, sizeof(*it));
	int rc;

	if (!it) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	it->skel = threads_bpf__open();
	if (!it->skel) {
		snprintf(err, errlen, "cannot open the thread iterator (%s)", strerror(errno));
		goto err_free;
	}
	it->skel->rodata->filter_pid = o->pids_fd >= 0;
	it->skel->rodata->filter_comm = o->comm && o->comm[0];
	if (o->comm)
		strncpy((char *)it->skel->rodata->target_comm, o->comm, HEARTH_THREAD_COMM - 1);
	it->skel->rodata->exclude_tgid = (uint32_t)o->exclude_tgid;
	it->skel->rodata->stack_bytes = o->stack_bytes && o->stack_bytes < HEARTH_THREAD_STACK
					? o->stack_bytes : HEARTH_THREAD_STACK;
	/* One filter for the sampler and the iterator: the children the
	 * sampler follows are iterated too. */
	if ((o->pids_fd >= 0 && bpf_map__reuse_fd(it->skel->maps.pids, o->pids_fd)) ||
	    (o->offcpu_start_fd >= 0 &&
	     bpf_map__reuse_fd(it->skel->maps.offcpu_start, o->offcpu_start_fd))) {
		snprintf(err, errlen, "cannot share the sampler's maps with the thread iterator (%s)",
			 strerror(errno));
		goto err_free;
	}
	rc = threads_bpf__load(it->skel);
	if (rc) {
		snprintf(err, errlen,
			 "the kernel refused the thread iterator (%s); a task iterator needs Linux 5.8 and sleepable iterators 5.18",
			 strerror(-rc));
		goto err_free;
	}
	it->link = bpf_program__attach_iter(it->skel->progs.snap_threads, NULL);
	if (!it->link) {
		snprintf(err, errlen, "cannot attach the thread iterator (%s)", strerror(errno));
		goto err_free;
	}
	return it;

err_free:
	thread_iter_close(it);
	return NULL;
}

/* Hands out the whole records at the start of it->buf; keeps the rest. */
static int hand_out(struct thread_iter *it, thread_iter_fn fn, void *arg)
{
	size_t at = 0;
	int rc = 0;

	while (rc == 0 && it->len - at >= sizeof(struct hearth_thread)) {
		struct hearth_thread t;

		memcpy(&t, it->buf + at, sizeof(t));
		if (t.size > HEARTH_THREAD_STACK || t.nk > HEARTH_THREAD_DEPTH)
			return -EBADMSG;
		if (it->len - at - sizeof(t) < t.size)
			break;
		rc = fn(&t, it->buf + at + sizeof(t), arg);
		at += sizeof(t) + t.size;
	}
	memmove(it->buf, it->buf + at, it->len - at);
	it->len -= at;
	return rc;
}

int thread_iter_run(struct thread_iter *it, thread_iter_fn fn, void *arg)
{
	int fd = bpf_iter_create(bpf_link__fd(it->link)), rc = 0;

	if (fd < 0)
		return -errno;
	it->len = 0;
	while (rc == 0) {
		ssize_t n;

		if (it->cap - it->len < 64 * 1024) {
			size_t cap = it->cap ? it->cap * 2 : 256 * 1024;
			uint8_t *b = realloc(it->buf, cap);

			if (!b) {
				rc = -ENOMEM;
				break;
			}
			it->buf = b;
			it->cap = cap;
		}
		n = read(fd, it->buf + it->len, it->cap - it->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0) {
			if (it->len)
				rc = -EBADMSG; /* a record cut short */
			break;
		}
		it->len += (size_t)n;
		rc = hand_out(it, fn, arg);
	}
	close(fd);
	return rc;
}

void thread_iter_note_edges(struct thread_iter *it, uint64_t ts_ns, uint32_t gen)
{
	it->skel->bss->edge_ts = ts_ns;
	it->skel->bss->edge_gen = gen;
}

void thread_iter_skip_unmoved(struct thread_iter *it)
{
	it->skel->bss->edge_ts = 0;
	it->skel->bss->skip_unmoved = true;
}

void thread_iter_close(struct thread_iter *it)
{
	if (!it)
		return;
	bpf_link__destroy(it->link);
	threads_bpf__destroy(it->skel);
	free(it->buf);
	free(it);
}
