/* SPDX-License-Identifier: MIT */
/*
 * Splitting folded text into lines and frames: one pass finds a line's
 * end, every ';' in it and whether it holds a NUL byte, 64 bytes at a
 * time with SSE2 (a byte loop on other machines, also kept for the tests).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded_impl.h"
#include "profile_impl.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Makes room for @more offsets in @ls; 0 or -ENOMEM. */
static int scan_room(struct line_scan *ls, size_t more)
{
	return prof_grow_how((void **)&ls->semi, &ls->cap, (uint64_t)ls->n + more,
			     sizeof(*ls->semi), 0);
}

int folded_scan_line_portable(const char *s, const char *end, size_t at,
			      struct line_scan *ls, size_t *len)
{
	size_t i = at, n = (size_t)(end - s);

	ls->nul = 0;
	for (; i < n && s[i] != '\n'; i++) {
		if (s[i] == ';') {
			if (scan_room(ls, 2) < 0)
				return -ENOMEM;
			ls->semi[ls->n++] = i;
		} else if (s[i] == '\0') {
			ls->nul = 1;
		}
	}
	*len = i;
	return scan_room(ls, 1);
}

#ifdef __SSE2__
/* The bits of the bytes equal to @c in the 64 bytes @v[0..4). */
static inline uint64_t bits64(const __m128i *v, __m128i c)
{
	uint64_t m0 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v[0], c));
	uint64_t m1 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v[1], c));
	uint64_t m2 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v[2], c));
	uint64_t m3 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v[3], c));

	return m0 | m1 << 16 | m2 << 32 | m3 << 48;
}

/* 1 when a byte of the 64 bytes @v[0..4) equals @c. */
static inline int any64(const __m128i *v, __m128i c)
{
	__m128i a = _mm_or_si128(_mm_cmpeq_epi8(v[0], c), _mm_cmpeq_epi8(v[1], c));
	__m128i b = _mm_or_si128(_mm_cmpeq_epi8(v[2], c), _mm_cmpeq_epi8(v[3], c));

	return _mm_movemask_epi8(_mm_or_si128(a, b)) != 0;
}

/* Loads the last @n (< 64) bytes at @s into @v, padded with line ends
 * (never read past them). Out of line: once per text. */
static __attribute__((noinline)) void load_tail(__m128i *v, const char *s,
						size_t n)
{
	char pad[64];

	memset(pad, '\n', sizeof(pad));
	memcpy(pad, s, n);
	for (unsigned i = 0; i < 4; i++)
		v[i] = _mm_loadu_si128((const __m128i *)pad + i);
}

int folded_scan_line(const char *s, const char *end, size_t at,
		     struct line_scan *ls, size_t *len)
{
	size_t off = at, n = (size_t)(end - s), k = ls->n;
	uint64_t nul = 0;

	const __m128i cn = _mm_set1_epi8('\n'), cs = _mm_set1_epi8(';');
	const __m128i cz = _mm_setzero_si128();

	for (;;) {
		__m128i v[4];
		uint64_t mn, ms, mz;
		size_t *o;

		if (64 <= n - off) {
			v[0] = _mm_loadu_si128((const __m128i *)(s + off));
			v[1] = _mm_loadu_si128((const __m128i *)(s + off) + 1);
			v[2] = _mm_loadu_si128((const __m128i *)(s + off) + 2);
			v[3] = _mm_loadu_si128((const __m128i *)(s + off) + 3);
		} else {
			load_tail(v, s + off, n - off);
		}
		/* A line end and a NUL are rare in a block: their exact
		 * bits are only made when one is there. */
		mn = any64(v, cn) ? bits64(v, cn) : 0;
		ms = bits64(v, cs);
		mz = any64(v, cz) ? bits64(v, cz) : 0;
		if (mn) {
			uint64_t below = (mn & (0 - mn)) - 1;

			ms &= below;
			mz &= below;
		}
		if (ls->cap - k < 66) {
			ls->n = k;
			if (scan_room(ls, 66) < 0)
				return -ENOMEM;
		}
		o = ls->semi + k;
		for (; ms; ms &= ms - 1)
			*o++ = off + (size_t)__builtin_ctzll(ms);
		k = (size_t)(o - ls->semi);
		nul |= mz;
		if (mn) {
			ls->n = k;
			ls->nul = nul != 0;
			*len = off + (size_t)__builtin_ctzll(mn);
			return 0;
		}
		off += 64;
	}
}
#else
int folded_scan_line(const char *s, const char *end, size_t at,
		     struct line_scan *ls, size_t *len)
{
	return folded_scan_line_portable(s, end, at, ls, len);
}
#endif

void folded_scan_free(struct line_scan *ls)
{
	free(ls->semi);
	ls->semi = NULL;
	ls->n = ls->cap = 0;
}
