/* SPDX-License-Identifier: MIT */
/* push_pins: a window's services, written before its parts are sent. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/push_cursor.h"
#include "agent/push_pins.h"
#include "agent/trusted_dir.h"

#define HEADER "hearth-push-services 1\n"
/* One line at most: pid, the three names in hex, spaces and newline. */
#define LINE_MAX_ (11 + 2 * (PUSH_PINS_COMM_MAX + PUSH_SERVICE_MAX + PUSH_CONTAINER_MAX) + 4)

static void copy_comm(char out[PUSH_PINS_COMM_MAX], const char *comm, size_t len)
{
	if (len > PUSH_PINS_COMM_MAX - 1)
		len = PUSH_PINS_COMM_MAX - 1;
	memcpy(out, comm, len);
	out[len] = 0;
}

int push_pins_add(struct push_pins *ps, uint32_t pid, const char *comm, size_t len,
		  const struct push_service *svc)
{
	struct push_pin *pin;

	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		void *v = realloc(ps->v, cap * sizeof(*ps->v));

		if (!v)
			return -ENOMEM;
		ps->v = v;
		ps->cap = cap;
	}
	pin = &ps->v[ps->n++];
	pin->pid = pid;
	copy_comm(pin->comm, comm, len);
	pin->svc = *svc;
	return 0;
}

const struct push_service *push_pins_find(const struct push_pins *ps, uint32_t pid,
					  const char *comm, size_t len)
{
	char c[PUSH_PINS_COMM_MAX];

	copy_comm(c, comm, len);
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].pid == pid && !strcmp(ps->v[i].comm, c))
			return &ps->v[i].svc;
	return NULL;
}

void push_pins_clear(struct push_pins *ps)
{
	ps->n = 0;
	ps->start_ns = ps->end_ns = 0;
}

void push_pins_free(struct push_pins *ps)
{
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}

static char *put_name(char *o, const char *s)
{
	if (!*s)
		*o++ = '-';
	return push_cursor_hex(o, s, strlen(s));
}

int push_pins_format(const struct push_pins *ps, char **buf, size_t *len)
{
	size_t cap = 128 + ps->n * LINE_MAX_;
	char *b = malloc(cap), *o;

	if (!b)
		return -ENOMEM;
	o = b + sprintf(b, HEADER "window %" PRIu64 " %" PRIu64 "\n", ps->start_ns, ps->end_ns);
	for (size_t i = 0; i < ps->n; i++) {
		const struct push_pin *pin = &ps->v[i];

		o += sprintf(o, "%" PRIu32 " ", pin->pid);
		o = put_name(o, pin->comm);
		*o++ = ' ';
		o = put_name(o, pin->svc.name);
		*o++ = ' ';
		o = put_name(o, pin->svc.container);
		*o++ = '\n';
	}
	o += sprintf(o, "crc %08lx\n", crc32(0, (const Bytef *)b, (uInt)(o - b)));
	*buf = b;
	*len = (size_t)(o - b);
	return 0;
}

/* Reads the name at *@p that @sep ends into @out (@cap bytes with its
 * NUL; "-" is ""). Returns 0 or -EBADMSG. */
static int get_name(const char **p, const char *end, char sep, char *out, size_t cap)
{
	const char *s = *p, *e = s;

	while (e < end && *e != ' ' && *e != '\n')
		e++;
	if (e == end || *e != sep || e == s)
		return -EBADMSG;
	*p = e + 1;
	if (e - s == 1 && *s == '-') {
		out[0] = 0;
		return 0;
	}
	return push_cursor_unhex(s, (size_t)(e - s), out, cap);
}

int push_pins_parse(const char *buf, size_t len, struct push_pins *ps)
{
	long body = push_cursor_checked(buf, len);
	const char *p, *end;

	push_pins_clear(ps);
	if (body < 0 || (size_t)body < sizeof(HEADER) - 1 ||
	    memcmp(buf, HEADER, sizeof(HEADER) - 1) != 0 ||
	    push_cursor_window_line(buf + sizeof(HEADER) - 1, buf + body, &ps->start_ns,
				    &ps->end_ns, &p))
		return -EBADMSG;
	for (end = buf + body; p < end;) {
		struct push_pin pin = { 0 };
		unsigned long pid = 0;
		const char *q;
		int rc;

		/* Digits, then a space: strtoul would run past @end. */
		for (q = p; q < end && '0' <= *q && *q <= '9' && q - p < 10; q++)
			pid = pid * 10 + (unsigned long)(*q - '0');
		if (q == p || q == end || *q != ' ' || pid == 0 || pid > UINT32_MAX)
			return -EBADMSG;
		p = q + 1;
		if (get_name(&p, end, ' ', pin.comm, sizeof(pin.comm)) ||
		    get_name(&p, end, ' ', pin.svc.name, sizeof(pin.svc.name)) || !pin.svc.name[0] ||
		    get_name(&p, end, '\n', pin.svc.container, sizeof(pin.svc.container)))
			return -EBADMSG;
		rc = push_pins_add(ps, (uint32_t)pid, pin.comm, strlen(pin.comm), &pin.svc);
		if (rc)
			return rc;
	}
	return 0;
}

int push_pins_write(int dirfd, const struct push_pins *ps)
{
	char *buf;
	size_t len;
	int rc = push_pins_format(ps, &buf, &len);

	if (rc)
		return rc;
	rc = push_cursor_replace(dirfd, PUSH_PINS_FILE, buf, len, false);
	free(buf);
	return rc;
}

int push_pins_read(int dirfd, struct push_pins *ps)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int rc = 0, fd = trusted_openat(dirfd, PUSH_PINS_FILE, O_RDONLY, 0);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (st.st_size > (off_t)PUSH_PINS_TEXT_MAX)
		rc = -EBADMSG;
	if (rc) {
		close(fd);
		return rc;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			rc = n < 0 ? -errno : -EBADMSG;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (!rc)
		rc = push_pins_parse(buf, got, ps);
	free(buf);
	return rc;
}
