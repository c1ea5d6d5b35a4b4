/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/stack_build.h"

/* Room for a full user and kernel stack, with inline expansion. */
#define MAX_FRAMES 1024
#define MAX_INLINE 16
/* Remembered stacks: direct-mapped, a newer stack takes its slot. */
#define MEMO_SLOTS 1024

/* One remembered stack: its input (the key) and its frame ids in p. */
struct memo {
	uint64_t hash;
	const struct prof_profile *p;
	uint32_t tgid, tid; /* tid 0 unless per thread */
	uint32_t flags;
	uint32_t nu, nk, nframes;
	char comm[16], tcomm[16];
	uint64_t ips[];     /* nu user, nk kernel, then nframes uint32_t */
};

struct stack_builder {
	uint32_t frames[MAX_FRAMES];
	struct sym_frame scratch[MAX_INLINE];
	struct memo *memo[MEMO_SLOTS];
};

struct stack_builder *stack_builder_new(void)
{
	return calloc(1, sizeof(struct stack_builder));
}

void stack_builder_forget(struct stack_builder *b)
{
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		free(b->memo[i]);
		b->memo[i] = NULL;
	}
}

void stack_builder_forget_tgid(struct stack_builder *b, uint32_t tgid)
{
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		if (b->memo[i] && b->memo[i]->tgid == tgid) {
			free(b->memo[i]);
			b->memo[i] = NULL;
		}
	}
}

void stack_builder_free(struct stack_builder *b)
{
	if (!b)
		return;
	stack_builder_forget(b);
	free(b);
}

static uint32_t intern_frame(struct prof_profile *p, const struct sym_frame *sf,
			     uint8_t kind, uint8_t cls)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, sf->name),
		.module = prof_intern_cstr(p, sf->module),
		.file = prof_intern_cstr(p, sf->file),
		.line = sf->line,
		.kind = kind,
		.cls = cls,
		.lang = sf->lang,
	};

	if (f.name == UINT32_MAX || f.module == UINT32_MAX || f.file == UINT32_MAX)
		return UINT32_MAX;
	return prof_frame_intern(p, &f);
}

static int push(struct stack_builder *b, size_t *n, uint32_t id)
{
	if (id == UINT32_MAX)
		return -ENOMEM;
	if (*n < MAX_FRAMES)
		b->frames[(*n)++] = id;
	return 0;
}

static int push_named(struct stack_builder *b, struct prof_profile *p,
		      size_t *n, const char *name, uint8_t kind, uint8_t cls)
{
	struct sym_frame sf = { .name = name, .module = "" };

	return push(b, n, intern_frame(p, &sf, kind, cls));
}

static int add_user(struct stack_builder *b, struct sym_ctx *sym,
		    struct prof_profile *p, const struct stack_input *in,
		    size_t *n)
{
	/* Outermost caller first. Return addresses point after the call:
	 * step back one byte so the call's own line and inline chain are
	 * found. The leaf (index 0) is the sampled instruction itself. */
	for (size_t i = in->nu; i-- > 0;) {
		uint64_t ip = in->uips[i] - (i > 0 ? 1 : 0);
		int k = sym_user(sym, (pid_t)in->tgid, ip, b->scratch, MAX_INLINE);

		for (int j = k - 1; j >= 0; j--) {
			const struct sym_frame *sf = &b->scratch[j];
			uint8_t kind = sf->inlined ? PROF_KIND_INLINE : PROF_KIND_USER;

			if (push(b, n, intern_frame(p, sf, kind, sf->cls)) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static int add_kernel(struct stack_builder *b, struct sym_ctx *sym,
		      struct prof_profile *p, const struct stack_input *in,
		      size_t *n)
{
	for (size_t i = in->nk; i-- > 0;) {
		struct sym_frame sf;
		uint8_t cls;

		/* The sampler's own frames say nothing about the profile. */
		if (sym_kernel(sym, in->kips[i], &sf) < 1 || (sf.flags & SYM_FRAME_BPF))
			continue;
		/* In a wait, the kernel frames are where the thread waited. */
		cls = in->off_cpu ? PROF_CLASS_WAITING : sf.cls;
		if (push(b, n, intern_frame(p, &sf, PROF_KIND_KERNEL, cls)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Symbolizes @in into b->frames; returns how many, or -ENOMEM. */
static long build(struct stack_builder *b, struct sym_ctx *sym,
		  struct prof_profile *p, const struct stack_input *in)
{
	size_t n = 0;
	char thread[64];

	if (push_named(b, p, &n, in->comm[0] ? in->comm : "[unknown]",
		       PROF_KIND_PROCESS, PROF_CLASS_UNKNOWN) < 0)
		return -ENOMEM;
	if (in->per_thread) {
		snprintf(thread, sizeof(thread), "%s-%u", in->tcomm, in->tid);
		if (push_named(b, p, &n, thread, PROF_KIND_THREAD, PROF_CLASS_UNKNOWN) < 0)
			return -ENOMEM;
	}
	if (add_user(b, sym, p, in, &n) < 0 || add_kernel(b, sym, p, in, &n) < 0)
		return -ENOMEM;
	if (in->off_cpu && in->involuntary &&
	    push_named(b, p, &n, "[waiting for a CPU]", PROF_KIND_KERNEL,
		       PROF_CLASS_WAITING) < 0)
		return -ENOMEM;
	return (long)n;
}

int stack_builder_add(struct stack_builder *b, struct sym_ctx *sym,
		      struct prof_profile *p, const struct stack_input *in,
		      uint64_t value)
{
	long n = build(b, sym, p, in);

	if (n < 0)
		return (int)n;
	if (prof_add_stack(p, b->frames, (size_t)n, value) == UINT32_MAX)
		return -ENOMEM;
	return 0;
}

/* The memo's key of @in, without the addresses. */
static void memo_key(const struct stack_input *in, const struct prof_profile *p,
		     struct memo *k)
{
	memset(k, 0, sizeof(*k));
	k->p = p;
	k->tgid = in->tgid;
	k->tid = in->per_thread ? in->tid : 0;
	k->flags = (uint32_t)in->off_cpu | (uint32_t)in->involuntary << 1 |
		   (uint32_t)in->per_thread << 2;
	k->nu = (uint32_t)in->nu;
	k->nk = (uint32_t)in->nk;
	strncpy(k->comm, in->comm, sizeof(k->comm) - 1);
	if (in->per_thread)
		strncpy(k->tcomm, in->tcomm, sizeof(k->tcomm) - 1);
	k->hash = ((uint64_t)k->tgid << 32 | k->tid) * 0x9e3779b97f4a7c15ULL ^ k->flags;
	for (size_t i = 0; i < in->nu; i++)
		k->hash = (k->hash ^ in->uips[i]) * 0x100000001b3ULL;
	for (size_t i = 0; i < in->nk; i++)
		k->hash = (k->hash ^ in->kips[i]) * 0x100000001b3ULL;
	k->hash ^= k->hash >> 31;
}

static bool memo_matches(const struct memo *m, const struct memo *k,
			 const struct stack_input *in)
{
	return m->hash == k->hash && m->p == k->p && m->tgid == k->tgid &&
	       m->tid == k->tid && m->flags == k->flags && m->nu == k->nu &&
	       m->nk == k->nk && memcmp(m->comm, k->comm, sizeof(k->comm)) == 0 &&
	       memcmp(m->tcomm, k->tcomm, sizeof(k->tcomm)) == 0 &&
	       (!in->nu || memcmp(m->ips, in->uips, in->nu * sizeof(uint64_t)) == 0) &&
	       (!in->nk || memcmp(m->ips + in->nu, in->kips, in->nk * sizeof(uint64_t)) == 0);
}

/* Remembers the stack just built (b->frames, @n) for key @k. Out of
 * memory, it is simply not remembered. */
static void memo_put(struct stack_builder *b, const struct memo *k,
		     const struct stack_input *in, size_t n)
{
	size_t nips = in->nu + in->nk;
	struct memo *m = malloc(sizeof(*m) + nips * sizeof(uint64_t) + n * sizeof(uint32_t));
	struct memo **slot = &b->memo[k->hash % MEMO_SLOTS];

	if (!m)
		return;
	*m = *k;
	m->nframes = (uint32_t)n;
	if (in->nu)
		memcpy(m->ips, in->uips, in->nu * sizeof(uint64_t));
	if (in->nk)
		memcpy(m->ips + in->nu, in->kips, in->nk * sizeof(uint64_t));
	memcpy(m->ips + nips, b->frames, n * sizeof(uint32_t));
	free(*slot);
	*slot = m;
}

int stack_builder_add_memo(struct stack_builder *b, struct sym_ctx *sym,
			   struct prof_profile *p, const struct stack_input *in,
			   uint64_t value)
{
	struct memo k;
	const struct memo *m;
	long n;

	memo_key(in, p, &k);
	m = b->memo[k.hash % MEMO_SLOTS];
	if (m && memo_matches(m, &k, in)) {
		const uint32_t *frames = (const uint32_t *)(m->ips + m->nu + m->nk);

		return prof_add_stack(p, frames, m->nframes, value) == UINT32_MAX ? -ENOMEM : 0;
	}
	n = build(b, sym, p, in);
	if (n < 0)
		return (int)n;
	memo_put(b, &k, in, (size_t)n);
	if (prof_add_stack(p, b->frames, (size_t)n, value) == UINT32_MAX)
		return -ENOMEM;
	return 0;
}
