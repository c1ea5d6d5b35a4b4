/* SPDX-License-Identifier: MIT */
/*
 * pprof locations into frames: each Line is a function at a line, the
 * last one the caller the others were inlined into; a Location without
 * Lines becomes "module+0xoffset".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "pprof_fields.h"
#include "pprof_reader.h"
#include "protobuf.h"

/* Binary search over an array sorted by a leading uint64_t id. */
void *pr_find_id(void *arr, size_t n, size_t size, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;

		memcpy(&v, (char *)arr + mid * size, sizeof(v));
		if (v == id)
			return (char *)arr + mid * size;
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- frames ------------------------------------------------------------------ */

static const char *base_name(const char *s, size_t *n)
{
	const char *slash = memrchr(s, '/', *n);

	if (!slash)
		return s;
	*n -= (size_t)(slash + 1 - s);
	return slash + 1;
}

/* The frame of an unsymbolized location: "module+0xoffset". */
static int unnamed_frame(struct reader *r, const struct rlocation *l,
			 const struct rmapping *m, struct prof_frame *fr)
{
	char buf[512];
	size_t n = 0;
	const char *mod = "[unknown]";
	uint64_t off = l->address;

	if (m) {
		if (m->file < 0 || (uint64_t)r->nstrs <= (uint64_t)m->file)
			return pr_bad(r, "a mapping names a string outside the table");
		n = r->strs[m->file].n;
		mod = base_name((const char *)r->strs[m->file].p, &n);
		off = l->address - m->start + m->offset;
	}
	if (!n) {
		mod = "[unknown]";
		n = strlen(mod);
	}
	if (256 < n)
		n = 256;
	snprintf(buf, sizeof(buf), "%.*s+0x%llx", (int)n, mod,
		 (unsigned long long)off);
	fr->name = prof_intern_cstr(r->p, buf);
	return fr->name == UINT32_MAX ? -ENOMEM : 0;
}

/* Turns Line @i of @n (innermost first) into a frame. */
static int line_frame(struct reader *r, uint64_t fid, int64_t line, size_t i,
		      size_t n, int kernel, struct prof_frame *fr)
{
	const struct rfunction *fn = pr_find_id(r->funcs, r->nfuncs,
					     sizeof(*r->funcs), fid);
	int ret;

	if (!fn)
		return pr_bad(r, "a line refers to function %llu, which is not defined",
			   (unsigned long long)fid);
	if ((ret = pr_str_get(r, fn->name, &fr->name)) < 0 ||
	    (ret = pr_str_get(r, fn->file, &fr->file)) < 0)
		return ret;
	fr->line = 0 < line && line <= UINT32_MAX ? (uint32_t)line : 0;
	if (r->attrs) {
		fr->kind = fn->kind <= PROF_KIND_THREAD ? (uint8_t)fn->kind : 0;
		fr->cls = fn->cls < PROF_CLASS_COUNT ? (uint8_t)fn->cls : 0;
		fr->lang = fn->lang < PROF_LANG_COUNT ? (uint8_t)fn->lang : 0;
	} else {
		if (i + 1 < n)
			fr->kind = PROF_KIND_INLINE;
		else if (kernel)
			fr->kind = PROF_KIND_KERNEL;
		/* A profile from elsewhere: what its names and files say. */
		prof_guess_frame(r->p, fr);
	}
	return 0;
}

/* Sets *@id to the profile's mapping of @m (interned the first time), 0
 * when it gives no place: no address range. 0, -EINVAL or -ENOMEM. */
static int placed_mapping(struct reader *r, struct rmapping *m, uint32_t *id)
{
	struct prof_mapping pm = { .start = m->start, .limit = m->limit,
				   .offset = m->offset };
	int ret;

	if (!m->placed && m->start < m->limit) {
		if ((ret = pr_str_get(r, m->file, &pm.file)) < 0 ||
		    (ret = pr_str_get(r, m->build_id, &pm.build_id)) < 0)
			return ret;
		if ((m->placed = prof_mapping_intern(r->p, &pm)) == UINT32_MAX)
			return -ENOMEM;
	}
	*id = m->placed;
	return 0;
}

/* Appends one frame id to the resolved-frames array; a frame of a
 * location with an address in mapping @m gets it as its place. */
static int push_frame(struct reader *r, const struct prof_frame *fr,
		      const struct rlocation *l, struct rmapping *m)
{
	uint32_t id = prof_frame_intern(r->p, fr), pm = 0;
	int ret;

	if (id == UINT32_MAX)
		return -ENOMEM;
	if (m && l->address) {
		if ((ret = placed_mapping(r, m, &pm)) < 0)
			return ret;
		if (pm && prof_frame_place(r->p, id, pm, l->address) < 0)
			return -ENOMEM;
	}
	if (prof_grow_size((void **)&r->lframes, &r->lframes_cap, r->lframes_len + 1,
		     sizeof(*r->lframes)) < 0)
		return -ENOMEM;
	r->lframes[r->lframes_len++] = id;
	return 0;
}

/* Collects the (function id, line) pairs of location @l into r->lines. */
static int collect_lines(struct reader *r, const struct rlocation *l)
{
	struct pb_reader pr = { l->body.p, l->body.p + l->body.n };
	struct pb_field f;
	int ret;

	r->nlines = 0;
	while ((ret = pb_next(&pr, &f)) > 0) {
		struct pb_reader lr;
		struct pb_field g;
		struct rline *ln;

		if (f.num != LOCATION_LINE)
			continue;
		lr = (struct pb_reader){ f.data, f.data + f.len };
		ln = PUSH(r, lines, nlines, lines_cap);
		if (!ln)
			return -ENOMEM;
		ln->fid = 0;
		ln->line = 0;
		while ((ret = pb_next(&lr, &g)) > 0) {
			if (g.num == LINE_FUNCTION_ID && g.wire == PB_VARINT)
				ln->fid = g.u64;
			else if (g.num == LINE_LINE && g.wire == PB_VARINT)
				ln->line = g.u64;
		}
		if (ret < 0)
			return pr_bad(r, "a line is truncated");
	}
	return ret < 0 ? pr_bad(r, "a location is truncated") : 0;
}

/* Resolves location @l into frames, outer caller first. */
int pr_resolve_location(struct reader *r, struct rlocation *l)
{
	struct rmapping *m = NULL;
	struct prof_frame base = { 0 };
	size_t start = r->lframes_len;
	int ret, kernel = 0;

	if (l->mapping) {
		m = pr_find_id(r->maps, r->nmaps, sizeof(*r->maps), l->mapping);
		if (!m)
			return pr_bad(r, "a location refers to mapping %llu, which is not defined",
				   (unsigned long long)l->mapping);
		if (m->file < 0 || (uint64_t)r->nstrs <= (uint64_t)m->file)
			return pr_bad(r, "a mapping names a string outside the table");
		/* A mapping of a process (an address range) names its file
		 * by path: the module is the file's name, as hearth names
		 * modules. */
		size_t n = r->strs[m->file].n;
		const char *mod = (const char *)r->strs[m->file].p;

		if (m->start < m->limit)
			mod = base_name(mod, &n);

		if ((base.module = prof_intern(r->p, mod, n)) == UINT32_MAX)
			return -ENOMEM;
		kernel = r->strs[m->file].n >= 7 &&
			 memcmp(r->strs[m->file].p, "[kernel", 7) == 0;
	}
	if ((ret = collect_lines(r, l)) < 0)
		return ret;
	/* Lines are innermost first; frames go outer first. */
	for (size_t i = r->nlines; i-- > 0;) {
		struct prof_frame fr = base;

		ret = r->lines[i].fid
			      ? line_frame(r, r->lines[i].fid,
					   (int64_t)r->lines[i].line, i,
					   r->nlines, kernel, &fr)
			      : unnamed_frame(r, l, m, &fr);
		if (ret < 0 || (ret = push_frame(r, &fr, l, m)) < 0)
			return ret;
	}
	if (r->nlines == 0) {
		struct prof_frame fr = base;

		if (kernel)
			fr.kind = PROF_KIND_KERNEL;
		if ((ret = unnamed_frame(r, l, m, &fr)) < 0 ||
		    (ret = push_frame(r, &fr, l, m)) < 0)
			return ret;
	}
	if (UINT32_MAX < r->lframes_len - start)
		return pr_bad(r, "a location has too many lines");
	l->frames_off = start;
	l->nframes = (uint32_t)(r->lframes_len - start);
	l->resolved = 1;
	return 0;
}

