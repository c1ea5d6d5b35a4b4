/* SPDX-License-Identifier: MIT */
/*
 * push_cursor: how far the backend has taken the store, kept in the state
 * directory as `push-cursor` so that a restart (or a crash) neither sends a
 * window twice nor skips one.
 *
 * The cursor names the last window hearthd worked on and, while that
 * window is not finished, the last of its parts (one profile of one
 * service, in the order of their keys) the backend answered. Finished
 * windows go to `push-cursor`, synced to disk; the parts of the window
 * under way to `push-cursor.part`, renamed into place but not synced (a
 * crash of hearthd keeps it; a power cut may lose it, and then only that
 * window's parts are sent again). Both are text:
 *   hearth-push-cursor 1
 *   window START_NS END_NS
 *   done                      or   after HEX-OF-THE-PART-KEY
 *   crc CRC32-OF-THE-LINES-ABOVE (8 hex digits)
 * written to `push-cursor.tmp`, synced, and renamed over `push-cursor`,
 * both opened relative to the state directory without following symbolic
 * links (agent/trusted_dir.h). Nothing here prints or keeps global state.
 */
#ifndef HEARTH_PUSH_CURSOR_H
#define HEARTH_PUSH_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PUSH_CURSOR_FILE "push-cursor"
#define PUSH_CURSOR_PART_FILE "push-cursor.part"
#define PUSH_KEY_MAX 256u   /* a part's key, its NUL included */
/* Largest cursor file: the lines above with the longest key. */
#define PUSH_CURSOR_TEXT_MAX (96u + 2u * PUSH_KEY_MAX)

struct push_cursor {
	uint64_t start_ns;        /* the window; both 0 = none yet */
	uint64_t end_ns;
	bool done;                /* every part of it was answered */
	char after[PUSH_KEY_MAX]; /* when !done: the last part answered, "" = none */
};

/* Writes @c as the file's text into @buf of @cap bytes. Returns the
 * length, or 0 when @cap is too small. */
size_t push_cursor_format(const struct push_cursor *c, char *buf, size_t cap);

/* Parses a cursor file's text. Returns 0, or -EBADMSG when it is not one
 * (wrong header, fields, key or checksum). */
int push_cursor_parse(const char *buf, size_t len, struct push_cursor *c);

/* The helpers of the push's state files (the cursor, push_pins.h). */

/* Writes the @n bytes of @s as lowercase hex at @out; returns the end. */
char *push_cursor_hex(char *out, const char *s, size_t n);

/* Decodes @n hex digits at @hex into @out (@cap bytes, NUL-terminated).
 * Returns 0, or -EBADMSG for an odd count, a non-digit, a NUL byte or a
 * string that does not fit. */
int push_cursor_unhex(const char *hex, size_t n, char *out, size_t cap);

/* Checks a state file's text, whose last line is "crc XXXXXXXX" (the CRC32
 * of every line above). Returns the length of those lines, or -EBADMSG. */
long push_cursor_checked(const char *buf, size_t len);

/* Parses the line "window START_NS END_NS" at @p (before @end), START not
 * after END; *@next is the line after it. Returns 0 or -EBADMSG. */
int push_cursor_window_line(const char *p, const char *end, uint64_t *start,
			    uint64_t *stop, const char **next);

/* Reads @dirfd's cursor file @name. Returns 0, -ENOENT when there is
 * none, -EBADMSG when it is damaged, -EPERM when it is not trusted, or
 * another negative errno. */
int push_cursor_read(int dirfd, const char *name, struct push_cursor *c);

/* Replaces @dirfd's cursor file @name with @c, by writing NAME.tmp and
 * renaming it: a crash leaves the old cursor or the new one. With @sync
 * the new file is on disk before it takes the name. Returns 0 or a
 * negative errno. */
int push_cursor_write(int dirfd, const char *name, const struct push_cursor *c,
		      bool sync);

/* Replaces @dirfd's file @name with @buf[0..n) the same way: NAME.tmp,
 * synced first with @sync, renamed over @name. Returns 0 or a negative
 * errno. */
int push_cursor_replace(int dirfd, const char *name, const void *buf, size_t n, bool sync);

/* The cursor to resume from: @name's (PUSH_CURSOR_FILE), or the part
 * file's when that one is valid and further on. Same returns as
 * push_cursor_read() of @name. */
int push_cursor_load(int dirfd, struct push_cursor *c);

#endif /* HEARTH_PUSH_CURSOR_H */
