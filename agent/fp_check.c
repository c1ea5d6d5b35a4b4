/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/fp_check.h"

/* Frames at the outer end that only DWARF finds: __libc_start_call_main,
 * __libc_start_main, _start (or start_thread, clone3). */
#define START_FRAMES 3

static size_t slot_of(const struct fp_check *c, uint32_t pid)
{
	size_t i = (size_t)(pid * 2654435761u) & (c->cap - 1);

	while (c->pids[i] && c->pids[i] != pid)
		i = (i + 1) & (c->cap - 1);
	return i;
}

static int grow(struct fp_check *c)
{
	struct fp_check bigger = { .cap = c->cap ? c->cap * 2 : 256 };

	bigger.pids = calloc(bigger.cap, sizeof(*bigger.pids));
	bigger.state = calloc(bigger.cap, sizeof(*bigger.state));
	if (!bigger.pids || !bigger.state) {
		free(bigger.pids);
		free(bigger.state);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->cap; i++) {
		size_t j;

		if (!c->pids[i])
			continue;
		j = slot_of(&bigger, c->pids[i]);
		bigger.pids[j] = c->pids[i];
		bigger.state[j] = c->state[i];
	}
	bigger.len = c->len;
	fp_check_free(c);
	*c = bigger;
	return 0;
}

/* Whether the FP walk saw the same callers as the DWARF unwind. */
static int agrees(const uint64_t *dwarf, size_t nd, const uint64_t *fp, size_t nf)
{
	size_t m = nd > START_FRAMES + 1 ? nd - START_FRAMES : 1;

	if (nf < m)
		return 0;
	return memcmp(dwarf, fp, m * sizeof(*dwarf)) == 0;
}

enum fp_verdict fp_check_sample(struct fp_check *c, uint32_t pid,
				const uint64_t *dwarf, size_t nd,
				const uint64_t *fp, size_t nf)
{
	size_t i;

	if (!pid || ((c->len + 1) * 2 > c->cap && grow(c) < 0))
		return FP_UNDECIDED;
	i = slot_of(c, pid);
	if (!c->pids[i]) {
		c->pids[i] = pid;
		c->state[i] = 0;
		c->len++;
	}
	if (c->state[i] > FP_CHECK_SAMPLES)
		return (enum fp_verdict)(c->state[i] - FP_CHECK_SAMPLES);
	if (!agrees(dwarf, nd, fp, nf)) {
		c->state[i] = FP_CHECK_SAMPLES + FP_NEEDS_DWARF;
		return FP_NEEDS_DWARF;
	}
	if (++c->state[i] < FP_CHECK_SAMPLES)
		return FP_UNDECIDED;
	c->state[i] = FP_CHECK_SAMPLES + FP_CLEAN;
	return FP_CLEAN;
}

void fp_check_forget(struct fp_check *c, uint32_t pid)
{
	size_t i, j;

	if (!c->cap || !pid)
		return;
	i = slot_of(c, pid);
	if (!c->pids[i])
		return;
	/* Backward-shift deletion keeps every probe chain whole. */
	c->pids[i] = 0;
	c->len--;
	for (j = (i + 1) & (c->cap - 1); c->pids[j]; j = (j + 1) & (c->cap - 1)) {
		uint32_t p = c->pids[j];
		uint8_t st = c->state[j];

		c->pids[j] = 0;
		c->pids[slot_of(c, p)] = p;
		c->state[slot_of(c, p)] = st;
	}
}

void fp_check_free(struct fp_check *c)
{
	free(c->pids);
	free(c->state);
	memset(c, 0, sizeof(*c));
}
