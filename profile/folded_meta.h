/* SPDX-License-Identifier: MIT */
/*
 * hearth's lines at the top of a folded file: what folded text cannot
 * say (the unit and the capture's metadata; each frame's class,
 * language, module, file and line; thread rows), written as comment lines
 * before the stacks, so that a folded file hearth wrote reads back as it
 * was drawn. flamegraph.pl and inferno take a line for a stack only when
 * it ends in whitespace and a number; these end in " #", so they skip
 * them (saying how many lines they ignored) and draw the stacks as
 * before. Private to the folded reader and writer.
 *
 *   # hearth-profile 1 unit=nanoseconds off-cpu=1 hz=0 start-ns=N duration-ns=N drops=N [question=Q] #
 *   # hearth-frame<TAB>TEXT<TAB>KIND<TAB>CLASS<TAB>LANGUAGE<TAB>MODULE<TAB>FILE<TAB>LINE #
 *
 * Q, the question a profile answers (of time: wall, threads or locks;
 * of memory: alloc, held or growth), is there only for those. TEXT is
 * the frame as the stacks spell it ("name", "name_[k]"); TEXT, MODULE
 * and FILE escape '\\', tab, line feed and carriage return as
 * \\, \t, \n and \r. Unknown keys and kinds of line are skipped, so
 * later versions can add to them.
 */
#ifndef HEARTH_PROFILE_FOLDED_META_H
#define HEARTH_PROFILE_FOLDED_META_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

/* A frame's line, read back. */
struct meta_frame {
	char *text, *module, *file; /* unescaped, NUL-terminated */
	size_t len;                 /* of text */
	uint32_t line;
	uint8_t kind, cls, lang;
};

/* What the lines at the top of a text said. */
struct folded_meta {
	int has_profile;        /* a hearth-profile line was read */
	struct prof_meta meta;  /* its values (the others zero) */
	struct meta_frame *v;
	size_t n;
	uint32_t cap;
	uint32_t *slots;        /* index of v by text: i + 1, 0 = empty */
	size_t nslots;
	size_t lines;           /* comment lines read */
};

/* Writes hearth's lines for the profile @w whose stacks follow: its
 * metadata @m, and a line for each frame of @w but process rows that has
 * more to say than its spelling does (what the reader guesses from it:
 * prof_guess_frame); nothing at all when neither has anything to say, so
 * plain folded text reads and writes back byte for byte. @annotate:
 * inline frames are spelled "_[i]". Each frame's class, language,
 * module, file and line are read from frame @info_of[id] of @info (NULL:
 * @w's own frames). Returns 0 or -EIO. */
int folded_meta_write(FILE *out, const struct prof_profile *w,
		      const struct prof_meta *m, const struct prof_profile *info,
		      const uint32_t *info_of, int annotate);

/* The length of the leading comment lines of @s[0..len) (lines that
 * start with '#' and end in no count), which the stacks follow; reads
 * hearth's lines among them into @fm (zeroed first; free with
 * folded_meta_free()). 0 or -ENOMEM. With @partial, the text may end in
 * the middle of the block: the length then stops at the last whole line
 * read, and *@done says whether the block ended. */
int folded_meta_read(struct folded_meta *fm, const char *s, size_t len,
		     int partial, size_t *used, int *done);

/* The frame line of text @s[0..len), or NULL. */
const struct meta_frame *folded_meta_find(const struct folded_meta *fm,
					  const char *s, size_t len);

/* Frees what @fm holds. Accepts a zeroed one. */
void folded_meta_free(struct folded_meta *fm);

#endif /* HEARTH_PROFILE_FOLDED_META_H */
