/* SPDX-License-Identifier: MIT */
/* hearth's lines at the top of a folded file: written before the
 * stacks, read back into the frames (folded_meta.h). */
#include "folded_meta.h"

#include "classify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile_impl.h"

static const char *const kind_keys[] = {
	[PROF_KIND_USER] = "user", [PROF_KIND_KERNEL] = "kernel",
	[PROF_KIND_INLINE] = "inline", [PROF_KIND_PROCESS] = "process",
	[PROF_KIND_THREAD] = "thread",
};
static const char *const class_keys[PROF_CLASS_COUNT] = {
	[PROF_CLASS_UNKNOWN] = "unknown", [PROF_CLASS_YOURS] = "yours",
	[PROF_CLASS_LIBRARY] = "library", [PROF_CLASS_RUNTIME] = "runtime",
	[PROF_CLASS_SYSTEM] = "system", [PROF_CLASS_WAITING] = "waiting",
};
static const char *const lang_keys[PROF_LANG_COUNT] = {
	[PROF_LANG_UNKNOWN] = "unknown", [PROF_LANG_C] = "c",
	[PROF_LANG_CPP] = "c++", [PROF_LANG_RUST] = "rust", [PROF_LANG_GO] = "go",
	[PROF_LANG_ASM] = "asm", [PROF_LANG_JIT] = "jit", [PROF_LANG_PYTHON] = "python",
};
static const char *const unit_keys[] = {
	[PROF_UNIT_SAMPLES] = "samples", [PROF_UNIT_NANOSECONDS] = "nanoseconds",
	[PROF_UNIT_BYTES] = "bytes",
};
static const char *const question_keys[] = {
	[PROF_Q_USUAL] = "usual", [PROF_Q_WALL] = "wall", [PROF_Q_THREADS] = "threads",
	[PROF_Q_LOCKS] = "locks", [PROF_Q_ALLOC] = "alloc", [PROF_Q_HELD] = "held",
	[PROF_Q_GROWTH] = "growth",
};

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- writing --------------------------------------------------------------- */

/* The key of value @v in @keys, or the first (unknown) for one without. */
static const char *key(const char *const *keys, size_t nkeys, unsigned v)
{
	return v < nkeys && keys[v] ? keys[v] : keys[0];
}

static void put_escaped(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '\\': fputs("\\\\", out); break;
		case '\t': fputs("\\t", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		default: fputc(s[i], out);
		}
	}
}

static void put_str(FILE *out, const struct prof_profile *p, uint32_t id)
{
	put_escaped(out, prof_str(p, id), prof_str_len(p, id));
}

/* The frame of @info that frame @id of @w stands for, when it says more
 * than the reader gets from the spelling alone (its guess from the name,
 * prof_guess_frame); else NULL. Process rows say nothing. */
static const struct prof_frame *worth_a_line(const struct prof_profile *w,
					     uint32_t id,
					     const struct prof_profile *info,
					     const uint32_t *info_of)
{
	const struct prof_frame *s = prof_frame_get(w, id);
	const struct prof_frame *f = prof_frame_get(info, info_of ? info_of[id] : id);
	struct prof_frame g = { .name = s->name, .kind = s->kind };

	if (!f || s->kind == PROF_KIND_PROCESS || f->kind == PROF_KIND_PROCESS)
		return NULL;
	if (f->module || f->file || f->line || f->kind == PROF_KIND_THREAD)
		return f;
	if (g.kind == PROF_KIND_INLINE)
		g.kind = PROF_KIND_USER; /* unless annotated, spelled as one */
	prof_guess_frame(w, &g);
	return f->cls != g.cls || f->lang != g.lang ? f : NULL;
}

int folded_meta_write(FILE *out, const struct prof_profile *w,
		      const struct prof_meta *m, const struct prof_profile *info,
		      const uint32_t *info_of, int annotate)
{
	const struct prof_profile *ip = info ? info : w;
	int any = m->unit != PROF_UNIT_SAMPLES || m->off_cpu || m->hz ||
		  m->start_ns || m->duration_ns || m->drops || m->question;

	for (uint32_t id = 1; !any && id < prof_frame_count(w); id++)
		any = worth_a_line(w, id, ip, info_of) != NULL;
	if (!any)
		return 0; /* plain folded text: nothing to add */
	fprintf(out, "# hearth-profile 1 unit=%s off-cpu=%u hz=%u start-ns=%" PRIu64
		" duration-ns=%" PRIu64 " drops=%" PRIu64 "%s%s #\n",
		m->unit < NKEYS(unit_keys) ? unit_keys[m->unit] : "samples",
		m->off_cpu ? 1u : 0u, m->hz, m->start_ns, m->duration_ns, m->drops,
		m->question ? " question=" : "",
		m->question ? key(question_keys, NKEYS(question_keys), m->question) : "");
	for (uint32_t id = 1; id < prof_frame_count(w); id++) {
		const struct prof_frame *s = prof_frame_get(w, id);
		const struct prof_frame *f = worth_a_line(w, id, ip, info_of);

		if (!f)
			continue;
		fputs("# hearth-frame\t", out);
		put_str(out, w, s->name);
		if (s->kind == PROF_KIND_KERNEL)
			fputs(KERNEL_SUFFIX, out);
		else if (s->kind == PROF_KIND_INLINE && annotate)
			fputs(INLINE_SUFFIX, out);
		fprintf(out, "\t%s\t%s\t%s\t", key(kind_keys, NKEYS(kind_keys), f->kind),
			key(class_keys, NKEYS(class_keys), f->cls),
			key(lang_keys, NKEYS(lang_keys), f->lang));
		put_str(out, ip, f->module);
		fputc('\t', out);
		put_str(out, ip, f->file);
		fprintf(out, "\t%u #\n", f->line);
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- reading --------------------------------------------------------------- */

/* 1 when the line @s[0..n) ends in whitespace and a number: a stack, for
 * flamegraph.pl as for hearth. */
static int ends_in_count(const char *s, size_t n)
{
	size_t e = n, d;

	while (e && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
		e--;
	for (d = e; d && s[d - 1] >= '0' && s[d - 1] <= '9'; d--)
		;
	return d < e && d && (s[d - 1] == ' ' || s[d - 1] == '\t');
}

/* Unescapes @s[0..n) into a new string; NULL on ENOMEM. */
static char *unescaped(const char *s, size_t n, size_t *len)
{
	char *o = malloc(n + 1);
	size_t k = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 1 < n) {
			c = s[++i];
			c = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
		}
		o[k++] = c;
	}
	o[k] = '\0';
	if (len)
		*len = k;
	return o;
}

static int key_of(const char *const *keys, size_t nkeys, const char *s,
		  size_t n)
{
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i] && strlen(keys[i]) == n && !memcmp(keys[i], s, n))
			return (int)i;
	return 0;
}

static uint32_t text_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (uint32_t)(h ^ h >> 32);
}

/* Indexes v[i] by its text (the slots have room). */
static void slot_put(struct folded_meta *fm, size_t i)
{
	size_t mask = fm->nslots - 1, j = text_hash(fm->v[i].text, fm->v[i].len) & mask;

	while (fm->slots[j])
		j = (j + 1) & mask;
	fm->slots[j] = (uint32_t)i + 1;
}

/* Reads "# hearth-frame" fields @s[0..n) (after the tag's tab, without
 * the closing " #"). 0, or -ENOMEM; a malformed line is skipped. */
static int frame_line(struct folded_meta *fm, const char *s, size_t n)
{
	const char *f[7];
	size_t fl[7], k = 0, at = 0;
	struct meta_frame mf = { 0 };
	char *end;

	while (k < 7) {
		const char *tab = memchr(s + at, '\t', n - at);
		size_t e = tab ? (size_t)(tab - s) : n;

		f[k] = s + at;
		fl[k++] = e - at;
		if (!tab)
			break;
		at = e + 1;
	}
	if (k < 7 || !fl[0])
		return 0;
	mf.kind = (uint8_t)key_of(kind_keys, NKEYS(kind_keys), f[1], fl[1]);
	mf.cls = (uint8_t)key_of(class_keys, NKEYS(class_keys), f[2], fl[2]);
	mf.lang = (uint8_t)key_of(lang_keys, NKEYS(lang_keys), f[3], fl[3]);
	mf.line = (uint32_t)strtoul(f[6], &end, 10);
	if (prof_grow_how((void **)&fm->v, &fm->cap, fm->n + 1, sizeof(*fm->v), 0) < 0)
		return -ENOMEM;
	if (!(mf.text = unescaped(f[0], fl[0], &mf.len)) ||
	    !(mf.module = unescaped(f[4], fl[4], NULL)) ||
	    !(mf.file = unescaped(f[5], fl[5], NULL))) {
		free(mf.text);
		free(mf.module);
		return -ENOMEM;
	}
	fm->v[fm->n++] = mf;
	return 0;
}

/* Reads "# hearth-profile 1 key=value ..." tokens @s[0..n). */
static void profile_line(struct folded_meta *fm, const char *s, size_t n)
{
	struct prof_meta *m = &fm->meta;

	fm->has_profile = 1;
	for (size_t at = 0; at < n;) {
		size_t e = at, eq;
		char num[24];

		while (e < n && s[e] != ' ')
			e++;
		for (eq = at; eq < e && s[eq] != '='; eq++)
			;
		if (eq < e) {
			const char *key = s + at, *val = s + eq + 1;
			size_t kl = eq - at, vl = e - eq - 1;
			uint64_t v = 0;

			snprintf(num, sizeof(num), "%.*s", (int)(vl < 23 ? vl : 23), val);
			v = strtoull(num, NULL, 10);
			if (kl == 4 && !memcmp(key, "unit", 4))
				m->unit = (enum prof_unit)key_of(unit_keys, NKEYS(unit_keys), val, vl);
			else if (kl == 7 && !memcmp(key, "off-cpu", 7))
				m->off_cpu = v != 0;
			else if (kl == 2 && !memcmp(key, "hz", 2))
				m->hz = v <= UINT32_MAX ? (uint32_t)v : 0;
			else if (kl == 8 && !memcmp(key, "start-ns", 8))
				m->start_ns = v;
			else if (kl == 11 && !memcmp(key, "duration-ns", 11))
				m->duration_ns = v;
			else if (kl == 5 && !memcmp(key, "drops", 5))
				m->drops = v;
			else if (kl == 8 && !memcmp(key, "question", 8))
				m->question = key_of(question_keys, NKEYS(question_keys), val, vl);
		}
		at = e + 1;
	}
}

/* Reads one comment line @s[0..n) (without its end). */
static int comment_line(struct folded_meta *fm, const char *s, size_t n)
{
	static const char frame_tag[] = "# hearth-frame\t", prof_tag[] = "# hearth-profile 1 ";

	while (n && s[n - 1] == '\r')
		n--;
	if (n < 2 || s[n - 1] != '#' || s[n - 2] != ' ')
		return 0; /* not hearth's */
	n -= 2;
	if (n > sizeof(frame_tag) - 1 && !memcmp(s, frame_tag, sizeof(frame_tag) - 1))
		return frame_line(fm, s + sizeof(frame_tag) - 1, n - (sizeof(frame_tag) - 1));
	if (n >= sizeof(prof_tag) - 1 && !memcmp(s, prof_tag, sizeof(prof_tag) - 1))
		profile_line(fm, s + sizeof(prof_tag) - 1, n - (sizeof(prof_tag) - 1));
	return 0;
}

/* Indexes the frame lines read. 0 or -ENOMEM. */
static int index_frames(struct folded_meta *fm)
{
	size_t cap = 16;

	if (!fm->n)
		return 0;
	while (cap < 2 * fm->n)
		cap *= 2;
	if (!(fm->slots = calloc(cap, sizeof(*fm->slots))))
		return -ENOMEM;
	fm->nslots = cap;
	for (size_t i = 0; i < fm->n; i++)
		if (!folded_meta_find(fm, fm->v[i].text, fm->v[i].len))
			slot_put(fm, i); /* the first line of a text counts */
	return 0;
}

int folded_meta_read(struct folded_meta *fm, const char *s, size_t len,
		     int partial, size_t *used, int *done)
{
	size_t at = 0;
	int rc = 0;

	*fm = (struct folded_meta){ 0 };
	*done = 1;
	while (at < len && s[at] == '#') {
		const char *nl = memchr(s + at, '\n', len - at);
		size_t e = nl ? (size_t)(nl - s) : len;

		if (!nl && partial) {
			*done = 0; /* the line goes on past what was read */
			break;
		}
		if (ends_in_count(s + at, e - at))
			break; /* a stack whose first frame starts with '#' */
		if ((rc = comment_line(fm, s + at, e - at)) < 0)
			break;
		fm->lines++;
		at = nl ? e + 1 : e;
	}
	if (partial && at == len)
		*done = 0;
	*used = at;
	if (rc == 0)
		rc = index_frames(fm);
	if (rc < 0)
		folded_meta_free(fm);
	return rc;
}

const struct meta_frame *folded_meta_find(const struct folded_meta *fm,
					  const char *s, size_t len)
{
	size_t mask = fm->nslots - 1, j;
	uint32_t sl;

	if (!fm->nslots)
		return NULL;
	for (j = text_hash(s, len) & mask; (sl = fm->slots[j]) != 0; j = (j + 1) & mask)
		if (fm->v[sl - 1].len == len && !memcmp(fm->v[sl - 1].text, s, len))
			return &fm->v[sl - 1];
	return NULL;
}

void folded_meta_free(struct folded_meta *fm)
{
	for (size_t i = 0; i < fm->n; i++) {
		free(fm->v[i].text);
		free(fm->v[i].module);
		free(fm->v[i].file);
	}
	free(fm->v);
	free(fm->slots);
	*fm = (struct folded_meta){ 0 };
}
