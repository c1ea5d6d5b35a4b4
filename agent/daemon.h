/* SPDX-License-Identifier: MIT */
/*
 * daemon: hearthd's main loop. Runs the sampler continuously, cuts a window
 * every `window` seconds, stores it, serves the control socket, tells
 * systemd it is ready and pets the watchdog, reloads its config on SIGHUP
 * and, on SIGTERM or SIGINT, stores the current window and exits.
 *
 * The daemon is a program edge: it logs one line per event to stderr
 * (journald keeps it), repeated problems only at 1, 10, 100, ... times.
 */
#ifndef HEARTH_DAEMON_H
#define HEARTH_DAEMON_H

#include <stddef.h>

#define DAEMON_OVERRIDES_MAX 64

/* A flag given on the command line, re-applied over the file on reload. */
struct daemon_override {
	const char *key;
	const char *value;
};

struct daemon_args {
	const char *config_path;       /* NULL = the default path */
	int config_required;           /* fail when the file is missing */
	struct daemon_override overrides[DAEMON_OVERRIDES_MAX];
	size_t noverrides;
};

/* Runs until SIGTERM/SIGINT. Returns the process exit status: 0 after a
 * clean stop, 1 when starting failed (the reason is logged). */
int daemon_run(const struct daemon_args *a);

#endif /* HEARTH_DAEMON_H */
