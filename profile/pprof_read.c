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
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gzip.h"
#include "pprof_fields.h"
#include "pprof_reader.h"
#include "protobuf.h"

int pr_bad(struct reader *r, const char *fmt, ...)
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

/* ---- strings --------------------------------------------------------------- */

/* Resolves pprof string index @idx to a profile string id in *@out. */
int pr_str_get(struct reader *r, int64_t idx, uint32_t *out)
{
	if (idx < 0 || (uint64_t)r->nstrs <= (uint64_t)idx)
		return pr_bad(r, "string index %lld is outside the string table",
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

int pr_str_is(const struct reader *r, int64_t idx, const char *s)
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
		return pr_bad(r, "field %u of %s has the wrong wire type", f->num,
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
		if (MAPPING_ID <= f.num && f.num <= MAPPING_BUILD_ID &&
		    want(r, &f, PB_VARINT, "a mapping") < 0)
			return -EINVAL;
		if (f.num == MAPPING_ID)
			m->id = f.u64;
		else if (f.num == MAPPING_MEMORY_START)
			m->start = f.u64;
		else if (f.num == MAPPING_MEMORY_LIMIT)
			m->limit = f.u64;
		else if (f.num == MAPPING_FILE_OFFSET)
			m->offset = f.u64;
		else if (f.num == MAPPING_FILENAME)
			m->file = (int64_t)f.u64;
		else if (f.num == MAPPING_BUILD_ID)
			m->build_id = (int64_t)f.u64;
	}
	return ret < 0 ? pr_bad(r, "a mapping is truncated") : 0;
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
	return ret < 0 ? pr_bad(r, "a function is truncated") : 0;
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
	return ret < 0 ? pr_bad(r, "a location is truncated") : 0;
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
		return pr_bad(r, "a value type is truncated");
	if (*type < 0 || (uint64_t)r->nstrs <= (uint64_t)*type || *unit < 0 ||
	    (uint64_t)r->nstrs <= (uint64_t)*unit)
		return pr_bad(r, "a value type names a string outside the table");
	return 0;
}

/* Says that the sample type asked for is not there, and which are.
 * Returns -EINVAL. */
static int no_such_type(struct reader *r)
{
	size_t n;
	int64_t type, unit;

	if (!r->err || !r->errlen)
		return -EINVAL;
	n = (size_t)snprintf(r->err, r->errlen, "the profile has no sample type named \"%.64s\"; it has",
			     r->want_type);
	for (size_t i = 0; i < r->ntypes && n < r->errlen; i++) {
		if (value_type(r, r->types[i], &type, &unit) < 0)
			break;
		n += (size_t)snprintf(r->err + n, r->errlen - n, "%s %.*s", i ? "," : "",
				      (int)r->strs[type].n, (const char *)r->strs[type].p);
	}
	if (!r->ntypes && n < r->errlen)
		snprintf(r->err + n, r->errlen - n, " none");
	return -EINVAL;
}

/* Copies string @id (checked to be in the table) into @out (@n bytes)
 * when it fits and holds no NUL. Returns whether it did. */
static bool copy_str(const struct reader *r, int64_t id, char *out, size_t n)
{
	const struct span *s = &r->strs[id];

	if (s->n >= n || memchr(s->p, '\0', s->n))
		return false;
	memcpy(out, s->p, s->n);
	out[s->n] = '\0';
	return true;
}

/* Keeps the name of the sample type read in @m when it is none of the
 * names hearth writes itself, so the profile says what it holds
 * ("inuse_space") and is written back under that name. */
static void keep_type_name(const struct reader *r, int64_t type, struct prof_meta *m)
{
	static const char *const own[] = { "samples", "cpu", "off_cpu", "space", "wall",
					   "threads", "lock_wait" };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (pr_str_is(r, type, own[i]))
			return;
	copy_str(r, type, m->sample_type, sizeof(m->sample_type));
}

/* Keeps a period that is not a sampling rate (a Go heap profile's
 * space/bytes), to write back as read. */
static int keep_period(struct reader *r, struct prof_meta *m)
{
	int64_t pt, pu;
	int ret;

	if (!r->period_type.p || !r->period)
		return 0;
	if ((ret = value_type(r, r->period_type, &pt, &pu)) < 0)
		return ret;
	if (!copy_str(r, pt, m->period_type, sizeof(m->period_type)) ||
	    !copy_str(r, pu, m->period_unit, sizeof(m->period_unit))) {
		m->period_type[0] = m->period_unit[0] = '\0';
		return 0;
	}
	m->period = r->period;
	return 0;
}

/* Picks the sample type to read into r->value_index: the one named
 * r->want_type if given, else default_sample_type, else samples/count when
 * the profile has a period in nanoseconds (a CPU profile: counts and rate
 * known), else the last one, as pprof does. */
static int pick_type(struct reader *r)
{
	int64_t type, unit, pt, pu;
	int ret, cpu = 0;

	if (r->period_type.p && r->period) {
		if ((ret = value_type(r, r->period_type, &pt, &pu)) < 0)
			return ret;
		cpu = pr_str_is(r, pu, "nanoseconds");
	}
	r->value_index = r->ntypes - 1;
	if (r->want_index && r->want_index <= r->ntypes) {
		r->value_index = r->want_index - 1;
		return 0;
	}
	for (size_t i = r->ntypes; i-- > 0;) {
		if ((ret = value_type(r, r->types[i], &type, &unit)) < 0)
			return ret;
		if (r->want_type) {
			if (pr_str_is(r, type, r->want_type)) {
				r->value_index = i;
				return 0;
			}
		} else if ((r->default_type && (uint64_t)type == r->default_type) ||
			   (cpu && !r->default_type && pr_str_is(r, type, "samples") &&
			    pr_str_is(r, unit, "count"))) {
			r->value_index = i;
			return 0;
		}
	}
	if (r->want_type)
		return no_such_type(r);
	return 0;
}

/* Picks the sample type to read and sets the profile's unit and rate. */
static int choose_type(struct reader *r, struct prof_meta *m)
{
	int64_t type = 0, unit = 0;
	int ret;

	if (r->ntypes == 0 && !r->want_type)
		return 0;
	if ((ret = pick_type(r)) < 0 ||
	    (ret = value_type(r, r->types[r->value_index], &type, &unit)) < 0)
		return ret;
	m->unit = PROF_UNIT_SAMPLES;
	keep_type_name(r, type, m);
	if (pr_str_is(r, unit, "nanoseconds")) {
		m->unit = PROF_UNIT_NANOSECONDS;
		m->off_cpu = pr_str_is(r, type, "off_cpu") || pr_str_is(r, type, "lock_wait");
		m->question = pr_str_is(r, type, "wall") ? PROF_Q_WALL :
			      pr_str_is(r, type, "threads") ? PROF_Q_THREADS :
			      pr_str_is(r, type, "lock_wait") ? PROF_Q_LOCKS : PROF_Q_USUAL;
	} else if (pr_str_is(r, unit, "bytes")) {
		m->unit = PROF_UNIT_BYTES;
		m->question = pr_str_is(r, type, "alloc_space") ? PROF_Q_ALLOC :
			      pr_str_is(r, type, "inuse_space") ? PROF_Q_HELD : PROF_Q_USUAL;
	} else if (pr_str_is(r, type, "growth_requests")) {
		m->question = PROF_Q_GROWTH;
	}
	if (m->unit == PROF_UNIT_SAMPLES && r->period_type.p && r->period &&
	    r->period <= 1000000000ull) {
		int64_t pt, pu;

		if ((ret = value_type(r, r->period_type, &pt, &pu)) < 0)
			return ret;
		if (pr_str_is(r, pu, "nanoseconds"))
			m->hz = (uint32_t)((1000000000ull + r->period / 2) /
					   r->period);
	}
	return m->hz ? 0 : keep_period(r, m);
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

/* ---- samples ------------------------------------------------------------------ */

/* Appends @f to r->stack at position *@n. */
static int stack_push(struct reader *r, size_t *n, uint32_t f)
{
	if (MAX_DEPTH <= *n)
		return pr_bad(r, "a sample's stack is deeper than %d frames",
			   MAX_DEPTH);
	if (prof_grow_size((void **)&r->stack, &r->stack_cap, *n + 1,
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
	int ret = pr_str_get(r, str, &fr.name);

	if (ret < 0)
		return ret;
	id = prof_frame_intern(r->p, &fr);
	if (id == UINT32_MAX)
		return -ENOMEM;
	return stack_push(r, n, id);
}

/* Adds the rows of the sample's numeric labels (PROF_KIND_LABEL). */
static int num_label_frames(struct reader *r, size_t *n)
{
	for (size_t i = 0; i < r->nnums; i++) {
		struct prof_frame fr = { .kind = PROF_KIND_LABEL };
		char v[24];
		uint32_t id;
		int ret;

		snprintf(v, sizeof(v), "%llu", (unsigned long long)r->nums[i].num);
		if ((ret = pr_str_get(r, r->nums[i].key, &fr.name)) < 0 ||
		    (ret = pr_str_get(r, r->nums[i].unit, &fr.module)) < 0)
			return ret;
		fr.file = prof_intern_cstr(r->p, v);
		if (fr.file == UINT32_MAX || (id = prof_frame_intern(r->p, &fr)) == UINT32_MAX)
			return -ENOMEM;
		if ((ret = stack_push(r, n, id)) < 0)
			return ret;
	}
	return 0;
}

/* Reads varints of field @f (packed or single) into r->ids (appending) or,
 * for values, keeps the one at r->value_index in *@value and counts. */
static int sample_varints(struct reader *r, const struct pb_field *f,
			  int is_value, size_t *count, int64_t *value)
{
	const uint8_t *p = f->data, *end = NULL;
	uint64_t v = f->u64;

	if (f->wire != PB_LEN && f->wire != PB_VARINT)
		return pr_bad(r, "field %u of a sample has the wrong wire type",
			   f->num);
	if (f->wire == PB_LEN)
		end = f->data + f->len;
	for (;;) {
		if (f->wire == PB_LEN) {
			if (p == end)
				return 0;
			if (pb_get_varint(&p, end, &v) < 0)
				return pr_bad(r, "a sample's packed list is truncated");
		}
		if (is_value) {
			if (*count == r->value_index)
				*value = (int64_t)v;
		} else {
			if (prof_grow_size((void **)&r->ids, &r->ids_cap, *count + 1,
				     sizeof(*r->ids)) < 0)
				return -ENOMEM;
			r->ids[*count] = v;
		}
		(*count)++;
		if (f->wire == PB_VARINT)
			return 0;
	}
}

/* Reads one Label; keeps the string of a "process" or "thread" label. */
static int sample_label(struct reader *r, const struct pb_field *f,
			int64_t *proc, int64_t *thread)
{
	struct pb_reader lr = { f->data, f->data + f->len };
	struct pb_field g;
	int64_t key = -1, str = -1, unit = 0;
	uint64_t num = 0;
	int ret, has_num = 0;

	while ((ret = pb_next(&lr, &g)) > 0) {
		if (g.wire != PB_VARINT)
			continue;
		if (g.num == LABEL_KEY)
			key = (int64_t)g.u64;
		else if (g.num == LABEL_STR)
			str = (int64_t)g.u64;
		else if (g.num == LABEL_NUM)
			num = g.u64, has_num = 1;
		else if (g.num == LABEL_NUM_UNIT)
			unit = (int64_t)g.u64;
	}
	if (ret < 0)
		return pr_bad(r, "a sample label is truncated");
	if (r->keep_labels && has_num && str <= 0 && 0 < key && r->nnums < PR_NUM_LABELS_MAX)
		r->nums[r->nnums++] = (struct pr_num_label){ key, unit, num };
	else if (pr_str_is(r, key, PPROF_LABEL_PROCESS))
		*proc = str;
	else if (pr_str_is(r, key, PPROF_LABEL_THREAD))
		*thread = str;
	return 0;
}

static int decode_sample(struct reader *r, struct span s)
{
	struct pb_reader pr = { s.p, s.p + s.n };
	int64_t value = 0, proc = -1, thread = -1;
	size_t nvalues = 0, n = 0;
	struct pb_field f;
	int ret;

	r->nids = 0;
	r->nnums = 0;
	while ((ret = pb_next(&pr, &f)) > 0) {
		if (f.num == SAMPLE_LOCATION_ID) {
			ret = sample_varints(r, &f, 0, &r->nids, NULL);
		} else if (f.num == SAMPLE_VALUE) {
			ret = sample_varints(r, &f, 1, &nvalues, &value);
		} else if (f.num == SAMPLE_LABEL && f.wire == PB_LEN) {
			ret = sample_label(r, &f, &proc, &thread);
		}
		if (ret < 0)
			return ret;
	}
	if (ret < 0)
		return pr_bad(r, "a sample is truncated");
	if (nvalues != r->ntypes)
		return pr_bad(r, "a sample has %zu values but the profile declares %zu sample types",
			   nvalues, r->ntypes);
	r->negative += value < 0;
	if (value <= 0)
		return 0;
	if ((0 <= proc && (ret = label_frame(r, proc, PROF_KIND_PROCESS, &n)) < 0) ||
	    (0 <= thread && (ret = label_frame(r, thread, PROF_KIND_THREAD, &n)) < 0) ||
	    (ret = num_label_frames(r, &n)) < 0)
		return ret;
	for (size_t i = r->nids; i-- > 0;) {
		struct rlocation *l = pr_find_id(r->locs, r->nlocs, sizeof(*r->locs),
					      r->ids[i]);

		if (!l)
			return pr_bad(r, "a sample refers to location %llu, which is not defined",
				   (unsigned long long)r->ids[i]);
		if (!l->resolved && (ret = pr_resolve_location(r, l)) < 0)
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
		return pr_bad(r, "the profile message is truncated");
	if (r->nstrs == 0 || r->strs[0].n != 0)
		return pr_bad(r, "the string table does not start with the empty string");
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
	m->negative = r->negative;
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
	struct pb_reader pr = { b, b + len };
	struct pb_field f;
	int ret = 0, n = 0;

	if (2 <= len && b[0] == 0x1f && b[1] == 0x8b)
		return 1;
	if (len == 0)
		return 0;
	/* Raw protobuf: the first fields parse, and each is a Profile field
	 * with its own wire type (text rarely manages even one). */
	while (n < 16 && (ret = pb_next(&pr, &f)) > 0) {
		enum pb_wire want_wire = PB_VARINT;

		if (f.num <= PROFILE_STRING_TABLE || f.num == PROFILE_PERIOD_TYPE)
			want_wire = PB_LEN;
		else if (PROFILE_DEFAULT_SAMPLE_TYPE + 1 < f.num &&
			 f.num != PROFILE_HEARTH_DROPS &&
			 f.num != PROFILE_HEARTH_ATTRS)
			return 0;
		if (f.wire != want_wire)
			return 0;
		n++;
	}
	return 0 <= ret && 0 < n;
}

int prof_pprof_decode(const void *buf, size_t len, size_t max_size,
		      struct prof_profile **out, char *err, size_t errlen)
{
	return prof_pprof_decode_type(buf, len, max_size, NULL, out, err,
				      errlen);
}

/* What a decode found out of the file besides the profile. */
struct decoded {
	size_t ntypes;  /* sample types in the file */
	size_t read;    /* the one read */
	size_t shown;   /* the one pprof shows: default_sample_type, else
			 * the last */
	int whole;      /* the profile read gives back every type: there is
			 * one, or hearth's samples and cpu time */
};

/* The index of the type pprof shows by default in @r. */
static size_t shown_type(const struct reader *r)
{
	int64_t type, unit;

	for (size_t i = 0; r->default_type && i < r->ntypes; i++)
		if (value_type((struct reader *)r, r->types[i], &type, &unit) == 0 &&
		    (uint64_t)type == r->default_type)
			return i;
	return r->ntypes ? r->ntypes - 1 : 0;
}

/* Decodes raw (inflated) protobuf @data[0..len) reading sample type
 * @want_type (NULL = the default) or, when non-zero, the one at index
 * @want_index - 1; fills @d (may be NULL). */
static int decode_raw(const uint8_t *data, size_t len, const char *want_type,
		      size_t want_index, int keep_labels, struct prof_profile **out,
		      struct decoded *d, char *err, size_t errlen)
{
	struct reader r = { .err = err, .errlen = errlen, .want_type = want_type,
			    .want_index = want_index, .keep_labels = keep_labels };
	int ret = -ENOMEM;

	r.p = prof_new(PROF_UNIT_SAMPLES);
	if (r.p)
		ret = build(&r, data, len);
	if (ret == 0 && d) {
		const struct prof_meta *m = prof_meta_const(r.p);

		*d = (struct decoded){ r.ntypes, r.value_index, shown_type(&r),
				       r.ntypes <= 1 || (r.ntypes == 2 && m->hz &&
				       m->unit == PROF_UNIT_SAMPLES && !m->sample_type[0]) };
	}
	if (ret == 0) {
		*out = r.p;
		r.p = NULL;
	}
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "out of memory while reading pprof data");
	prof_free(r.p);
	reader_free(&r);
	return ret;
}

/* Sets *@data / *@len to the protobuf of @buf[0..len), inflated into
 * *@plain (to free) when gzip'd. 0 or -EINVAL / -ENOMEM with a sentence. */
static int raw_bytes(const void *buf, size_t len, size_t max_size, const uint8_t **data,
		     size_t *plain_len, uint8_t **plain, char *err, size_t errlen)
{
	struct reader r = { .err = err, .errlen = errlen };
	int ret;

	*data = buf;
	*plain = NULL;
	*plain_len = len;
	if (err && errlen)
		err[0] = '\0';
	if (len == 0)
		return pr_bad(&r, "the data is empty");
	if (2 <= len && (*data)[0] == 0x1f && (*data)[1] == 0x8b) {
		ret = gz_inflate(*data, len, max_size, plain, plain_len);
		if (ret == -EFBIG)
			return pr_bad(&r, "it is larger than %zu MiB when decompressed",
				      max_size >> 20);
		if (ret == -EINVAL)
			return pr_bad(&r, "the gzip stream is corrupt or truncated");
		if (ret == -ENOMEM && err && errlen)
			snprintf(err, errlen, "out of memory while reading pprof data");
		if (ret < 0)
			return ret;
		*data = *plain;
	} else if (max_size < len) {
		return pr_bad(&r, "it is larger than %zu MiB", max_size >> 20);
	}
	return 0;
}

int prof_pprof_decode_type(const void *buf, size_t len, size_t max_size,
			   const char *sample_type, struct prof_profile **out,
			   char *err, size_t errlen)
{
	const uint8_t *data;
	uint8_t *plain;
	size_t plain_len;
	int ret;

	*out = NULL;
	ret = raw_bytes(buf, len, max_size, &data, &plain_len, &plain, err, errlen);
	if (ret == 0)
		ret = decode_raw(data, plain_len, sample_type, 0, 0, out, NULL, err, errlen);
	free(plain);
	return ret;
}

int prof_pprof_decode_all(const void *buf, size_t len, size_t max_size,
			  struct prof_profile **out, size_t *n, size_t *shown,
			  char *err, size_t errlen)
{
	const uint8_t *data;
	uint8_t *plain;
	size_t plain_len;
	struct decoded d = { 0 };
	struct prof_profile *first = NULL;
	int ret;

	*n = *shown = 0;
	ret = raw_bytes(buf, len, max_size, &data, &plain_len, &plain, err, errlen);
	if (ret == 0)
		ret = decode_raw(data, plain_len, NULL, 0, 1, &first, &d, err, errlen);
	if (ret == 0 && !d.whole && PROF_PPROF_MAX_TYPES < d.ntypes) {
		snprintf(err, errlen, "the profile has %zu sample types; hearth keeps at most %d "
			 "(--sample-type picks one)", d.ntypes, PROF_PPROF_MAX_TYPES);
		ret = -EINVAL;
	}
	if (ret == 0 && d.whole) {
		out[(*n)++] = first;
		first = NULL;
	}
	for (size_t i = 0; ret == 0 && !d.whole && i < d.ntypes; i++) {
		if (i == d.read) {
			out[i] = first;
			first = NULL;
		} else {
			ret = decode_raw(data, plain_len, NULL, i + 1, 1, &out[i], NULL, err, errlen);
		}
		*n += ret == 0;
	}
	if (ret == 0)
		*shown = d.whole ? 0 : d.shown;
	for (size_t i = 0; ret < 0 && i < *n; i++)
		prof_free(out[i]);
	if (ret < 0)
		*n = 0;
	prof_free(first);
	free(plain);
	return ret;
}

int prof_pprof_read(const void *buf, size_t len, struct prof_profile **out,
		    char *err, size_t errlen)
{
	return prof_pprof_decode(buf, len, PROF_PPROF_MAX_SIZE, out, err,
				 errlen);
}
