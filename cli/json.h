/* SPDX-License-Identifier: MIT */
/*
 * JSON for the commands' --json output: a writer that tracks nesting and
 * commas, escapes strings, and never emits invalid JSON (bytes that are
 * not UTF-8 become U+FFFD; a number that is not finite becomes null).
 * Each value takes a key inside an object and NULL elsewhere. Write
 * errors are left on the FILE for its closer to report.
 */
#ifndef HEARTH_CLI_JSON_H
#define HEARTH_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_JSON_DEPTH 16

struct cli_json {
	FILE *f;
	int depth;
	bool first[CLI_JSON_DEPTH]; /* nothing written yet at this depth */
	char close[CLI_JSON_DEPTH]; /* '}' or ']' */
};

/* Starts writing one JSON document to @f. */
void cli_json_start(struct cli_json *j, FILE *f);

/* Opens an object or an array (value of @key, or NULL). Nesting deeper
 * than CLI_JSON_DEPTH is a programming error (abort). */
void cli_json_object(struct cli_json *j, const char *key);
void cli_json_array(struct cli_json *j, const char *key);

/* Closes the innermost object or array; after the outermost, a newline. */
void cli_json_end(struct cli_json *j);

void cli_json_u64(struct cli_json *j, const char *key, uint64_t v);
void cli_json_i64(struct cli_json *j, const char *key, int64_t v);
/* @v with up to @digits significant digits, or null when not finite. */
void cli_json_double(struct cli_json *j, const char *key, double v, int digits);
/* @v / 10^@decimals written exactly ("1.520" for 1520 and 3). */
void cli_json_fixed(struct cli_json *j, const char *key, uint64_t v, unsigned decimals);
void cli_json_bool(struct cli_json *j, const char *key, bool v);
/* @s as a string, or null when @s is NULL. */
void cli_json_str(struct cli_json *j, const char *key, const char *s);

#endif
