/* SPDX-License-Identifier: MIT */
/*
 * Splitting folded text into lines and frames: one pass finds a line's
 * end, every ';' in it and whether it holds a NUL byte, sixteen bytes at a
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

int folded_scan_line_portable(const char *s, const char *end,
			      struct line_scan *ls, size_t *len)
{
	size_t i = 0, n = (size_t)(end - s);

	ls->n = 0;
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
/* Adds the offsets @base + each bit set in @m to @ls (room made). */
static void add_bits(struct line_scan *ls, size_t base, unsigned m)
{
	size_t *o = ls->semi + ls->n;

	while (m) {
		*o++ = base + (unsigned)__builtin_ctz(m);
		m &= m - 1;
	}
	ls->n = (size_t)(o - ls->semi);
}

int folded_scan_line(const char *s, const char *end, struct line_scan *ls,
		     size_t *len)
{
	const __m128i nl = _mm_set1_epi8('\n'), semi = _mm_set1_epi8(';');
	const __m128i zero = _mm_setzero_si128();
	size_t off = 0, n = (size_t)(end - s);
	unsigned nul = 0;

	ls->n = 0;
	for (;;) {
		char pad[16];
		__m128i v;
		unsigned mn, ms, mz;

		if (16 <= n - off) {
			v = _mm_loadu_si128((const __m128i *)(s + off));
		} else {
			/* The last bytes, padded with line ends (never read
			 * past @end). */
			memset(pad, '\n', sizeof(pad));
			memcpy(pad, s + off, n - off);
			v = _mm_loadu_si128((const __m128i *)pad);
		}
		mn = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl));
		ms = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, semi));
		mz = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero));
		if (ls->cap - ls->n < 17 && scan_room(ls, 17) < 0)
			return -ENOMEM;
		if (mn) {
			unsigned below = (1u << __builtin_ctz(mn)) - 1;

			add_bits(ls, off, ms & below);
			ls->nul = (nul | (mz & below)) != 0;
			*len = off + (unsigned)__builtin_ctz(mn);
			return 0;
		}
		add_bits(ls, off, ms);
		nul |= mz;
		off += 16;
	}
}
#else
int folded_scan_line(const char *s, const char *end, struct line_scan *ls,
		     size_t *len)
{
	return folded_scan_line_portable(s, end, ls, len);
}
#endif

void folded_scan_free(struct line_scan *ls)
{
	free(ls->semi);
	ls->semi = NULL;
	ls->n = ls->cap = 0;
}
