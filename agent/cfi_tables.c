/* SPDX-License-Identifier: MIT */
/* The in-kernel walker's tables: modules in a row pool, process mappings. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "agent/cfi_tables.h"
#include "bpf/unwind.h"
#include "symbolize/cfi.h"
#include "symbolize/unwind.h"

/* Programs that looked a module up before it was evicted finish within
 * microseconds: its rows are overwritten only after this. */
#define EVICT_GRACE_US 2000
/* Rows written to the pool per system call. */
#define ROWS_BATCH 8192
/* Processes that asked for tables and were gone when they were read,
 * remembered for cfi_tables_learn() (most recent ones). */
#define GONE_ASKED 256
/* Load biases remembered per module (one per executable segment). */
#define MOD_BIASES 4
/* Files larger than this compile on a thread of their own: a compiler's
 * libraries take seconds each (cc1 12 s on a loaded host), and a short
 * program's binary, which takes a millisecond, must not wait behind them
 * (its processes would copy their stacks all that time). */
#define BIG_FILE_BYTES (4 << 20)

enum mod_state {
	MOD_FREE = 0,
	MOD_LOADED,  /* rows in the pool */
	MOD_NO_CFI,  /* the file has no usable CFI: not tried again */
	MOD_NO_ROOM, /* no room in the pool: tried again at the next load */
	MOD_COMPILING, /* with the worker: its mappings wait */
};

/* A module handed to the compiling thread, and back. */
struct job {
	struct job *next;
	uint32_t mod;
	int fd;
	off_t size;     /* of the file: the smallest are compiled first */
	int rc;
	struct sym_cfi_table tab;
};

struct module {
	uint8_t state;
	uint64_t dev, ino;
	uint32_t first, n;    /* pool extent while MOD_LOADED: its page
			       * index (nindex slots), then n rows */
	uint32_t nindex, npages;
	uint64_t base;
	uint32_t refs;        /* processes using it */
	uint64_t last_use;    /* load tick */
	uint64_t pgoff[MOD_BIASES], bias[MOD_BIASES];
	uint32_t nbias;
	uint32_t need;        /* rows its table has, once compiled (0: not
			       * yet): a module that cannot fit is compiled
			       * again only when it could */
	bool file_on;         /* in cfi_files */
	/* Learned from a process that exited (cfi_tables_learn()): its
	 * executable segment, published by file once placed. */
	bool seg_known;
	uint64_t seg_off, seg_bias;
};

struct extent {
	uint32_t first, n;
};

struct proc {
	pid_t pid;
	uint64_t exec_id;     /* of the mappings last written */
	uint64_t sum;         /* and their checksum: an ask that finds the
			       * same mappings again writes nothing */
	bool written;         /* exec_id and sum hold */
	uint32_t nmods;
	uint32_t mods[HEARTH_CFI_MAX_MAPPINGS];
};

enum { LANE_SMALL, LANE_BIG, LANES };

/* One compiling thread, its queue and its cache (a cache is one thread's
 * only; a file always goes to the same lane, by its size). */
struct lane {
	struct cfi_tables *t;
	pthread_t thread;
	bool on;
	struct sym_cfi_cache *cache;
	int dirfd;      /* its own open folder: reading one moves its position */
	struct job *todo; /* under t->lock */
	pthread_cond_t wake;
};

struct cfi_tables {
	struct cfi_tables_opts o;
	struct lane lanes[LANES];
	struct module *mods; /* HEARTH_CFI_MAX_MODULES slots */
	uint32_t nmods;      /* slots ever used */
	struct extent *free; /* free pool extents, sorted by first */
	size_t nfree, capfree;
	struct proc *procs;
	size_t nprocs, capprocs;
	pid_t gone_asked[GONE_ASKED];
	unsigned gone_next;
	uint64_t tick;
	struct cfi_tables_stats st;
	/* Compiling a large module takes up to seconds: threads do it, so
	 * the caller's loop (samples, control requests) never waits. */
	pthread_mutex_t lock;
	struct job *done; /* under lock */
	bool stop;        /* under lock */
};

/* The compiled table of the module open on @fd, in @out (the caller's to
 * free): from the cache when there is one. Worker thread only. */
static int cache_get(struct lane *l, int fd, struct sym_cfi_table *out)
{
	if (!l->cache)
		return sym_cfi_compile(fd, out);
	/* A library larger than the memory budget is handed over, not
	 * copied: placed, its rows live in the pool, and on disk for the
	 * next time. */
	return sym_cfi_cache_take(l->cache, fd, out);
}

static void *compile_loop(void *arg)
{
	struct lane *l = arg;
	struct cfi_tables *t = l->t;
	struct job *j;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (!l->todo && !t->stop)
			pthread_cond_wait(&l->wake, &t->lock);
		if (t->stop)
			break;
		j = l->todo;
		l->todo = j->next;
		pthread_mutex_unlock(&t->lock);
		j->rc = cache_get(l, j->fd, &j->tab);
		close(j->fd);
		j->fd = -1;
		pthread_mutex_lock(&t->lock);
		j->next = t->done;
		t->done = j;
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static void jobs_free(struct job *j)
{
	while (j) {
		struct job *next = j->next;

		if (j->fd >= 0)
			close(j->fd);
		if (j->rc == 0)
			sym_cfi_table_free(&j->tab);
		free(j);
		j = next;
	}
}

static void vdso_load(struct cfi_tables *t);

struct cfi_tables *cfi_tables_new(const struct cfi_tables_opts *o)
{
	struct cfi_tables *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->o = *o;
	pthread_mutex_init(&t->lock, NULL);
	t->mods = calloc(HEARTH_CFI_MAX_MODULES, sizeof(*t->mods));
	t->free = malloc(16 * sizeof(*t->free));
	if (!t->mods || !t->free) {
		cfi_tables_free(t);
		return NULL;
	}
	for (int i = 0; i < LANES; i++) {
		struct lane *l = &t->lanes[i];

		l->t = t;
		pthread_cond_init(&l->wake, NULL);
		l->dirfd = o->cache_dirfd < 0 ? -1 :
			   openat(o->cache_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		l->cache = sym_cfi_cache_new(l->dirfd, o->cache_bytes / LANES);
		if (l->cache)
			sym_cfi_cache_set_disk_bytes(l->cache, o->disk_bytes);
		if (!l->cache || pthread_create(&l->thread, NULL, compile_loop, l) != 0) {
			cfi_tables_free(t);
			return NULL;
		}
		l->on = true;
	}
	t->capfree = 16;
	if (o->pool_rows)
		t->free[t->nfree++] = (struct extent){ 0, o->pool_rows };
	if (o->vdso_fd > 0)
		vdso_load(t);
	return t;
}

void cfi_tables_free(struct cfi_tables *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	for (int i = 0; i < LANES; i++)
		pthread_cond_signal(&t->lanes[i].wake);
	pthread_mutex_unlock(&t->lock);
	for (int i = 0; i < LANES; i++) {
		struct lane *l = &t->lanes[i];

		if (!l->t)
			continue; /* never set up */
		if (l->on)
			pthread_join(l->thread, NULL);
		pthread_cond_destroy(&l->wake);
		jobs_free(l->todo);
		sym_cfi_cache_free(l->cache);
		if (l->dirfd >= 0)
			close(l->dirfd);
	}
	jobs_free(t->done);
	pthread_mutex_destroy(&t->lock);
	free(t->mods);
	free(t->free);
	free(t->procs);
	free(t);
}

/* ---- the row pool: first fit over sorted free extents ---- */

static bool pool_alloc(struct cfi_tables *t, uint32_t n, uint32_t *first)
{
	for (size_t i = 0; i < t->nfree; i++) {
		if (t->free[i].n < n)
			continue;
		*first = t->free[i].first;
		t->free[i].first += n;
		t->free[i].n -= n;
		if (t->free[i].n == 0) {
			memmove(t->free + i, t->free + i + 1, (t->nfree - i - 1) * sizeof(*t->free));
			t->nfree--;
		}
		return true;
	}
	return false;
}

/* Returns @n rows from @first to the pool, joining its neighbours.
 * Returns -ENOMEM when the free list cannot grow (the rows are lost to
 * the pool, nothing else). */
static int pool_release(struct cfi_tables *t, uint32_t first, uint32_t n)
{
	size_t i = 0;

	while (i < t->nfree && t->free[i].first < first)
		i++;
	if (i > 0 && t->free[i - 1].first + t->free[i - 1].n == first) {
		t->free[i - 1].n += n;
		if (i < t->nfree && first + n == t->free[i].first) {
			t->free[i - 1].n += t->free[i].n;
			memmove(t->free + i, t->free + i + 1, (t->nfree - i - 1) * sizeof(*t->free));
			t->nfree--;
		}
		return 0;
	}
	if (i < t->nfree && first + n == t->free[i].first) {
		t->free[i].first = first;
		t->free[i].n += n;
		return 0;
	}
	if (t->nfree == t->capfree) {
		struct extent *v = realloc(t->free, t->capfree * 2 * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->free = v;
		t->capfree *= 2;
	}
	memmove(t->free + i + 1, t->free + i, (t->nfree - i) * sizeof(*t->free));
	t->free[i] = (struct extent){ first, n };
	t->nfree++;
	return 0;
}

/* ---- modules ---- */

/* The kernel's key of @m's file: dev as the kernel encodes it. */
static struct hearth_cfi_file_key file_key(const struct module *m)
{
	return (struct hearth_cfi_file_key){
		.dev = ((m->dev >> 32) << 20) | (m->dev & 0xfffff),
		.ino = m->ino,
	};
}

/* Lets the walker find loaded module @id by its file, through the
 * executable segment mapped from page-aligned file offset @seg_off (bias:
 * its load bias). */
static void file_publish(struct cfi_tables *t, uint32_t id, uint64_t seg_off, uint64_t bias)
{
	struct module *m = &t->mods[id];
	struct hearth_cfi_file_key k = file_key(m);
	struct hearth_cfi_file v = {
		.seg_off = seg_off,
		.seg_bias = bias,
		.base = m->base,
		.module = id,
	};

	if (m->file_on)
		return;
	m->file_on = bpf_map_update_elem(t->o.files_fd, &k, &v, BPF_ANY) == 0;
}

static void module_publish(struct cfi_tables *t, uint32_t id)
{
	const struct module *m = &t->mods[id];
	struct hearth_cfi_module v = { 0, 0, 0, 0 };

	if (m->state == MOD_LOADED)
		v = (struct hearth_cfi_module){ m->first + m->nindex, m->n, m->first, m->npages };
	else if (m->state == MOD_NO_CFI)
		v.first = HEARTH_CFI_NO_CFI;
	bpf_map_update_elem(t->o.modules_fd, &id, &v, BPF_ANY);
}

/* Evicts the loaded module no process uses that was used longest ago.
 * Returns false when there is none. */
static bool evict_one(struct cfi_tables *t)
{
	uint32_t best = UINT32_MAX;

	for (uint32_t i = 0; i < t->nmods; i++) {
		const struct module *m = &t->mods[i];

		if (m->state == MOD_LOADED && m->refs == 0 &&
		    (best == UINT32_MAX || m->last_use < t->mods[best].last_use))
			best = i;
	}
	if (best == UINT32_MAX)
		return false;
	if (t->mods[best].file_on) {
		struct hearth_cfi_file_key k = file_key(&t->mods[best]);

		bpf_map_delete_elem(t->o.files_fd, &k);
		t->mods[best].file_on = false;
	}
	t->mods[best].state = MOD_FREE;
	module_publish(t, best);
	pool_release(t, t->mods[best].first, t->mods[best].nindex + t->mods[best].n);
	t->st.modules--;
	t->st.rows -= t->mods[best].nindex + t->mods[best].n;
	t->st.evictions++;
	return true;
}

/* Deletes the tables the walker built (struct hearth_cfi_proc) that list
 * a module no longer loaded: it adds modules it found through cfi_files,
 * for which no process holds a reference, and their rows are about to be
 * overwritten. Called after the eviction grace, so that no program still
 * adds a module from a file entry deleted before it. */
static void built_forget(struct cfi_tables *t)
{
	struct hearth_cfi_proc *bp = malloc(sizeof(*bp));
	uint32_t key, next;
	void *prev = NULL;

	if (!bp)
		return;
	while (bpf_map_get_next_key(t->o.procs_fd, prev, &next) == 0) {
		bool stale = false;

		if (bpf_map_lookup_elem(t->o.procs_fd, &next, bp) == 0 && bp->built)
			for (uint32_t i = 0; i < bp->n && i < HEARTH_CFI_MAX_MAPPINGS; i++)
				stale |= bp->m[i].module >= t->nmods ||
					 t->mods[bp->m[i].module].state != MOD_LOADED;
		/* deleting the current key would restart the walk: the
		 * previous one stays */
		if (stale && bpf_map_delete_elem(t->o.procs_fd, &next) == 0)
			continue;
		key = next;
		prev = &key;
	}
	free(bp);
}

/* Writes @n slots (rows or index entries, 12 bytes each) from @first. */
static int write_rows(struct cfi_tables *t, uint32_t first, const void *slots, uint32_t n)
{
	const union hearth_cfi_slot *rows = slots;
	uint32_t *keys = malloc(ROWS_BATCH * sizeof(*keys));
	int rc = 0;

	if (!keys)
		return -ENOMEM;
	for (uint32_t done = 0; done < n && rc == 0;) {
		uint32_t cnt = n - done < ROWS_BATCH ? n - done : ROWS_BATCH;

		for (uint32_t i = 0; i < cnt; i++)
			keys[i] = first + done + i;
		if (bpf_map_update_batch(t->o.rows_fd, keys, rows + done, &cnt, NULL))
			rc = -errno;
		done += cnt;
	}
	free(keys);
	return rc;
}

union hearth_cfi_slot *cfi_tables_page_index(const struct hearth_cfi_row *rows, uint32_t n,
					     uint32_t *npages, uint32_t *nslots)
{
	union hearth_cfi_slot *v;
	uint32_t pages, r = 0;

	if (n == 0)
		return NULL;
	pages = (rows[n - 1].pc >> HEARTH_CFI_PAGE_SHIFT) + 1;
	*npages = pages;
	*nslots = (pages + 1 + HEARTH_CFI_INDEX_PER_SLOT - 1) / HEARTH_CFI_INDEX_PER_SLOT;
	v = calloc(*nslots, sizeof(*v));
	if (!v)
		return NULL;
	for (uint32_t p = 0; p <= pages; p++) {
		uint64_t at = (uint64_t)p << HEARTH_CFI_PAGE_SHIFT;

		/* the last row at or below the page's first pc */
		while (r + 1 < n && rows[r + 1].pc <= at)
			r++;
		v[p / HEARTH_CFI_INDEX_PER_SLOT].index[p % HEARTH_CFI_INDEX_PER_SLOT] = r;
	}
	return v;
}

/* Places compiled @tab's rows and their page index in the pool for @m. */
static void module_place_rows(struct cfi_tables *t, struct module *m,
			      const struct sym_cfi_table *tab)
{
	union hearth_cfi_slot *idx;
	uint32_t npages, nindex;
	bool evicted = false;

	idx = cfi_tables_page_index(tab->rows, (uint32_t)tab->n, &npages, &nindex);
	if (!idx) {
		m->state = MOD_NO_ROOM;
		return;
	}
	m->need = (uint32_t)tab->n + nindex;
	while (!pool_alloc(t, m->need, &m->first)) {
		if (!evict_one(t)) {
			m->state = MOD_NO_ROOM;
			t->st.no_room++;
			free(idx);
			return;
		}
		evicted = true;
	}
	if (evicted) {
		usleep(EVICT_GRACE_US);
		built_forget(t);
	}
	m->n = (uint32_t)tab->n;
	m->nindex = nindex;
	m->npages = npages;
	m->base = tab->base;
	if (write_rows(t, m->first, idx, nindex) < 0 ||
	    write_rows(t, m->first + nindex, tab->rows, m->n) < 0) {
		pool_release(t, m->first, m->need);
		m->state = MOD_NO_ROOM;
		free(idx);
		return;
	}
	free(idx);
	m->state = MOD_LOADED;
	t->st.modules++;
	t->st.rows += m->need;
}

/* Hands the module open on @fd (taken) to the compiling thread. */
static void module_compile(struct cfi_tables *t, uint32_t id, int fd)
{
	struct job *j = calloc(1, sizeof(*j)), **at;
	struct lane *l;
	struct stat st;

	if (!j) {
		close(fd);
		return; /* stays MOD_NO_ROOM: tried again at the next load */
	}
	j->mod = id;
	j->fd = fd;
	if (fstat(fd, &st) == 0)
		j->size = st.st_size;
	t->mods[id].state = MOD_COMPILING;
	t->st.compiles++;
	/* Smallest first: a program's own binary and small libraries take
	 * milliseconds, a compiler's libraries up to half a second each, and
	 * a host that just started many programs must not wait for those to
	 * walk the rest. */
	l = &t->lanes[j->size > BIG_FILE_BYTES ? LANE_BIG : LANE_SMALL];
	pthread_mutex_lock(&t->lock);
	for (at = &l->todo; *at && (*at)->size <= j->size; at = &(*at)->next)
		;
	j->next = *at;
	*at = j;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&t->lock);
}

int cfi_tables_collect(struct cfi_tables *t)
{
	struct job *j, *done;
	int n = 0;

	pthread_mutex_lock(&t->lock);
	done = t->done;
	t->done = NULL;
	pthread_mutex_unlock(&t->lock);
	while ((j = done)) {
		struct module *m = &t->mods[j->mod];

		done = j->next;
		j->next = NULL;
		if (j->rc < 0 || j->tab.n == 0 || j->tab.n > HEARTH_CFI_MAX_ROWS) {
			m->state = j->rc == -ENOMEM ? MOD_NO_ROOM : MOD_NO_CFI;
			if (m->state == MOD_NO_CFI)
				t->st.no_cfi++;
		} else {
			/* A module placed stays until evicted: compiled again
			 * only after that. */
			module_place_rows(t, m, &j->tab);
			if (m->state == MOD_LOADED && m->seg_known)
				file_publish(t, j->mod, m->seg_off, m->seg_bias);
		}
		module_publish(t, j->mod);
		jobs_free(j);
		n++;
	}
	return n;
}

static uint32_t module_find(const struct cfi_tables *t, uint64_t dev, uint64_t ino)
{
	for (uint32_t i = 0; i < t->nmods; i++)
		if (t->mods[i].state != MOD_FREE && t->mods[i].dev == dev && t->mods[i].ino == ino)
			return i;
	return UINT32_MAX;
}

static uint32_t module_slot(struct cfi_tables *t)
{
	for (uint32_t i = 0; i < t->nmods; i++)
		if (t->mods[i].state == MOD_FREE)
			return i;
	return t->nmods < HEARTH_CFI_MAX_MODULES ? t->nmods++ : UINT32_MAX;
}

/* Whether @m could be placed now: its rows fit in the pool's free rows
 * and those of the modules no process uses (which would be evicted). A
 * module not compiled yet may always try. Compiling a large library
 * takes a tenth of a second or more: one that cannot fit must not be
 * compiled again at every process that maps it. */
static bool module_may_fit(const struct cfi_tables *t, const struct module *m)
{
	uint64_t room = 0;

	if (!m->need)
		return true;
	for (size_t i = 0; i < t->nfree && room < m->need; i++)
		room += t->free[i].n;
	for (uint32_t i = 0; i < t->nmods && room < m->need; i++)
		if (t->mods[i].state == MOD_LOADED && t->mods[i].refs == 0)
			room += t->mods[i].n;
	return room >= m->need;
}

/* The bytes of our own [vdso] mapping (every 64-bit process maps the
 * same image), 0 when there is none. */
static size_t vdso_len(unsigned long start)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	char line[256];
	size_t len = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == start && strstr(line, "[vdso]"))
			len = hi - lo;
	fclose(f);
	return len;
}

/* Compiles the kernel's vDSO from our own copy (through a memfd: the
 * compiler reads files) into a module that is never evicted, and tells
 * the walker where it is. Without it, frames in the vDSO fall back. */
static void vdso_load(struct cfi_tables *t)
{
	unsigned long start = getauxval(AT_SYSINFO_EHDR);
	size_t len = start ? vdso_len(start) : 0;
	struct sym_cfi_table tab = { 0 };
	struct hearth_cfi_vdso v = { 0 };
	uint64_t bias = 0;
	uint32_t id, zero = 0;
	int fd;

	if (len == 0 || (fd = memfd_create("hearth-vdso", MFD_CLOEXEC)) < 0)
		return;
	if (write(fd, (const void *)start, len) != (ssize_t)len ||
	    sym_unwind_seg_bias(fd, 0, &bias) < 0 || sym_cfi_compile(fd, &tab) < 0 ||
	    (id = module_slot(t)) == UINT32_MAX) {
		close(fd);
		sym_cfi_table_free(&tab);
		return;
	}
	close(fd);
	memset(&t->mods[id], 0, sizeof(t->mods[id]));
	t->mods[id].refs = 1; /* every process's: never evicted */
	module_place_rows(t, &t->mods[id], &tab);
	sym_cfi_table_free(&tab);
	if (t->mods[id].state != MOD_LOADED) {
		t->mods[id].state = MOD_FREE;
		return;
	}
	module_publish(t, id);
	v = (struct hearth_cfi_vdso){ .size = len, .delta = t->mods[id].base - bias, .module = id };
	bpf_map_update_elem(t->o.vdso_fd, &zero, &v, BPF_ANY);
}

/* The bias of @m's segment at @pgoff, opening the file when needed. */
static int module_bias(struct module *m, pid_t pid, const struct sym_exec_map *em, int *fd,
		       uint64_t *bias)
{
	int rc;

	for (uint32_t i = 0; i < m->nbias; i++)
		if (m->pgoff[i] == em->pgoff) {
			*bias = m->bias[i];
			return 0;
		}
	if (*fd < 0 && (*fd = sym_unwind_open_mapped(pid, em)) < 0)
		return *fd;
	rc = sym_unwind_seg_bias(*fd, em->pgoff, bias);
	if (rc == 0 && m->nbias < MOD_BIASES) {
		m->pgoff[m->nbias] = em->pgoff;
		m->bias[m->nbias++] = *bias;
	}
	return rc;
}

/* Opens the file of @em at its path as this process sees it, when it is
 * the file @em names (device and inode). */
static int open_verified(const struct sym_exec_map *em)
{
	struct stat st;
	int fd = open(em->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != em->ino ||
	    major(st.st_dev) != em->dev >> 32 || minor(st.st_dev) != (em->dev & 0xffffffff)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

void cfi_tables_note_gone(struct cfi_tables *t, pid_t pid)
{
	t->gone_asked[t->gone_next++ % GONE_ASKED] = pid;
}

bool cfi_tables_asked(const struct cfi_tables *t, pid_t pid)
{
	for (size_t i = 0; i < GONE_ASKED; i++)
		if (t->gone_asked[i] == pid)
			return true;
	return false;
}

int cfi_tables_learn(struct cfi_tables *t, const struct sym_exec_map *em)
{
	uint32_t id = module_find(t, em->dev, em->ino);
	struct module *m = id == UINT32_MAX ? NULL : &t->mods[id];
	uint64_t bias;
	int fd;

	if (m && (m->state == MOD_COMPILING || m->state == MOD_NO_CFI ||
		  (m->state == MOD_LOADED && m->file_on) ||
		  (m->state == MOD_NO_ROOM && !module_may_fit(t, m))))
		return 0;
	fd = open_verified(em);
	if (fd < 0)
		return fd;
	if (!m) {
		id = module_slot(t);
		if (id == UINT32_MAX) {
			close(fd);
			return -ENOSPC;
		}
		m = &t->mods[id];
		memset(m, 0, sizeof(*m));
		m->dev = em->dev;
		m->ino = em->ino;
		m->state = MOD_NO_ROOM;
	}
	m->last_use = ++t->tick;
	if (!m->seg_known && module_bias(m, 0, em, &fd, &bias) == 0) {
		m->seg_known = true;
		m->seg_off = em->pgoff;
		m->seg_bias = bias;
	}
	if (m->state == MOD_LOADED) {
		if (m->seg_known)
			file_publish(t, id, m->seg_off, m->seg_bias);
		close(fd);
		return 0;
	}
	module_compile(t, id, fd);
	return 0;
}

struct load {
	struct cfi_tables *t;
	pid_t pid;
	struct hearth_cfi_proc *bp;
	struct proc *rec;
};

/* One mapping of the process being loaded: its module, placed if new. */
static int load_mapping(void *arg, const struct sym_exec_map *em)
{
	struct load *l = arg;
	struct cfi_tables *t = l->t;
	uint32_t id = module_find(t, em->dev, em->ino);
	struct module *m;
	uint64_t bias;
	int fd = -1;

	if (l->bp->n >= HEARTH_CFI_MAX_MAPPINGS || l->rec->nmods >= HEARTH_CFI_MAX_MAPPINGS)
		return 0; /* the rest fall back to the copy path */
	if (id == UINT32_MAX) {
		id = module_slot(t);
		if (id == UINT32_MAX)
			return 0;
		m = &t->mods[id];
		memset(m, 0, sizeof(*m));
		m->dev = em->dev;
		m->ino = em->ino;
		m->state = MOD_NO_ROOM;
	}
	m = &t->mods[id];
	m->last_use = t->tick;
	if (m->state == MOD_NO_ROOM && module_may_fit(t, m)) {
		int cfd = sym_unwind_open_mapped(l->pid, em);

		/* Its segment, so that it is published by file once placed:
		 * the walker then finds it in every process mapping it. */
		if (cfd >= 0 && !m->seg_known && sym_unwind_seg_bias(cfd, em->pgoff, &bias) == 0) {
			m->seg_known = true;
			m->seg_off = em->pgoff;
			m->seg_bias = bias;
		}
		if (cfd >= 0)
			module_compile(t, id, cfd);
	}
	if (m->state == MOD_LOADED && module_bias(m, l->pid, em, &fd, &bias) == 0) {
		file_publish(t, id, em->pgoff, bias);
		l->bp->m[l->bp->n++] = (struct hearth_cfi_mapping){
			.start = em->start,
			.end = em->end,
			.delta = em->start - em->pgoff + m->base - bias,
			.module = id,
		};
	} else if (m->state == MOD_NO_CFI) {
		/* listed, so the walker falls back without asking again */
		l->bp->m[l->bp->n++] = (struct hearth_cfi_mapping){
			.start = em->start, .end = em->end, .module = id,
		};
	}
	if (fd >= 0)
		close(fd);
	m->refs++;
	l->rec->mods[l->rec->nmods++] = id;
	return 0;
}

static struct proc *proc_find(struct cfi_tables *t, pid_t pid)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

static void proc_unref(struct cfi_tables *t, struct proc *p)
{
	for (uint32_t i = 0; i < p->nmods; i++)
		if (t->mods[p->mods[i]].refs)
			t->mods[p->mods[i]].refs--;
	p->nmods = 0;
}

/* The record of @pid, new and empty when there was none. */
static struct proc *proc_get(struct cfi_tables *t, pid_t pid)
{
	struct proc *p = proc_find(t, pid);

	if (p)
		return p;
	if (t->nprocs == t->capprocs) {
		size_t cap = t->capprocs ? t->capprocs * 2 : 64;
		struct proc *v = realloc(t->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->procs = v;
		t->capprocs = cap;
	}
	p = &t->procs[t->nprocs++];
	p->pid = pid;
	p->nmods = 0;
	p->written = false;
	t->st.processes++;
	return p;
}

static void proc_drop(struct cfi_tables *t, struct proc *p)
{
	proc_unref(t, p);
	*p = t->procs[--t->nprocs];
	t->st.processes--;
}

/* A checksum of the mappings in @bp (FNV-1a over them). */
static uint64_t mappings_sum(const struct hearth_cfi_proc *bp)
{
	const unsigned char *b = (const unsigned char *)bp->m;
	uint64_t h = 14695981039346656037ULL ^ bp->n;

	for (size_t i = 0; i < bp->n * sizeof(bp->m[0]); i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

int cfi_tables_load(struct cfi_tables *t, pid_t pid, uint64_t exec_id)
{
	struct hearth_cfi_proc *bp = calloc(1, sizeof(*bp));
	struct proc old, *rec = proc_get(t, pid);
	struct load l = { t, pid, bp, NULL };
	uint32_t key = (uint32_t)pid;
	int rc;

	if (!bp || !rec) {
		free(bp);
		return -ENOMEM;
	}
	/* The old modules stay referenced until the new ones are: a module
	 * both use is not evicted in between. */
	old = *rec;
	rec->nmods = 0;
	l.rec = rec;
	t->tick++;
	bp->exec_id = exec_id;
	rc = sym_unwind_exec_maps(pid, load_mapping, &l);
	proc_unref(t, &old);
	if (rc == 0) {
		uint64_t sum = mappings_sum(bp);

		/* The walker asks again while a module is missing (compiling,
		 * or no room): the same mappings need no second write. */
		if (!(rec->written && rec->exec_id == exec_id && rec->sum == sum)) {
			if (bpf_map_update_elem(t->o.procs_fd, &key, bp, BPF_ANY))
				rc = -errno;
			else
				t->st.loads++;
		}
		rec->exec_id = exec_id;
		rec->sum = sum;
		rec->written = rc == 0;
	}
	if (rc < 0)
		proc_drop(t, rec);
	free(bp);
	return rc;
}

int cfi_tables_fork(struct cfi_tables *t, pid_t parent, pid_t child)
{
	struct hearth_cfi_proc *bp = malloc(sizeof(*bp));
	uint32_t pk = (uint32_t)parent, ck = (uint32_t)child;
	struct proc *pr, *cr;
	int rc = 0;

	if (!bp)
		return -ENOMEM;
	pr = proc_find(t, parent);
	if (!pr || bpf_map_lookup_elem(t->o.procs_fd, &pk, bp)) {
		free(bp);
		return -ENOENT;
	}
	cr = proc_get(t, child);
	pr = proc_find(t, parent); /* proc_get may have moved it */
	if (!cr || !pr) {
		free(bp);
		return -ENOMEM;
	}
	proc_unref(t, cr);
	cr->exec_id = pr->exec_id;
	cr->sum = pr->sum;
	cr->written = pr->written;
	for (uint32_t i = 0; i < pr->nmods; i++) {
		cr->mods[cr->nmods++] = pr->mods[i];
		t->mods[pr->mods[i]].refs++;
	}
	if (bpf_map_update_elem(t->o.procs_fd, &ck, bp, BPF_ANY)) {
		rc = -errno;
		proc_drop(t, cr);
	}
	free(bp);
	return rc;
}

void cfi_tables_forget(struct cfi_tables *t, pid_t pid)
{
	struct proc *p = proc_find(t, pid);
	uint32_t key = (uint32_t)pid;

	bpf_map_delete_elem(t->o.procs_fd, &key);
	if (p)
		proc_drop(t, p);
}

void cfi_tables_sweep(struct cfi_tables *t)
{
	struct hearth_cfi_proc *bp = malloc(sizeof(*bp));

	if (!bp)
		return;
	for (size_t i = 0; i < t->nprocs;) {
		uint32_t key = (uint32_t)t->procs[i].pid;

		/* A process gone with its exit event lost, or whose tables
		 * were written after it exited (a load or a fork taken late
		 * under an exec storm), holds its entry: deleted here. */
		if (kill((pid_t)key, 0) && errno == ESRCH) {
			bpf_map_delete_elem(t->o.procs_fd, &key);
			proc_drop(t, &t->procs[i]);
		} else if (bpf_map_lookup_elem(t->o.procs_fd, &key, bp) && errno == ENOENT) {
			proc_drop(t, &t->procs[i]); /* the last one moved to i */
		} else {
			i++;
		}
	}
	free(bp);
}

void cfi_tables_stats(const struct cfi_tables *t, struct cfi_tables_stats *st)
{
	*st = t->st;
	st->bytes = st->rows * sizeof(struct hearth_cfi_row) +
		    st->processes * sizeof(struct hearth_cfi_proc);
}
