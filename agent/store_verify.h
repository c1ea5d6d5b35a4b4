/* SPDX-License-Identifier: MIT */
/*
 * store_verify: the whole-store check behind `hearthd --verify-store`, a
 * store_scan() that also counts the roll-ups it checks by level.
 */
#ifndef HEARTH_STORE_VERIFY_H
#define HEARTH_STORE_VERIFY_H

#include <stdint.h>

#include "agent/store.h"

struct store_verify_report {
	struct store_scan_report scan; /* as store_scan() fills it */
	/* Roll-ups checked, by level (index 0: level 1, hearthd's 10-minute
	 * roll-ups; 1: level 2, its hour roll-ups): good ones, and damaged
	 * ones (a bad payload checksum; also counted in scan.corrupt). */
	uint64_t rollups[STORE_ROLLUP_LEVELS];
	uint64_t rollups_bad[STORE_ROLLUP_LEVELS];
	/* The marks file, read whole: good marks and what was wrong. */
	uint64_t marks;
	struct store_marks_report mk;
	int marks_err;                 /* store_marks_read()'s error, or 0 */
};

/* Calls @fn, oldest first, for every good window of @dir, checks every
 * roll-up, index entry and mark, filling @rep. Returns what store_scan()
 * over all time returns. */
int store_verify(const char *dir, store_window_fn fn, void *arg,
		 struct store_verify_report *rep);

#endif
