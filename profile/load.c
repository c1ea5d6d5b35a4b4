/* SPDX-License-Identifier: MIT */
/*
 * Opening a profile file: read (bounded), gunzip (bounded as it grows),
 * recognise, parse. The formats are a table: each recognises its content
 * and parses it; the first that recognises the bytes reads them, folded
 * text last, as it takes what no other format claims.
 */
#include "load.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "difffolded.h"
#include "folded.h"
#include "gzip.h"
#include "perf_script.h"
#include "pprof.h"

_Static_assert(PROF_LOAD_MAX_TYPES == PROF_PPROF_MAX_TYPES, "one bound on sample types");

struct format {
	const char *name;
	/* 1 when @buf[0..len) looks like this format. */
	int (*sniff)(const void *buf, size_t len);
	/* Parses it into *@out; 0 or a negative errno with a sentence. */
	int (*parse)(const void *buf, size_t len, const struct prof_load_opts *o,
		     struct prof_profile **out, char *err, size_t errlen);
};

static int pprof_parse(const void *buf, size_t len,
		       const struct prof_load_opts *o, struct prof_profile **out,
		       char *err, size_t errlen)
{
	return prof_pprof_decode_type(buf, len, o->max_input, o->sample_type, out, err, errlen);
}

static int folded_sniff(const void *buf, size_t len)
{
	(void)buf;
	(void)len;
	return 1;
}

/* The unit asked for (--unit) goes over what hearth's lines in the text
 * said. */
static void unit_asked(struct prof_profile *p, const struct prof_load_opts *o)
{
	if (o && 0 <= o->unit)
		prof_meta(p)->unit = (enum prof_unit)o->unit;
}

static int folded_parse(const void *buf, size_t len,
			const struct prof_load_opts *o, struct prof_profile **out,
			char *err, size_t errlen)
{
	/* Small texts gain nothing from threads. */
	struct prof_folded_opts fo = { 1, 1, len < ((size_t)1 << 20) ? 1 : o->threads };
	struct prof_profile *p = prof_new(o->unit < 0 ? PROF_UNIT_SAMPLES :
					  (enum prof_unit)o->unit);
	int rc;

	if (!p)
		return -ENOMEM;
	rc = prof_folded_read(p, buf, len, &fo, err, errlen);
	if (rc < 0) {
		prof_free(p);
		return rc;
	}
	unit_asked(p, o);
	*out = p;
	return 0;
}

static int perf_script_parse(const void *buf, size_t len,
			     const struct prof_load_opts *o, struct prof_profile **out,
			     char *err, size_t errlen)
{
	int rc = prof_perf_script_read(buf, len, out, err, errlen);

	if (!rc)
		unit_asked(*out, o);
	return rc;
}

static int difffolded_parse(const void *buf, size_t len,
			    const struct prof_load_opts *o, struct prof_profile **out,
			    char *err, size_t errlen)
{
	if (o->diff_side != 1 && o->diff_side != 2) {
		snprintf(err, errlen, "holds two counts a line, difffolded.pl's before and after: "
			 "'hearth diff FILE' compares them");
		return -EINVAL;
	}
	return prof_difffolded_read(buf, len, o->diff_side,
				    o->unit < 0 ? PROF_UNIT_SAMPLES : (enum prof_unit)o->unit,
				    out, err, errlen);
}

/* Folded text last: it takes what no other format claims. */
static const struct format formats[] = {
	{ "pprof", prof_pprof_sniff, pprof_parse },
	{ "perf script", prof_perf_script_sniff, perf_script_parse },
	{ "difffolded", prof_difffolded_sniff, difffolded_parse },
	{ "folded", folded_sniff, folded_parse },
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

/* The threads a big folded text is read on: @asked, or one per online
 * CPU (at most 8). */
static unsigned threads(unsigned asked)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (asked)
		return asked;
	return cpus < 1 ? 1 : cpus < 8 ? (unsigned)cpus : 8;
}

static int is_gzip(const unsigned char *b, size_t len)
{
	return 2 <= len && b[0] == 0x1f && b[1] == 0x8b;
}

/* Says "@name: what" in @err; returns @rc. */
static int say(char *err, size_t errlen, int rc, const char *name,
	       const char *what)
{
	if (err && errlen)
		snprintf(err, errlen, "%s %s", name, what);
	return rc;
}

/* Hands over the loaded @p in *@out, with what the load met in @note (or
 * NULL), unless its counts add up past what it can hold. 0 or
 * -EOVERFLOW. */
static int checked(struct prof_profile *p, const char *name,
		   struct prof_load_note *note, struct prof_profile **out,
		   const char *format, char *err, size_t errlen)
{
	if (prof_total(p) == UINT64_MAX) {
		prof_free(p);
		return say(err, errlen, -EOVERFLOW, name,
			   "has counts that add up to 2^64 or more, past what hearth can count");
	}
	if (note)
		*note = (struct prof_load_note){ format, 0, prof_meta_const(p)->negative };
	*out = p;
	return 0;
}

/* Says that a parse of @name failed with @rc (its sentence @why); returns
 * @rc. */
static int parse_failed(int rc, const char *why, const char *name, char *err,
			size_t errlen)
{
	if (rc == -ENOMEM)
		return say(err, errlen, rc, name, "cannot be read: out of memory");
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", name, why);
	return rc;
}

/* Every sample type of pprof data @buf[0..len) into @all, each checked
 * as checked() does. 0 or a negative errno with a sentence naming @name. */
static int pprof_all(const void *buf, size_t len, const char *name, size_t max,
		     struct prof_load_types *all, struct prof_load_note *note,
		     char *err, size_t errlen)
{
	char why[256] = "";
	int rc = prof_pprof_decode_all(buf, len, max, all->p, &all->n, &all->shown,
				       why, sizeof(why));

	if (rc < 0)
		return parse_failed(rc, why, name, err, errlen);
	for (size_t i = 0; i < all->n; i++) {
		if (prof_total(all->p[i]) == UINT64_MAX) {
			prof_load_types_free(all);
			return say(err, errlen, -EOVERFLOW, name,
				   "has counts that add up to 2^64 or more, past what hearth can count");
		}
	}
	if (note)
		*note = (struct prof_load_note){ "pprof", 0,
						 prof_meta_const(all->p[all->shown])->negative };
	return 0;
}

/* prof_load_bytes(); with @all, a pprof file read without a sample type
 * asked for gives every type there (*@out stays NULL then). */
static int load_bytes(const void *buf, size_t len, const char *name,
		      const struct prof_load_opts *o, struct prof_load_types *all,
		      struct prof_profile **out, struct prof_load_note *note,
		      char *err, size_t errlen)
{
	struct prof_load_opts d = { 0, 0, -1, 0, NULL };
	struct prof_load_note n = { 0 };
	uint8_t *plain = NULL;
	char why[256] = "";
	const struct format *f = formats;
	struct prof_profile *p;
	int rc;

	*out = NULL;
	if (o)
		d = *o;
	if (!d.max_input)
		d.max_input = PROF_LOAD_MAX_INPUT;
	d.threads = threads(d.threads);
	if (is_gzip(buf, len)) {
		n.gzip = 1;
		rc = gz_inflate(buf, len, d.max_input, &plain, &len);
		if (rc == -EFBIG) {
			snprintf(why, sizeof(why), "is larger than %zu MiB once decompressed "
				 "(--max-input raises the limit)", d.max_input >> 20);
			return say(err, errlen, rc, name, why);
		}
		if (rc == -EINVAL)
			return say(err, errlen, rc, name, "is not a whole gzip stream: it is corrupt or cut short");
		if (rc < 0)
			return say(err, errlen, rc, name, "cannot be decompressed: out of memory");
		buf = plain;
	}
	while (!f->sniff(buf, len))
		f++;
	n.format = f->name;
	if (d.sample_type && f != formats) {
		free(plain);
		snprintf(why, sizeof(why), "is %s, not pprof: --sample-type picks among a pprof "
			 "file's sample types", f->name);
		return say(err, errlen, -EINVAL, name, why);
	}
	if (all && f == formats && !d.sample_type) {
		rc = pprof_all(buf, len, name, d.max_input, all, note, err, errlen);
		free(plain);
		if (rc == 0 && note)
			note->gzip = n.gzip;
		return rc;
	}
	rc = f->parse(buf, len, &d, out, why, sizeof(why));
	free(plain);
	if (rc < 0)
		return parse_failed(rc, why, name, err, errlen);
	p = *out;
	*out = NULL;
	rc = checked(p, name, note, out, n.format, err, errlen);
	if (rc == 0 && note)
		note->gzip = n.gzip;
	return rc;
}

int prof_load_bytes(const void *buf, size_t len, const char *name,
		    const struct prof_load_opts *o, struct prof_profile **out,
		    struct prof_load_note *note, char *err, size_t errlen)
{
	return load_bytes(buf, len, name, o, NULL, out, note, err, errlen);
}

/* Reads @fd whole into *@buf (*@len bytes, a NUL after them): a regular
 * file's size is known up front and must not change while it is read;
 * anything else (a pipe, a device) is read until its end. 0, -EFBIG past
 * @max, -EAGAIN when the file changed size, -EISDIR, -EIO or -ENOMEM. */
static int read_all(int fd, size_t max, char **buf, size_t *len)
{
	struct stat st;
	size_t cap, n = 0;
	char *b;
	int regular;

	if (fstat(fd, &st) < 0)
		return -EIO;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	regular = S_ISREG(st.st_mode);
	if (regular && (uint64_t)max < (uint64_t)st.st_size)
		return -EFBIG;
	cap = regular ? (size_t)st.st_size + 1 : (size_t)1 << 16;
	if (!(b = malloc(cap + 1)))
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			size_t c = cap <= max / 2 ? cap * 2 : max + 1;
			char *nb = n <= max ? realloc(b, c + 1) : NULL;

			if (!nb) {
				free(b);
				return max < n ? -EFBIG : -ENOMEM;
			}
			b = nb;
			cap = c;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno == EISDIR ? -EISDIR : -EIO;

			free(b);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (max < n || (regular && n != (size_t)st.st_size)) {
		free(b);
		return max < n ? -EFBIG : -EAGAIN;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* A regular file of folded text, read by parts straight from @fd (no
 * copy of the whole file in memory): 1 when it is one and was read (rc
 * in *@rc), 0 when it is not (read it whole). */
static int folded_file(int fd, const char *name, const struct prof_load_opts *o,
		       struct prof_profile **out, struct prof_load_note *note,
		       char *err, size_t errlen, int *rc)
{
	/* Enough for perf script's header comments before its first sample. */
	static const size_t head_len = 64 << 10;
	struct prof_folded_opts fo = { 1, 1, o && o->threads ? o->threads : 0 };
	size_t max = o && o->max_input ? o->max_input : PROF_LOAD_MAX_INPUT;
	struct prof_profile *p;
	char why[256] = "";
	unsigned char *head;
	struct stat st;
	ssize_t n;
	int other;

	if ((o && o->sample_type) || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)max < (uint64_t)st.st_size || !(head = malloc(head_len)))
		return 0;
	n = pread(fd, head, head_len, 0);
	other = n < 0 || is_gzip(head, (size_t)n);
	for (size_t i = 0; !other && i + 1 < NFORMATS; i++)
		other = formats[i].sniff(head, (size_t)n);
	free(head);
	if (other)
		return 0;
	fo.threads = st.st_size < (1 << 20) ? 1 : threads(fo.threads);
	if (!(p = prof_new(o && 0 <= o->unit ? (enum prof_unit)o->unit : PROF_UNIT_SAMPLES))) {
		*rc = say(err, errlen, -ENOMEM, name, "cannot be read: out of memory");
		return 1;
	}
	*rc = prof_folded_read_fd(p, fd, (uint64_t)st.st_size, &fo, why, sizeof(why));
	if (*rc == -EAGAIN)
		*rc = say(err, errlen, *rc, name, "changed while it was read");
	else if (*rc == -ENOMEM)
		*rc = say(err, errlen, *rc, name, "cannot be read: out of memory");
	else if (*rc < 0 && err && errlen)
		snprintf(err, errlen, "%s: %s", name, why);
	if (*rc == 0) {
		unit_asked(p, o);
		*rc = checked(p, name, note, out, "folded", err, errlen);
	} else {
		prof_free(p);
	}
	return 1;
}

/* prof_load(), with load_bytes()'s @all. */
static int load_path(const char *path, const struct prof_load_opts *o,
		     struct prof_load_types *all, struct prof_profile **out,
		     struct prof_load_note *note, char *err, size_t errlen)
{
	int std = !strcmp(path, "-");
	const char *name = std ? "standard input" : path;
	int fd = std ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	size_t max = o && o->max_input ? o->max_input : PROF_LOAD_MAX_INPUT, len;
	char *buf = NULL, why[128];
	int rc;

	*out = NULL;
	if (fd < 0) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "cannot open %s: %s", name, strerror(errno));
		return rc;
	}
	if (!std && folded_file(fd, name, o, out, note, err, errlen, &rc)) {
		close(fd);
		return rc;
	}
	rc = read_all(fd, max, &buf, &len);
	if (!std)
		close(fd);
	switch (rc) {
	case 0:
		break;
	case -EISDIR:
		return say(err, errlen, rc, name, "is a directory");
	case -EFBIG:
		snprintf(why, sizeof(why), "is larger than %zu MiB (--max-input raises the limit)",
			 max >> 20);
		return say(err, errlen, rc, name, why);
	case -EAGAIN:
		return say(err, errlen, rc, name, "changed while it was read");
	case -ENOMEM:
		return say(err, errlen, rc, name, "cannot be read: out of memory");
	default:
		return say(err, errlen, rc, name, "cannot be read: input/output error");
	}
	rc = load_bytes(buf, len, name, o, all, out, note, err, errlen);
	free(buf);
	return rc;
}

int prof_load(const char *path, const struct prof_load_opts *o,
	      struct prof_profile **out, struct prof_load_note *note,
	      char *err, size_t errlen)
{
	return load_path(path, o, NULL, out, note, err, errlen);
}

int prof_load_types(const char *path, const struct prof_load_opts *o,
		    struct prof_load_types *out, struct prof_load_note *note,
		    char *err, size_t errlen)
{
	struct prof_profile *p = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = load_path(path, o, out, &p, note, err, errlen);
	if (rc == 0 && p) {
		out->p[0] = p;
		out->n = 1;
	}
	return rc;
}

void prof_load_types_free(struct prof_load_types *t)
{
	for (size_t i = 0; i < t->n; i++)
		prof_free(t->p[i]);
	memset(t, 0, sizeof(*t));
}
