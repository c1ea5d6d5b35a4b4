/* SPDX-License-Identifier: MIT */
/*
 * The folded reader's lines against a plain reference written here: line
 * by line with the C library, each frame interned in turn and each stack
 * added with prof_add_stack(). Random texts whose lines often repeat,
 * extend or cut short the line before (the reader skips what a line
 * shares with the one before), with blanks, CRLF, tabs, spaces inside
 * frames, marks, process rows and bad lines: the same frames (ids,
 * names, kinds), the same tree, the same error at the same line and the
 * lines before it kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile/folded.h"
#include "profile/profile.h"
#include "same_profile.h"

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ---- the reference ------------------------------------------------------- */

static int ends_with(const char *s, size_t len, const char *suffix)
{
	return 4 < len && memcmp(s + len - 4, suffix, 4) == 0;
}

static uint32_t ref_frame(struct prof_profile *p, const char *s, size_t len,
			  int process)
{
	struct prof_frame f = { 0 };

	if (process) {
		f.kind = PROF_KIND_PROCESS;
	} else if (ends_with(s, len, "_[k]")) {
		f.kind = PROF_KIND_KERNEL;
		len -= 4;
	} else if (ends_with(s, len, "_[i]")) {
		f.kind = PROF_KIND_INLINE;
		len -= 4;
	}
	f.name = prof_intern(p, s, len);
	assert_true(f.name != UINT32_MAX);
	return prof_frame_intern(p, &f);
}

/* Reads one line @s[0..len) into @p; NULL, or what is wrong with it. */
static const char *ref_line(struct prof_profile *p, const char *s, size_t len,
			    int procs)
{
	static uint32_t frames[4096];
	size_t sp, n = 0, at = 0;
	uint64_t count = 0;

	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' ||
		       s[len - 1] == '\r'))
		len--;
	if (len == 0)
		return NULL;
	for (sp = len; sp && s[sp - 1] != ' ' && s[sp - 1] != '\t'; sp--)
		;
	if (sp == 0)
		return "has no sample count after the stack";
	if (sp == len)
		return "has a count that is not a decimal integer";
	for (size_t i = sp; i < len; i++) {
		if (s[i] < '0' || '9' < s[i])
			return "has a count that is not a decimal integer";
		if ((UINT64_MAX - (uint64_t)(s[i] - '0')) / 10 < count)
			return "has a count too large for 64 bits";
		count = count * 10 + (uint64_t)(s[i] - '0');
	}
	if (memchr(s, '\0', len))
		return "has a NUL byte";
	sp--; /* the separator */
	for (size_t i = 0; i <= sp; i++) {
		if (i < sp && s[i] != ';')
			continue;
		if (i == at)
			return "has an empty frame";
		at = i + 1;
	}
	at = 0;
	for (size_t i = 0; i <= sp; i++) {
		if (i < sp && s[i] != ';')
			continue;
		assert_true(n < 4096);
		frames[n] = ref_frame(p, s + at, i - at, n == 0 && procs);
		n++;
		at = i + 1;
	}
	assert_true(prof_add_stack(p, frames, n, count) != UINT32_MAX);
	return NULL;
}

/* Reads @t[0..len) line by line; 0, or -EINVAL with "line N what" in
 * @err. */
static int ref_parse(struct prof_profile *p, const char *t, size_t len,
		     int procs, char *err, size_t errlen)
{
	size_t at = 0, line = 0;

	if (3 <= len && memcmp(t, "\xef\xbb\xbf", 3) == 0)
		at = 3;
	while (at < len) {
		const char *nl = memchr(t + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - t) : len;
		const char *bad;

		line++;
		bad = ref_line(p, t + at, end - at, procs);
		if (bad) {
			snprintf(err, errlen, "line %zu %s", line, bad);
			return -EINVAL;
		}
		at = end + 1;
	}
	return 0;
}

/* Parses @t[0..len) both ways, the reader on @threads threads (into a
 * heap copy that ends there, so reading past it is caught), and
 * compares; returns the reader's result. */
static int check_text(const char *t, size_t len, int procs, unsigned threads)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct prof_profile *r = prof_new(PROF_UNIT_SAMPLES);
	char *copy = malloc(len ? len : 1), e1[256] = "", e2[256] = "";
	int a, b;

	assert_non_null(p);
	assert_non_null(r);
	assert_non_null(copy);
	memcpy(copy, t, len);
	{
		const struct prof_folded_opts o = { procs, (int)(threads & 1) == 0, threads };

		a = prof_folded_read(p, copy, len, &o, e1, sizeof(e1));
	}
	b = ref_parse(r, t, len, procs, e2, sizeof(e2));
	assert_int_equal(a, b);
	assert_string_equal(e1, e2);
	assert_same_profile(p, r);
	free(copy);
	prof_free(p);
	prof_free(r);
	return a;
}

/* ---- random texts -------------------------------------------------------- */

/* A frame: short, 8, 12, 13, 16, 25, 28, 29 or 40 bytes, with a space
 * inside, a mark, a byte of another kind now and then. */
static size_t frame_text(uint64_t *s, char *o)
{
	static const char *const names[] = {
		"a", "bb", "main", "f1234567", "fn_123456789", "fn_1234567890",
		"sixteen_chars_16", "ns1::Type2::method_345678", "x y",
		"k_[k]", "i_[i]", "_[k]", "proc", "a b c d e f g h i j k",
		/* 28 bytes (the last held whole), 29, and 40: the arena */
		"ns1::Type2::method_123456789", "ns1::Type2::method_1234567890",
		"ns1::Type2::method_1234567890_and_more12",
	};
	const char *n = names[rng(s) % (sizeof(names) / sizeof(*names))];
	size_t len = strlen(n);

	memcpy(o, n, len);
	if (rng(s) % 3 == 0)
		o[len++] = (char)('0' + rng(s) % 4);
	if (rng(s) % 200 == 0)
		o[rng(s) % len] = "\0;\r\t "[rng(s) % 5];
	return len;
}

/* A line: often the line before (@prev, @plen bytes of its stack) as it
 * is, extended or cut at a ';'; a count, blanks, CRLF; now and then a bad
 * count, a blank line or an empty frame. Returns its length. */
static size_t line_text(uint64_t *s, char *o, const char *prev, size_t plen)
{
	size_t len = 0, n;

	switch (rng(s) % 6) {
	case 0: /* the stack before, as it is */
		memcpy(o, prev, plen);
		len = plen;
		break;
	case 1: /* the stack before and more frames */
		memcpy(o, prev, plen);
		len = plen;
		n = 1 + rng(s) % 3;
		for (size_t i = 0; i < n; i++) {
			if (len)
				o[len++] = ';';
			len += frame_text(s, o + len);
		}
		break;
	case 2: { /* cut at one of its ';', then maybe other frames */
		size_t from = plen ? (size_t)(rng(s) % plen) : 0;
		const char *cut = plen ? memchr(prev + from, ';', plen - from) : NULL;

		len = cut ? (size_t)(cut - prev) : 0;
		memcpy(o, prev, len);
		if (!len || rng(s) % 2)
			for (size_t i = 0, m = 1 + rng(s) % 2; i < m; i++) {
				if (len)
					o[len++] = ';';
				len += frame_text(s, o + len);
			}
		break;
	}
	case 3: /* the stack before with one more byte on its last frame */
		memcpy(o, prev, plen);
		len = plen;
		o[len++] = 'z';
		break;
	default:
		n = 1 + rng(s) % 8;
		for (size_t i = 0; i < n; i++) {
			if (len)
				o[len++] = ';';
			len += frame_text(s, o + len);
		}
		break;
	}
	switch (rng(s) % 40) {
	case 0:
		return len + (size_t)sprintf(o + len, " 1x");
	case 1:
		return (size_t)sprintf(o, " \t\r");
	case 2:
		return len + (size_t)sprintf(o + len, ";;a 1");
	case 3:
		return len + (size_t)sprintf(o + len, " 99999999999999999999");
	case 4:
		return len;
	default:
		break;
	}
	len += (size_t)sprintf(o + len, "%s%u", rng(s) % 4 ? " " : "\t",
			       (unsigned)(rng(s) % 1000));
	if (rng(s) % 5 == 0)
		o[len++] = ' ';
	if (rng(s) % 5 == 0)
		o[len++] = '\r';
	return len;
}

/* Random texts of up to 60 lines, with and without process rows, read on
 * 1, 2 and 4 threads, some ending without a line end. */
static void test_lines_random(void **state)
{
	/* Lines that extend the line before grow by at most 3 frames of
	 * 41 bytes: 60 lines stay well under 1 MiB. */
	static char t[1 << 20];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	unsigned bad = 0;

	(void)state;
	for (int round = 0; round < 4000; round++) {
		size_t len = 0, lines = 1 + rng(&s) % 60, prev = 0, plen = 0;

		for (size_t i = 0; i < lines; i++) {
			size_t at = len, sep;

			len += line_text(&s, t + len, t + prev, plen);
			/* The next line's "line before": this one's stack. */
			for (sep = len; at < sep && t[sep - 1] != ' ' &&
					t[sep - 1] != '\t'; sep--)
				;
			prev = at;
			plen = sep && at < sep ? sep - 1 - at : 0;
			if (i + 1 < lines || rng(&s) % 3)
				t[len++] = '\n';
		}
		bad += check_text(t, len, (int)(round & 1), 1u << (round >> 1) % 3) < 0;
	}
	/* Both kinds of text were met. */
	assert_true(100 < bad && bad < 3900);
}

/* Lines that share all but the end with the line before: the frame the
 * reader may take from that line ends exactly where the lines part. */
static void test_lines_shared_edges(void **state)
{
	static const char *const texts[] = {
		"a;b;c 1\na;b;c 2\n",
		"a;b;c 1\na;b;c;d 2\n",
		"a;b;c 1\na;b;cd 2\n",
		"a;b;cd 1\na;b;c 2\n",
		"a;b;c 1\na;b 2\n",
		"a;b 1\na;b;;c 2\n",
		"a;b 1\na;b; 2\n",
		"a;b 1\na;b 2;c 3\n",
		"a;b 1;c 1\na;b 1\n",
		"a;b 1;c 1\na;b 1;c 2\n",
		"a;b 1\na;b\t2\na;b  3\n",
		"a;b 1\n\na;b;c 2\n  \na;b 3",
		"a;b 1\na;b",
		"a;b 1\na;b;",
		"a;b;c 1\na;b\0 2\n", /* the NUL: its length is given below */
		"proc;main 1\nproc;main;main 2\nproc 3\n",
		"aaaaaaaaaaaaaaaaaaaa;b 1\naaaaaaaaaaaaaaaaaaaa;b;c 1\n",
		"aaaaaaaaaaaaaaaaaaaa;b 1\naaaaaaaaaaaaaaaaaaab;b 1\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
		size_t len = strlen(texts[i]);

		if (i == 14)
			len = sizeof("a;b;c 1\na;b\0 2\n") - 1;
		for (int procs = 0; procs < 2; procs++)
			for (unsigned threads = 1; threads <= 4; threads *= 2)
				check_text(texts[i], len, procs, threads);
	}
}

/* Text as stackcollapse-perf.pl writes it: a process, user frames with
 * C++ signatures (spaces, commas, parentheses), [unknown] frames, kernel
 * frames under them; 40,000 lines (about 2 MiB, in parts of different
 * lengths), read on 1, 2 and 4 threads. */
static void test_lines_flamegraph_style(void **state)
{
	static const char *const procs[] = { "java", "nginx", "postgres", "bash" };
	static const char *const user[] = {
		"start_thread", "main", "[unknown]", "__libc_start_main",
		"std::vector<int, std::allocator<int> >::push_back(int const&)",
		"Interpreter::run(Frame*, int)", "ngx_process_events_and_timers",
		"ExecScan", "LWP::run() const", "operator new(unsigned long)",
		"memcpy", "PostgresMain", "readline", "Lcom/example/App;::handle",
	};
	static const char *const kernel[] = {
		"entry_SYSCALL_64_after_hwframe_[k]", "do_syscall_64_[k]",
		"__x64_sys_read_[k]", "ksys_read_[k]", "vfs_read_[k]",
		"schedule_[k]", "__schedule_[k]", "finish_task_switch.isra.0_[k]",
	};
	size_t cap = 8 << 20, len = 0;
	char *t = malloc(cap);
	uint64_t s = 0x5eed5eedull;

	(void)state;
	assert_non_null(t);
	for (int i = 0; i < 40000; i++) {
		size_t nu = 1 + rng(&s) % 12, nk = rng(&s) % 3 ? 0 : 1 + rng(&s) % 8;

		len += (size_t)sprintf(t + len, "%s", procs[rng(&s) % 4]);
		for (size_t j = 0; j < nu; j++)
			len += (size_t)sprintf(t + len, ";%s",
					       user[(j * 3 + rng(&s) % 3) %
						    (sizeof(user) / sizeof(*user))]);
		for (size_t j = 0; j < nk; j++)
			len += (size_t)sprintf(t + len, ";%s", kernel[j]);
		len += (size_t)sprintf(t + len, " %u\n", 1 + (unsigned)(rng(&s) % 50));
	}
	for (unsigned threads = 1; threads <= 4; threads *= 2)
		assert_int_equal(check_text(t, len, 1, threads), 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_random),
		cmocka_unit_test(test_lines_flamegraph_style),
		cmocka_unit_test(test_lines_shared_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
