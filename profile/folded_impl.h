/* SPDX-License-Identifier: MIT */
/*
 * The folded reader's inside, shared by folded.c (lines and texts),
 * folded_halves.c (a big text in two halves on two threads) and
 * folded_write.c. Not a public interface: other parts use folded.h.
 */
#ifndef HEARTH_FOLDED_IMPL_H
#define HEARTH_FOLDED_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "profile.h"

#define KERNEL_SUFFIX "_[k]"
#define INLINE_SUFFIX "_[i]"
#define SUFFIX_LEN 4
#define UTF8_BOM "\xef\xbb\xbf"

/* One distinct frame text seen by this parse: its hash, length (with
 * FLAG_PROCESS when it is a process row), the frame it interned as
 * (0 = empty slot), its first 16 bytes (zero-padded) and where the rest
 * sits in the parse's arena. */
#define FLAG_PROCESS 0x80000000u
#define HEAD 16u

struct text_slot {
	uint32_t hash;
	uint32_t len; /* | FLAG_PROCESS */
	uint32_t frame;
	uint32_t off;
	uint64_t head[2];
};

/* One frame's text in the current line. */
struct token {
	const char *s;
	size_t len;
	uint64_t head[2];
	uint32_t hash;
};

struct parse_ctx {
	struct prof_profile *p;
	const char *end; /* end of the whole buffer: words may be read up to it */
	uint32_t *frames; /* this line's frame ids (the last line's beyond) */
	struct token *tok;
	size_t *ends, *prev_ends; /* token ends (offsets) in this, last line */
	const char *prev;         /* the last line's stack text */
	size_t prev_len, prev_n;
	size_t cap;
	struct text_slot *texts;
	size_t ntexts, texts_cap;
	char *arena; /* the distinct texts' bytes past HEAD, back to back */
	size_t arena_len, arena_cap;
	/* Parsed lines, added to the tree after the text is read: per line
	 * its frame count, its count's two halves, then its frame ids. */
	uint32_t *out;
	size_t nout, out_cap, nlines;
	int first_is_process;
	char *err;
	size_t errlen;
	size_t lineno;
	/* The second half of a split parse: new texts get local ids 1, 2, ...
	 * in the order they come, kept in local[] for the first half's
	 * context to map (the profile is not touched). */
	int deferred;
	struct local_text *local;
	size_t nlocal, local_cap;
};

struct local_text {
	struct token t;
	int process;
};

/* 1 when @s[0..len) ends with the 4-byte @suffix after at least one
 * byte of name. */
static inline int folded_ends_with(const char *s, size_t len,
				   const char *suffix)
{
	return SUFFIX_LEN < len &&
	       memcmp(s + len - SUFFIX_LEN, suffix, SUFFIX_LEN) == 0;
}

/* Parses the lines of @buf[pos..stop) into @c; 0 or a negative errno
 * (c->lineno is then the bad line's). */
int folded_parse_lines(struct parse_ctx *c, const char *buf, size_t pos,
		       size_t stop);

/* The frame of token @t (@process: the line's process row), looked up in
 * @c's table or new; UINT32_MAX on ENOMEM. */
uint32_t folded_text_frame(struct parse_ctx *c, const struct token *t,
			   int process);

/* Makes room for @words more words of queued stacks; 0 or -ENOMEM. */
int folded_out_room(struct parse_ctx *c, size_t words);

/* Frees what @c holds (not @c). */
void folded_ctx_free(struct parse_ctx *c);

/* Parses @buf[pos..len) into @c, in two halves at once when it is big;
 * the result, errors included, is that of folded_parse_lines(). */
int folded_parse_text(struct parse_ctx *c, const char *buf, size_t pos,
		      size_t len);

#endif /* HEARTH_FOLDED_IMPL_H */
