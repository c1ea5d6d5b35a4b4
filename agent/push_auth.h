/* SPDX-License-Identifier: MIT */
/*
 * push_auth: the credentials of the push, read from push_auth_file: its
 * first line, a bearer token, or "user:password" for Basic. The file
 * must be a regular file (not a symbolic link) owned by root or hearthd's
 * user that only its owner may read or write (mode 0600 or 0400): a
 * secret that others can read is refused, not used. Nothing here prints.
 */
#ifndef HEARTH_PUSH_AUTH_H
#define HEARTH_PUSH_AUTH_H

#include <stddef.h>

#define PUSH_AUTH_MAX 4096u

/* The rule, for the sentence that reports -EPERM. */
#define PUSH_AUTH_RULE \
	"it must be a regular file owned by root or hearthd's user that only its owner can read or write (chmod 600)"

/* Reads @path's first line (surrounding blanks trimmed) into @out of
 * PUSH_AUTH_MAX bytes. Returns 0, -EPERM when the file breaks the rule
 * above, -EINVAL when the line is empty or too long, or another negative
 * errno (-ENOENT, ...). */
int push_auth_read(const char *path, char out[PUSH_AUTH_MAX]);

#endif /* HEARTH_PUSH_AUTH_H */
