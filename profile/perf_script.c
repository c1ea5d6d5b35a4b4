/* SPDX-License-Identifier: MIT */
/* `perf script` text into a profile (see perf_script.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "perf_script.h"

/* One line: [s, e), without its '\n'. */
struct line {
	const char *s, *e;
};

static bool next_line(const char **p, const char *end, struct line *l)
{
	const char *nl;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	l->s = *p;
	l->e = nl ? nl : end;
	*p = nl ? nl + 1 : end;
	if (l->e > l->s && l->e[-1] == '\r')
		l->e--;
	return true;
}

static bool blank(const struct line *l)
{
	for (const char *c = l->s; c < l->e; c++)
		if (!isspace((unsigned char)*c))
			return false;
	return true;
}

/* A header: "comm pid[/tid] ..." where comm starts with a non-space; the
 * comm ends before the first run of digits (with an optional "/digits")
 * set off by whitespace on both sides. Writes the comm's end. */
static bool header(const struct line *l, const char **comm_end)
{
	if (l->s == l->e || isspace((unsigned char)*l->s) || *l->s == '#')
		return false;
	for (const char *c = l->s + 1; c < l->e; c++) {
		const char *d;

		if (!isspace((unsigned char)*c))
			continue;
		d = c;
		while (d < l->e && isspace((unsigned char)*d))
			d++;
		if (d == l->e || !isdigit((unsigned char)*d))
			continue;
		while (d < l->e && isdigit((unsigned char)*d))
			d++;
		if (d < l->e && *d == '/')
			while (++d < l->e && isdigit((unsigned char)*d))
				;
		if (d < l->e && isspace((unsigned char)*d)) {
			*comm_end = c;
			return true;
		}
	}
	return false;
}

/* A stack line: "  addr func (module)". Writes the function's and the
 * module's spans. */
static bool stack_line(const struct line *l, struct line *fn, struct line *mod)
{
	const char *c = l->s, *open = NULL, *close;

	while (c < l->e && isspace((unsigned char)*c))
		c++;
	if (c == l->s || c == l->e || !(isalnum((unsigned char)*c) || *c == '_'))
		return false;
	while (c < l->e && (isalnum((unsigned char)*c) || *c == '_'))
		c++;
	while (c < l->e && isspace((unsigned char)*c))
		c++;
	/* The module is in the last " (" that a ')' follows. */
	for (close = l->e; close > c && close[-1] != ')'; close--)
		;
	if (close == c)
		return false;
	close--;
	for (const char *o = c + 1; o + 1 < close; o++)
		if (o[0] == ' ' && o[1] == '(')
			open = o;
	if (!open || open == c)
		return false;
	*fn = (struct line){ c, open };
	*mod = (struct line){ open + 2, close };
	return true;
}

/* The period and event of a header: "...: [period] event:" at its end.
 * Writes the event's span (empty when the line has none) and the period
 * (1 when none). */
static void period_event(const struct line *l, struct line *ev, unsigned long long *period)
{
	const char *e = l->e, *s;

	*ev = (struct line){ l->e, l->e };
	*period = 1;
	while (e > l->s && isspace((unsigned char)e[-1]))
		e--;
	if (e == l->s || e[-1] != ':')
		return;
	for (s = e - 1; s > l->s && !isspace((unsigned char)s[-1]); s--)
		;
	if (s == e - 1)
		return;
	ev->s = s;
	ev->e = e - 1;
	/* Before the event: a period (digits), then the time's ':'. */
	e = s;
	while (e > l->s && isspace((unsigned char)e[-1]))
		e--;
	for (s = e; s > l->s && isdigit((unsigned char)s[-1]); s--)
		;
	if (s < e) {
		const char *t = s;

		while (t > l->s && isspace((unsigned char)t[-1]))
			t--;
		if (t > l->s && t[-1] == ':' && t < s)
			*period = strtoull(s, NULL, 10);
		else if (t > l->s && t[-1] != ':')
			*ev = (struct line){ l->e, l->e }; /* not "time: period event:" */
	}
}

/* The function's span without a trailing "+0x<hex>" offset. */
static struct line no_offset(struct line fn)
{
	const char *c = fn.e;

	while (c > fn.s && isxdigit((unsigned char)c[-1]))
		c--;
	if (c < fn.e && c - fn.s >= 3 && c[-1] == 'x' && c[-2] == '0' && c[-3] == '+')
		fn.e = c - 3;
	return fn;
}

/* Tidies one function name as stackcollapse-perf does, into @out (size
 * @cap): ';' to ':', an argument list dropped (but in a Go method
 * "pkg.(*T).M" and for "(anonymous namespace)"), quotes dropped, a Java
 * "L" prefix dropped in a java process. "[unknown]" becomes "[module
 * file]", or stays "[unknown]". */
static void tidy(const char *s, size_t n, const struct line *mod, bool java,
		 char *out, size_t cap)
{
	const char *cut = s + n, *go_open = NULL, *c;
	size_t o = 0;

	if (n == 9 && !memcmp(s, "[unknown]", 9)) {
		const char *slash;

		if (mod->e - mod->s == 9 && !memcmp(mod->s, "[unknown]", 9)) {
			snprintf(out, cap, "[unknown]");
			return;
		}
		for (slash = mod->e; slash > mod->s && slash[-1] != '/'; slash--)
			;
		snprintf(out, cap, "[%.*s]", (int)(mod->e - slash), slash);
		return;
	}
	for (c = s; c + 1 < s + n && !go_open; c++)
		if (c[0] == '.' && c[1] == '(')
			go_open = c;
	for (c = s + n - 1; go_open && c > go_open + 1; c--)
		if (c[0] == '.' && c[-1] == ')')
			break;
	if (!go_open || c <= go_open + 1) {
		for (c = s; c < s + n; c++) {
			if (*c != '(')
				continue;
			if ((size_t)(s + n - c) >= 21 && !memcmp(c, "(anonymous namespace)", 21))
				continue;
			cut = c;
			break;
		}
	}
	for (c = s; c < cut && o + 1 < cap; c++)
		if (*c != '"' && *c != '\'')
			out[o++] = *c == ';' ? ':' : *c;
	out[o] = '\0';
	if (java && out[0] == 'L' && strchr(out, '/'))
		memmove(out, out + 1, o);
}

static bool kernel_module(const struct line *mod)
{
	size_t n = (size_t)(mod->e - mod->s);

	/* [vdso] and [vsyscall] are user code in brackets, as perf's own
	 * stackcollapse leaves them. */
	if ((n >= 9 && memmem(mod->s, n, "unknown", 7)) || (n >= 6 && memmem(mod->s, n, "vdso", 4)) ||
	    (n >= 10 && memmem(mod->s, n, "vsyscall", 8)))
		return false;
	return (n && mod->s[0] == '[') || (n >= 7 && !memcmp(mod->e - 7, "vmlinux", 7));
}

struct reading {
	struct prof_profile *p;
	uint32_t *stack; /* leaf first while read */
	size_t n, cap;
	bool in_sample, java;
	unsigned long long period;
	struct line event; /* the first event met */
	bool have_event;
	unsigned long long samples;
};

static int push(struct reading *r, uint32_t frame)
{
	if (frame == UINT32_MAX)
		return -ENOMEM;
	if (r->n == r->cap) {
		size_t c = r->cap ? r->cap * 2 : 64;
		uint32_t *s = realloc(r->stack, c * sizeof(*s));

		if (!s)
			return -ENOMEM;
		r->stack = s;
		r->cap = c;
	}
	r->stack[r->n++] = frame;
	return 0;
}

static uint32_t frame_of(struct prof_profile *p, const char *name, size_t len,
			 uint8_t kind, const struct line *mod)
{
	struct prof_frame f = { .kind = kind };

	f.name = prof_intern(p, name, len);
	if (mod)
		f.module = prof_intern(p, mod->s, (size_t)(mod->e - mod->s));
	if (f.name == UINT32_MAX || f.module == UINT32_MAX)
		return UINT32_MAX;
	if (kind == PROF_KIND_KERNEL)
		f.cls = PROF_CLASS_SYSTEM;
	else
		prof_guess_frame(p, &f);
	return prof_frame_intern(p, &f);
}

/* Ends the sample being read: its stack, the process and then its frames
 * root first, gets its period (a sample without frames counts for the
 * process alone, as stackcollapse-perf counts it). */
static int end_sample(struct reading *r)
{
	if (r->in_sample && r->n > 0) {
		/* [0] is the process, [1..n) the frames leaf first. */
		for (size_t i = 1, j = r->n - 1; i < j; i++, j--) {
			uint32_t t = r->stack[i];

			r->stack[i] = r->stack[j];
			r->stack[j] = t;
		}
		if (prof_add_stack(r->p, r->stack, r->n, r->period) == UINT32_MAX)
			return -ENOMEM;
		r->samples++;
	}
	r->in_sample = false;
	r->n = 0;
	return 0;
}

/* A header line: starts a sample of the first event type, else skips it. */
static int start_sample(struct reading *r, const struct line *l, const char *comm_end)
{
	char comm[256];
	size_t n = (size_t)(comm_end - l->s);
	struct line ev;

	period_event(l, &ev, &r->period);
	if (ev.s < ev.e) {
		if (!r->have_event) {
			r->event = ev;
			r->have_event = true;
		} else if ((size_t)(ev.e - ev.s) != (size_t)(r->event.e - r->event.s) ||
			   memcmp(ev.s, r->event.s, (size_t)(ev.e - ev.s))) {
			return 0; /* another event type: left out */
		}
	}
	if (n >= sizeof(comm))
		n = sizeof(comm) - 1;
	for (size_t i = 0; i < n; i++)
		comm[i] = l->s[i] == ' ' ? '_' : l->s[i];
	comm[n] = '\0';
	r->java = n >= 4 && !memcmp(comm, "java", 4);
	r->in_sample = true;
	return push(r, frame_of(r->p, comm, n, PROF_KIND_PROCESS, NULL));
}

/* A stack line of the sample being read; "a->b" (an old perf's inline
 * chain) is one frame each, the later ones inline. */
static int stack_frames(struct reading *r, struct line fn, const struct line *mod)
{
	char name[1024];
	uint32_t group[64];
	size_t ng = 0;
	bool kernel = kernel_module(mod);
	const char *part = fn.s;

	fn = no_offset(fn);
	if (fn.s < fn.e && *fn.s == '(')
		return 0; /* a process name, not a frame */
	while (ng < 64) {
		const char *arrow = part;
		uint8_t kind = ng ? PROF_KIND_INLINE : kernel ? PROF_KIND_KERNEL : PROF_KIND_USER;

		while (arrow + 1 < fn.e && !(arrow[0] == '-' && arrow[1] == '>'))
			arrow++;
		if (arrow + 1 >= fn.e)
			arrow = fn.e;
		tidy(part, (size_t)(arrow - part), mod, r->java, name, sizeof(name));
		group[ng] = frame_of(r->p, name, strlen(name), kind, mod);
		if (group[ng++] == UINT32_MAX)
			return -ENOMEM;
		if (arrow == fn.e)
			break;
		part = arrow + 2;
	}
	/* Leaf first: the group goes in reversed, to come out in its order. */
	for (size_t i = ng; i-- > 0;)
		if (push(r, group[i]) < 0)
			return -ENOMEM;
	return 0;
}

int prof_perf_script_sniff(const void *buf, size_t len)
{
	const char *p = buf, *end = p + len, *comm_end;
	struct line l, fn, mod;
	bool found = false;

	while (!found && next_line(&p, end, &l))
		found = !blank(&l) && *l.s != '#';
	return found && header(&l, &comm_end) && next_line(&p, end, &l) &&
	       stack_line(&l, &fn, &mod);
}

int prof_perf_script_read(const char *buf, size_t len, struct prof_profile **out,
			  char *err, size_t errlen)
{
	struct reading r = { 0 };
	const char *p = buf, *end = buf + len, *comm_end;
	struct line l, fn, mod;
	int rc = 0;

	*out = NULL;
	if (!(r.p = prof_new(PROF_UNIT_SAMPLES)))
		return -ENOMEM;
	while (!rc && next_line(&p, end, &l)) {
		if (l.s < l.e && *l.s == '#')
			continue;
		if (blank(&l))
			rc = end_sample(&r);
		else if (header(&l, &comm_end))
			rc = end_sample(&r) ? -ENOMEM : start_sample(&r, &l, comm_end);
		else if (r.in_sample && stack_line(&l, &fn, &mod))
			rc = stack_frames(&r, fn, &mod);
	}
	if (!rc)
		rc = end_sample(&r);
	free(r.stack);
	if (!rc && !r.samples) {
		snprintf(err, errlen, "holds no perf script sample with a stack");
		rc = -EINVAL;
	}
	if (rc) {
		prof_free(r.p);
		return rc;
	}
	/* cpu-clock and task-clock count their period in nanoseconds. */
	if (r.have_event && ((r.event.e - r.event.s >= 9 && !memcmp(r.event.s, "cpu-clock", 9)) ||
			     (r.event.e - r.event.s >= 10 && !memcmp(r.event.s, "task-clock", 10))))
		prof_meta(r.p)->unit = PROF_UNIT_NANOSECONDS;
	*out = r.p;
	return 0;
}
