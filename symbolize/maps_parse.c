/* SPDX-License-Identifier: MIT */
/*
 * maps_parse: one line of /proc/PID/maps
 * ("start-end perms offset major:minor inode   path"), and the walk over
 * its text where the kernel has no PROCMAP_QUERY.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym_internal.h"

int sym_parse_hex(const char **pp, const char *end, char stop, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	int digits = 0;

	for (; p < end && *p != stop; p++, digits++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return -EINVAL;
		if (digits >= 16)
			return -EINVAL;
		x = x << 4 | (uint64_t)d;
	}
	if (digits == 0 || p == end)
		return -EINVAL;
	*v = x;
	*pp = p + 1;
	return 0;
}

int sym_maps_parse_line(const char *line, size_t len,
			struct sym_maps_line *out)
{
	const char *p = line, *end = line + len;
	uint64_t dmaj, dmin, ino;
	memset(out, 0, sizeof(*out));
	if (sym_parse_hex(&p, end, '-', &out->start) ||
	    sym_parse_hex(&p, end, ' ', &out->end) || out->end < out->start)
		return -EINVAL;
	if (end - p < 5 || (p[0] != 'r' && p[0] != '-') || p[4] != ' ')
		return -EINVAL;
	out->exec = p[2] == 'x';
	p += 5;
	if (sym_parse_hex(&p, end, ' ', &out->pgoff) ||
	    sym_parse_hex(&p, end, ':', &dmaj) ||
	    sym_parse_hex(&p, end, ' ', &dmin) ||
	    dmaj > UINT32_MAX || dmin > UINT32_MAX)
		return -EINVAL;
	out->dev_major = (unsigned)dmaj;
	out->dev_minor = (unsigned)dmin;
	/* inode is decimal */
	ino = 0;
	int digits = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (ino > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		ino = ino * 10 + (uint64_t)(*p - '0');
	}
	if (digits == 0 || (p < end && *p != ' '))
		return -EINVAL;
	out->ino = ino;
	while (p < end && *p == ' ')
		p++;
	out->path = p;
	out->path_len = (size_t)(end - p);
	static const char del[] = " (deleted)";
	if (out->path_len > sizeof(del) - 1 &&
	    memcmp(end - (sizeof(del) - 1), del, sizeof(del) - 1) == 0) {
		out->deleted = true;
		out->path_len -= sizeof(del) - 1;
	}
	return 0;
}

int sym_maps_text(int fd, sym_maps_fn fn, void *arg)
{
	FILE *f = fdopen(fd, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	if (!f) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
		struct sym_maps_line ml;

		if (line[len - 1] == '\n')
			len--;
		if (sym_maps_parse_line(line, (size_t)len, &ml) == 0 && ml.exec)
			rc = fn(arg, &ml);
	}
	free(line);
	fclose(f);
	return rc;
}
