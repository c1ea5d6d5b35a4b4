/* SPDX-License-Identifier: MIT */
/*
 * maps_query: the executable mappings of a process through the kernel's
 * PROCMAP_QUERY ioctl on /proc/PID/maps (Linux 6.11 and later).
 *
 * Reading /proc/PID/maps as text makes the kernel print every mapping,
 * with the path of each file-backed one; a process has hundreds of them
 * and only a few dozen are executable. The query asks for "the next
 * executable mapping at or after this address", one at a time, and names
 * only those.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "sym_internal.h"

/* The ioctl's argument, as the kernel's UAPI (linux/fs.h) lays it out;
 * older system headers do not have it. */
struct maps_query_arg {
	uint64_t size;        /* sizeof this struct */
	uint64_t query_flags; /* MQ_* */
	uint64_t query_addr;
	uint64_t vma_start;   /* out */
	uint64_t vma_end;     /* out */
	uint64_t vma_flags;   /* out */
	uint64_t vma_page_size; /* out */
	uint64_t vma_offset;  /* out: file offset of vma_start */
	uint64_t inode;       /* out */
	uint32_t dev_major;   /* out */
	uint32_t dev_minor;   /* out */
	uint32_t vma_name_size; /* in: buffer size; out: bytes with the NUL,
				 * 0 = the mapping has no name */
	uint32_t build_id_size; /* in/out, unused here: 0 */
	uint64_t vma_name_addr; /* in: buffer */
	uint64_t build_id_addr; /* in: 0 */
};

#define MQ_VMA_EXECUTABLE 0x04
#define MQ_COVERING_OR_NEXT 0x10
#define MQ_IOCTL _IOWR('f', 17, struct maps_query_arg)

_Static_assert(sizeof(struct maps_query_arg) == 104,
	       "PROCMAP_QUERY's argument is 104 bytes");

int sym_maps_query(int fd, char *name, size_t namelen, sym_maps_fn fn,
		   void *arg)
{
	uint64_t addr = 0;
	bool first = true;

	if (namelen < 2 || namelen > UINT32_MAX)
		return -EINVAL;
	for (;;) {
		struct maps_query_arg q = {
			.size = sizeof(q),
			.query_flags = MQ_VMA_EXECUTABLE | MQ_COVERING_OR_NEXT,
			.query_addr = addr,
			.vma_name_size = (uint32_t)namelen,
			.vma_name_addr = (uint64_t)(uintptr_t)name,
		};
		struct sym_maps_line ml;
		static const char del[] = " (deleted)";
		size_t dl = sizeof(del) - 1;

		if (ioctl(fd, MQ_IOCTL, &q) != 0) {
			int e = errno;
			if (e == ENOENT)
				return 0; /* no executable mapping above addr */
			/* an older kernel: the caller reads the text */
			if (first && (e == ENOTTY || e == EINVAL))
				return -ENOTTY;
			return -e;
		}
		first = false;
		if (q.vma_end <= addr || q.vma_end <= q.vma_start)
			return -EIO; /* the answer must move forward */
		memset(&ml, 0, sizeof(ml));
		ml.start = q.vma_start;
		ml.end = q.vma_end;
		ml.pgoff = q.vma_offset;
		ml.exec = true;
		ml.dev_major = q.dev_major;
		ml.dev_minor = q.dev_minor;
		ml.ino = q.inode;
		ml.path = name;
		ml.path_len = q.vma_name_size ? strnlen(name, q.vma_name_size) : 0;
		if (ml.path_len > dl && memcmp(name + ml.path_len - dl, del, dl) == 0) {
			ml.deleted = true;
			ml.path_len -= dl;
		}
		int rc = fn(arg, &ml);
		if (rc)
			return rc;
		addr = q.vma_end;
	}
}
