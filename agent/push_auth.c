/* SPDX-License-Identifier: MIT */
/* push_auth: a secret read only from a file no one else can read. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/push_auth.h"

int push_auth_read(const char *path, char out[PUSH_AUTH_MAX])
{
	char buf[PUSH_AUTH_MAX + 1];
	struct stat st;
	ssize_t n;
	char *s, *e;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 077)) {
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	s = buf;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s;
	while (*e && *e != '\n' && *e != '\r')
		e++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*e = 0;
	if (e == s || (size_t)(e - s) >= PUSH_AUTH_MAX) {
		explicit_bzero(buf, sizeof(buf));
		return -EINVAL;
	}
	memcpy(out, s, (size_t)(e - s) + 1);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}
