/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "agent/pid_set.h"

static size_t slot_of(uint32_t pid, size_t cap)
{
	return (size_t)(pid * 2654435761u) & (cap - 1);
}

static int grow(struct pid_set *set)
{
	size_t cap = set->cap ? set->cap * 2 : 64;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < set->cap; i++) {
		uint32_t pid = set->slots[i];
		size_t j;

		if (!pid)
			continue;
		for (j = slot_of(pid, cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = pid;
	}
	free(set->slots);
	set->slots = slots;
	set->cap = cap;
	return 0;
}

int pid_set_has(const struct pid_set *set, uint32_t pid)
{
	if (!set->cap || !pid)
		return 0;
	for (size_t j = slot_of(pid, set->cap); set->slots[j]; j = (j + 1) & (set->cap - 1))
		if (set->slots[j] == pid)
			return 1;
	return 0;
}

int pid_set_add(struct pid_set *set, uint32_t pid)
{
	size_t j;

	if (!pid || pid_set_has(set, pid))
		return 0;
	if ((set->len + 1) * 2 > set->cap && grow(set) < 0)
		return -ENOMEM;
	for (j = slot_of(pid, set->cap); set->slots[j]; j = (j + 1) & (set->cap - 1))
		;
	set->slots[j] = pid;
	set->len++;
	return 1;
}

void pid_set_free(struct pid_set *set)
{
	free(set->slots);
	set->slots = NULL;
	set->cap = set->len = 0;
}
