/* SPDX-License-Identifier: MIT */
/* store_codec_read: validating, decoding and merging windows and profiles
 * (see store_codec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "agent/store_codec_impl.h"

/* A blob split into its header and its still-compressed sections. */
struct blob {
	struct store_window hdr;
	unsigned version;    /* CODEC_VERSION_NAMES or CODEC_VERSION */
	unsigned flags;
	bool check_sum;      /* verify each section's Adler-32 */
	const uint8_t *sec[SEC_COUNT];
	size_t zlen[SEC_COUNT];
	uint64_t rawlen[SEC_COUNT];
};

static int split(const void *buf, size_t len, struct blob *bl)
{
	struct ibuf b = { .p = buf, .len = len };

	memset(bl, 0, sizeof(*bl));
	if (len < 4 || memcmp(buf, CODEC_MAGIC, 4) != 0)
		return -EBADMSG;
	b.pos = 4;
	bl->version = (unsigned)ib_varint(&b);
	if (bl->version != CODEC_VERSION && bl->version != CODEC_VERSION_NAMES)
		return -EBADMSG;
	bl->hdr.start_ns = ib_varint(&b);
	bl->hdr.end_ns = ib_varint(&b);
	bl->hdr.samples = ib_varint(&b);
	bl->hdr.idle_samples = ib_varint(&b);
	bl->hdr.offcpu_ns = ib_varint(&b);
	bl->hdr.drops = ib_varint(&b);
	bl->flags = (unsigned)ib_bounded(&b, 1u << SEC_PROFILES);
	if (b.bad || bl->hdr.end_ns < bl->hdr.start_ns)
		return -EBADMSG;
	for (int i = 0; i < SEC_COUNT; i++) {
		if (i > SEC_STRINGS && !(bl->flags & (1u << (i - 1))))
			continue;
		bl->rawlen[i] = ib_bounded(&b, (uint64_t)STORE_CODEC_RAW_MAX + 1);
		bl->zlen[i] = (size_t)ib_bounded(&b, ib_left(&b) + 1);
		if (b.bad || bl->zlen[i] > ib_left(&b))
			return -EBADMSG;
		bl->sec[i] = b.p + b.pos;
		b.pos += bl->zlen[i];
	}
	return b.pos == b.len ? 0 : -EBADMSG;
}

/* Inflates the zlib stream @z (@zlen bytes) into @out (room for @len + 1
 * bytes), which must come out exactly @len bytes. The stream's Adler-32
 * is checked only when @check: a stored window is covered by its
 * record's CRC already (and every decoded field is validated anyway), so
 * the store's reader skips that second pass over the bytes. Returns 0 or
 * -EBADMSG. */
static int inflate_exact(const uint8_t *z, size_t zlen, uint8_t *out, size_t len,
			 bool check)
{
	z_stream s = { 0 };
	int rc;

	/* RFC 1950 header: deflate, window <= 32 KiB, no preset dictionary,
	 * check bits; then the raw deflate data and 4 bytes of Adler-32. */
	if (zlen < 6 || (z[0] & 0x0f) != 8 || (z[0] >> 4) > 7 || (z[1] & 0x20) ||
	    ((unsigned)z[0] << 8 | z[1]) % 31 != 0 || zlen - 6 > UINT32_MAX || len >= UINT32_MAX)
		return -EBADMSG;
	if (inflateInit2(&s, -15) != Z_OK)
		return -EBADMSG;
	s.next_in = (Bytef *)(uintptr_t)(z + 2);
	s.avail_in = (uInt)(zlen - 6);
	s.next_out = out;
	s.avail_out = (uInt)len + 1; /* one spare byte: a longer stream fails */
	rc = inflate(&s, Z_FINISH);
	inflateEnd(&s);
	if (rc != Z_STREAM_END || s.total_out != len || s.avail_in != 0)
		return -EBADMSG;
	if (check) {
		const uint8_t *t = z + zlen - 4;
		uint32_t want = (uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 |
				(uint32_t)t[2] << 8 | t[3];

		if (adler32(adler32(0, NULL, 0), out, (uInt)len) != want)
			return -EBADMSG;
	}
	return 0;
}

/* Inflates section @i into a new buffer of exactly its raw length. */
static int inflate_sec(const struct blob *bl, int i, uint8_t **raw)
{
	uint8_t *r = malloc(bl->rawlen[i] + 1);

	if (!r)
		return -ENOMEM;
	if (inflate_exact(bl->sec[i], bl->zlen[i], r, (size_t)bl->rawlen[i], bl->check_sum)) {
		free(r);
		return -EBADMSG;
	}
	*raw = r;
	return 0;
}

/* ---- the string table --------------------------------------------------- */

struct strings {
	uint8_t *raw;
	size_t n;        /* including the empty string 0 */
	size_t *off;
	uint32_t *len;
};

static int read_strings(const struct blob *bl, struct strings *s)
{
	struct ibuf b = { 0 };
	uint64_t n, total = 0;
	int rc = inflate_sec(bl, SEC_STRINGS, &s->raw);

	if (rc)
		return rc;
	b.p = s->raw;
	b.len = bl->rawlen[SEC_STRINGS];
	n = ib_varint(&b);
	if (b.bad || n > ib_left(&b))
		return -EBADMSG;
	s->n = (size_t)n + 1;
	s->off = malloc(s->n * sizeof(*s->off));
	s->len = malloc(s->n * sizeof(*s->len));
	if (!s->off || !s->len)
		return -ENOMEM;
	s->off[0] = 0;
	s->len[0] = 0;
	for (size_t i = 1; i < s->n; i++) {
		s->len[i] = (uint32_t)ib_bounded(&b, ib_left(&b) + 1);
		total += s->len[i];
	}
	if (b.bad || total != ib_left(&b))
		return -EBADMSG;
	for (size_t i = 1; i < s->n; i++) {
		s->off[i] = b.pos;
		b.pos += s->len[i];
	}
	return 0;
}

static void strings_free(struct strings *s)
{
	free(s->raw);
	free(s->off);
	free(s->len);
}

/* ---- one profile section ------------------------------------------------ */

struct frames {
	size_t n;            /* including frame 0 */
	uint32_t *name, *module, *file, *line, *pid;
	uint8_t *kind, *cls, *lang;
};

/* The places of a section's frames (none in a version 2 window). */
struct places {
	size_t n;            /* mappings, including the unused 0 */
	struct prof_mapping *m; /* file and build_id: string indexes */
	uint32_t *dst;       /* mapping index -> dst mapping id */
	uint32_t *frame;     /* frame index -> its mapping, 0 = none */
	uint64_t *off;       /* frame index -> its address - the mapping's start */
};

struct dec {
	const struct strings *s;
	struct prof_profile *dst;
	const struct store_codec_merge *m;
	bool defer;          /* values to leaves only; totals after the last */
	bool fresh;          /* dst was empty: whole stacks are appended */
	bool strip;          /* thread rows are left out (!keep_threads) */
	struct frames f;
	struct places pl;
	uint32_t *smap;      /* string index -> dst id */
	uint32_t *fmap;      /* frame index -> dst frame */
	uint32_t *src;       /* the current stack, frame indexes */
	uint32_t *node;      /* its nodes in dst, known for the first nvalid;
			      * for a fresh dst, its frames in dst */
	size_t nvalid;
};

static int read_meta(struct ibuf *b, struct prof_meta *m)
{
	m->unit = (enum prof_unit)ib_bounded(b, 3);
	m->start_ns = ib_varint(b);
	m->duration_ns = ib_varint(b);
	m->hz = (uint32_t)ib_bounded(b, (uint64_t)UINT32_MAX + 1);
	m->off_cpu = (uint32_t)ib_bounded(b, 2);
	m->drops = ib_varint(b);
	return b->bad ? -EBADMSG : 0;
}

static uint32_t *id_column(struct ibuf *b, size_t n, size_t nstr, bool delta)
{
	uint32_t *col = calloc(n, sizeof(*col));
	int64_t prev = 0;

	if (!col)
		return NULL;
	for (size_t i = 1; i < n; i++) {
		int64_t v = delta ? prev + unzigzag(ib_varint(b)) : (int64_t)ib_varint(b);

		if (v < 0 || !((uint64_t)v < nstr))
			b->bad = true;
		col[i] = b->bad ? 0 : (uint32_t)v;
		prev = v;
	}
	return col;
}

static int read_frames(struct ibuf *b, struct dec *d)
{
	uint64_t n = ib_varint(b);
	struct frames *f = &d->f;

	if (b->bad || n > ib_left(b) / 7)
		return -EBADMSG;
	f->n = (size_t)n + 1;
	f->name = id_column(b, f->n, d->s->n, true);
	f->module = id_column(b, f->n, d->s->n, false);
	f->file = id_column(b, f->n, d->s->n, true);
	f->line = id_column(b, f->n, (uint64_t)UINT32_MAX + 1, false);
	f->pid = calloc(f->n, sizeof(*f->pid));
	f->kind = calloc(f->n, 3);
	d->fmap = malloc(f->n * sizeof(*d->fmap));
	if (!f->name || !f->module || !f->file || !f->line || !f->pid || !f->kind || !d->fmap)
		return -ENOMEM;
	f->cls = f->kind + f->n;
	f->lang = f->cls + f->n;
	for (size_t i = 1; i < f->n; i++) {
		f->kind[i] = (uint8_t)ib_bounded(b, PROF_KIND_THREAD + 1);
		f->cls[i] = (uint8_t)ib_bounded(b, PROF_CLASS_COUNT);
		f->lang[i] = (uint8_t)ib_bounded(b, PROF_LANG_COUNT);
		f->pid[i] = f->kind[i] == PROF_KIND_PROCESS ? f->line[i] : 0;
		if (f->kind[i] == PROF_KIND_PROCESS && d->m && d->m->clear_pid)
			f->line[i] = 0;
	}
	for (size_t i = 0; i < f->n; i++)
		d->fmap[i] = UNMAPPED;
	return b->bad ? -EBADMSG : 0;
}

/* Each mapping: start, size (> 0), file offset, file and build id (string
 * indexes); each frame's mapping; each placed frame's offset in it, a
 * delta of the one before, inside the mapping. */
static int read_places(struct ibuf *b, struct dec *d)
{
	struct places *pl = &d->pl;
	uint64_t n = ib_varint(b), prev = 0;

	if (b->bad || n > ib_left(b) / 5)
		return -EBADMSG;
	pl->n = (size_t)n + 1;
	pl->m = calloc(pl->n, sizeof(*pl->m));
	pl->dst = malloc(pl->n * sizeof(*pl->dst));
	pl->frame = calloc(d->f.n, sizeof(*pl->frame));
	pl->off = calloc(d->f.n, sizeof(*pl->off));
	if (!pl->m || !pl->dst || !pl->frame || !pl->off)
		return -ENOMEM;
	for (size_t i = 1; i < pl->n && !b->bad; i++) {
		struct prof_mapping *m = &pl->m[i];
		uint64_t size;

		m->start = ib_varint(b);
		size = ib_varint(b);
		m->offset = ib_varint(b);
		m->file = (uint32_t)ib_bounded(b, d->s->n);
		m->build_id = (uint32_t)ib_bounded(b, d->s->n);
		if (size == 0 || size > UINT64_MAX - m->start)
			b->bad = true;
		m->limit = m->start + size;
	}
	for (size_t i = 0; i < pl->n; i++)
		pl->dst[i] = UNMAPPED;
	for (size_t i = 1; i < d->f.n; i++)
		pl->frame[i] = (uint32_t)ib_bounded(b, pl->n);
	for (size_t i = 1; i < d->f.n && !b->bad; i++) {
		const struct prof_mapping *m = &pl->m[pl->frame[i]];

		if (!pl->frame[i])
			continue;
		pl->off[i] = prev + (uint64_t)unzigzag(ib_varint(b));
		if (!(pl->off[i] < m->limit - m->start))
			b->bad = true;
		prev = pl->off[i];
	}
	return b->bad ? -EBADMSG : 0;
}

static uint32_t map_string(struct dec *d, uint32_t i)
{
	if (d->smap[i] == UNMAPPED)
		d->smap[i] = prof_intern(d->dst, (const char *)d->s->raw + d->s->off[i], d->s->len[i]);
	return d->smap[i];
}

/* Gives frame @id of dst the place of frame index @i, unless it has one
 * (the first place given stays, as prof_frame_place() keeps it). 0 or
 * -ENOMEM. */
static int map_place(struct dec *d, uint32_t i, uint32_t id)
{
	uint32_t k = d->pl.frame ? d->pl.frame[i] : 0, have;
	const struct prof_mapping *m;

	if (!k)
		return 0;
	m = &d->pl.m[k];
	prof_frame_addr(d->dst, id, &have);
	if (have)
		return 0;
	if (d->pl.dst[k] == UNMAPPED) {
		struct prof_mapping dm = *m;

		dm.file = map_string(d, m->file);
		dm.build_id = map_string(d, m->build_id);
		if (dm.file == UINT32_MAX || dm.build_id == UINT32_MAX ||
		    (d->pl.dst[k] = prof_mapping_intern(d->dst, &dm)) == UINT32_MAX) {
			d->pl.dst[k] = UNMAPPED;
			return -ENOMEM;
		}
	}
	return prof_frame_place(d->dst, id, d->pl.dst[k], m->start + d->pl.off[i]);
}

static uint32_t map_frame(struct dec *d, uint32_t i)
{
	struct prof_frame f = { 0 };

	if (d->fmap[i] != UNMAPPED)
		return d->fmap[i];
	f.name = map_string(d, d->f.name[i]);
	f.module = map_string(d, d->f.module[i]);
	f.file = map_string(d, d->f.file[i]);
	if (f.name == UINT32_MAX || f.module == UINT32_MAX || f.file == UINT32_MAX)
		return UNMAPPED;
	f.line = d->f.line[i];
	f.kind = d->f.kind[i];
	f.cls = d->f.cls[i];
	f.lang = d->f.lang[i];
	d->fmap[i] = prof_frame_intern(d->dst, &f);
	if (d->fmap[i] != UNMAPPED && map_place(d, i, d->fmap[i]) < 0)
		d->fmap[i] = UNMAPPED;
	return d->fmap[i];
}

static bool keep(struct dec *d, size_t depth)
{
	uint32_t top;

	if (!d->m || !d->m->keep)
		return true;
	if (depth == 0)
		return d->m->keep(d->m->arg, "", 0, 0);
	top = d->src[0];
	if (d->f.kind[top] != PROF_KIND_PROCESS)
		return d->m->keep(d->m->arg, "", 0, 0);
	return d->m->keep(d->m->arg, (const char *)d->s->raw + d->s->off[d->f.name[top]],
			  d->s->len[d->f.name[top]], d->f.pid[top]);
}

/* Whether frame @k of the current stack is a thread row left out: it
 * stands where its process row stands (d->node[k] = d->node[k - 1]). */
static bool stripped(const struct dec *d, size_t k)
{
	return k == 1 && d->strip && d->f.kind[d->src[1]] == PROF_KIND_THREAD;
}

/* Into a fresh profile: whole stacks, which the profile appends fastest. */
static int add_fresh(struct dec *d, size_t depth, uint64_t value)
{
	size_t skip = depth > 1 && stripped(d, 1);

	for (size_t k = d->nvalid; k < depth; k++) {
		d->node[k] = stripped(d, k) ? d->node[0] : map_frame(d, d->src[k]);
		if (d->node[k] == UNMAPPED)
			return -ENOMEM;
		d->nvalid = k + 1;
	}
	return prof_add_stack(d->dst, d->node + skip, depth - skip, value) == UINT32_MAX ?
	       -ENOMEM : 0;
}

/* Adds the current stack: stacks come sorted, each sharing a prefix with
 * the one before, so only the nodes past the known prefix are looked up
 * (merging into a profile that already has most of them). */
static int add_stack(struct dec *d, size_t depth, uint64_t value)
{
	uint32_t node = d->nvalid ? d->node[d->nvalid - 1] : 0;

	if (d->fresh)
		return add_fresh(d, depth, value);
	for (size_t k = d->nvalid; k < depth; k++) {
		uint32_t f = stripped(d, k) ? 0 : map_frame(d, d->src[k]);

		if (f == UNMAPPED)
			return -ENOMEM;
		node = f ? prof_child_get(d->dst, node, f) : node;
		if (node == UINT32_MAX)
			return -ENOMEM;
		d->node[k] = node;
		d->nvalid = k + 1;
	}
	if (d->defer)
		return prof_node_add(d->dst, node, value, value);
	prof_node_add(d->dst, 0, value, depth ? 0 : value);
	for (size_t k = 0; k < depth; k++)
		if (!stripped(d, k))
			prof_node_add(d->dst, d->node[k], value,
				      k + 1 == depth || (k + 2 == depth && stripped(d, k + 1)) ?
				      value : 0);
	return 0;
}

static int read_stacks(struct ibuf *b, struct dec *d)
{
	uint64_t n = ib_varint(b);
	size_t depth = 0;
	int rc = 0;

	if (b->bad || n > ib_left(b) / 3)
		return -EBADMSG;
	d->src = malloc(STORE_CODEC_DEPTH_MAX * sizeof(*d->src));
	d->node = malloc(STORE_CODEC_DEPTH_MAX * sizeof(*d->node));
	if (!d->src || !d->node)
		return -ENOMEM;
	for (uint64_t i = 0; i < n && !rc; i++) {
		uint64_t common = ib_bounded(b, depth + 1);
		uint64_t add = ib_bounded(b, STORE_CODEC_DEPTH_MAX - common + 1);
		uint64_t value;

		for (uint64_t k = 0; k < add && !b->bad; k++) {
			d->src[common + k] = (uint32_t)ib_bounded(b, d->f.n);
			if (d->src[common + k] == 0)
				b->bad = true;
		}
		value = ib_varint(b);
		if (b->bad)
			return -EBADMSG;
		depth = (size_t)(common + add);
		if (d->nvalid > common)
			d->nvalid = (size_t)common;
		if (keep(d, depth))
			rc = add_stack(d, depth, value);
	}
	return rc ? rc : (b->pos == b->len ? 0 : -EBADMSG);
}

static void dec_free(struct dec *d)
{
	free(d->f.name);
	free(d->f.module);
	free(d->f.file);
	free(d->f.line);
	free(d->f.pid);
	free(d->f.kind);
	free(d->pl.m);
	free(d->pl.dst);
	free(d->pl.frame);
	free(d->pl.off);
	free(d->smap);
	free(d->fmap);
	free(d->src);
	free(d->node);
}

/* Decodes section @i into *@dstp: a new profile when *@dstp is NULL, else
 * merged into it (the units must match). */
static int read_profile(const struct blob *bl, int i, const struct strings *s,
			const struct store_codec_merge *m, struct prof_profile **dstp)
{
	struct dec d = { .s = s, .m = m, .defer = m && m->defer_totals, .fresh = !*dstp,
			 .strip = m && !m->keep_threads };
	struct ibuf b = { 0 };
	struct prof_meta meta = { 0 };
	uint8_t *raw = NULL;
	int rc = inflate_sec(bl, i, &raw);

	if (rc)
		return rc;
	b.p = raw;
	b.len = bl->rawlen[i];
	rc = read_meta(&b, &meta);
	if (!rc && !*dstp) {
		*dstp = prof_new(meta.unit);
		if (*dstp)
			*prof_meta(*dstp) = meta;
		else
			rc = -ENOMEM;
	} else if (!rc && prof_meta_const(*dstp)->unit != meta.unit) {
		rc = -EINVAL;
	}
	d.dst = *dstp;
	d.smap = malloc(s->n * sizeof(*d.smap));
	if (!rc && !d.smap)
		rc = -ENOMEM;
	for (size_t k = 0; !rc && k < s->n; k++)
		d.smap[k] = k ? UNMAPPED : 0;
	if (!rc)
		rc = read_frames(&b, &d);
	if (!rc && bl->version != CODEC_VERSION_NAMES)
		rc = read_places(&b, &d);
	if (!rc)
		rc = read_stacks(&b, &d);
	dec_free(&d);
	free(raw);
	return rc;
}

/* ---- public ---------------------------------------------------------- */

static int window_unpack(const void *buf, size_t len, struct store_window *w,
			 bool check_sum)
{
	struct prof_profile **dst[SEC_PROFILES] = { &w->oncpu, &w->offcpu, &w->growth_req,
						    &w->growth_bytes };
	struct strings s = { 0 };
	struct blob bl;
	int rc = split(buf, len, &bl);

	memset(w, 0, sizeof(*w));
	if (rc)
		return rc;
	bl.check_sum = check_sum;
	rc = read_strings(&bl, &s);
	*w = bl.hdr;
	for (int i = 0; !rc && i < SEC_PROFILES; i++)
		if (bl.flags & (1u << i))
			rc = read_profile(&bl, SEC_ON + i, &s, NULL, dst[i]);
	strings_free(&s);
	if (rc)
		store_window_clear(w);
	return rc;
}

int store_codec_window_unpack(const void *buf, size_t len,
			      struct store_window *w)
{
	return window_unpack(buf, len, w, false);
}

int store_codec_window_merge(const void *buf, size_t len,
			     const struct store_codec_merge *m,
			     struct prof_profile *dst, struct store_window *hdr)
{
	return store_codec_window_merge_both(buf, len, m, m->off_cpu ? NULL : dst,
					     m->off_cpu ? dst : NULL, hdr);
}

int store_codec_window_merge_both(const void *buf, size_t len,
				  const struct store_codec_merge *m,
				  struct prof_profile *on, struct prof_profile *off,
				  struct store_window *hdr)
{
	struct store_codec_dst d = { .on = on, .off = off };

	return store_codec_window_merge_all(buf, len, m, &d, hdr);
}

int store_codec_window_merge_all(const void *buf, size_t len,
				 const struct store_codec_merge *m,
				 const struct store_codec_dst *d,
				 struct store_window *hdr)
{
	struct prof_profile *dst[SEC_PROFILES] = { d->on, d->off, d->growth_req, d->growth_bytes };
	struct strings s = { 0 };
	struct blob bl;
	unsigned want = 0;
	int rc = split(buf, len, &bl);

	if (rc)
		return rc;
	if (hdr)
		*hdr = bl.hdr;
	for (int i = 0; i < SEC_PROFILES; i++)
		want |= dst[i] ? 1u << i : 0;
	if (!(bl.flags & want))
		return 0;
	rc = read_strings(&bl, &s);
	for (int i = 0; !rc && i < SEC_PROFILES; i++)
		if (bl.flags & want & (1u << i))
			rc = read_profile(&bl, SEC_ON + i, &s, m, &dst[i]);
	strings_free(&s);
	return rc;
}

void store_codec_merge_totals(struct prof_profile *p)
{
	/* A parent's id is smaller than its children's: going down the ids,
	 * every node is complete before it is added to its parent. */
	for (uint32_t id = prof_node_count(p); id-- > 1;) {
		const struct prof_node *n = prof_node_get(p, id);

		prof_node_add(p, n->parent, n->total, 0);
	}
}

struct prof_profile *store_codec_pair_unpack(const void *buf, size_t len,
					     struct prof_profile **second, int *err)
{
	struct store_window w;
	struct prof_profile *p;
	int rc = window_unpack(buf, len, &w, true);

	if (!rc && (!w.oncpu || w.growth_req || w.growth_bytes || w.start_ns || w.end_ns ||
		    (w.offcpu && !second)))
		rc = -EBADMSG;
	if (err)
		*err = rc;
	if (rc) {
		store_window_clear(&w);
		return NULL;
	}
	p = w.oncpu;
	if (second)
		*second = w.offcpu;
	w.oncpu = w.offcpu = NULL;
	return p;
}

struct prof_profile *store_codec_profile_unpack(const void *buf, size_t len,
						int *err)
{
	return store_codec_pair_unpack(buf, len, NULL, err);
}
