/* SPDX-License-Identifier: MIT */
/*
 * debuginfod_rename: names, after the fact, the frames a profile took
 * before their module's debug file arrived. Such a frame reads
 * "module+0xADDR" with ADDR the ELF virtual address, which is all the
 * debug file needs: the function there, its inlined calls, file and line.
 * The stacks are copied into a new profile, so frames that now share a
 * name merge.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/debuginfod.h"
#include "symbolize/sym_internal.h"

#define MAX_OUT 4096  /* frames of one renamed stack */
#define MAX_MODS 256  /* fetched modules looked at */

struct fetched {
	char module[64];
	char path[4096];
	bool shared;      /* another fetched file has this module name */
};

struct rename {
	const struct prof_profile *src;
	struct prof_profile *dst;
	struct sym_ctx *sym;
	struct fetched *mods;
	size_t nmods;
	uint32_t *map;    /* src frame id -> dst frame id, 0 = not yet */
	uint32_t out[MAX_OUT];
	struct sym_frame chain[SYM_INLINE_MAX];
	size_t renamed;
};

/* The fetched file of the module a frame names, with the address in
 * *@vaddr; NULL when the frame is not "module+0xADDR" of one. */
static const struct fetched *unnamed_in(const struct rename *r,
					const struct prof_frame *f,
					uint64_t *vaddr)
{
	if (f->kind != PROF_KIND_USER || f->file)
		return NULL;
	const char *mod = prof_str(r->src, f->module);
	const char *name = prof_str(r->src, f->name);
	size_t ml = strlen(mod);

	if (!ml || strncmp(name, mod, ml) != 0 || strncmp(name + ml, "+0x", 3) != 0)
		return NULL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(name + ml + 3, &end, 16);
	if (errno || *end || end == name + ml + 3)
		return NULL;
	for (size_t i = 0; i < r->nmods; i++) {
		if (strcmp(r->mods[i].module, mod) == 0) {
			*vaddr = v;
			return r->mods[i].shared ? NULL : &r->mods[i];
		}
	}
	return NULL;
}

/* Appends what frame @id of the source becomes; returns 0 or -ENOMEM. */
static int push_frame(struct rename *r, uint32_t id, size_t *n)
{
	const struct prof_frame *f = prof_frame_get(r->src, id);
	uint64_t vaddr;
	const struct fetched *fx = unnamed_in(r, f, &vaddr);
	int k = fx ? sym_file(r->sym, fx->path, vaddr, r->chain, SYM_INLINE_MAX) : 0;

	if (k < 1 || (r->chain[0].flags & SYM_FRAME_UNRESOLVED)) {
		if (!r->map[id] && (r->map[id] = prof_frame_copy(r->dst, r->src, id)) == UINT32_MAX)
			return -ENOMEM;
		if (*n < MAX_OUT)
			r->out[(*n)++] = r->map[id];
		return 0;
	}
	r->renamed++;
	/* the chain is innermost first; a stack is root first */
	for (int j = k - 1; j >= 0; j--) {
		const struct sym_frame *sf = &r->chain[j];
		struct prof_frame g = {
			.name = prof_intern_cstr(r->dst, sf->name),
			.module = prof_intern_cstr(r->dst, prof_str(r->src, f->module)),
			.file = prof_intern_cstr(r->dst, sf->file),
			.line = sf->line,
			.kind = sf->inlined ? PROF_KIND_INLINE : PROF_KIND_USER,
			.cls = f->cls,
			.lang = sf->lang,
		};
		if (g.name == UINT32_MAX || g.module == UINT32_MAX || g.file == UINT32_MAX)
			return -ENOMEM;
		uint32_t gid = prof_frame_intern(r->dst, &g);
		if (gid == UINT32_MAX || prof_frame_place_as(r->dst, gid, r->src, id) < 0)
			return -ENOMEM;
		if (*n < MAX_OUT)
			r->out[(*n)++] = gid;
	}
	return 0;
}

static int copy_stack(const struct prof_profile *p, const uint32_t *frames,
		      size_t n, uint64_t value, void *arg)
{
	struct rename *r = arg;
	size_t k = 0;

	(void)p;
	for (size_t i = 0; i < n; i++)
		if (push_frame(r, frames[i], &k) != 0)
			return -ENOMEM;
	if (prof_add_stack(r->dst, r->out, k, value) == UINT32_MAX && k > 0)
		return -ENOMEM;
	return 0;
}

/* Reads the fetched files' module names; two files under one name are
 * marked shared (a frame cannot tell which it is). */
static size_t fetched_modules(struct sym_debuginfod *d, struct fetched *mods)
{
	size_t n = 0;
	int rc;

	for (size_t i = 0; n < MAX_MODS &&
	     (rc = sym_debuginfod_ready_at(d, i, mods[n].module, sizeof(mods[n].module),
					   mods[n].path, sizeof(mods[n].path))) >= 0; i++) {
		if (rc == 0 || !mods[n].module[0])
			continue;
		mods[n].shared = false;
		for (size_t j = 0; j < n; j++)
			if (strcmp(mods[j].module, mods[n].module) == 0)
				mods[j].shared = mods[n].shared = true;
		n++;
	}
	return n;
}

struct prof_profile *sym_debuginfod_rename(struct sym_debuginfod *d,
					   const struct prof_profile *p,
					   int demangle, size_t *renamed)
{
	struct rename r = { .src = p };
	struct sym_options so = { .demangle = demangle };
	int rc = -ENOMEM;

	*renamed = 0;
	r.mods = calloc(MAX_MODS, sizeof(*r.mods));
	r.map = calloc(prof_frame_count(p), sizeof(*r.map));
	r.dst = prof_new(prof_meta_const(p)->unit);
	r.sym = sym_new(&so);
	if (!r.mods || !r.map || !r.dst || !r.sym)
		goto out;
	*prof_meta(r.dst) = *prof_meta_const(p);
	r.nmods = fetched_modules(d, r.mods);
	rc = prof_walk_stacks(p, copy_stack, &r);
	*renamed = r.renamed;
out:
	sym_free(r.sym);
	free(r.map);
	free(r.mods);
	if (rc != 0) {
		prof_free(r.dst);
		errno = -rc;
		return NULL;
	}
	return r.dst;
}
