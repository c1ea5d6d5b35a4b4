/* SPDX-License-Identifier: MIT */
/*
 * Reading pprof: inflate, scan the Profile message once (fields may come
 * in any order), index mappings, functions and locations by id, then turn
 * every sample into a stack. Every index and length is checked against the
 * data; malformed input gives one sentence, never a crash.
 */
#include "pprof.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof_fields.h"
#include "protobuf.h"

#define MAX_DEPTH 65536 /* frames per stack */

struct span {
	const uint8_t *p;
	size_t n;
};

struct rmapping {
	uint64_t id, start, offset;
	int64_t file;
};

struct rfunction {
	uint64_t id;
	int64_t name, file;
	uint64_t kind, cls, lang;
};

struct rline {
	uint64_t fid, line;
};

struct rlocation {
	uint64_t id, mapping, address;
	struct span body;
	size_t frames_off; /* in reader.lframes, once resolved */
	uint32_t nframes;
	int resolved;
};

struct reader {
	struct prof_profile *p;
	char *err;
	size_t errlen;

	struct span *strs;
	uint32_t *str_ids; /* pprof index -> profile id, UINT32_MAX = not yet */
	size_t nstrs, strs_cap;
	struct span *types, *samples;
	size_t ntypes, types_cap, nsamples, samples_cap;
	struct rmapping *maps;
	size_t nmaps, maps_cap;
	struct rfunction *funcs;
	size_t nfuncs, funcs_cap;
	struct rlocation *locs;
	size_t nlocs, locs_cap;
	struct span period_type;
	uint64_t period, time_ns, duration_ns, drops, default_type, attrs;

	size_t value_index;
	uint32_t *lframes; /* resolved frames of all locations */
	size_t lframes_len, lframes_cap;
	struct rline *lines; /* one location's lines, innermost first */
	size_t nlines, lines_cap;
	uint32_t *stack;
	size_t stack_cap;
	uint64_t *ids; /* one sample's location ids */
	size_t nids, ids_cap;
};

static int bad(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (r->err && r->errlen) {
		n = snprintf(r->err, r->errlen, "malformed pprof data: ");
		va_start(ap, fmt);
		if (0 <= n && (size_t)n < r->errlen)
			vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int grow_mem(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *a;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (SIZE_MAX / 2 / size < n)
			return -ENOMEM;
		n *= 2;
	}
	a = realloc(*arr, n * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = n;
	return 0;
}

#define PUSH(r, arr, n, cap)                                                   \
	(grow_mem((void **)&(r)->arr, &(r)->cap, (r)->n + 1,                   \
		  sizeof(*(r)->arr)) < 0 ? NULL : &(r)->arr[(r)->n++])

/* ---- strings --------------------------------------------------------------- */

/* Resolves pprof string index @idx to a profile string id in *@out. */
static int str_get(struct reader *r, int64_t idx, uint32_t *out)
{
	if (idx < 0 || (uint64_t)r->nstrs <= (uint64_t)idx)
		return bad(r, "string index %lld is outside the string table",
			   (long long)idx);
	if (r->str_ids[idx] == UINT32_MAX) {
		uint32_t id = prof_intern(r->p, (const char *)r->strs[idx].p,
					  r->strs[idx].n);

		if (id == UINT32_MAX)
			return -ENOMEM;
		r->str_ids[idx] = id;
	}
	*out = r->str_ids[idx];
	return 0;
}

static int str_is(const struct reader *r, int64_t idx, const char *s)
{
	size_t n = strlen(s);

	return 0 <= idx && (uint64_t)idx < (uint64_t)r->nstrs &&
	       r->strs[idx].n == n && memcmp(r->strs[idx].p, s, n) == 0;
}

/* ---- messages -------------------------------------------------------------- */

/* Checks that field @f has wire type @wire. */
static int want(struct reader *r, const struct pb_field *f, enum pb_wire wire,
		const char *msg)
{
	if (f->wire != wire)
		return bad(r, "field %u of %s has the wrong wire type", f->num,
			   msg);
	return 0;
}

static int decode_mapping(struct reader *r, struct span s)
{
	struct pb_reader pr = { s.p, s.p + s.n };
	struct rmapping *m = PUSH(r, maps, nmaps, maps_cap);
	struct pb_field f;
	int ret;

	if (!m)
		return -ENOMEM;
	memset(m, 0, sizeof(*m));
	while ((ret = pb_next(&pr, &f)) > 0) {
		if (f.num == MAPPING_ID || f.num == MAPPING_MEMORY_START ||
		    f.num == MAPPING_FILE_OFFSET || f.num == MAPPING_FILENAME) {
			if (want(r, &f, PB_VARINT, "a mapping") < 0)
				return -EINVAL;
		}
		if (f.num == MAPPING_ID)
			m->id = f.u64;
		else if (f.num == MAPPING_MEMORY_START)
			m->start = f.u64;
		else if (f.num == MAPPING_FILE_OFFSET)
			m->offset = f.u64;
		else if (f.num == MAPPING_FILENAME)
			m->file = (int64_t)f.u64;
	}
	return ret < 0 ? bad(r, "a mapping is truncated") : 0;
}

static int decode_function(struct reader *r, struct span s)
{
	struct pb_reader pr = { s.p, s.p + s.n };
	struct rfunction *fn = PUSH(r, funcs, nfuncs, funcs_cap);
	struct pb_field f;
	int ret;

	if (!fn)
		return -ENOMEM;
	memset(fn, 0, sizeof(*fn));
	while ((ret = pb_next(&pr, &f)) > 0) {
		uint64_t *dst = NULL;

		switch (f.num) {
		case FUNCTION_ID: dst = &fn->id; break;
		case FUNCTION_NAME: dst = (uint64_t *)&fn->name; break;
		case FUNCTION_FILENAME: dst = (uint64_t *)&fn->file; break;
		case FUNCTION_HEARTH_KIND: dst = &fn->kind; break;
		case FUNCTION_HEARTH_CLASS: dst = &fn->cls; break;
		case FUNCTION_HEARTH_LANG: dst = &fn->lang; break;
		default: continue;
		}
		if (want(r, &f, PB_VARINT, "a function") < 0)
			return -EINVAL;
		memcpy(dst, &f.u64, sizeof(f.u64));
	}
	return ret < 0 ? bad(r, "a function is truncated") : 0;
}

static int decode_location(struct reader *r, struct span s)
{
	struct pb_reader pr = { s.p, s.p + s.n };
	struct rlocation *l = PUSH(r, locs, nlocs, locs_cap);
	struct pb_field f;
	int ret;

	if (!l)
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	l->body = s;
	while ((ret = pb_next(&pr, &f)) > 0) {
		if (f.num == LOCATION_LINE) {
			if (want(r, &f, PB_LEN, "a location") < 0)
				return -EINVAL;
			continue;
		}
		if (f.num != LOCATION_ID && f.num != LOCATION_MAPPING_ID &&
		    f.num != LOCATION_ADDRESS)
			continue;
		if (want(r, &f, PB_VARINT, "a location") < 0)
			return -EINVAL;
		if (f.num == LOCATION_ID)
			l->id = f.u64;
		else if (f.num == LOCATION_MAPPING_ID)
			l->mapping = f.u64;
		else
			l->address = f.u64;
	}
	return ret < 0 ? bad(r, "a location is truncated") : 0;
}

/* Handles one field of the Profile message. */
static int profile_field(struct reader *r, const struct pb_field *f)
{
	struct span s = { f->data, f->len };
	uint64_t *scalar = NULL;
	struct span *sp;

	switch (f->num) {
	case PROFILE_SAMPLE_TYPE:
	case PROFILE_SAMPLE:
	case PROFILE_MAPPING:
	case PROFILE_LOCATION:
	case PROFILE_FUNCTION:
	case PROFILE_STRING_TABLE:
	case PROFILE_PERIOD_TYPE:
		if (want(r, f, PB_LEN, "the profile") < 0)
			return -EINVAL;
		break;
	case PROFILE_TIME_NANOS: scalar = &r->time_ns; break;
	case PROFILE_DURATION_NANOS: scalar = &r->duration_ns; break;
	case PROFILE_PERIOD: scalar = &r->period; break;
	case PROFILE_DEFAULT_SAMPLE_TYPE: scalar = &r->default_type; break;
	case PROFILE_HEARTH_DROPS: scalar = &r->drops; break;
	case PROFILE_HEARTH_ATTRS: scalar = &r->attrs; break;
	default: return 0;
	}
	if (scalar) {
		if (want(r, f, PB_VARINT, "the profile") < 0)
			return -EINVAL;
		*scalar = f->u64;
		return 0;
	}
	switch (f->num) {
	case PROFILE_MAPPING: return decode_mapping(r, s);
	case PROFILE_LOCATION: return decode_location(r, s);
	case PROFILE_FUNCTION: return decode_function(r, s);
	case PROFILE_PERIOD_TYPE: r->period_type = s; return 0;
	case PROFILE_SAMPLE_TYPE: sp = PUSH(r, types, ntypes, types_cap); break;
	case PROFILE_SAMPLE: sp = PUSH(r, samples, nsamples, samples_cap); break;
	default: sp = PUSH(r, strs, nstrs, strs_cap); break;
	}
	if (!sp)
		return -ENOMEM;
	*sp = s;
	return 0;
}

/* Reads a ValueType's type and unit string indices. */
static int value_type(struct reader *r, struct span s, int64_t *type,
		      int64_t *unit)
{
	struct pb_reader pr = { s.p, s.p + s.n };
	struct pb_field f;
	int ret;

	*type = *unit = 0;
	while ((ret = pb_next(&pr, &f)) > 0) {
		if (f.num != VALUE_TYPE_TYPE && f.num != VALUE_TYPE_UNIT)
			continue;
		if (want(r, &f, PB_VARINT, "a value type") < 0)
			return -EINVAL;
		*(f.num == VALUE_TYPE_TYPE ? type : unit) = (int64_t)f.u64;
	}
	if (ret < 0)
		return bad(r, "a value type is truncated");
	if (*type < 0 || (uint64_t)r->nstrs <= (uint64_t)*type || *unit < 0 ||
	    (uint64_t)r->nstrs <= (uint64_t)*unit)
		return bad(r, "a value type names a string outside the table");
	return 0;
}

/* Picks the sample type to read and sets the profile's unit and rate. */
static int choose_type(struct reader *r, struct prof_meta *m)
{
	int64_t type = 0, unit = 0, pt, pu;
	int ret;

	r->value_index = 0;
	for (size_t i = 0; i < r->ntypes; i++) {
		ret = value_type(r, r->types[i], &type, &unit);
		if (ret < 0)
			return ret;
		if (r->default_type && (uint64_t)type == r->default_type) {
			r->value_index = i;
			break;
		}
	}
	if (r->ntypes == 0)
		return 0;
	ret = value_type(r, r->types[r->value_index], &type, &unit);
	if (ret < 0)
		return ret;
	m->unit = PROF_UNIT_SAMPLES;
	if (str_is(r, unit, "nanoseconds")) {
		m->unit = PROF_UNIT_NANOSECONDS;
		m->off_cpu = str_is(r, type, "off_cpu");
	} else if (str_is(r, unit, "bytes")) {
		m->unit = PROF_UNIT_BYTES;
	}
	if (m->unit == PROF_UNIT_SAMPLES && r->period_type.p && r->period &&
	    r->period <= 1000000000ull) {
		ret = value_type(r, r->period_type, &pt, &pu);
		if (ret < 0)
			return ret;
		if (str_is(r, pu, "nanoseconds"))
			m->hz = (uint32_t)((1000000000ull + r->period / 2) /
					   r->period);
	}
	return 0;
}

static int cmp_mapping(const void *a, const void *b)
{
	uint64_t x = ((const struct rmapping *)a)->id;
	uint64_t y = ((const struct rmapping *)b)->id;

	return x < y ? -1 : y < x;
}

static int cmp_function(const void *a, const void *b)
{
	uint64_t x = ((const struct rfunction *)a)->id;
	uint64_t y = ((const struct rfunction *)b)->id;

	return x < y ? -1 : y < x;
}

static int cmp_location(const void *a, const void *b)
{
	uint64_t x = ((const struct rlocation *)a)->id;
	uint64_t y = ((const struct rlocation *)b)->id;

	return x < y ? -1 : y < x;
}

/* Binary search over an array sorted by a leading uint64_t id. */
static void *find_id(void *arr, size_t n, size_t size, uint64_t id)
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
			return bad(r, "a mapping names a string outside the table");
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
	const struct rfunction *fn = find_id(r->funcs, r->nfuncs,
					     sizeof(*r->funcs), fid);
	int ret;

	if (!fn)
		return bad(r, "a line refers to function %llu, which is not defined",
			   (unsigned long long)fid);
	if ((ret = str_get(r, fn->name, &fr->name)) < 0 ||
	    (ret = str_get(r, fn->file, &fr->file)) < 0)
		return ret;
	fr->line = 0 < line && line <= UINT32_MAX ? (uint32_t)line : 0;
	if (r->attrs) {
		fr->kind = fn->kind <= PROF_KIND_THREAD ? (uint8_t)fn->kind : 0;
		fr->cls = fn->cls < PROF_CLASS_COUNT ? (uint8_t)fn->cls : 0;
		fr->lang = fn->lang < PROF_LANG_COUNT ? (uint8_t)fn->lang : 0;
	} else if (i + 1 < n) {
		fr->kind = PROF_KIND_INLINE;
	} else if (kernel) {
		fr->kind = PROF_KIND_KERNEL;
	}
	return 0;
}

/* Appends one frame id to the resolved-frames array. */
static int push_frame(struct reader *r, const struct prof_frame *fr)
{
	uint32_t id = prof_frame_intern(r->p, fr);

	if (id == UINT32_MAX ||
	    grow_mem((void **)&r->lframes, &r->lframes_cap, r->lframes_len + 1,
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
			return bad(r, "a line is truncated");
	}
	return ret < 0 ? bad(r, "a location is truncated") : 0;
}

/* Resolves location @l into frames, outer caller first. */
static int resolve_location(struct reader *r, struct rlocation *l)
{
	const struct rmapping *m = NULL;
	struct prof_frame base = { 0 };
	size_t start = r->lframes_len;
	int ret, kernel = 0;

	if (l->mapping) {
		m = find_id(r->maps, r->nmaps, sizeof(*r->maps), l->mapping);
		if (!m)
			return bad(r, "a location refers to mapping %llu, which is not defined",
				   (unsigned long long)l->mapping);
		if ((ret = str_get(r, m->file, &base.module)) < 0)
			return ret;
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
		if (ret < 0 || (ret = push_frame(r, &fr)) < 0)
			return ret;
	}
	if (r->nlines == 0) {
		struct prof_frame fr = base;

		if (kernel)
			fr.kind = PROF_KIND_KERNEL;
		if ((ret = unnamed_frame(r, l, m, &fr)) < 0 ||
		    (ret = push_frame(r, &fr)) < 0)
			return ret;
	}
	if (UINT32_MAX < r->lframes_len - start)
		return bad(r, "a location has too many lines");
	l->frames_off = start;
	l->nframes = (uint32_t)(r->lframes_len - start);
	l->resolved = 1;
	return 0;
}

/* ---- samples ------------------------------------------------------------------ */

/* Appends @f to r->stack at position *@n. */
static int stack_push(struct reader *r, size_t *n, uint32_t f)
{
	if (MAX_DEPTH <= *n)
		return bad(r, "a sample's stack is deeper than %d frames",
			   MAX_DEPTH);
	if (grow_mem((void **)&r->stack, &r->stack_cap, *n + 1,
		     sizeof(*r->stack)) < 0)
		return -ENOMEM;
	r->stack[(*n)++] = f;
	return 0;
}

/* Adds the row frame of label string @str (kind @kind) to the stack. */
static int label_frame(struct reader *r, int64_t str, int kind, size_t *n)
{
	struct prof_frame fr = { .kind = (uint8_t)kind };
	uint32_t id;
	int ret = str_get(r, str, &fr.name);

	if (ret < 0)
		return ret;
	id = prof_frame_intern(r->p, &fr);
	if (id == UINT32_MAX)
		return -ENOMEM;
	return stack_push(r, n, id);
}

/* Reads varints of field @f (packed or single) into r->ids (appending) or,
 * for values, keeps the one at r->value_index in *@value and counts. */
static int sample_varints(struct reader *r, const struct pb_field *f,
			  int is_value, size_t *count, int64_t *value)
{
	const uint8_t *p = f->data, *end = NULL;
	uint64_t v = f->u64;

	if (f->wire != PB_LEN && f->wire != PB_VARINT)
		return bad(r, "field %u of a sample has the wrong wire type",
			   f->num);
	if (f->wire == PB_LEN)
		end = f->data + f->len;
	for (;;) {
		if (f->wire == PB_LEN) {
			if (p == end)
				return 0;
			if (pb_get_varint(&p, end, &v) < 0)
				return bad(r, "a sample's packed list is truncated");
		}
		if (is_value) {
			if (*count == r->value_index)
				*value = (int64_t)v;
		} else {
			if (grow_mem((void **)&r->ids, &r->ids_cap, *count + 1,
				     sizeof(*r->ids)) < 0)
				return -ENOMEM;
			r->ids[*count] = v;
		}
		(*count)++;
		if (f->wire == PB_VARINT)
			return 0;
	}
}

static int decode_sample(struct reader *r, struct span s)
{
	struct pb_reader pr = { s.p, s.p + s.n };
	int64_t value = 0, proc = -1, thread = -1;
	size_t nvalues = 0, n = 0;
	struct pb_field f;
	int ret;

	r->nids = 0;
	while ((ret = pb_next(&pr, &f)) > 0) {
		if (f.num == SAMPLE_LOCATION_ID) {
			ret = sample_varints(r, &f, 0, &r->nids, NULL);
		} else if (f.num == SAMPLE_VALUE) {
			ret = sample_varints(r, &f, 1, &nvalues, &value);
		} else if (f.num == SAMPLE_LABEL && f.wire == PB_LEN) {
			struct pb_reader lr = { f.data, f.data + f.len };
			struct pb_field g;
			int64_t key = -1, str = -1;

			while ((ret = pb_next(&lr, &g)) > 0) {
				if (g.wire != PB_VARINT)
					continue;
				if (g.num == LABEL_KEY)
					key = (int64_t)g.u64;
				else if (g.num == LABEL_STR)
					str = (int64_t)g.u64;
			}
			if (ret < 0)
				return bad(r, "a sample label is truncated");
			if (str_is(r, key, PPROF_LABEL_PROCESS))
				proc = str;
			else if (str_is(r, key, PPROF_LABEL_THREAD))
				thread = str;
		}
		if (ret < 0)
			return ret;
	}
	if (ret < 0)
		return bad(r, "a sample is truncated");
	if (nvalues != r->ntypes)
		return bad(r, "a sample has %zu values but the profile declares %zu sample types",
			   nvalues, r->ntypes);
	if (value <= 0)
		return 0;
	if ((0 <= proc && (ret = label_frame(r, proc, PROF_KIND_PROCESS, &n)) < 0) ||
	    (0 <= thread && (ret = label_frame(r, thread, PROF_KIND_THREAD, &n)) < 0))
		return ret;
	for (size_t i = r->nids; i-- > 0;) {
		struct rlocation *l = find_id(r->locs, r->nlocs, sizeof(*r->locs),
					      r->ids[i]);

		if (!l)
			return bad(r, "a sample refers to location %llu, which is not defined",
				   (unsigned long long)r->ids[i]);
		if (!l->resolved && (ret = resolve_location(r, l)) < 0)
			return ret;
		for (uint32_t k = 0; k < l->nframes; k++)
			if ((ret = stack_push(r, &n, r->lframes[l->frames_off + k])) < 0)
				return ret;
	}
	if (prof_add_stack(r->p, r->stack, n, (uint64_t)value) == UINT32_MAX)
		return -ENOMEM;
	return 0;
}

/* ---- the whole file --------------------------------------------------------------- */

/* Inflates gzip @buf into a malloc'd *@out of at most @max bytes. */
static int inflate_all(struct reader *r, const uint8_t *buf, size_t len,
		       size_t max, uint8_t **out, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = len * 4 < 4096 ? 4096 : len * 4, n = 0;
	uint8_t *o = NULL;
	int zr = Z_OK;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	while (zr != Z_STREAM_END) {
		if (n == cap || !o) {
			uint8_t *t;

			if (o)
				cap *= 2;
			if (max < cap)
				cap = max + 1;
			t = realloc(o, cap);
			if (!t) {
				zr = Z_MEM_ERROR;
				break;
			}
			o = t;
		}
		if (max < n) {
			inflateEnd(&z);
			free(o);
			return bad(r, "it is larger than %zu MiB when decompressed",
				   max >> 20);
		}
		z.avail_in = (uInt)(len - z.total_in < UINT32_MAX ? len - z.total_in : UINT32_MAX);
		z.next_out = o + n;
		z.avail_out = (uInt)(cap - n < UINT32_MAX ? cap - n : UINT32_MAX);
		zr = inflate(&z, Z_NO_FLUSH);
		n = z.total_out;
		if (zr == Z_BUF_ERROR && z.avail_out == 0)
			zr = Z_OK; /* only out of room; grow and go on */
		else if (zr != Z_OK && zr != Z_STREAM_END)
			break;
	}
	inflateEnd(&z);
	if (zr == Z_MEM_ERROR) {
		free(o);
		return -ENOMEM;
	}
	if (zr != Z_STREAM_END) {
		free(o);
		return bad(r, "the gzip stream is corrupt or truncated");
	}
	if (max < n) {
		free(o);
		return bad(r, "it is larger than %zu MiB when decompressed",
			   max >> 20);
	}
	*out = o;
	*outlen = n;
	return 0;
}

static int build(struct reader *r, const uint8_t *data, size_t len)
{
	struct pb_reader pr = { data, data + len };
	struct prof_meta *m = prof_meta(r->p);
	struct pb_field f;
	int ret;

	while ((ret = pb_next(&pr, &f)) > 0)
		if ((ret = profile_field(r, &f)) < 0)
			return ret;
	if (ret < 0)
		return bad(r, "the profile message is truncated");
	if (r->nstrs == 0 || r->strs[0].n != 0)
		return bad(r, "the string table does not start with the empty string");
	r->str_ids = malloc(r->nstrs * sizeof(*r->str_ids));
	if (!r->str_ids)
		return -ENOMEM;
	memset(r->str_ids, 0xff, r->nstrs * sizeof(*r->str_ids));
	r->str_ids[0] = 0;
	if (r->nmaps)
		qsort(r->maps, r->nmaps, sizeof(*r->maps), cmp_mapping);
	if (r->nfuncs)
		qsort(r->funcs, r->nfuncs, sizeof(*r->funcs), cmp_function);
	if (r->nlocs)
		qsort(r->locs, r->nlocs, sizeof(*r->locs), cmp_location);
	if ((ret = choose_type(r, m)) < 0)
		return ret;
	m->start_ns = r->time_ns;
	m->duration_ns = r->duration_ns;
	m->drops = r->drops;
	for (size_t i = 0; i < r->nsamples; i++)
		if ((ret = decode_sample(r, r->samples[i])) < 0)
			return ret;
	return 0;
}

static void reader_free(struct reader *r)
{
	free(r->strs);
	free(r->str_ids);
	free(r->types);
	free(r->samples);
	free(r->maps);
	free(r->funcs);
	free(r->locs);
	free(r->lframes);
	free(r->lines);
	free(r->stack);
	free(r->ids);
}

int prof_pprof_sniff(const void *buf, size_t len)
{
	const uint8_t *b = buf;

	if (2 <= len && b[0] == 0x1f && b[1] == 0x8b)
		return 1;
	/* Raw protobuf: the first key is a Profile field 1..14, length
	 * delimited or varint. */
	return 1 <= len && (b[0] >> 3) >= 1 && (b[0] >> 3) <= 14 &&
	       ((b[0] & 7) == PB_LEN || (b[0] & 7) == PB_VARINT);
}

int prof_pprof_decode(const void *buf, size_t len, size_t max_size,
		      struct prof_profile **out, char *err, size_t errlen)
{
	struct reader r = { .err = err, .errlen = errlen };
	const uint8_t *data = buf;
	uint8_t *plain = NULL;
	size_t plain_len = len;
	int ret;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (len == 0)
		return bad(&r, "the data is empty");
	if (2 <= len && data[0] == 0x1f && data[1] == 0x8b) {
		ret = inflate_all(&r, data, len, max_size, &plain, &plain_len);
		if (ret < 0)
			goto out;
		data = plain;
	} else if (max_size < len) {
		ret = bad(&r, "it is larger than %zu MiB", max_size >> 20);
		goto out;
	}
	ret = -ENOMEM;
	r.p = prof_new(PROF_UNIT_SAMPLES);
	if (!r.p)
		goto out;
	ret = build(&r, data, plain_len);
	if (ret == 0) {
		*out = r.p;
		r.p = NULL;
	}
out:
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory while reading pprof data");
	prof_free(r.p);
	reader_free(&r);
	free(plain);
	return ret;
}

int prof_pprof_read(const void *buf, size_t len, struct prof_profile **out,
		    char *err, size_t errlen)
{
	return prof_pprof_decode(buf, len, PROF_PPROF_MAX_SIZE, out, err,
				 errlen);
}
