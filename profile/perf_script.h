/* SPDX-License-Identifier: MIT */
/*
 * `perf script` text, read as stackcollapse-perf.pl --kernel reads it, so
 * users of perf need no collapse step: a sample is a header line
 * ("comm pid[/tid] [cpu] time: [period] event:") and its stack lines
 * ("addr function+0xoff (module)", leaf first), up to a blank line. The
 * process name is the root; each sample counts its period (1 when there
 * is none), and only the first event type met is read. Functions are
 * tidied as stackcollapse-perf does ("+0x..." and argument lists dropped,
 * ';' written ':', "[unknown]" named by its module's file), frames of a
 * "[...]" or vmlinux module are kernel frames. cpu-clock and task-clock
 * periods are nanoseconds, other events' are counts (samples).
 */
#ifndef HEARTH_PERF_SCRIPT_H
#define HEARTH_PERF_SCRIPT_H

#include <stddef.h>

#include "profile.h"

/* 1 when @buf[0..len) starts (after '#' comments and blank lines) with a
 * sample header line followed by a stack line. */
int prof_perf_script_sniff(const void *buf, size_t len);

/* Reads perf script text @buf[0..len) into a new profile in *@out. Returns
 * 0, -EINVAL with one sentence in @err (no sample in it, a stack line
 * before any header) or -ENOMEM. */
int prof_perf_script_read(const char *buf, size_t len, struct prof_profile **out,
			  char *err, size_t errlen);

#endif
