/* SPDX-License-Identifier: MIT */
/* A small open-addressing set of process ids. */
#ifndef HEARTH_PID_SET_H
#define HEARTH_PID_SET_H

#include <stddef.h>
#include <stdint.h>

struct pid_set {
	uint32_t *slots; /* 0 = empty; pid 0 is never stored */
	size_t cap, len;
};

/* Adds @pid (> 0). Returns 1 when added, 0 when already there, -ENOMEM. */
int pid_set_add(struct pid_set *set, uint32_t pid);

/* Returns whether @pid is in @set. */
int pid_set_has(const struct pid_set *set, uint32_t pid);

/* Frees the slots; the set is empty and reusable afterwards. */
void pid_set_free(struct pid_set *set);

#endif
