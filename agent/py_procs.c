/* SPDX-License-Identifier: MIT */
/*
 * py_procs: which processes run CPython, told to the kernel so the
 * sampler reads their Python frames, and those frames handed to the stack
 * builder. A process is looked at when the sampler starts and at each
 * exec; its entry goes when it exits.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "agent/sampler_impl.h"
#include "bpf/sampler.skel.h"
#include "symbolize/python.h"

int sampler_py_track(struct sampler *s, pid_t pid)
{
	struct hearth_py_proc py;
	__u32 key = (__u32)pid;
	int rc = sym_py_find(pid, &py, NULL);

	if (rc)
		return rc;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.py_procs), &key, &py, BPF_ANY))
		return -errno;
	s->stats.python_procs++;
	return 0;
}

void sampler_py_forget(struct sampler *s, pid_t pid)
{
	__u32 key = (__u32)pid;

	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.py_procs), &key);
}

void sampler_py_scan(struct sampler *s)
{
	DIR *d;
	struct dirent *e;

	for (size_t i = 0; i < s->opts.npids; i++)
		sampler_py_track(s, s->opts.pids[i]);
	if (s->opts.npids)
		return;
	d = opendir("/proc");
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		sampler_py_track(s, (pid_t)pid);
	}
	closedir(d);
}

void sampler_py_input(struct sampler *s, uint64_t key, uint32_t tgid,
		      struct stack_input *in, struct sampler_py_buf *buf)
{
	__u32 t = tgid;

	if (!key)
		return;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.py_stacks), &key, &buf->stack) ||
	    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.py_procs), &t, &buf->proc) ||
	    !buf->stack.n || buf->stack.n > HEARTH_PY_DEPTH) {
		s->stats.python_lost++;
		return;
	}
	in->py = &buf->stack;
	in->pyproc = &buf->proc;
}
