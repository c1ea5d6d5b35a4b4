/* SPDX-License-Identifier: MIT */
/*
 * push_pins: the service each process of the window under way was given,
 * kept in the state directory as `push-services` so that a window resumed
 * after a restart (or a crash) is cut into the same parts.
 *
 * A process's service is read from /proc when its window is sent
 * (push_service.h): a process alive then is named by its unit or its
 * executable, one gone by its comm. Resuming a window after a restart
 * with names read again would cut it differently (a process gone
 * meanwhile changes its part), and the parts the cursor says were
 * answered would no longer be the ones sent: some sent twice, some never.
 * So the names a window was cut by are written before its first part is
 * sent, and a resumed window takes them back.
 *
 * The file is text, renamed into place but not synced (as
 * push-cursor.part: a crash of hearthd keeps it; after a power cut the
 * names are read from /proc again):
 *   hearth-push-services 1
 *   window START_NS END_NS
 *   PID HEX-COMM HEX-SERVICE HEX-CONTAINER-or--      one line a process
 *   crc CRC32-OF-THE-LINES-ABOVE (8 hex digits)
 * Nothing here prints or keeps global state.
 */
#ifndef HEARTH_PUSH_PINS_H
#define HEARTH_PUSH_PINS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/push_service.h"

#define PUSH_PINS_FILE "push-services"
#define PUSH_PINS_COMM_MAX 16u     /* a comm, its NUL included */
/* Largest file read back: far above any window's processes. */
#define PUSH_PINS_TEXT_MAX (16u << 20)

struct push_pin {
	uint32_t pid;
	char comm[PUSH_PINS_COMM_MAX];
	struct push_service svc;
};

struct push_pins {
	uint64_t start_ns, end_ns;  /* the window */
	struct push_pin *v;
	size_t n, cap;
};

/* Adds process @pid, comm @comm (@len bytes, cut to 15), service @svc.
 * Returns 0 or -ENOMEM. */
int push_pins_add(struct push_pins *ps, uint32_t pid, const char *comm, size_t len,
		  const struct push_service *svc);

/* The service pinned for @pid and @comm (@len bytes, cut to 15), or NULL. */
const struct push_service *push_pins_find(const struct push_pins *ps, uint32_t pid,
					  const char *comm, size_t len);

/* Forgets every pin (the memory stays for the next window). */
void push_pins_clear(struct push_pins *ps);

/* Frees the pins; zeroes @ps. */
void push_pins_free(struct push_pins *ps);

/* The file's text for @ps, malloc'd into *@buf / *@len. Returns 0 or
 * -ENOMEM. */
int push_pins_format(const struct push_pins *ps, char **buf, size_t *len);

/* Parses a file's text into @ps (cleared first). Returns 0, -EBADMSG when
 * it is not one (header, fields, names or checksum), or -ENOMEM. */
int push_pins_parse(const char *buf, size_t len, struct push_pins *ps);

/* Writes @ps as @dirfd's PUSH_PINS_FILE (renamed into place, not synced).
 * Returns 0 or a negative errno. */
int push_pins_write(int dirfd, const struct push_pins *ps);

/* Reads @dirfd's PUSH_PINS_FILE into @ps. Returns 0, -ENOENT, -EBADMSG,
 * -EPERM when it is not trusted, or another negative errno. */
int push_pins_read(int dirfd, struct push_pins *ps);

#endif /* HEARTH_PUSH_PINS_H */
