/* SPDX-License-Identifier: MIT */
/* Processes' executable mappings at their exit, from the kernel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/procmaps.h"
#include "agent/ring_reader.h"
#include "bpf/procmaps.h"
#include "bpf/procmaps.skel.h"

/* Paths kept by file (a power of two); the kernel sends a file's path
 * once, until it is forgotten here (and there). */
#define NAMES 4096

struct name {
	uint64_t dev, ino; /* the kernel's encoding; ino 0: empty */
	char *path;
};

struct procmaps {
	struct procmaps_bpf *skel;
	procmaps_fn fn;
	void *arg;
	struct name names[NAMES];
	struct sym_exit_map maps[HEARTH_PM_MAPS];
};

struct procmaps *procmaps_open(pid_t exclude_tgid)
{
	struct procmaps *pm = calloc(1, sizeof(*pm));
	int rc;

	if (!pm)
		return NULL;
	pm->skel = procmaps_bpf__open();
	if (!pm->skel)
		goto err;
	pm->skel->rodata->exclude_tgid = (uint32_t)exclude_tgid;
	/* Refused by a kernel whose exit tracepoint has no group_dead
	 * argument (it then runs after the address space is gone) or that
	 * has no task VMA iterator. */
	rc = procmaps_bpf__load(pm->skel);
	if (rc) {
		errno = ENOTSUP;
		goto err;
	}
	rc = procmaps_bpf__attach(pm->skel);
	if (rc) {
		errno = -rc;
		goto err;
	}
	return pm;
err:
	rc = errno;
	procmaps_free(pm);
	errno = rc;
	return NULL;
}

static struct name *name_slot(struct procmaps *pm, uint64_t dev, uint64_t ino)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ULL) ^ (ino * 0xc2b2ae3d27d4eb4fULL);

	return &pm->names[(h >> 32) & (NAMES - 1)];
}

/* Remembers the path of (@dev, @ino). A file whose slot another takes is
 * forgotten in the kernel too, so its path comes again. */
static void name_put(struct procmaps *pm, const struct hearth_pm_file *f)
{
	struct name *n = name_slot(pm, f->dev, f->ino);
	char *path = f->len && f->len < HEARTH_PM_PATH ? strndup(f->path, f->len) : NULL;

	if (n->ino && (n->dev != f->dev || n->ino != f->ino)) {
		struct hearth_pm_file_key k = { n->dev, n->ino };

		bpf_map_delete_elem(bpf_map__fd(pm->skel->maps.pm_known), &k);
	}
	free(n->path);
	n->dev = f->dev;
	n->ino = f->ino;
	n->path = path;
}

static const char *name_get(struct procmaps *pm, uint64_t dev, uint64_t ino)
{
	const struct name *n = name_slot(pm, dev, ino);

	return n->ino == ino && n->dev == dev ? n->path : NULL;
}

static void take_exit(struct procmaps *pm, const struct hearth_pm_exit *e, size_t len)
{
	size_t n = e->n < HEARTH_PM_MAPS ? e->n : HEARTH_PM_MAPS;

	if (len < sizeof(*e) - sizeof(e->m) + n * sizeof(e->m[0]))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct hearth_pm_map *m = &e->m[i];

		pm->maps[i] = (struct sym_exit_map){
			.start = m->start, .end = m->end, .pgoff = m->pgoff,
			.dev_major = (unsigned)(m->dev >> 20),
			.dev_minor = (unsigned)(m->dev & 0xfffff),
			.ino = m->ino,
			.path = name_get(pm, m->dev, m->ino),
			.exe = m->flags & HEARTH_PM_EXE,
			.vdso = m->flags & HEARTH_PM_VDSO,
		};
	}
	pm->fn(pm->arg, (pid_t)e->tgid, pm->maps, n);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct procmaps *pm = ctx;
	const uint32_t *type = data;

	if (len < sizeof(*type))
		return 0;
	if (*type == HEARTH_PM_FILE && len >= sizeof(struct hearth_pm_file))
		name_put(pm, data);
	else if (*type == HEARTH_PM_EXIT)
		take_exit(pm, data, len);
	return 0;
}

int procmaps_add_ring(struct procmaps *pm, struct ring_reader *rb, procmaps_fn fn, void *arg)
{
	pm->fn = fn;
	pm->arg = arg;
	return ring_reader_add(rb, bpf_map__fd(pm->skel->maps.pm_events), on_event, pm);
}

uint64_t procmaps_lost(const struct procmaps *pm)
{
	return pm ? pm->skel->bss->pm_lost : 0;
}

void procmaps_free(struct procmaps *pm)
{
	if (!pm)
		return;
	procmaps_bpf__destroy(pm->skel);
	for (size_t i = 0; i < NAMES; i++)
		free(pm->names[i].path);
	free(pm);
}
