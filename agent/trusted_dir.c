/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/trusted_dir.h"

static bool trusted(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* Closes @fd and returns -EPERM unless it is trusted and of @type. */
static int check_fd(int fd, mode_t type)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if ((st.st_mode & S_IFMT) != type || !trusted(&st)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int trusted_dir_open(const char *path, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdir(path, 0750) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return check_fd(fd, S_IFDIR);
	/* A symbolic link gives ELOOP, or ENOTDIR with O_DIRECTORY. */
	if (errno == ELOOP || (errno == ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)))
		return -EPERM;
	return -errno;
}

int trusted_openat(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	return check_fd(fd, S_IFREG);
}
