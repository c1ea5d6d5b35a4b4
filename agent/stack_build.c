/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/stack_build.h"

/* Room for a full user and kernel stack, with inline expansion. */
#define MAX_FRAMES 1024
#define MAX_INLINE 16

struct stack_builder {
	uint32_t frames[MAX_FRAMES];
	struct sym_frame scratch[MAX_INLINE];
};

struct stack_builder *stack_builder_new(void)
{
	return calloc(1, sizeof(struct stack_builder));
}

void stack_builder_free(struct stack_builder *b)
{
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

int stack_builder_add(struct stack_builder *b, struct sym_ctx *sym,
		      struct prof_profile *p, const struct stack_input *in,
		      uint64_t value)
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
	if (prof_add_stack(p, b->frames, n, value) == UINT32_MAX)
		return -ENOMEM;
	return 0;
}
