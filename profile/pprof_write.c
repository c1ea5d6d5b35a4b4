/* SPDX-License-Identifier: MIT */
/*
 * Writing pprof: the call tree becomes samples (one per node with self >
 * 0), locations deduplicated by their frame sequence, one function per
 * frame, one mapping per module. The profile's string table is reused as
 * pprof's (both keep "" at 0); the few extra names follow it.
 */
#include "pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gzip.h"
#include "pprof_fields.h"
#include "profile_impl.h"
#include "protobuf.h"

enum extra_str {
	XS_SAMPLES,
	XS_COUNT,
	XS_CPU,
	XS_NANOSECONDS,
	XS_OFF_CPU,
	XS_SPACE,
	XS_BYTES,
	XS_PROCESS,
	XS_THREAD,
	XS_WALL,
	XS_THREADS,
	XS_LOCK_WAIT,
	XS_ALLOC_SPACE,
	XS_ALLOC_OBJECTS,
	XS_INUSE_SPACE,
	XS_INUSE_OBJECTS,
	XS_GROWTH_REQUESTS,
	XS_GROWTH_SPACE,
	XS_KEPT,     /* the sample type name the profile was read with */
	XS_PERIOD_TYPE, /* and its period's type and unit (prof_meta) */
	XS_PERIOD_UNIT,
	XS_COUNT_ALL
};

static const char *const extra_names[XS_COUNT_ALL] = {
	"samples", "count", "cpu", "nanoseconds", "off_cpu",
	"space", "bytes", PPROF_LABEL_PROCESS, PPROF_LABEL_THREAD,
	"wall", "threads", "lock_wait", "alloc_space", "alloc_objects",
	"inuse_space", "inuse_objects", "growth_requests", "growth_space", NULL, NULL, NULL,
};

/* Extra string @k: a fixed name, or one the profile @m was read with. */
static const char *extra_str(const struct prof_meta *m, int k)
{
	switch (k) {
	case XS_KEPT: return m->sample_type;
	case XS_PERIOD_TYPE: return m->period_type;
	case XS_PERIOD_UNIT: return m->period_unit;
	default: return extra_names[k];
	}
}

/* The sample type of a profile in nanoseconds, by its question. */
static int ns_type(const struct prof_meta *m)
{
	switch (m->question) {
	case PROF_Q_WALL: return XS_WALL;
	case PROF_Q_THREADS: return XS_THREADS;
	case PROF_Q_LOCKS: return XS_LOCK_WAIT;
	default: return m->off_cpu ? XS_OFF_CPU : XS_CPU;
	}
}

/* The sample types of a question of memory, each a (type, unit) pair:
 * the profile's own values, and the second ones written beside them. 0
 * when @m asks none. */
struct mem_types {
	int type, unit, type2, unit2;
};

static int mem_types(const struct prof_meta *m, struct mem_types *t)
{
	switch (m->question) {
	case PROF_Q_ALLOC:
		*t = (struct mem_types){ XS_ALLOC_SPACE, XS_BYTES, XS_ALLOC_OBJECTS, XS_COUNT };
		return 1;
	case PROF_Q_HELD:
		*t = (struct mem_types){ XS_INUSE_SPACE, XS_BYTES, XS_INUSE_OBJECTS, XS_COUNT };
		return 1;
	case PROF_Q_GROWTH:
		*t = (struct mem_types){ XS_GROWTH_REQUESTS, XS_COUNT, XS_GROWTH_SPACE, XS_BYTES };
		return 1;
	default:
		return 0;
	}
}

/* Sample types written beside each other, at most. */
#define MAX_COLUMNS PROF_PPROF_MAX_TYPES

/* One value of each sample: a sample type and where its values are. */
struct column {
	struct prof_profile *p; /* the values at the same stacks (frames
				 * compared by their fields); NULL: the
				 * walked profile's own */
	uint32_t *of;           /* walked frame id -> p's frame id */
	uint32_t type, unit;    /* extra string indexes */
};

/* A Mapping written: a profile's mapping (@placed) or a module name. */
struct out_mapping {
	uint32_t id;  /* profile mapping id, or module string id */
	int placed;
};

struct writer {
	const struct prof_profile *p;
	/* The values of a sample, one per column; none: the walked
	 * profile's own, with its time in a second value when two_values. */
	struct column cols[MAX_COLUMNS];
	size_t ncols;
	/* Names of the columns' types kept from the files they were read
	 * from: extra string XS_COUNT_ALL + k. */
	const char *names[MAX_COLUMNS];
	size_t nnames;
	size_t dflt_col; /* default_sample_type's column + 1, 0 = none */
	uint32_t nstr; /* pprof index of extra string k is nstr + k */
	int two_values;
	uint64_t period;
	struct pb_buf samples, locations, msg, line, labels, scratch;

	/* Locations, deduplicated by frame sequence. */
	uint32_t *seq;       /* all locations' frames, concatenated */
	size_t seq_len, seq_cap;
	size_t *loc_off;     /* per location id - 1 */
	uint32_t *loc_n;
	uint32_t nlocs, loc_cap;
	uint32_t *slots;     /* hash of sequences -> location id */
	uint32_t slot_cap;

	/* Mappings: a module's name for frames without a place, else the
	 * profile's mapping of the place. */
	uint32_t *mapping_of; /* module string id -> mapping id */
	uint32_t *placed_of;  /* profile mapping id -> mapping id */
	struct out_mapping *mappings; /* mapping id - 1 -> what it is */
	uint32_t nmappings;
	uint8_t *frame_used;
	uint64_t *ids; /* one sample's location ids */
	size_t ids_cap;
};

static uint64_t seq_hash(const uint32_t *f, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static int slots_grow(struct writer *w)
{
	uint32_t cap = w->slot_cap ? w->slot_cap * 2 : 256;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s || cap < w->slot_cap)
		return free(s), -ENOMEM;
	for (uint32_t id = 1; id <= w->nlocs; id++) {
		uint64_t j = seq_hash(w->seq + w->loc_off[id - 1],
				      w->loc_n[id - 1]) & (cap - 1);

		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = id;
	}
	free(w->slots);
	w->slots = s;
	w->slot_cap = cap;
	return 0;
}

/* Appends a Mapping for @id (@placed: a profile mapping, else a module
 * string) to the ones written; its pprof id, UINT32_MAX on ENOMEM. */
static uint32_t mapping_add(struct writer *w, uint32_t id, int placed)
{
	struct out_mapping *m = realloc(w->mappings,
					(w->nmappings + 1) * sizeof(*m));

	if (!m)
		return UINT32_MAX;
	w->mappings = m;
	m[w->nmappings++] = (struct out_mapping){ id, placed };
	return w->nmappings;
}

/* Returns the mapping id for module string @mod (creating it), 0 for no
 * module, or UINT32_MAX when out of memory. */
static uint32_t mapping_for(struct writer *w, uint32_t mod)
{
	if (!mod)
		return 0;
	if (!w->mapping_of[mod])
		w->mapping_of[mod] = mapping_add(w, mod, 0);
	return w->mapping_of[mod];
}

/* The place a Location of frames @f[0..n) (outer frame first) is written
 * at: its innermost frame's, when the outer frame was seen at the same
 * address (the address then holds this very chain), else the outer
 * frame's (its function, whatever was inlined there). The mapping id
 * goes to *@map: the place's, else the outer frame's module's (then the
 * address is 0). UINT32_MAX in *@map when out of memory. */
static uint64_t location_place(struct writer *w, const uint32_t *f, size_t n,
			       uint32_t *map)
{
	uint32_t pm, inner_pm;
	uint64_t addr = prof_frame_addr(w->p, f[0], &pm);
	uint64_t inner = prof_frame_addr(w->p, f[n - 1], &inner_pm);

	if (inner_pm && inner == addr && inner_pm == pm)
		addr = inner;
	if (!pm) {
		*map = mapping_for(w, prof_frame_get(w->p, f[0])->module);
		return 0;
	}
	if (!w->placed_of[pm])
		w->placed_of[pm] = mapping_add(w, pm, 1);
	*map = w->placed_of[pm];
	return addr;
}

/* Encodes Location @id for frames @f[0..n) (outer frame first). */
static int encode_location(struct writer *w, uint32_t id, const uint32_t *f,
			   size_t n)
{
	uint32_t map;
	uint64_t addr = location_place(w, f, n, &map);

	if (map == UINT32_MAX)
		return -ENOMEM;
	pb_reset(&w->msg);
	pb_put_uint(&w->msg, LOCATION_ID, id);
	pb_put_uint(&w->msg, LOCATION_MAPPING_ID, map);
	pb_put_uint(&w->msg, LOCATION_ADDRESS, addr);
	for (size_t i = n; i-- > 0;) {
		pb_reset(&w->line);
		pb_put_uint(&w->line, LINE_FUNCTION_ID, f[i]);
		pb_put_uint(&w->line, LINE_LINE,
			    prof_frame_get(w->p, f[i])->line);
		pb_put_bytes(&w->msg, LOCATION_LINE, w->line.data, w->line.len);
		w->frame_used[f[i]] = 1;
	}
	pb_put_bytes(&w->locations, PROFILE_LOCATION, w->msg.data, w->msg.len);
	return w->msg.oom || w->line.oom ? -ENOMEM : 0;
}

/* Returns the location id of frames @f[0..n), creating it; 0 on ENOMEM. */
static uint32_t location_for(struct writer *w, const uint32_t *f, size_t n)
{
	uint64_t h = seq_hash(f, n), j;
	uint32_t id;

	if (w->slot_cap < (w->nlocs + 1) * 2 && slots_grow(w) < 0)
		return 0;
	for (j = h & (w->slot_cap - 1); (id = w->slots[j]) != 0;
	     j = (j + 1) & (w->slot_cap - 1)) {
		if (w->loc_n[id - 1] == n &&
		    memcmp(w->seq + w->loc_off[id - 1], f, n * sizeof(*f)) == 0)
			return id;
	}
	if (w->nlocs == w->loc_cap) {
		size_t c1 = w->loc_cap, c2 = w->loc_cap;

		if (prof_grow_size((void **)&w->loc_off, &c1, w->nlocs + 1,
			     sizeof(*w->loc_off)) < 0 ||
		    prof_grow_size((void **)&w->loc_n, &c2, w->nlocs + 1,
			     sizeof(*w->loc_n)) < 0 || UINT32_MAX < c1)
			return 0;
		w->loc_cap = (uint32_t)(c1 < c2 ? c1 : c2);
	}
	if (prof_grow_size((void **)&w->seq, &w->seq_cap, w->seq_len + n,
		     sizeof(*w->seq)) < 0)
		return 0;
	memcpy(w->seq + w->seq_len, f, n * sizeof(*f));
	w->loc_off[w->nlocs] = w->seq_len;
	w->loc_n[w->nlocs] = (uint32_t)n;
	w->seq_len += n;
	id = ++w->nlocs;
	w->slots[j] = id;
	if (encode_location(w, id, f, n) < 0)
		return 0;
	return id;
}

/* A process or thread row that carries nothing but its name. */
static int label_row(const struct prof_frame *f, int kind)
{
	return f->kind == kind && f->name && !f->module && !f->file && !f->line &&
	       !f->cls && !f->lang;
}

static void put_label(struct writer *w, uint32_t key, uint32_t str)
{
	pb_reset(&w->line);
	pb_put_uint(&w->line, LABEL_KEY, key);
	pb_put_uint(&w->line, LABEL_STR, str);
	pb_put_bytes(&w->labels, SAMPLE_LABEL, w->line.data, w->line.len);
}

/* A numeric label row (PROF_KIND_LABEL) as the Label it was read from. */
static void put_num_label(struct writer *w, const struct prof_frame *f)
{
	pb_reset(&w->line);
	pb_put_uint(&w->line, LABEL_KEY, f->name);
	pb_put_uint(&w->line, LABEL_NUM, strtoull(prof_str(w->p, f->file), NULL, 10));
	if (f->module)
		pb_put_uint(&w->line, LABEL_NUM_UNIT, f->module);
	pb_put_bytes(&w->labels, SAMPLE_LABEL, w->line.data, w->line.len);
}

/* Column @c's self value at the stack @frames[0..n) of the walked
 * profile; 0 where it has none. */
static uint64_t col_value(const struct column *c, const uint32_t *frames, size_t n)
{
	uint32_t node = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t f = c->of[frames[i]];

		if (!f || !(node = prof_child_find(c->p, node, f)))
			return 0;
	}
	return n ? prof_node_get(c->p, node)->self : 0;
}

/* @v as pprof's int64. */
static uint64_t int64_value(uint64_t v)
{
	return (uint64_t)INT64_MAX < v ? (uint64_t)INT64_MAX : v;
}

static int add_sample(const struct prof_profile *p, const uint32_t *frames,
		      size_t n, uint64_t value, void *arg)
{
	struct writer *w = arg;
	size_t i = 0, nids = 0, nvals = w->two_values ? 2 : 1;
	uint64_t vals[MAX_COLUMNS];

	if (value == 0)
		return 0;
	if (prof_grow_size((void **)&w->ids, &w->ids_cap, n + 1, sizeof(*w->ids)) < 0)
		return -ENOMEM;
	pb_reset(&w->labels);
	/* The rows become labels only when a frame follows them: pprof's
	 * readers drop a sample without a location, so a stack that is only
	 * its process (and thread) row keeps the rows as its locations. */
	if (i < n && label_row(prof_frame_get(p, frames[i]), PROF_KIND_PROCESS))
		i++;
	if (i < n && label_row(prof_frame_get(p, frames[i]), PROF_KIND_THREAD))
		i++;
	while (i < n && prof_frame_get(p, frames[i])->kind == PROF_KIND_LABEL)
		i++;
	if (i == n)
		i = 0;
	for (size_t r = 0; r < i; r++) {
		const struct prof_frame *f = prof_frame_get(p, frames[r]);

		if (f->kind == PROF_KIND_LABEL)
			put_num_label(w, f);
		else
			put_label(w, w->nstr + (f->kind == PROF_KIND_PROCESS ? XS_PROCESS : XS_THREAD),
				  f->name);
	}
	while (i < n) {
		const struct prof_frame *outer = prof_frame_get(p, frames[i]);
		size_t j = i + 1;
		uint32_t id;

		while (j < n) {
			const struct prof_frame *f = prof_frame_get(p, frames[j]);

			if (f->kind != PROF_KIND_INLINE || f->module != outer->module)
				break;
			j++;
		}
		id = location_for(w, frames + i, j - i);
		if (!id)
			return -ENOMEM;
		w->ids[nids++] = id;
		i = j;
	}
	/* pprof lists the leaf first. */
	for (i = 0; i < nids / 2; i++) {
		uint64_t t = w->ids[i];

		w->ids[i] = w->ids[nids - 1 - i];
		w->ids[nids - 1 - i] = t;
	}
	pb_reset(&w->msg);
	pb_put_packed(&w->msg, SAMPLE_LOCATION_ID, w->ids, nids, &w->scratch);
	/* pprof values are int64. */
	vals[0] = int64_value(value);
	vals[1] = (uint64_t)INT64_MAX / w->period < value ? (uint64_t)INT64_MAX
							   : value * w->period;
	if (w->ncols) {
		nvals = w->ncols;
		for (size_t k = 0; k < w->ncols; k++)
			vals[k] = int64_value(w->cols[k].p ? col_value(&w->cols[k], frames, n)
						    : value);
	}
	pb_put_packed(&w->msg, SAMPLE_VALUE, vals, nvals, &w->scratch);
	pb_put_raw(&w->msg, w->labels.data, w->labels.len);
	pb_put_bytes(&w->samples, PROFILE_SAMPLE, w->msg.data, w->msg.len);
	return w->msg.oom || w->samples.oom || w->labels.oom ? -ENOMEM : 0;
}

static void put_value_type(struct writer *w, uint32_t field, uint32_t type,
			   uint32_t unit)
{
	pb_reset(&w->line);
	pb_put_uint(&w->line, VALUE_TYPE_TYPE, w->nstr + type);
	pb_put_uint(&w->line, VALUE_TYPE_UNIT, w->nstr + unit);
	pb_put_bytes(&w->msg, field, w->line.data, w->line.len);
}

/* Appends the mappings, the locations and the functions of the frames
 * in use, in profile.proto order. */
static void put_mappings_functions(struct writer *w, struct pb_buf *out)
{
	for (uint32_t i = 0; i < w->nmappings; i++) {
		const struct out_mapping *om = &w->mappings[i];
		const struct prof_mapping *pm =
			om->placed ? prof_mapping_get(w->p, om->id) : NULL;

		pb_reset(&w->msg);
		pb_put_uint(&w->msg, MAPPING_ID, i + 1);
		if (pm) {
			pb_put_uint(&w->msg, MAPPING_MEMORY_START, pm->start);
			pb_put_uint(&w->msg, MAPPING_MEMORY_LIMIT, pm->limit);
			pb_put_uint(&w->msg, MAPPING_FILE_OFFSET, pm->offset);
			pb_put_uint(&w->msg, MAPPING_FILENAME, pm->file);
			pb_put_uint(&w->msg, MAPPING_BUILD_ID, pm->build_id);
		} else {
			pb_put_uint(&w->msg, MAPPING_FILENAME, om->id);
		}
		pb_put_uint(&w->msg, MAPPING_HAS_FUNCTIONS, 1);
		pb_put_uint(&w->msg, MAPPING_HAS_FILENAMES, 1);
		pb_put_uint(&w->msg, MAPPING_HAS_LINE_NUMBERS, 1);
		pb_put_uint(&w->msg, MAPPING_HAS_INLINE_FRAMES, 1);
		pb_put_bytes(out, PROFILE_MAPPING, w->msg.data, w->msg.len);
	}
	pb_put_raw(out, w->locations.data, w->locations.len);
	for (uint32_t f = 1; f < prof_frame_count(w->p); f++) {
		const struct prof_frame *fr = prof_frame_get(w->p, f);

		if (!w->frame_used[f])
			continue;
		pb_reset(&w->msg);
		pb_put_uint(&w->msg, FUNCTION_ID, f);
		pb_put_uint(&w->msg, FUNCTION_NAME, fr->name);
		pb_put_uint(&w->msg, FUNCTION_SYSTEM_NAME, fr->name);
		pb_put_uint(&w->msg, FUNCTION_FILENAME, fr->file);
		pb_put_uint(&w->msg, FUNCTION_HEARTH_KIND, fr->kind);
		pb_put_uint(&w->msg, FUNCTION_HEARTH_CLASS, fr->cls);
		pb_put_uint(&w->msg, FUNCTION_HEARTH_LANG, fr->lang);
		pb_put_bytes(out, PROFILE_FUNCTION, w->msg.data, w->msg.len);
	}
}

/* Appends the header fields, mappings, functions, strings and metadata
 * around the samples and locations into @out. */
static void assemble(struct writer *w, struct pb_buf *out)
{
	const struct prof_meta *m = prof_meta_const(w->p);
	uint32_t nstr = prof_str_count(w->p);

	struct mem_types mt;

	pb_reset(&w->msg);
	if (m->sample_type[0]) {
		/* A type read from elsewhere keeps its name ("inuse_space"). */
		put_value_type(w, PROFILE_SAMPLE_TYPE, XS_KEPT,
			       m->unit == PROF_UNIT_BYTES ? XS_BYTES :
			       m->unit == PROF_UNIT_NANOSECONDS ? XS_NANOSECONDS : XS_COUNT);
	} else if (w->ncols) {
		for (size_t k = 0; k < w->ncols; k++)
			put_value_type(w, PROFILE_SAMPLE_TYPE, w->cols[k].type, w->cols[k].unit);
	} else if (mem_types(m, &mt)) {
		put_value_type(w, PROFILE_SAMPLE_TYPE, (uint32_t)mt.type, (uint32_t)mt.unit);
	} else if (m->unit == PROF_UNIT_SAMPLES) {
		put_value_type(w, PROFILE_SAMPLE_TYPE, XS_SAMPLES, XS_COUNT);
		if (w->two_values)
			put_value_type(w, PROFILE_SAMPLE_TYPE, XS_CPU,
				       XS_NANOSECONDS);
	} else if (m->unit == PROF_UNIT_NANOSECONDS) {
		put_value_type(w, PROFILE_SAMPLE_TYPE, ns_type(m), XS_NANOSECONDS);
	} else {
		put_value_type(w, PROFILE_SAMPLE_TYPE, XS_SPACE, XS_BYTES);
	}
	pb_put_raw(out, w->msg.data, w->msg.len);
	pb_put_raw(out, w->samples.data, w->samples.len);
	put_mappings_functions(w, out);
	for (uint32_t s = 0; s < nstr; s++) {
		const char *str = prof_str(w->p, s);

		pb_put_bytes(out, PROFILE_STRING_TABLE, str, strlen(str));
	}
	for (int k = 0; k < XS_COUNT_ALL; k++) {
		const char *x = extra_str(m, k);

		pb_put_bytes(out, PROFILE_STRING_TABLE, x, strlen(x));
	}
	for (size_t k = 0; k < w->nnames; k++)
		pb_put_bytes(out, PROFILE_STRING_TABLE, w->names[k], strlen(w->names[k]));
	pb_put_uint(out, PROFILE_TIME_NANOS, m->start_ns);
	pb_put_uint(out, PROFILE_DURATION_NANOS, m->duration_ns);
	if (w->two_values) {
		pb_reset(&w->msg);
		put_value_type(w, PROFILE_PERIOD_TYPE, XS_CPU, XS_NANOSECONDS);
		pb_put_raw(out, w->msg.data, w->msg.len);
		pb_put_uint(out, PROFILE_PERIOD, w->period);
	} else if (m->period && m->period_type[0]) {
		/* A period read from a file that is not a rate (space/bytes). */
		pb_reset(&w->msg);
		put_value_type(w, PROFILE_PERIOD_TYPE, XS_PERIOD_TYPE, XS_PERIOD_UNIT);
		pb_put_raw(out, w->msg.data, w->msg.len);
		pb_put_uint(out, PROFILE_PERIOD, m->period);
	}
	if (w->dflt_col)
		pb_put_uint(out, PROFILE_DEFAULT_SAMPLE_TYPE, w->nstr + w->cols[w->dflt_col - 1].type);
	pb_put_uint(out, PROFILE_HEARTH_DROPS, m->drops);
	pb_put_uint(out, PROFILE_HEARTH_ATTRS, 1);
}

static void writer_free(struct writer *w)
{
	pb_free(&w->samples);
	pb_free(&w->locations);
	pb_free(&w->msg);
	pb_free(&w->line);
	pb_free(&w->labels);
	pb_free(&w->scratch);
	free(w->seq);
	free(w->loc_off);
	free(w->loc_n);
	free(w->slots);
	free(w->mapping_of);
	free(w->placed_of);
	free(w->mappings);
	free(w->frame_used);
	free(w->ids);
	for (size_t k = 0; k < w->ncols; k++)
		free(w->cols[k].of);
}

/* The process rows at the top of @p's tree. */
static size_t processes(const struct prof_profile *p)
{
	size_t n = 0;

	for (uint32_t c = prof_node_get(p, 0)->child; c; c = prof_node_get(p, c)->sibling)
		n += prof_frame_get(p, prof_node_get(p, c)->frame)->kind == PROF_KIND_PROCESS;
	return n;
}

/* Makes @q the values of column @k, of type @type / @unit: for each
 * frame of the walked profile, the same frame in @q (interned there when
 * it has none: the writer reads only its values). 0 or -ENOMEM. */
static int add_column(struct writer *w, size_t k, struct prof_profile *q,
		      uint32_t type, uint32_t unit)
{
	uint32_t n = prof_frame_count(w->p);
	struct column *c = &w->cols[k];

	*c = (struct column){ .p = q, .type = type, .unit = unit };
	w->ncols = k + 1 > w->ncols ? k + 1 : w->ncols;
	if (!q)
		return 0;
	c->of = calloc(n, sizeof(*c->of));
	if (!c->of)
		return -ENOMEM;
	for (uint32_t id = 1; id < n; id++) {
		struct prof_frame f = *prof_frame_get(w->p, id);

		f.name = prof_intern_cstr(q, prof_str(w->p, f.name));
		f.module = prof_intern_cstr(q, prof_str(w->p, f.module));
		f.file = prof_intern_cstr(q, prof_str(w->p, f.file));
		if (f.name == UINT32_MAX || f.module == UINT32_MAX || f.file == UINT32_MAX ||
		    (c->of[id] = prof_frame_intern(q, &f)) == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

/* Encodes the walked profile w->p, sorted, with w's columns set, into
 * *@buf / *@len; frees what w holds. 0, -ENOMEM or -EIO. */
static int encode(struct writer *w, void **buf, size_t *len)
{
	struct prof_profile *p = (struct prof_profile *)w->p;
	struct pb_buf out = { 0 };
	int ret = -ENOMEM;

	w->nstr = prof_str_count(p);
	w->mapping_of = calloc(w->nstr, sizeof(*w->mapping_of));
	w->placed_of = calloc(prof_mapping_count(p), sizeof(*w->placed_of));
	w->frame_used = calloc(prof_frame_count(p), 1);
	if (!w->mapping_of || !w->placed_of || !w->frame_used)
		goto out;
	/* pprof names the file of the first mapping as the profile's
	 * ("File: x"): a profile of several processes has none, so its
	 * first mapping is one without a file. */
	if (processes(p) > 1 && mapping_add(w, 0, 0) == UINT32_MAX)
		goto out;
	ret = prof_walk_stacks(p, add_sample, w);
	if (ret < 0)
		goto out;
	ret = -ENOMEM;
	assemble(w, &out);
	if (out.oom || w->samples.oom || w->locations.oom || w->msg.oom ||
	    w->line.oom)
		goto out;
	ret = -EIO;
	if ((size_t)UINT32_MAX < out.len)
		goto out;
	ret = gz_deflate(out.data, out.len, buf, len);
out:
	pb_free(&out);
	writer_free(w);
	return ret;
}

int prof_pprof_encode(struct prof_profile *p, void **buf, size_t *len)
{
	return prof_pprof_encode_pair(p, NULL, buf, len);
}

int prof_pprof_encode_pair(struct prof_profile *p, struct prof_profile *second,
			   void **buf, size_t *len)
{
	const struct prof_meta *m = prof_meta_const(p);
	struct writer w = { .p = p, .period = 1 };
	struct mem_types mt;
	int ret = prof_sort(p);

	if (ret < 0)
		return ret;
	if (second && (m->sample_type[0] || !mem_types(m, &mt)))
		return -EINVAL;
	/* The profile's own values last: pprof's default. */
	if (second && ((ret = add_column(&w, 0, second, (uint32_t)mt.type2, (uint32_t)mt.unit2)) < 0 ||
		       (ret = add_column(&w, 1, NULL, (uint32_t)mt.type, (uint32_t)mt.unit)) < 0)) {
		writer_free(&w);
		return ret;
	}
	if (m->unit == PROF_UNIT_SAMPLES && m->hz && !m->sample_type[0] && !second) {
		w.two_values = 1;
		w.period = 1000000000ull / m->hz;
	}
	return encode(&w, buf, len);
}

/* The sample type @q is written under as one column of several, in
 * *@type and *@unit (extra string indexes); its kept name becomes one of
 * w's names. */
static void column_type(struct writer *w, const struct prof_profile *q,
			uint32_t *type, uint32_t *unit)
{
	const struct prof_meta *m = prof_meta_const(q);
	struct mem_types mt;

	*unit = m->unit == PROF_UNIT_BYTES ? XS_BYTES :
		m->unit == PROF_UNIT_NANOSECONDS ? XS_NANOSECONDS : XS_COUNT;
	if (m->sample_type[0]) {
		w->names[w->nnames] = m->sample_type;
		*type = XS_COUNT_ALL + (uint32_t)w->nnames++;
	} else if (mem_types(m, &mt)) {
		*type = (uint32_t)mt.type;
	} else {
		*type = m->unit == PROF_UNIT_NANOSECONDS ? (uint32_t)ns_type(m) :
			m->unit == PROF_UNIT_BYTES ? XS_SPACE : XS_SAMPLES;
	}
}

/* A value of 1 for every stack: the union of several profiles' stacks. */
static uint64_t one(const struct prof_profile *src, const uint32_t *frames,
		    size_t n, uint64_t value, void *arg)
{
	(void)src, (void)frames, (void)n, (void)arg;
	return value ? 1 : 0;
}

int prof_pprof_encode_types(struct prof_profile *const *ps, size_t n, size_t dflt,
			    void **buf, size_t *len)
{
	struct writer w = { .period = 1 };
	struct prof_profile *u;
	int ret = 0;

	if (n == 1)
		return prof_pprof_encode(ps[0], buf, len);
	if (n == 0 || MAX_COLUMNS < n || !(dflt < n))
		return -EINVAL;
	if (!(u = prof_new(PROF_UNIT_SAMPLES)))
		return -ENOMEM;
	for (size_t k = 0; k < n && !ret; k++)
		ret = prof_merge_mapped(u, ps[k], one, NULL);
	if (!ret)
		ret = prof_sort(u);
	*prof_meta(u) = *prof_meta_const(ps[dflt]);
	prof_meta(u)->sample_type[0] = '\0';
	w.p = u;
	for (size_t k = 0; k < n && !ret; k++) {
		uint32_t type, unit;

		column_type(&w, ps[k], &type, &unit);
		ret = add_column(&w, k, ps[k], type, unit);
	}
	/* pprof shows the last type unless told: say so of another. */
	if (dflt + 1 < n)
		w.dflt_col = dflt + 1;
	ret = ret ? (writer_free(&w), ret) : encode(&w, buf, len);
	prof_free(u);
	return ret;
}

int prof_pprof_write(struct prof_profile *p, FILE *out)
{
	return prof_pprof_write_pair(p, NULL, out);
}

/* Writes @ret's encoding (@buf, @len; freed) to @out, or returns @ret. */
static int write_encoded(int ret, void *buf, size_t len, FILE *out)
{
	if (ret < 0)
		return ret;
	if (fwrite(buf, 1, len, out) != len || fflush(out) != 0)
		ret = -EIO;
	free(buf);
	return ret;
}

int prof_pprof_write_pair(struct prof_profile *p, struct prof_profile *second, FILE *out)
{
	void *buf = NULL;
	size_t len = 0;

	int ret = prof_pprof_encode_pair(p, second, &buf, &len);

	return write_encoded(ret, buf, len, out);
}

int prof_pprof_write_types(struct prof_profile *const *ps, size_t n, size_t dflt,
			   FILE *out)
{
	void *buf = NULL;
	size_t len = 0;

	int ret = prof_pprof_encode_types(ps, n, dflt, &buf, &len);

	return write_encoded(ret, buf, len, out);
}
