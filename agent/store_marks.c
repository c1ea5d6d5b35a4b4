/* SPDX-License-Identifier: MIT */
/* store_marks: named moments on the timeline, kept beside the segments.
 *
 * Mark record (80 bytes): u64 time ns, u8 name length, name[64] (NUL
 * padded), 3 reserved bytes, u32 CRC32 of bytes 0..75. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/store_format.h"
#include "agent/trusted_dir.h"

#define MARKS_FILE "marks"
/* At most this many marks are read (a year of a deploy a minute). */
#define MARKS_MAX (1u << 20)

bool store_mark_name_valid(const char *name, size_t len)
{
	if (len == 0 || len > STORE_MARK_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr("._:@+-", c)) || c == 0)
			return false;
	}
	return true;
}

static int write_all_at(int fd, const uint8_t *b, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, b, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Opens the marks file for appending; returns the fd and the offset where
 * the next record goes (a torn last record is cut off). */
static int marks_open_append(const char *dir, off_t *end)
{
	struct timespec ts;
	uint8_t hdr[32];
	struct stat st;
	int dfd, fd, rc = 0;

	dfd = trusted_dir_open(dir, false);
	if (dfd < 0)
		return dfd;
	fd = trusted_openat(dfd, MARKS_FILE, O_RDWR | O_CREAT, 0640);
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (st.st_size < 32) {
		clock_gettime(CLOCK_REALTIME, &ts);
		store_fhdr_put(hdr, STORE_MARK_MAGIC, STORE_VERSION,
			       (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
		rc = write_all_at(fd, hdr, sizeof(hdr), 0);
		if (!rc && ftruncate(fd, 32) < 0)
			rc = -errno;
		fsync(dfd);
		*end = 32;
	} else {
		*end = 32 + (st.st_size - 32) / STORE_MARK_REC_SIZE * STORE_MARK_REC_SIZE;
	}
out:
	close(dfd);
	if (rc) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

int store_mark_add(const char *dir, const char *name, uint64_t at_ns)
{
	uint8_t rec[STORE_MARK_REC_SIZE] = { 0 };
	size_t len = strnlen(name, STORE_MARK_NAME_MAX + 1);
	off_t end = 0;
	int fd, rc;

	if (!store_mark_name_valid(name, len))
		return -EINVAL;
	fd = marks_open_append(dir, &end);
	if (fd < 0)
		return fd;
	le64_put(rec, at_ns);
	rec[8] = (uint8_t)len;
	memcpy(rec + 9, name, len);
	le32_put(rec + 76, store_crc(rec, 76));
	rc = write_all_at(fd, rec, sizeof(rec), end);
	if (!rc && fdatasync(fd) < 0)
		rc = -errno;
	if (rc && ftruncate(fd, end) < 0)
		rc = -EIO;
	close(fd);
	return rc;
}

static bool mark_decode(const uint8_t *rec, struct store_mark *m)
{
	size_t len = rec[8];

	if (le32_get(rec + 76) != store_crc(rec, 76) || len > STORE_MARK_NAME_MAX ||
	    !store_mark_name_valid((const char *)rec + 9, len))
		return false;
	m->at_ns = le64_get(rec);
	memcpy(m->name, rec + 9, len);
	m->name[len] = 0;
	return true;
}

int store_marks_read(const char *dir, struct store_mark **out, size_t *n,
		     struct store_marks_report *rep)
{
	uint8_t hdr[32], rec[STORE_MARK_REC_SIZE];
	struct store_marks_report local;
	struct store_mark *arr = NULL;
	size_t cnt = 0, total;
	struct stat st;
	int dfd, fd, v;

	*out = NULL;
	*n = 0;
	rep = rep ? rep : &local;
	memset(rep, 0, sizeof(*rep));
	dfd = trusted_dir_open(dir, false);
	if (dfd < 0)
		return dfd;
	fd = trusted_openat(dfd, MARKS_FILE, O_RDONLY, 0);
	close(dfd);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	if (fstat(fd, &st) < 0 || st.st_size < 32) {
		close(fd);
		return 0;
	}
	if (pread(fd, hdr, 32, 0) != 32) {
		close(fd);
		return -EIO;
	}
	/* A damaged header loses no mark: each record has its own CRC. */
	v = store_fhdr_check(hdr, STORE_MARK_MAGIC, STORE_VERSION);
	if (v == -EPROTONOSUPPORT) {
		close(fd);
		return v;
	}
	rep->header_bad = v < 0;
	total = (size_t)(st.st_size - 32) / STORE_MARK_REC_SIZE;
	rep->torn_bytes = (uint64_t)(st.st_size - 32) % STORE_MARK_REC_SIZE;
	if (total > MARKS_MAX)
		total = MARKS_MAX;
	arr = calloc(total ? total : 1, sizeof(*arr));
	if (!arr) {
		close(fd);
		return -ENOMEM;
	}
	for (size_t i = 0; i < total; i++) {
		off_t off = 32 + (off_t)(i * STORE_MARK_REC_SIZE);

		if (pread(fd, rec, sizeof(rec), off) != (ssize_t)sizeof(rec) ||
		    !mark_decode(rec, &arr[cnt])) {
			rep->bad++;
			continue;
		}
		cnt++;
	}
	close(fd);
	if (!cnt) {
		free(arr);
		arr = NULL;
	}
	*out = arr;
	*n = cnt;
	return 0;
}

int store_mark_find(const char *dir, const char *name, uint64_t *at_ns)
{
	struct store_mark *m;
	size_t n;
	int rc = store_marks_read(dir, &m, &n, NULL);

	if (rc)
		return rc;
	rc = -ENOENT;
	for (size_t i = n; i-- > 0;) {
		if (strcmp(m[i].name, name) == 0) {
			*at_ns = m[i].at_ns;
			rc = 0;
			break;
		}
	}
	free(m);
	return rc;
}
