/* SPDX-License-Identifier: MIT */
/* store_codec: writing windows and profiles (see store_codec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "agent/store_codec_impl.h"

/* zlib level of stored windows: on busy 10 s windows, level 4 packs in
 * two thirds of level 6's time for 2% more bytes (level 1: 10% more). */
#define STORE_ZLIB_LEVEL 4

/* ---- the shared string table ------------------------------------------ */

/* Interns @p's string @id into @tab (a profile used as an interner, whose
 * ids are dense from 1). Returns the table id or UNMAPPED. */
static uint32_t tab_id(struct prof_profile *tab, const struct prof_profile *p,
		       uint32_t id)
{
	uint32_t t;

	if (!tab)
		return id; /* one profile: its own table */
	t = id ? prof_intern_cstr(tab, prof_str(p, id)) : 0;

	return t == UINT32_MAX ? UNMAPPED : t;
}

static void encode_strings(struct obuf *b, const struct prof_profile *tab)
{
	uint32_t n = tab ? prof_str_count(tab) : 0;

	ob_varint(b, n ? n - 1 : 0);
	for (uint32_t i = 1; i < n; i++)
		ob_varint(b, strlen(prof_str(tab, i)));
	for (uint32_t i = 1; i < n; i++)
		ob_bytes(b, prof_str(tab, i), strlen(prof_str(tab, i)));
}

/* ---- one profile: metadata, frames by column, stacks ------------------- */

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

/* The frame table by columns; names and files as deltas of table ids, so
 * runs of new strings (mostly increasing ids) compress well. */
static int encode_frames(struct obuf *b, const struct prof_profile *p,
			 struct prof_profile *tab)
{
	uint32_t nf = prof_frame_count(p);
	uint32_t *ids = malloc((size_t)(nf ? nf : 1) * 3 * sizeof(*ids));
	int64_t prev_name = 0, prev_file = 0;

	if (!ids)
		return -ENOMEM;
	for (uint32_t i = 1; i < nf; i++) {
		const struct prof_frame *f = prof_frame_get(p, i);

		ids[3 * i] = tab_id(tab, p, f->name);
		ids[3 * i + 1] = tab_id(tab, p, f->module);
		ids[3 * i + 2] = tab_id(tab, p, f->file);
		if (ids[3 * i] == UNMAPPED || ids[3 * i + 1] == UNMAPPED || ids[3 * i + 2] == UNMAPPED) {
			free(ids);
			return -ENOMEM;
		}
	}
	ob_varint(b, nf ? nf - 1 : 0);
	for (uint32_t i = 1; i < nf; i++) {
		ob_varint(b, zigzag((int64_t)ids[3 * i] - prev_name));
		prev_name = ids[3 * i];
	}
	for (uint32_t i = 1; i < nf; i++)
		ob_varint(b, ids[3 * i + 1]);
	for (uint32_t i = 1; i < nf; i++) {
		ob_varint(b, zigzag((int64_t)ids[3 * i + 2] - prev_file));
		prev_file = ids[3 * i + 2];
	}
	for (uint32_t i = 1; i < nf; i++)
		ob_varint(b, prof_frame_get(p, i)->line);
	for (uint32_t i = 1; i < nf; i++) {
		const struct prof_frame *f = prof_frame_get(p, i);
		uint8_t kcl[3] = { f->kind, f->cls, f->lang };

		ob_bytes(b, kcl, sizeof(kcl));
	}
	free(ids);
	return b->err;
}

/* Which frames have a place inside their mapping: *@fm[frame] is the
 * mapping, 0 for none; *@renum[mapping] its number in the section (1, 2,
 * ... in id order; 0 for a mapping no frame is at), *@nused how many.
 * A place outside its mapping is left out: no reader could use it. */
static int used_places(const struct prof_profile *p, uint32_t **fm, uint32_t **renum,
		       uint32_t *nused)
{
	uint32_t nf = prof_frame_count(p), nm = prof_mapping_count(p);

	*fm = calloc(nf, sizeof(**fm));
	*renum = calloc(nm, sizeof(**renum));
	*nused = 0;
	if (!*fm || !*renum)
		return -ENOMEM;
	for (uint32_t i = 1; i < nf; i++) {
		uint32_t m;
		uint64_t a = prof_frame_addr(p, i, &m);
		const struct prof_mapping *pm = prof_mapping_get(p, m);

		if (!pm || a < pm->start || !(a < pm->limit))
			continue;
		(*fm)[i] = m;
		(*renum)[m] = 1;
	}
	for (uint32_t m = 1; m < nm; m++)
		if ((*renum)[m])
			(*renum)[m] = ++*nused;
	return 0;
}

/* The frames' places (store_codec.h): the mappings in use, each frame's
 * mapping, then each placed frame's offset in its mapping as a delta of
 * the previous one (an inline chain's frames, one after another, share
 * their address: deltas of 0). */
static int encode_places(struct obuf *b, const struct prof_profile *p,
			 struct prof_profile *tab)
{
	uint32_t nf = prof_frame_count(p), nm = prof_mapping_count(p), nused;
	uint32_t *fm = NULL, *renum = NULL;
	uint64_t prev = 0;
	int rc = used_places(p, &fm, &renum, &nused);

	ob_varint(b, nused);
	for (uint32_t m = 1; !rc && m < nm; m++) {
		const struct prof_mapping *pm = prof_mapping_get(p, m);
		uint32_t file, bid;

		if (!renum[m])
			continue;
		file = tab_id(tab, p, pm->file);
		bid = tab_id(tab, p, pm->build_id);
		if (file == UNMAPPED || bid == UNMAPPED) {
			rc = -ENOMEM;
			break;
		}
		ob_varint(b, pm->start);
		ob_varint(b, pm->limit - pm->start);
		ob_varint(b, pm->offset);
		ob_varint(b, file);
		ob_varint(b, bid);
	}
	for (uint32_t i = 1; !rc && i < nf; i++)
		ob_varint(b, fm[i] ? renum[fm[i]] : 0);
	for (uint32_t i = 1; !rc && i < nf; i++) {
		uint32_t m;
		uint64_t off;

		if (!fm[i])
			continue;
		off = prof_frame_addr(p, i, &m) - prof_mapping_get(p, m)->start;
		ob_varint(b, zigzag((int64_t)(off - prev)));
		prev = off;
	}
	free(fm);
	free(renum);
	return rc ? rc : b->err;
}

static int encode_profile(struct obuf *b, const struct prof_profile *p,
			  struct prof_profile *tab)
{
	const struct prof_meta *m = prof_meta_const(p);
	struct obuf stacks = { 0 };
	struct enc_ctx c = { .out = &stacks };
	int rc;

	ob_varint(b, (uint64_t)m->unit);
	ob_varint(b, m->start_ns);
	ob_varint(b, m->duration_ns);
	ob_varint(b, m->hz);
	ob_varint(b, m->off_cpu);
	ob_varint(b, m->drops);
	rc = encode_frames(b, p, tab);
	if (!rc)
		rc = encode_places(b, p, tab);
	if (rc)
		return rc;
	/* The count goes first: the stacks are encoded aside, in one walk. */
	rc = prof_walk_stacks(p, enc_stack, &c);
	free(c.prev);
	if (rc == 0)
		rc = stacks.err;
	if (rc == 0) {
		ob_varint(b, c.nstacks);
		ob_bytes(b, stacks.p, stacks.len);
	}
	free(stacks.p);
	return rc ? rc : b->err;
}

/* ---- sections and blobs ------------------------------------------------- */

/* Appends @raw to @blob as varint raw length, varint zlib length, bytes. */
static int seal(struct obuf *blob, const struct obuf *raw, int level)
{
	uLongf zlen;

	if (raw->err)
		return raw->err;
	if (raw->len > STORE_CODEC_RAW_MAX)
		return -EFBIG;
	zlen = compressBound((uLong)raw->len);
	ob_varint(blob, raw->len);
	ob_reserve(blob, zlen + 10);
	if (blob->err)
		return blob->err;
	/* The zlib length goes before the bytes: compress after a gap. */
	if (compress2(blob->p + blob->len + 10, &zlen, raw->len ? raw->p : (const uint8_t *)"",
		      (uLong)raw->len, level) != Z_OK)
		return -ENOMEM;
	{
		size_t at = blob->len;
		uint8_t *z = blob->p + at + 10;

		ob_varint(blob, zlen);
		memmove(blob->p + blob->len, z, zlen);
		blob->len += zlen;
	}
	return blob->err;
}

/* @level: zlib's, STORE_ZLIB_LEVEL for the store, 0 (stored as is) for a
 * reply that only crosses a local socket. */
static int pack(const struct store_window *w, int level, void **out,
		size_t *outlen)
{
	struct prof_profile *ps[SEC_PROFILES], *tab = NULL, *alone = NULL;
	struct obuf sec[SEC_COUNT] = { 0 }, blob = { 0 };
	unsigned flags = 0, n = 0;
	int rc = 0;

	window_profiles(w, ps);
	for (int i = 0; i < SEC_PROFILES; i++)
		if (ps[i]) {
			flags |= 1u << i;
			n++;
			alone = ps[i];
		}
	/* Profiles share one table; one alone writes its own. */
	if (n > 1 && !(tab = prof_new(PROF_UNIT_SAMPLES)))
		rc = -ENOMEM;
	for (int i = 0; !rc && i < SEC_PROFILES; i++)
		if (ps[i])
			rc = encode_profile(&sec[SEC_ON + i], ps[i], tab);
	if (!rc) {
		encode_strings(&sec[SEC_STRINGS], tab ? tab : alone);
		ob_bytes(&blob, CODEC_MAGIC, 4);
		ob_varint(&blob, CODEC_VERSION);
		ob_varint(&blob, w->start_ns);
		ob_varint(&blob, w->end_ns);
		ob_varint(&blob, w->samples);
		ob_varint(&blob, w->idle_samples);
		ob_varint(&blob, w->offcpu_ns);
		ob_varint(&blob, w->drops);
		ob_varint(&blob, flags);
		rc = seal(&blob, &sec[SEC_STRINGS], level);
	}
	for (int i = SEC_ON; !rc && i < SEC_COUNT; i++)
		if (flags & (1u << (i - 1)))
			rc = seal(&blob, &sec[i], level);
	for (int i = 0; i < SEC_COUNT; i++)
		free(sec[i].p);
	prof_free(tab);
	if (rc) {
		free(blob.p);
		return rc;
	}
	*out = blob.p;
	*outlen = blob.len;
	return 0;
}

int store_codec_window_pack(const struct store_window *w, void **out,
			    size_t *outlen)
{
	if (w->end_ns < w->start_ns)
		return -EINVAL;
	return pack(w, STORE_ZLIB_LEVEL, out, outlen);
}

int store_codec_window_pack_stored(const struct store_window *w, void **out,
				   size_t *outlen)
{
	if (w->end_ns < w->start_ns)
		return -EINVAL;
	return pack(w, Z_NO_COMPRESSION, out, outlen);
}

int store_codec_profile_pack(const struct prof_profile *p, void **out,
			     size_t *outlen)
{
	return store_codec_pair_pack(p, NULL, out, outlen);
}

int store_codec_pair_pack(const struct prof_profile *p, const struct prof_profile *second,
			  void **out, size_t *outlen)
{
	struct store_window w = { .oncpu = (struct prof_profile *)p,
				  .offcpu = (struct prof_profile *)second };

	return pack(&w, Z_NO_COMPRESSION, out, outlen);
}

void store_window_clear(struct store_window *w)
{
	if (!w)
		return;
	prof_free(w->oncpu);
	prof_free(w->offcpu);
	prof_free(w->growth_req);
	prof_free(w->growth_bytes);
	memset(w, 0, sizeof(*w));
}
