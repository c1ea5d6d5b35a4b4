/* SPDX-License-Identifier: MIT */
/* hearth record's questions of memory: --alloc, --held and --growth. */
#ifndef HEARTH_CLI_RECORD_MEMORY_H
#define HEARTH_CLI_RECORD_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct record_mem_args {
	unsigned question;       /* PROF_Q_ALLOC, PROF_Q_HELD or PROF_Q_GROWTH */
	const pid_t *pids;       /* the processes chosen (growth: none is
				  * every process) */
	size_t npids;
	uint64_t duration_ns;    /* 0 = until Ctrl-C or they exit */
	uint64_t sample_bytes;   /* mean bytes between samples, 0 = default */
	bool per_thread;
	const char *output;
	unsigned out_flags;      /* CLI_OUT_* */
};

/* Records the question @a asks of the chosen processes and writes the
 * profile (pprof with objects beside the bytes, or bytes beside the
 * requests). Returns the exit status, after saying what went wrong. */
int cli_record_memory(const struct record_mem_args *a);

#endif
