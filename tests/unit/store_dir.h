/* SPDX-License-Identifier: MIT */
/*
 * store_dir: what the store's unit tests share: a temporary directory per
 * test (cmocka setup and teardown; the path is the test's state) and a
 * byte flipped in a file, the damage one bad byte does. Include after
 * cmocka.h.
 */
#ifndef HEARTH_TEST_STORE_DIR_H
#define HEARTH_TEST_STORE_DIR_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int setup(void **state)
{
	char *dir = strdup("/tmp/hearth-test-store.XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	assert_int_equal(system(cmd), 0);
	free(*state);
	return 0;
}

/* Xors the byte at @off of @path with 0x5a. */
static inline void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, off), 1);
	c ^= 0x5a;
	assert_int_equal(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

#endif
