/* SPDX-License-Identifier: MIT */
/*
 * FlameGraph's difffolded.pl output: folded stacks with two counts,
 * "stack before after". Either column reads as a profile of its own; a
 * reader that wants one profile says which, and hearth diff reads both.
 */
#ifndef HEARTH_DIFFFOLDED_H
#define HEARTH_DIFFFOLDED_H

#include <stddef.h>

#include "profile.h"

/* 1 when the first line of @buf[0..len) that is not a '#' comment or
 * blank ends in two whole counts. */
int prof_difffolded_sniff(const void *buf, size_t len);

/* Reads column @side (1: before, 2: after) of difffolded text
 * @buf[0..len) into a new profile in *@out (@unit its unit), as folded
 * text of that column; stacks whose count there is 0 are left out.
 * Returns 0, -EINVAL with one sentence in @err naming the line (not two
 * counts), or -ENOMEM. */
int prof_difffolded_read(const char *buf, size_t len, int side, enum prof_unit unit,
			 struct prof_profile **out, char *err, size_t errlen);

#endif
