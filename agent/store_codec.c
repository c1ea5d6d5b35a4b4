/* SPDX-License-Identifier: MIT */
/* store_codec: compact binary encoding of profiles and windows, zlib'd. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "agent/store_codec.h"

#define CODEC_VERSION 1u
static const uint8_t MAGIC_WINDOW[4] = { 'H', 'W', 'W', '1' };
static const uint8_t MAGIC_PROFILE[4] = { 'H', 'W', 'P', '1' };

/* ---- growable output buffer -------------------------------------------- */

struct obuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int err;
};

static void ob_reserve(struct obuf *b, size_t n)
{
	size_t cap;
	uint8_t *np;

	if (b->err)
		return;
	if (n <= b->cap - b->len)
		return;
	if (n > STORE_CODEC_RAW_MAX || b->len > STORE_CODEC_RAW_MAX - n) {
		b->err = -EFBIG;
		return;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < n)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->err = -ENOMEM;
		return;
	}
	b->p = np;
	b->cap = cap;
}

static void ob_bytes(struct obuf *b, const void *src, size_t n)
{
	ob_reserve(b, n);
	if (b->err || n == 0)
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void ob_varint(struct obuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	ob_bytes(b, tmp, n);
}

/* ---- bounded input reader ---------------------------------------------- */

struct ibuf {
	const uint8_t *p;
	size_t len;
	size_t pos;
	bool bad;
};

static uint64_t ib_varint(struct ibuf *b)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (b->bad || b->pos >= b->len) {
			b->bad = true;
			return 0;
		}
		c = b->p[b->pos++];
		if (shift == 63 && c > 1) {
			b->bad = true;
			return 0;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	b->bad = true;
	return 0;
}

/* A varint that must be < @limit. */
static uint64_t ib_bounded(struct ibuf *b, uint64_t limit)
{
	uint64_t v = ib_varint(b);

	if (!(v < limit))
		b->bad = true;
	return b->bad ? 0 : v;
}

static size_t ib_left(const struct ibuf *b)
{
	return b->len - b->pos;
}

/* ---- profile encoding -------------------------------------------------- */

struct enc_ctx {
	struct obuf *out;
	uint32_t *prev;
	size_t nprev;
	size_t cap;
	uint64_t nstacks;
};

static int enc_stack(const struct prof_profile *p, const uint32_t *frames,
		     size_t n, uint64_t value, void *arg)
{
	struct enc_ctx *c = arg;
	size_t common = 0;

	(void)p;
	while (common < n && common < c->nprev && frames[common] == c->prev[common])
		common++;
	ob_varint(c->out, common);
	ob_varint(c->out, n - common);
	for (size_t i = common; i < n; i++)
		ob_varint(c->out, frames[i]);
	ob_varint(c->out, value);
	if (n > c->cap) {
		uint32_t *np = realloc(c->prev, n * sizeof(*np));

		if (!np)
			return -ENOMEM;
		c->prev = np;
		c->cap = n;
	}
	if (n)
		memcpy(c->prev, frames, n * sizeof(*frames));
	c->nprev = n;
	c->nstacks++;
	return c->out->err;
}

static int count_stack(const struct prof_profile *p, const uint32_t *frames,
		       size_t n, uint64_t value, void *arg)
{
	(void)p;
	(void)frames;
	(void)n;
	(void)value;
	(*(uint64_t *)arg)++;
	return 0;
}

static int encode_profile(struct obuf *b, const struct prof_profile *p)
{
	const struct prof_meta *m = prof_meta_const(p);
	uint32_t ns = prof_str_count(p), nf = prof_frame_count(p);
	struct enc_ctx c = { .out = b };
	uint64_t nstacks = 0;
	int rc;

	ob_varint(b, (uint64_t)m->unit);
	ob_varint(b, m->start_ns);
	ob_varint(b, m->duration_ns);
	ob_varint(b, m->hz);
	ob_varint(b, m->off_cpu);
	ob_varint(b, m->drops);
	ob_varint(b, ns ? ns - 1 : 0);
	for (uint32_t i = 1; i < ns; i++) {
		const char *s = prof_str(p, i);
		size_t len = strlen(s);

		ob_varint(b, len);
		ob_bytes(b, s, len);
	}
	ob_varint(b, nf ? nf - 1 : 0);
	for (uint32_t i = 1; i < nf; i++) {
		const struct prof_frame *f = prof_frame_get(p, i);
		uint8_t kcl[3] = { f->kind, f->cls, f->lang };

		ob_varint(b, f->name);
		ob_varint(b, f->module);
		ob_varint(b, f->file);
		ob_varint(b, f->line);
		ob_bytes(b, kcl, sizeof(kcl));
	}
	prof_walk_stacks(p, count_stack, &nstacks);
	ob_varint(b, nstacks);
	rc = prof_walk_stacks(p, enc_stack, &c);
	free(c.prev);
	if (rc == 0 && c.nstacks != nstacks)
		rc = -EINVAL;
	return rc ? rc : b->err;
}

/* ---- profile decoding -------------------------------------------------- */

struct dec_tables {
	uint32_t *str;   /* encoded string index -> interned id */
	uint32_t *frame; /* encoded frame index -> interned id */
	uint32_t *path;
};

static int decode_meta(struct ibuf *b, struct prof_profile **out)
{
	uint64_t unit = ib_bounded(b, 3);
	struct prof_profile *p;
	struct prof_meta *m;

	if (b->bad)
		return -EBADMSG;
	p = prof_new((enum prof_unit)unit);
	if (!p)
		return -ENOMEM;
	m = prof_meta(p);
	m->start_ns = ib_varint(b);
	m->duration_ns = ib_varint(b);
	m->hz = (uint32_t)ib_bounded(b, (uint64_t)UINT32_MAX + 1);
	m->off_cpu = (uint32_t)ib_bounded(b, 2);
	m->drops = ib_varint(b);
	*out = p;
	return b->bad ? -EBADMSG : 0;
}

static int decode_strings(struct ibuf *b, struct prof_profile *p,
			  struct dec_tables *t, uint64_t *count)
{
	uint64_t n = ib_varint(b);

	if (b->bad || n > ib_left(b))
		return -EBADMSG;
	t->str = calloc(n + 1, sizeof(*t->str));
	if (!t->str)
		return -ENOMEM;
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t len = ib_varint(b);

		if (b->bad || len > ib_left(b))
			return -EBADMSG;
		t->str[i] = prof_intern(p, (const char *)b->p + b->pos, len);
		if (t->str[i] == UINT32_MAX)
			return -ENOMEM;
		b->pos += len;
	}
	*count = n + 1;
	return 0;
}

static int decode_frames(struct ibuf *b, struct prof_profile *p,
			 struct dec_tables *t, uint64_t nstr, uint64_t *count)
{
	uint64_t n = ib_varint(b);

	if (b->bad || n > ib_left(b) / 7)
		return -EBADMSG;
	t->frame = calloc(n + 1, sizeof(*t->frame));
	if (!t->frame)
		return -ENOMEM;
	for (uint64_t i = 1; i <= n; i++) {
		struct prof_frame f = { 0 };

		f.name = t->str[ib_bounded(b, nstr)];
		f.module = t->str[ib_bounded(b, nstr)];
		f.file = t->str[ib_bounded(b, nstr)];
		f.line = (uint32_t)ib_bounded(b, (uint64_t)UINT32_MAX + 1);
		f.kind = (uint8_t)ib_bounded(b, PROF_KIND_THREAD + 1);
		f.cls = (uint8_t)ib_bounded(b, PROF_CLASS_COUNT);
		f.lang = (uint8_t)ib_bounded(b, PROF_LANG_COUNT);
		if (b->bad)
			return -EBADMSG;
		t->frame[i] = prof_frame_intern(p, &f);
		if (t->frame[i] == UINT32_MAX)
			return -ENOMEM;
	}
	*count = n + 1;
	return 0;
}

static int decode_stacks(struct ibuf *b, struct prof_profile *p,
			 struct dec_tables *t, uint64_t nframes)
{
	uint64_t n = ib_varint(b);
	size_t depth = 0;

	if (b->bad || n > ib_left(b) / 3)
		return -EBADMSG;
	t->path = malloc(STORE_CODEC_DEPTH_MAX * sizeof(*t->path));
	if (!t->path)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t common = ib_bounded(b, depth + 1);
		uint64_t add = ib_bounded(b, STORE_CODEC_DEPTH_MAX - common + 1);
		uint64_t value;

		if (b->bad)
			return -EBADMSG;
		for (uint64_t k = 0; k < add; k++) {
			uint64_t f = ib_bounded(b, nframes);

			if (b->bad || f == 0)
				return -EBADMSG;
			t->path[common + k] = t->frame[f];
		}
		depth = (size_t)(common + add);
		value = ib_varint(b);
		if (b->bad)
			return -EBADMSG;
		if (prof_add_stack(p, t->path, depth, value) == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

static int decode_profile(struct ibuf *b, struct prof_profile **out)
{
	struct dec_tables t = { 0 };
	struct prof_profile *p = NULL;
	uint64_t nstr = 0, nframes = 0;
	int rc;

	rc = decode_meta(b, &p);
	if (!rc)
		rc = decode_strings(b, p, &t, &nstr);
	if (!rc)
		rc = decode_frames(b, p, &t, nstr, &nframes);
	if (!rc)
		rc = decode_stacks(b, p, &t, nframes);
	free(t.str);
	free(t.frame);
	free(t.path);
	if (rc) {
		prof_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* ---- blobs: magic, raw length, zlib stream ----------------------------- */

static int blob_seal(const uint8_t magic[4], struct obuf *raw, void **out,
		     size_t *outlen)
{
	struct obuf blob = { 0 };
	uLongf zlen;

	if (raw->err)
		return raw->err;
	zlen = compressBound((uLong)raw->len);
	ob_bytes(&blob, magic, 4);
	ob_varint(&blob, raw->len);
	ob_reserve(&blob, zlen);
	if (blob.err)
		return blob.err;
	if (compress2(blob.p + blob.len, &zlen, raw->p, (uLong)raw->len, 6) != Z_OK) {
		free(blob.p);
		return -ENOMEM;
	}
	*out = blob.p;
	*outlen = blob.len + zlen;
	return 0;
}

static int blob_open(const uint8_t magic[4], const void *buf, size_t len,
		     uint8_t **raw, size_t *rawlen)
{
	struct ibuf b = { .p = buf, .len = len };
	uint64_t n;
	uLongf got;
	uint8_t *r;

	if (len < 5 || memcmp(buf, magic, 4) != 0)
		return -EBADMSG;
	b.pos = 4;
	n = ib_varint(&b);
	if (b.bad || n == 0 || n > STORE_CODEC_RAW_MAX)
		return -EBADMSG;
	r = malloc(n);
	if (!r)
		return -ENOMEM;
	got = (uLongf)n;
	if (uncompress(r, &got, b.p + b.pos, (uLong)(len - b.pos)) != Z_OK || got != n) {
		free(r);
		return -EBADMSG;
	}
	*raw = r;
	*rawlen = n;
	return 0;
}

/* ---- public ------------------------------------------------------------ */

int store_codec_profile_pack(const struct prof_profile *p, void **out,
			     size_t *outlen)
{
	struct obuf raw = { 0 };
	int rc;

	ob_varint(&raw, CODEC_VERSION);
	rc = encode_profile(&raw, p);
	if (!rc)
		rc = blob_seal(MAGIC_PROFILE, &raw, out, outlen);
	free(raw.p);
	return rc;
}

struct prof_profile *store_codec_profile_unpack(const void *buf, size_t len,
						int *err)
{
	struct prof_profile *p = NULL;
	struct ibuf b = { 0 };
	uint8_t *raw;
	size_t rawlen;
	int rc;

	rc = blob_open(MAGIC_PROFILE, buf, len, &raw, &rawlen);
	if (rc)
		goto out;
	b.p = raw;
	b.len = rawlen;
	rc = ib_varint(&b) == CODEC_VERSION && !b.bad ? decode_profile(&b, &p) : -EBADMSG;
	if (!rc && b.pos != b.len) {
		prof_free(p);
		p = NULL;
		rc = -EBADMSG;
	}
	free(raw);
out:
	if (err)
		*err = rc;
	return rc ? NULL : p;
}

int store_codec_window_pack(const struct store_window *w, void **out,
			    size_t *outlen)
{
	struct obuf raw = { 0 };
	int rc = 0;

	ob_varint(&raw, CODEC_VERSION);
	ob_varint(&raw, w->start_ns);
	ob_varint(&raw, w->end_ns);
	ob_varint(&raw, w->samples);
	ob_varint(&raw, w->idle_samples);
	ob_varint(&raw, w->offcpu_ns);
	ob_varint(&raw, w->drops);
	ob_varint(&raw, (w->oncpu ? 1u : 0u) | (w->offcpu ? 2u : 0u));
	if (w->oncpu)
		rc = encode_profile(&raw, w->oncpu);
	if (!rc && w->offcpu)
		rc = encode_profile(&raw, w->offcpu);
	if (!rc)
		rc = blob_seal(MAGIC_WINDOW, &raw, out, outlen);
	free(raw.p);
	return rc;
}

static int window_fields(struct ibuf *b, struct store_window *w)
{
	uint64_t which;
	int rc = 0;

	if (ib_varint(b) != CODEC_VERSION)
		return -EBADMSG;
	w->start_ns = ib_varint(b);
	w->end_ns = ib_varint(b);
	w->samples = ib_varint(b);
	w->idle_samples = ib_varint(b);
	w->offcpu_ns = ib_varint(b);
	w->drops = ib_varint(b);
	which = ib_bounded(b, 4);
	if (b->bad || w->end_ns < w->start_ns)
		return -EBADMSG;
	if (which & 1)
		rc = decode_profile(b, &w->oncpu);
	if (!rc && (which & 2))
		rc = decode_profile(b, &w->offcpu);
	if (!rc && b->pos != b->len)
		rc = -EBADMSG;
	return rc;
}

int store_codec_window_unpack(const void *buf, size_t len,
			      struct store_window *w)
{
	struct ibuf b = { 0 };
	uint8_t *raw;
	size_t rawlen;
	int rc;

	memset(w, 0, sizeof(*w));
	rc = blob_open(MAGIC_WINDOW, buf, len, &raw, &rawlen);
	if (rc)
		return rc;
	b.p = raw;
	b.len = rawlen;
	rc = window_fields(&b, w);
	free(raw);
	if (rc)
		store_window_clear(w);
	return rc;
}

void store_window_clear(struct store_window *w)
{
	if (!w)
		return;
	prof_free(w->oncpu);
	prof_free(w->offcpu);
	memset(w, 0, sizeof(*w));
}
