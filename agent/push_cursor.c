/* SPDX-License-Identifier: MIT */
/* push_cursor: the push cursor file, written by rename, checked by CRC. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/push_cursor.h"
#include "agent/trusted_dir.h"

#define HEADER "hearth-push-cursor 1\n"

static int unhex(char ch)
{
	if ('0' <= ch && ch <= '9')
		return ch - '0';
	if ('a' <= ch && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

char *push_cursor_hex(char *out, const char *s, size_t n)
{
	static const char hexd[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		*out++ = hexd[(unsigned char)s[i] >> 4];
		*out++ = hexd[(unsigned char)s[i] & 15];
	}
	return out;
}

int push_cursor_unhex(const char *hex, size_t n, char *out, size_t cap)
{
	size_t k = 0;

	if (n % 2 || n / 2 >= cap)
		return -EBADMSG;
	for (size_t i = 0; i < n; i += 2) {
		int hi = unhex(hex[i]), lo = unhex(hex[i + 1]);

		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
			return -EBADMSG;
		out[k++] = (char)(hi << 4 | lo);
	}
	out[k] = 0;
	return 0;
}

long push_cursor_checked(const char *buf, size_t len)
{
	const char *crc_line;
	char hex[9], *end;
	unsigned long want;

	if (len < 14 || buf[len - 1] != '\n')
		return -EBADMSG;
	crc_line = buf + len - 13;
	if (memcmp(crc_line, "crc ", 4) != 0 || crc_line[-1] != '\n')
		return -EBADMSG;
	memcpy(hex, crc_line + 4, 8);
	hex[8] = 0;
	want = strtoul(hex, &end, 16);
	if (end != hex + 8 || want != crc32(0, (const Bytef *)buf, (uInt)(crc_line - buf)))
		return -EBADMSG;
	return crc_line - buf;
}

size_t push_cursor_format(const struct push_cursor *c, char *buf, size_t cap)
{
	char body[PUSH_CURSOR_TEXT_MAX];
	size_t n, klen = strnlen(c->after, PUSH_KEY_MAX - 1);
	int w;

	w = snprintf(body, sizeof(body), HEADER "window %" PRIu64 " %" PRIu64 "\n%s",
		     c->start_ns, c->end_ns, c->done ? "done\n" : "after ");
	if (w < 0 || (size_t)w >= sizeof(body))
		return 0;
	n = (size_t)w;
	if (!c->done) {
		n = (size_t)(push_cursor_hex(body + n, c->after, klen) - body);
		body[n++] = '\n';
	}
	w = snprintf(buf, cap, "%.*scrc %08lx\n", (int)n, body,
		     crc32(0, (const Bytef *)body, (uInt)n));
	return w < 0 || (size_t)w >= cap ? 0 : (size_t)w;
}

/* Parses "after HEX\n" or "done\n" at @p (up to @end) into @c. */
static int parse_state(const char *p, const char *end, struct push_cursor *c)
{
	if (end - p == 5 && !memcmp(p, "done\n", 5)) {
		c->done = true;
		return 0;
	}
	if (end - p < 7 || memcmp(p, "after ", 6) != 0 || end[-1] != '\n')
		return -EBADMSG;
	c->done = false;
	p += 6;
	return push_cursor_unhex(p, (size_t)(end - 1 - p), c->after, PUSH_KEY_MAX);
}

int push_cursor_window_line(const char *p, const char *end, uint64_t *start,
			   uint64_t *stop, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	char line[64];
	int used = 0;

	if (!nl || (size_t)(nl - p) >= sizeof(line))
		return -EBADMSG;
	memcpy(line, p, (size_t)(nl - p));
	line[nl - p] = 0;
	if (sscanf(line, "window %" SCNu64 " %" SCNu64 "%n", start, stop, &used) != 2 ||
	    line[used] != 0 || line[7] < '0' || line[7] > '9' || *stop < *start)
		return -EBADMSG;
	*next = nl + 1;
	return 0;
}

int push_cursor_parse(const char *buf, size_t len, struct push_cursor *c)
{
	long body = push_cursor_checked(buf, len);
	const char *next;

	memset(c, 0, sizeof(*c));
	if (body < 0 || (size_t)body < sizeof(HEADER) - 1 ||
	    memcmp(buf, HEADER, sizeof(HEADER) - 1) != 0 ||
	    push_cursor_window_line(buf + sizeof(HEADER) - 1, buf + body, &c->start_ns,
				    &c->end_ns, &next))
		return -EBADMSG;
	return parse_state(next, buf + body, c);
}

int push_cursor_read(int dirfd, const char *name, struct push_cursor *c)
{
	char buf[PUSH_CURSOR_TEXT_MAX + 1];
	ssize_t n;
	int fd = trusted_openat(dirfd, name, O_RDONLY, 0);

	if (fd < 0)
		return fd;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	if ((size_t)n > PUSH_CURSOR_TEXT_MAX)
		return -EBADMSG;
	return push_cursor_parse(buf, (size_t)n, c);
}

int push_cursor_replace(int dirfd, const char *name, const void *buf, size_t n, bool sync)
{
	char tmp[64];
	int fd, rc = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp))
		return -EINVAL;
	fd = trusted_openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	if (fd < 0)
		return fd;
	errno = 0;
	if (write(fd, buf, n) != (ssize_t)n)
		rc = errno ? -errno : -EIO;
	else if (sync && fdatasync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = -errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

int push_cursor_write(int dirfd, const char *name, const struct push_cursor *c,
		      bool sync)
{
	char buf[PUSH_CURSOR_TEXT_MAX];
	size_t n = push_cursor_format(c, buf, sizeof(buf));

	return n ? push_cursor_replace(dirfd, name, buf, n, sync) : -EINVAL;
}

int push_cursor_load(int dirfd, struct push_cursor *c)
{
	struct push_cursor part;
	int rc = push_cursor_read(dirfd, PUSH_CURSOR_FILE, c);

	if (rc)
		return rc;
	if (push_cursor_read(dirfd, PUSH_CURSOR_PART_FILE, &part) == 0 && !part.done &&
	    part.end_ns > c->end_ns)
		*c = part;
	return 0;
}
