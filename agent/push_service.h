/* SPDX-License-Identifier: MIT */
/*
 * push_service: which service a process belongs to, the way profile
 * backends group applications: its systemd unit, read from
 * /proc/PID/cgroup (the unified hierarchy's line, else the name=systemd
 * one), else the name of its executable; kernel threads are "kernel".
 * A container's id (Docker, containerd, CRI-O, Podman scopes) comes from
 * the same path.
 *
 * Names are cleaned for the ingest API: a service name keeps
 * [A-Za-z0-9_./-] and every other byte becomes '_' (systemd's "@" and
 * "\x2d" escapes included). Nothing here prints or keeps global state.
 */
#ifndef HEARTH_PUSH_SERVICE_H
#define HEARTH_PUSH_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PUSH_SERVICE_MAX 128u
#define PUSH_CONTAINER_MAX 72u

struct push_service {
	char name[PUSH_SERVICE_MAX];           /* service_name, never "" */
	char container[PUSH_CONTAINER_MAX];    /* container_id, "" = none */
};

/* From the text of a /proc/PID/cgroup file, the process's systemd unit
 * (the innermost path component ending in .service or .scope, cleaned)
 * into @unit and its container id into @container ("" when none).
 * Returns true when a unit was found. Pure. */
bool push_service_from_cgroup(const char *text, size_t len,
			      char unit[PUSH_SERVICE_MAX],
			      char container[PUSH_CONTAINER_MAX]);

/* Copies @in (@len bytes) into @out, bytes outside [A-Za-z0-9_./-]
 * replaced by '_', at most PUSH_SERVICE_MAX - 1 of them; "unknown" for
 * an empty name. */
void push_service_clean(const char *in, size_t len,
			char out[PUSH_SERVICE_MAX]);

struct push_services;

/* A cache of resolved processes, keyed by pid and comm (a pid reused by
 * another program resolves again), of at most @max entries (the whole
 * cache is forgotten when it is full). NULL when out of memory. */
struct push_services *push_services_new(size_t max);

/* Frees @s. Accepts NULL. */
void push_services_free(struct push_services *s);

/* The service of process @pid whose comm is @comm (@len bytes), from
 * the cache or from /proc (@proc, normally "/proc"). A process that is
 * gone, or whose pid now runs another program, is named by @comm. The
 * result is valid until the next call. */
const struct push_service *push_services_get(struct push_services *s,
					     const char *proc, uint32_t pid,
					     const char *comm, size_t len);

#endif /* HEARTH_PUSH_SERVICE_H */
