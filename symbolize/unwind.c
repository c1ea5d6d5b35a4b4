/* SPDX-License-Identifier: MIT */
/* DWARF CFI unwinding of copied user stacks with libdw. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <elfutils/libdwfl.h>
#include <dwarf.h>

#include "symbolize/unwind.h"

/* x86-64 DWARF register numbers. */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7

/* A process's mappings are read again at most this often when an unwind
 * lands in code libdw does not know (a library loaded since). */
#define REPORT_INTERVAL_NS 1000000000ULL

struct session {
	pid_t pid;
	pid_t tid;                        /* thread being unwound */
	Dwfl *dwfl;
	const struct sym_stack_copy *cur; /* valid during one sym_unwind() */
	uint64_t reported_ns;
};

struct sym_unwinder {
	struct session *v;
	size_t len, cap;
};

struct walk {
	uint64_t *pcs;
	size_t n, max;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct session *s = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = s;
	return s->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Serves reads from the copied stack only: the unwinder never touches the
 * live process. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	const struct sym_stack_copy *c = ((struct session *)arg)->cur;

	(void)dwfl;
	if (!c || addr < c->regs.sp || addr - c->regs.sp > c->size ||
	    c->size - (addr - c->regs.sp) < sizeof(*result))
		return false;
	memcpy(result, c->data + (addr - c->regs.sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct sym_stack_copy *c = ((struct session *)thread_arg)->cur;
	Dwarf_Word regs[2] = { c->regs.bp, c->regs.sp };

	dwfl_thread_state_register_pc(thread, c->regs.ip);
	return dwfl_thread_state_registers(thread, DWARF_REG_RBP, 2, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void session_close(struct session *s)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
}

/* (Re)reads the process's mappings into a fresh libdw session. */
static int session_open(struct session *s)
{
	session_close(s);
	s->reported_ns = mono_ns();
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->dwfl)
		return -ENOMEM;
	if (dwfl_linux_proc_report(s->dwfl, s->pid) != 0 ||
	    dwfl_report_end(s->dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(s->dwfl, NULL, s->pid, &thread_callbacks, s)) {
		session_close(s);
		return -ESRCH;
	}
	return 0;
}

static struct session *session_get(struct sym_unwinder *u, pid_t pid)
{
	struct session *s;

	for (size_t i = 0; i < u->len; i++)
		if (u->v[i].pid == pid)
			return &u->v[i];
	if (u->len == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 16;
		struct session *v = realloc(u->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->v = v;
		u->cap = cap;
	}
	s = &u->v[u->len++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	return s;
}

struct sym_unwinder *sym_unwinder_new(void)
{
	return calloc(1, sizeof(struct sym_unwinder));
}

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->len; i++)
		session_close(&u->v[i]);
	free(u->v);
	free(u);
}

void sym_unwind_forget(struct sym_unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < u->len; i++) {
		if (u->v[i].pid != pid)
			continue;
		session_close(&u->v[i]);
		u->v[i] = u->v[--u->len];
		return;
	}
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	if (w->n >= w->max)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = pc;
	return DWARF_CB_OK;
}

static int walk(struct session *s, pid_t tid, const struct sym_stack_copy *copy,
		struct walk *w)
{
	int rc;

	s->tid = tid;
	s->cur = copy;
	w->n = 0;
	rc = dwfl_getthread_frames(s->dwfl, tid, on_frame, w);
	s->cur = NULL;
	return rc;
}

int sym_unwind(struct sym_unwinder *u, pid_t pid, pid_t tid,
	       const struct sym_stack_copy *copy, uint64_t *pcs, size_t max,
	       int *complete)
{
	struct session *s = session_get(u, pid);
	struct walk w = { .pcs = pcs, .max = max };
	int rc;

	*complete = 0;
	if (!s)
		return -ENOMEM;
	if (!max)
		return -EINVAL;
	if (!s->dwfl && (rc = session_open(s)) < 0) {
		sym_unwind_forget(u, pid);
		return rc;
	}
	rc = walk(s, tid, copy, &w);
	/* Code libdw does not know: a library mapped since the session was
	 * opened. Read the mappings again, not more than once a second. */
	if (w.n <= 1 && !dwfl_addrmodule(s->dwfl, copy->regs.ip) &&
	    mono_ns() - s->reported_ns > REPORT_INTERVAL_NS && session_open(s) == 0)
		rc = walk(s, tid, copy, &w);
	if (w.n == 0)
		pcs[w.n++] = copy->regs.ip;
	*complete = rc == 0;
	return (int)w.n;
}

size_t sym_unwind_splice(const uint64_t *dwarf, size_t nd, const uint64_t *fp,
			 size_t nf, uint64_t *out, size_t max)
{
	const uint64_t *src;
	size_t n;

	/* The deepest DWARF frame the FP walk also has: from there on, the
	 * FP walk knows the callers the copy was too short for. */
	for (size_t j = nd; j-- > 1;) {
		for (size_t i = 1; i < nf; i++) {
			if (dwarf[j] != fp[i])
				continue;
			n = 0;
			for (size_t k = 0; k <= j && n < max; k++)
				out[n++] = dwarf[k];
			for (size_t k = i + 1; k < nf && n < max; k++)
				out[n++] = fp[k];
			return n;
		}
	}
	src = nd >= nf ? dwarf : fp;
	n = nd >= nf ? nd : nf;
	if (n > max)
		n = max;
	memcpy(out, src, n * sizeof(*out));
	return n;
}
