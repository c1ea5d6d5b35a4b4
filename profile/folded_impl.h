/* SPDX-License-Identifier: MIT */
/*
 * The folded reader's inside, shared by folded.c (lines), folded_split.c
 * (the splitter), folded_texts.c (the text table), folded_ahead.c (the
 * fault helper), folded_halves.c and folded_join.c (a text parsed by two
 * threads) and folded_write.c. Not a public interface: other parts use
 * folded.h.
 */
#ifndef HEARTH_FOLDED_IMPL_H
#define HEARTH_FOLDED_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "profile.h"

#define KERNEL_SUFFIX "_[k]"
#define INLINE_SUFFIX "_[i]"
#define SUFFIX_LEN 4
#define UTF8_BOM "\xef\xbb\xbf"

/* One distinct frame text seen by this parse, in a 16-byte slot of the
 * parse's first table (a quarter of a cache line: 16 MiB a parsing
 * thread for 200,000 texts, at most a quarter full), unless it is one
 * for the second table (struct long_slot). @frame is the frame it
 * interned as (0 = empty slot) with its class in the top bits:
 * - SLOT_INLINE: a text of at most INLINE_MAX bytes held whole (with
 *   SLOT_PROC when it is a process row): @w its first 8 bytes, @x bytes
 *   8 to 11, zero-padded (a text holds no NUL byte, so the padding tells
 *   its length);
 * - SLOT_ARENA: a text longer than LONG_MAX_LEN: @x its hash, @w its
 *   length (with FLAG_PROCESS for a process row) in the high 32 bits and
 *   where its bytes sit in the parse's arena in the low 32. */
#define FLAG_PROCESS 0x80000000u
#define SLOT_INLINE 0x40000000u
#define SLOT_ARENA 0x80000000u
#define SLOT_PROC 0x20000000u
#define SLOT_ID 0x1fffffffu
#define INLINE_MAX 12u

struct text_slot {
	uint32_t frame; /* | SLOT_INLINE or SLOT_ARENA */
	uint32_t x;
	uint64_t w;
};

/* A text of INLINE_MAX + 1 to LONG_MAX bytes, held whole in a 32-byte
 * slot of a second table (one cache line read for a lookup, where an
 * arena text costs a second, dependent one): @frame as in a text_slot
 * (| SLOT_PROC for a process row, 0 = empty), @text zero-padded. */
#define LONG_MAX_LEN 28u
struct long_slot {
	uint32_t frame;
	char text[LONG_MAX_LEN];
};

/* One frame's text in the current line: where it is, its length, its
 * first 16 bytes zero-padded and its hash (folded_token_hash()). */
struct token {
	const char *s;
	size_t len;
	uint64_t w0, w1;
	uint32_t hash;
};

/* The ';' of the line read last (folded_scan_line()): their offsets in
 * semi[0..n), then the stack's end once the line is checked, with room
 * for one more; whether the bytes scanned hold a NUL. */
struct line_scan {
	size_t *semi;
	size_t n;
	uint32_t cap;
	int nul;
};

/* One line in flight: split, checked, hashed and its slots asked for,
 * then looked up while the next line is split (folded_parse_lines()). */
struct line_job {
	struct token *tok; /* tok[k..n) */
	uint32_t tok_cap;
	const char *s; /* its stack */
	size_t len, n; /* the stack's length and frame count */
	size_t k;      /* frames shared with the line before */
	int arena;     /* a text of tok[k..n) is longer than LONG_MAX_LEN */
	uint64_t count;
	size_t lineno;
};

/* The helper that faults in a big parse's fresh memory ahead of it
 * (folded_ahead.c): the parser publishes how many bytes of stacks it
 * queued and how many bytes of nodes are surely needed. */
struct parse_ahead {
	char *out, *nodes;
	size_t out_cap, nodes_cap; /* bytes */
	atomic_size_t out_used, nodes_want;
	atomic_int done;
	size_t out_done, nodes_done; /* bytes faulted in (read after stop) */
	pthread_t th;
	int running;
};

/* Starts the helper for the stacks' array @out (@out_cap bytes) and the
 * node array @nodes (@nodes_cap bytes); 0, or a negative errno when it
 * does not run (nothing is faulted in ahead then). */
int folded_ahead_start(struct parse_ahead *a, void *out, size_t out_cap,
		       void *nodes, size_t nodes_cap);

/* Stops the helper (a no-op when it did not start). */
void folded_ahead_stop(struct parse_ahead *a);

/* Lines in flight: a line's slots are asked for this many lines before
 * it is looked up, less one (at least 3: the arena bytes are asked for
 * a line after the slots). */
#ifndef FOLDED_JOBS
#define FOLDED_JOBS 3u
#endif

struct parse_ctx {
	struct prof_profile *p;
	const char *end; /* end of the whole buffer: words may be read up to it */
	struct line_scan scan; /* the ends of the last line prepared's frames */
	/* The line being prepared (job[cur]) and the @pending ones before it
	 * (job[cur - 1], ...), looked up oldest first. */
	struct line_job job[FOLDED_JOBS];
	unsigned cur, pending;
	struct text_slot *texts;
	size_t ntexts, texts_cap;
	struct long_slot *longs; /* the second table */
	size_t nlongs, longs_cap;
	char *arena; /* the SLOT_ARENA texts' bytes, back to back */
	size_t arena_len, arena_cap;
	/* Parsed lines, added to the tree after the text is read: per line
	 * its frame count, its count's two halves, then its frame ids; @last
	 * is where the last one starts. */
	uint32_t *out;
	size_t nout, out_cap, nlines, last;
	/* Memory lent to prof_build() once the text is read (the second
	 * thread's stacks, copied into @out already): @spare_cap words. */
	uint32_t *spare;
	size_t spare_cap;
	int first_is_process;
	struct parse_ahead *ahead; /* or NULL */
	char *err;
	size_t errlen;
	size_t lineno;
	/* A deferred parse (either thread of a split one): new texts get
	 * local ids 1, 2, ... in the order they come, kept in local[] (the
	 * profile is not touched); they are interned when the first part is
	 * done (folded_halves.c) and at the join (folded_join.c). */
	int deferred;
	struct local_text *local;
	size_t nlocal, local_cap;
	/* The frames' ranks, started once a split text's frames are all
	 * known (folded_join()), for prof_build(); or NULL. */
	struct prof_ranks *ranks;
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

/* Scans the line at @s, which ends at the first '\n' or at @end, from
 * byte @at on (the bytes before hold neither '\n' nor NUL): the offsets
 * from @s of its ';' are appended to @ls->semi from index @ls->n on (its
 * array grown, with room left for one more; free it with
 * folded_scan_free()), its length without the '\n' goes to *@len and
 * whether its bytes from @at hold a NUL to @ls->nul. Reads nothing at or
 * past @end. 0 or -ENOMEM. folded_scan_line() reads 64 bytes at a time
 * where SSE2 is there; folded_scan_line_portable() a byte at a time, with
 * the same result. */
int folded_scan_line(const char *s, const char *end, size_t at,
		     struct line_scan *ls, size_t *len);
int folded_scan_line_portable(const char *s, const char *end, size_t at,
			      struct line_scan *ls, size_t *len);
void folded_scan_free(struct line_scan *ls);

/* The hash of a text (or a process row's, with @process) whose first 16
 * bytes, zero-padded, are @w0 @w1 and whose bytes past them are @more
 * (@nmore of them); a frame's text of at most 16 bytes hashes the same
 * from its words alone, which lets the table grow without reading texts.
 * Each step multiplies to 128 bits and folds the halves, so every byte
 * moves every bit of the index. */
#if defined(__SIZEOF_INT128__)
static inline uint64_t folded_mum(uint64_t a, uint64_t b)
{
	__extension__ unsigned __int128 m = (unsigned __int128)a * b;

	return (uint64_t)m ^ (uint64_t)(m >> 64);
}
#else
static inline uint64_t folded_mum(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ (b >> 7)) * 0xff51afd7ed558ccdull;

	h ^= h >> 32;
	h = (h ^ b) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}
#endif

#define FOLDED_SEED0 0xa0761d6478bd642full
#define FOLDED_SEED1 0xe7037ed1a0b428dbull
#define FOLDED_SEED2 0x8ebc6af09c88c6e3ull

static inline uint32_t folded_hash_fold(uint64_t h)
{
	return (uint32_t)h ^ (uint32_t)(h >> 32);
}

/* The hash of a text of at most 16 bytes from its words alone (a process
 * row's hashed apart): folded_token_hash()'s, and a held-whole slot's
 * when the table grows. */
static inline uint32_t folded_hash16(uint64_t w0, uint64_t w1, int process)
{
	uint64_t h = folded_mum(w0 ^ FOLDED_SEED0, w1 ^ FOLDED_SEED1);

	if (process)
		h = folded_mum(h ^ FOLDED_SEED0, FOLDED_SEED2);
	return folded_hash_fold(h);
}

/* Fills @t's first 16 bytes and hash from its text @t->s[0..@t->len)
 * (@process: a process row, hashed apart), reading words up to @end at
 * most. Texts longer than 16 bytes or process rows go out of line. */
void folded_token_hash_long(struct token *t, const char *end, int process);

static inline uint64_t folded_low_bytes(uint64_t w, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return n < 8 ? w & ~(~0ull >> (8 * n)) : w;
#else
	return n < 8 ? w & ((1ull << (8 * n)) - 1) : w;
#endif
}

/* The masks that keep the first n bytes of a text's two words, by n
 * (0 to 16). */
extern const uint64_t folded_keep[17][2];
/* The same for a 4-byte word, by n (0 to 4). */
extern const uint32_t folded_keep4[5];

/* folded_token_hash() of a text of 17 to 32 bytes with 32 bytes to read
 * at it: the same hash as folded_token_hash_long(), without its loop
 * (a tenth of a big profile's texts are this long). */
static inline void folded_token_hash32(struct token *t, int process)
{
	size_t len = t->len;
	uint64_t w0, w1, w2, w3, h;

	memcpy(&w0, t->s, 8);
	memcpy(&w1, t->s + 8, 8);
	memcpy(&w2, t->s + 16, 8);
	memcpy(&w3, t->s + 24, 8);
	t->w0 = w0;
	t->w1 = w1;
	h = folded_mum(w0 ^ FOLDED_SEED0, w1 ^ FOLDED_SEED1);
	h = folded_mum(h ^ folded_low_bytes(w2, len - 16), FOLDED_SEED2);
	if (24 < len)
		h = folded_mum(h ^ folded_low_bytes(w3, len - 24), FOLDED_SEED2);
	if (process)
		h = folded_mum(h ^ FOLDED_SEED0, FOLDED_SEED2);
	t->hash = folded_hash_fold(h);
}

static inline void folded_token_hash(struct token *t, const char *end,
				     int process)
{
	size_t len = t->len;
	uint64_t w0, w1;

	if (16 < len || end - t->s < 16) {
		if (len <= 32 && 32 <= end - t->s)
			folded_token_hash32(t, process);
		else
			folded_token_hash_long(t, end, process);
		return;
	}
	memcpy(&w0, t->s, 8);
	memcpy(&w1, t->s + 8, 8);
	t->w0 = w0 & folded_keep[len][0];
	t->w1 = w1 & folded_keep[len][1];
	t->hash = folded_hash16(t->w0, t->w1, process);
}

/* Makes @c's table of texts (empty), which the lookups below need;
 * 0 or -ENOMEM. */
int folded_texts_init(struct parse_ctx *c);

/* The functions that only prefetch are inlined before the compiler
 * looks for pure functions: GCC finds such a function pure (a prefetch
 * has no effect it can see) and drops the calls to it. */
#if defined(__GNUC__)
#define FOLDED_PREFETCH static inline __attribute__((always_inline))
#else
#define FOLDED_PREFETCH static inline
#endif

/* Where the probe for a text of hash @hash starts in a table of @cap
 * slots: the first slot of the 64-byte line the hash picks (4 text slots
 * or 2 long slots a line), so that a lookup reads the one line asked for
 * ahead unless that line is full. Started at the hash's own slot, a
 * probe ran into the next line, a cache miss of its own, when that slot
 * was its line's last and taken by another text: about one lookup in
 * twelve in a table a third full. */
static inline size_t folded_text_home(uint32_t hash, size_t cap)
{
	return hash & (cap - 1) & ~(size_t)3;
}

static inline size_t folded_long_home(uint32_t hash, size_t cap)
{
	return hash & (cap - 1) & ~(size_t)1;
}

/* Asks for the table line where the lookup of @t starts. */
FOLDED_PREFETCH void folded_text_prefetch(const struct parse_ctx *c,
					  const struct token *t)
{
	const void *a;

	if (t->len - INLINE_MAX - 1 < LONG_MAX_LEN - INLINE_MAX)
		a = &c->longs[folded_long_home(t->hash, c->longs_cap)];
	else
		a = &c->texts[folded_text_home(t->hash, c->texts_cap)];
	__builtin_prefetch(a);
}

/* Asks for the bytes in the arena that the lookup of the text @t (longer
 * than LONG_MAX_LEN) will compare, when its slot is in the line its
 * probe starts with (asked for a line ago: in the cache by now). */
FOLDED_PREFETCH void folded_text_prefetch_bytes(const struct parse_ctx *c,
						const struct token *t)
{
	const struct text_slot *sl = &c->texts[folded_text_home(t->hash, c->texts_cap)];

	for (unsigned i = 0; i < 4 && sl[i].frame; i++)
		if ((sl[i].frame & SLOT_ARENA) && sl[i].x == t->hash) {
			__builtin_prefetch(c->arena + (uint32_t)sl[i].w);
			return;
		}
}

/* 1 when the text at @a in the arena equals the token @t of the same
 * length, longer than LONG_MAX_LEN: its first 16 bytes against the
 * token's words, then the rest. */
static inline int folded_arena_equal(const char *a, const struct token *t)
{
	uint64_t a0, a1;

	memcpy(&a0, a, 8);
	memcpy(&a1, a + 8, 8);
	if (a0 != t->w0 || a1 != t->w1)
		return 0;
	return memcmp(a + 16, t->s + 16, t->len - 16) == 0;
}

/* 1 when the long slot @sl holds the token @t of INLINE_MAX + 1 to
 * LONG_MAX_LEN bytes (its bytes past 16 read up to @end at most). */
static inline int folded_long_equal(const struct long_slot *sl,
				    const struct token *t, const char *end)
{
	uint64_t a0, a1, a2 = 0, b2 = 0;
	uint32_t a3 = 0, b3 = 0;
	size_t len = t->len;

	memcpy(&a0, sl->text, 8);
	memcpy(&a1, sl->text + 8, 8);
	if (a0 != t->w0 || a1 != t->w1)
		return 0;
	memcpy(&a2, sl->text + 16, 8);
	memcpy(&a3, sl->text + 24, 4);
	if (16 < len) {
		size_t more = len - 16;

		if (16 <= end - (t->s + 16)) {
			memcpy(&b2, t->s + 16, 8);
			memcpy(&b3, t->s + 24, 4);
			b2 &= folded_keep[more < 8 ? more : 8][0];
			b3 &= folded_keep4[more < 8 ? 0 : more - 8];
		} else {
			char pad[12] = { 0 };

			memcpy(pad, t->s + 16, more);
			memcpy(&b2, pad, 8);
			memcpy(&b3, pad + 8, 4);
		}
	}
	return a2 == b2 && a3 == b3;
}

/* The frame of the text @t (@process: a process row) in @c's tables, or
 * 0 when they do not hold it. */
static inline uint32_t folded_text_find(const struct parse_ctx *c,
					const struct token *t, int process)
{
	const struct text_slot *T = c->texts;
	size_t j, mask = c->texts_cap - 1;
	uint32_t f;

	if (t->len <= INLINE_MAX) {
		const uint32_t cls = SLOT_INLINE | SLOT_ARENA | SLOT_PROC;
		uint32_t want = SLOT_INLINE | (process ? SLOT_PROC : 0);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		uint32_t x = (uint32_t)(t->w1 >> 32);
#else
		uint32_t x = (uint32_t)t->w1;
#endif

		for (j = folded_text_home(t->hash, c->texts_cap);
		     (f = T[j].frame) != 0; j = (j + 1) & mask)
			if ((f & cls) == want && T[j].w == t->w0 && T[j].x == x)
				return f & SLOT_ID;
	} else if (t->len <= LONG_MAX_LEN) {
		const struct long_slot *L = c->longs;
		uint32_t want = process ? SLOT_PROC : 0;

		mask = c->longs_cap - 1;
		for (j = folded_long_home(t->hash, c->longs_cap);
		     (f = L[j].frame) != 0; j = (j + 1) & mask)
			if ((f & SLOT_PROC) == want && folded_long_equal(&L[j], t, c->end))
				return f & SLOT_ID;
	} else if (t->len < FLAG_PROCESS) {
		uint64_t key = (uint64_t)((uint32_t)t->len |
					  (process ? FLAG_PROCESS : 0)) << 32;

		for (j = folded_text_home(t->hash, c->texts_cap);
		     (f = T[j].frame) != 0; j = (j + 1) & mask)
			if ((f & SLOT_ARENA) && T[j].x == t->hash &&
			    (T[j].w & 0xffffffff00000000ull) == key &&
			    folded_arena_equal(c->arena + (uint32_t)T[j].w, t))
				return f & SLOT_ID;
	}
	return 0;
}

/* The frame of token @t (@process: the line's process row), looked up in
 * @c's tables or new; UINT32_MAX on ENOMEM. */
uint32_t folded_text_frame(struct parse_ctx *c, const struct token *t,
			   int process);

/* The same, with the lookup of a text the tables hold made here. */
static inline uint32_t folded_text_lookup(struct parse_ctx *c,
					  const struct token *t, int process)
{
	uint32_t f = folded_text_find(c, t, process);

	return f ? f : folded_text_frame(c, t, process);
}

/* The frame a text a deferred parse numbered stands for. */
struct prof_frame_text folded_frame_text(const struct local_text *x);

/* Makes @c forget its texts and the line before (its stacks stay): it
 * interns new texts in the profile again, as a parse that is not
 * deferred. 0 or -ENOMEM. */
int folded_ctx_forget(struct parse_ctx *c);

/* How a big text is shared by the two threads that parse it
 * (folded_parse_text(); NULL or 0s: the defaults): the least text size
 * for two threads, bytes a thread claims at a time, and the least a
 * thread must have left for the other to take half of it. Tests make
 * thread t the slower one with @wait_us[t]: after each claim it waits
 * until the other has nothing of its own left (looking every wait_us
 * microseconds), so the other takes from it; with @hold0 thread 0 waits
 * before its first claim until thread 1 is done. @segments is set to how
 * many parts the text was parsed in (2 when neither thread took from the
 * other). */
struct folded_how {
	size_t split_min, step, take_min;
	unsigned wait_us[2];
	int hold0;
	unsigned segments;
};

/* A part of a big text parsed by one thread (folded_halves.c): bytes
 * [from, to) of the text, read into stacks [out_from, out_to) of its
 * thread's context, where it met the texts numbered local_from + 1 to
 * local_to first; lines_* and read_* are the context's queued stacks
 * and lines read before and after it; @seq orders a thread's parts as
 * it parsed them; @ret its parse's result. */
struct segment {
	size_t from, to;
	size_t out_from, out_to;
	size_t local_from, local_to;
	size_t lines_from, lines_to, read_from, read_to;
	int thread, seq, ret;
};

/* Joins the parts @seg[0..n) of a text @buf[..len) parsed by @c
 * (thread 0, whose first part starts the text) and @h (thread 1), both
 * deferred: the texts get the frames one pass would give them, in the
 * order they first appear in the text (@c's first @nhead texts are
 * interned already, as frames @head[1..nhead]), and the parts' stacks
 * are queued in @c in text order. After a part that failed or a gap (a
 * part not parsed), the rest of the text is parsed again by @c alone, so
 * errors and line numbers are those of one pass. Returns 0, or -EINVAL
 * with c->lineno the bad line's (the lines before it kept), as one pass
 * would; or -ENOMEM, where none of the text's stacks is kept (one pass
 * keeps those before). @seg is sorted. */
int folded_join(struct parse_ctx *c, struct parse_ctx *h, struct segment *seg,
		int n, const uint32_t *head, size_t nhead, const char *buf,
		size_t len);

/* Makes room for @words more words of queued stacks; 0 or -ENOMEM. */
int folded_out_room(struct parse_ctx *c, size_t words);

/* Frees what @c holds (not @c). */
void folded_ctx_free(struct parse_ctx *c);

/* prof_folded_parse() (@in_order 0) or prof_folded_parse_sorted() (1),
 * with the fault helper (folded_ahead.c) beside a big parse when @helper
 * is 1 and a big text shared by two threads as @how says (NULL: the
 * defaults); the result is the same either way. The public calls ask for
 * the helper when the machine has a core for it beyond the parse's two. */
int folded_parse_with(struct prof_profile *p, const char *buf, size_t len,
		      int first_is_process, int in_order, int helper,
		      struct folded_how *how, char *err, size_t errlen);

/* Parses @buf[pos..len) into @c, by two threads at once when it is big
 * (@how: see struct folded_how; NULL for the defaults); the result,
 * errors included, is that of folded_parse_lines(). */
int folded_parse_text(struct parse_ctx *c, const char *buf, size_t pos,
		      size_t len, struct folded_how *how);

#endif /* HEARTH_FOLDED_IMPL_H */
