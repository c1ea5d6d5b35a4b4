/* SPDX-License-Identifier: GPL-2.0 */
/* For the BPF programs only: whether a task's name is the one asked for. */
#ifndef HEARTH_BPF_COMM_H
#define HEARTH_BPF_COMM_H

/* A comm (at most @len bytes, NUL-terminated when shorter) equal to
 * @want, which a program holds in its read-only data. */
static __always_inline bool hearth_comm_is(const char *comm, const volatile char *want,
					   int len)
{
	for (int i = 0; i < len; i++) {
		if (comm[i] != want[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

#endif
