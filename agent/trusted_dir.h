/* SPDX-License-Identifier: MIT */
/*
 * trusted_dir: opening hearthd's own directories and the files in them so
 * that no other user can redirect a write. hearthd runs as root beside
 * untrusted users: a state directory another user owns, or can write to,
 * lets that user plant a symbolic link where hearthd is about to write.
 *
 * A directory or file is trusted when it is owned by root or by the
 * calling user and is writable by no one else (no group or other write
 * bit). Symbolic links are never followed, at the last component of the
 * directory's path or for any file in it.
 */
#ifndef HEARTH_TRUSTED_DIR_H
#define HEARTH_TRUSTED_DIR_H

#include <stdbool.h>
#include <sys/types.h>

/* Opens the directory @path (creating it with mode 0750 first when @create
 * and it is missing). Returns an O_DIRECTORY descriptor, or -EPERM when
 * the directory is not trusted (a symbolic link, another owner, group- or
 * other-writable), or another negative errno. */
int trusted_dir_open(const char *path, bool create);

/* openat(@dirfd, @name, @flags | O_NOFOLLOW | O_CLOEXEC, @mode), then
 * checks that the file is a regular file and trusted. Returns the
 * descriptor, -EPERM for an untrusted file or a symbolic link, or another
 * negative errno (-ENOENT when missing and @flags has no O_CREAT). */
int trusted_openat(int dirfd, const char *name, int flags, mode_t mode);

/* The rule, for the sentence that reports -EPERM. */
#define TRUSTED_DIR_RULE \
	"it and the files in it must belong to root or hearthd's user, be writable by no one else and not be symbolic links"

#endif
