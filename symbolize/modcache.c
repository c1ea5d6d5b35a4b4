/* SPDX-License-Identifier: MIT */
/*
 * modcache: ELF modules shared by every process, keyed by build-id (else
 * device, inode and path), loaded lazily, evicted least recently used when
 * their memory passes the budget; and the per-module cache of resolved
 * addresses that keeps the warm path free of allocation.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include "debuginfod.h"
#include "sym_internal.h"

#define ADDR_CACHE_MAX (1u << 16) /* entries per module before a reset */

int sym_open_in_proc(struct sym_ctx *ctx, pid_t pid, const char *path,
		     uint64_t start, uint64_t end)
{
	char *buf = ctx->scratch;
	int n = snprintf(buf, sizeof(ctx->scratch), "/proc/%d/root%s",
			 (int)pid, path);
	if (n > 0 && (size_t)n < sizeof(ctx->scratch)) {
		int fd = open(buf, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	if (start == 0 && end == 0)
		return -ENOENT;
	snprintf(buf, sizeof(ctx->scratch), "/proc/%d/map_files/%" PRIx64
		 "-%" PRIx64, (int)pid, start, end);
	int fd = open(buf, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Module descriptors are counted: past SYM_MOD_FDS_MAX, loaded modules
 * give theirs back (they reopen by path if they are ever reloaded), so
 * a host with thousands of binaries does not run out of descriptors. */
#ifndef SYM_MOD_FDS_MAX
#define SYM_MOD_FDS_MAX 256
#endif

static void mod_set_fd(struct sym_ctx *ctx, struct sym_module *m, int fd)
{
	m->fd = fd;
	if (fd >= 0)
		ctx->mod_fds++;
}

static void mod_close_fd(struct sym_ctx *ctx, struct sym_module *m)
{
	if (m->fd < 0)
		return;
	close(m->fd);
	m->fd = -1;
	ctx->mod_fds--;
}

static struct sym_module *find_by_file(struct sym_ctx *ctx, dev_t dev,
				       ino_t ino, const char *path)
{
	for (size_t i = 0; i < ctx->nmods; i++) {
		struct sym_module *m = ctx->mods[i];
		if (m->ino == ino && m->dev == dev && strcmp(m->path, path) == 0)
			return m;
	}
	return NULL;
}

struct sym_module *sym_modcache_find_path(struct sym_ctx *ctx,
					  const char *path)
{
	for (size_t i = 0; i < ctx->nmods; i++)
		if (strcmp(ctx->mods[i]->path, path) == 0)
			return ctx->mods[i];
	return NULL;
}

static struct sym_module *find_by_build_id(struct sym_ctx *ctx,
					   const struct sym_module *t)
{
	if (t->build_id_len == 0)
		return NULL;
	for (size_t i = 0; i < ctx->nmods; i++) {
		struct sym_module *m = ctx->mods[i];
		if (m->build_id_len == t->build_id_len &&
		    memcmp(m->build_id, t->build_id, t->build_id_len) == 0)
			return m;
	}
	return NULL;
}

static void module_unload(struct sym_ctx *ctx, struct sym_module *m)
{
	if (m->loaded)
		ctx->loaded_bytes -= m->bytes;
	sym_symtab_free(&m->symtab);
	sym_dwarf_free(m->dwarf);
	m->dwarf = NULL;
	sym_gopcln_free(m->gopcln);
	m->gopcln = NULL;
	free(m->cache);
	m->cache = NULL;
	m->cache_cap = m->cache_used = 0;
	free(m->pool);
	m->pool = NULL;
	m->pool_n = m->pool_cap = 0;
	sym_arena_free(&m->pool_names);
	sym_ucfi_free(m->ucfi);
	m->ucfi = NULL;
	m->ucfi_failed = false;
	if (m->debug_fd >= 0)
		close(m->debug_fd);
	m->debug_fd = -1;
	m->bytes = 0;
	m->loaded = false;
}

static void module_free(struct sym_ctx *ctx, struct sym_module *m)
{
	if (m->dbgd_pending)
		ctx->dbgd_pending--;
	module_unload(ctx, m);
	mod_close_fd(ctx, m);
	free(m->segs);
	free(m->path);
	free(m);
}

static void module_remove(struct sym_ctx *ctx, struct sym_module *m)
{
	if (ctx->file_last == m)
		ctx->file_last = NULL;
	for (size_t i = 0; i < ctx->nmods; i++) {
		if (ctx->mods[i] == m) {
			ctx->mods[i] = ctx->mods[--ctx->nmods];
			break;
		}
	}
	module_free(ctx, m);
}

static int module_add(struct sym_ctx *ctx, struct sym_module *m)
{
	if (ctx->nmods == ctx->capmods) {
		size_t cap = ctx->capmods ? ctx->capmods * 2 : 64;
		struct sym_module **nm = realloc(ctx->mods, cap * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		ctx->mods = nm;
		ctx->capmods = cap;
	}
	ctx->mods[ctx->nmods++] = m;
	m->serial = ++ctx->mod_serial;
	return 0;
}

struct sym_module *sym_modcache_get(struct sym_ctx *ctx, pid_t pid,
				    const struct sym_maps_line *ml)
{
	dev_t dev = makedev(ml->dev_major, ml->dev_minor);
	struct sym_module *m = NULL;
	if (!ml->deleted)
		m = find_by_file(ctx, dev, (ino_t)ml->ino, ml->path);
	if (m) {
		if (m->fd < 0)
			mod_set_fd(ctx, m, sym_open_in_proc(ctx, pid, ml->path,
							    ml->start, ml->end));
		m->refs++;
		return m;
	}
	int fd = ml->deleted ? -ENOENT : sym_open_in_proc(ctx, pid, ml->path,
							    0, 0);
	if (fd < 0)
		fd = sym_open_in_proc(ctx, pid, "/nonexistent/", ml->start,
				      ml->end);
	if (fd < 0)
		return NULL;
	struct sym_module *t = calloc(1, sizeof(*t));
	if (!t)
		goto err_close;
	t->debug_fd = -1;
	mod_set_fd(ctx, t, fd);
	if (sym_elf_read_header(fd, t) != 0)
		goto err_free;
	m = find_by_build_id(ctx, t);
	if (m) {
		/* Same build, another copy: keep a descriptor for reloading,
		 * and when this copy names more (an unstripped one, say, in
		 * another container) read from it instead. */
		if (m->fd < 0 || t->richness > m->richness) {
			bool richer = t->richness > m->richness;
			mod_close_fd(ctx, m);
			m->fd = t->fd; /* moves: the count stays */
			t->fd = -1;
			m->richness = t->richness;
			if (richer && m->loaded) {
				module_unload(ctx, m);
				m->load_failed = false;
			}
		}
		module_free(ctx, t);
		m->refs++;
		return m;
	}
	t->dev = dev;
	t->ino = (ino_t)ml->ino;
	t->path = strdup(ml->path);
	if (!t->path || module_add(ctx, t) != 0)
		goto err_free;
	const char *slash = strrchr(t->path, '/');
	t->base = slash ? slash + 1 : t->path;
	t->refs = 1;
	return t;
err_free:
	module_free(ctx, t);
	return NULL;
err_close:
	close(fd);
	return NULL;
}

int sym_modcache_open(struct sym_ctx *ctx, const struct sym_module *m, pid_t pid)
{
	struct stat st;
	int fd = sym_open_in_proc(ctx, pid, m->path, 0, 0);

	if (fd >= 0 || pid == ctx->self)
		return fd;
	fd = sym_open_in_proc(ctx, ctx->self, m->path, 0, 0);
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != m->dev || st.st_ino != m->ino)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

struct sym_module *sym_modcache_get_file(struct sym_ctx *ctx, dev_t dev, ino_t ino,
					 const char *path)
{
	struct sym_maps_line ml = { .dev_major = major(dev), .dev_minor = minor(dev),
				    .ino = ino, .path = path };
	struct stat st;
	int fd;

	for (size_t i = 0; i < ctx->nmods; i++) {
		struct sym_module *m = ctx->mods[i];

		if (m->dev == dev && m->ino == ino) {
			m->refs++;
			return m;
		}
	}
	if (!path)
		return NULL;
	/* Only the file it names: another one may be at that path here. */
	fd = sym_open_in_proc(ctx, ctx->self, path, 0, 0);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
		close(fd);
		return NULL;
	}
	close(fd);
	ml.path_len = strlen(path);
	return sym_modcache_get(ctx, ctx->self, &ml);
}

static void evict_unused(struct sym_ctx *ctx)
{
	/* unreferenced shells that hold nothing go at once */
	for (size_t i = 0; i < ctx->nmods;) {
		struct sym_module *m = ctx->mods[i];
		if (m->refs == 0 && !m->loaded) {
			module_remove(ctx, m);
			continue;
		}
		i++;
	}
}

void sym_modcache_unref(struct sym_ctx *ctx, struct sym_module *m)
{
	if (m->refs > 0)
		m->refs--;
	if (m->refs == 0 && !m->loaded)
		module_remove(ctx, m);
	else if (m->refs == 0)
		mod_close_fd(ctx, m); /* keep the symbols, not the descriptor */
}

/* The least recently used module but @keep, among those the current
 * window has not used unless @any; NULL when none. */
static struct sym_module *evict_pick(struct sym_ctx *ctx, const struct sym_module *keep,
				     bool any)
{
	struct sym_module *lru = NULL;

	for (size_t i = 0; i < ctx->nmods; i++) {
		struct sym_module *m = ctx->mods[i];
		if (!m->loaded || m == keep || (!any && m->last_use > ctx->window_tick))
			continue;
		if (!lru || m->last_use < lru->last_use)
			lru = m;
	}
	return lru;
}

/* Brings the loaded modules under the budget. A module the current window
 * used stays, up to twice the budget: a window's working set just over
 * the budget made plain LRU read the same modules again and again (a
 * build host: 311 evictions in 4 minutes, 2.5x hearthd's CPU, at 34 MiB
 * of modules against 32). Reading a module twice in a window costs more
 * than holding it until the window is cut. */
static void evict_for(struct sym_ctx *ctx, const struct sym_module *keep)
{
	while (ctx->loaded_bytes > ctx->max_bytes) {
		bool any = !ctx->windowed || ctx->loaded_bytes / 2 > ctx->max_bytes;
		struct sym_module *lru = evict_pick(ctx, keep, any);
		if (!lru)
			break;
		module_unload(ctx, lru);
		ctx->evictions++;
		if (lru->refs == 0)
			module_remove(ctx, lru);
	}
	evict_unused(ctx);
}

void sym_window_begin(struct sym_ctx *ctx)
{
	ctx->window_tick = ctx->tick;
	ctx->windowed = true;
	evict_for(ctx, NULL);
}

static size_t module_bytes(const struct sym_module *m)
{
	return sizeof(*m) + m->symtab.cap * sizeof(struct sym_elfsym) +
	       m->symtab.names.cap + m->cache_cap * sizeof(*m->cache) +
	       m->pool_cap * sizeof(*m->pool) + m->pool_names.bytes +
	       m->dwarf_bytes + sym_ucfi_bytes(m->ucfi);
}

/* Marks @m loaded with what it has (possibly nothing), so its resolved
 * addresses ("module+0x...") are accounted like any other. */
static void mark_loaded(struct sym_ctx *ctx, struct sym_module *m)
{
	m->loaded = true;
	m->bytes = module_bytes(m);
	ctx->loaded_bytes += m->bytes;
}

/* Adds the symbols of debug file @fd to @m's; returns whether it had a
 * .symtab. */
static bool merge_debug_symbols(struct sym_module *m, int fd)
{
	struct sym_symtab extra = { 0 };
	bool dbg_symtab = false;
	if (sym_elf_load_symbols(fd, &extra, &dbg_symtab) == 0)
		sym_symtab_merge(&m->symtab, &extra);
	sym_symtab_free(&extra);
	return dbg_symtab;
}

/* The debug file fetched by build-id, for a module with no DWARF of its
 * own and none on disk: used when it is there, waited for (the module
 * marked) while it is on the way. */
static void load_fetched(struct sym_ctx *ctx, struct sym_module *m,
			 bool has_symtab)
{
	int fd = sym_debug_fetched(ctx, m);
	if (fd == -EINPROGRESS) {
		if (!m->dbgd_pending)
			ctx->dbgd_pending++;
		m->dbgd_pending = true;
		return;
	}
	if (fd < 0)
		return;
	m->debug_fd = fd;
	bool dbg_symtab = merge_debug_symbols(m, fd);
	m->stripped = !has_symtab && !dbg_symtab;
	m->dwarf = sym_dwarf_open(fd, &m->dwarf_bytes);
	m->has_debug = m->dwarf != NULL;
}

void sym_modcache_fetched(struct sym_ctx *ctx)
{
	struct sym_debuginfod *d = ctx->opts.debuginfod;
	if (!d || ctx->dbgd_pending == 0)
		return;
	uint64_t gen = sym_debuginfod_generation(d);
	if (gen == ctx->dbgd_gen)
		return;
	ctx->dbgd_gen = gen;
	ctx->dbgd_down = sym_debuginfod_unreachable(d);
	for (size_t i = 0; i < ctx->nmods; i++) {
		struct sym_module *m = ctx->mods[i];
		if (!m->dbgd_pending ||
		    sym_debuginfod_get(d, m->build_id, m->build_id_len,
				       m->base, NULL, 0) ==
			    SYM_DEBUGINFOD_PENDING)
			continue;
		m->dbgd_pending = false;
		ctx->dbgd_pending--;
		/* loaded again, with the file, at its next lookup */
		if (m->loaded)
			module_unload(ctx, m);
	}
}

int sym_modcache_load(struct sym_ctx *ctx, struct sym_module *m, pid_t pid)
{
	if (m->loaded)
		return 0;
	if (m->fd < 0 && !m->load_failed) /* gave its descriptor back */
		mod_set_fd(ctx, m, sym_modcache_open(ctx, m, pid));
	bool has_symtab = false, dbg_symtab = false;
	int err = m->load_failed || m->fd < 0 ? -ENOENT :
		sym_elf_load_symbols(m->fd, &m->symtab, &has_symtab);
	if (err) {
		m->load_failed = true;
		sym_symtab_free(&m->symtab);
		mark_loaded(ctx, m);
		return err;
	}
	m->debug_fd = sym_debug_open(ctx, m, pid);
	if (m->debug_fd >= 0)
		dbg_symtab = merge_debug_symbols(m, m->debug_fd);
	m->stripped = !has_symtab && !dbg_symtab;
	m->dwarf_bytes = 0;
	m->dwarf = sym_dwarf_open(m->debug_fd >= 0 ? m->debug_fd : m->fd,
				  &m->dwarf_bytes);
	m->has_debug = m->dwarf != NULL;
	/* a Go binary stripped of symbols and DWARF still has its table */
	if (!m->dwarf && m->fd >= 0)
		m->gopcln = sym_gopcln_open(m->fd, &m->dwarf_bytes);
	if (m->gopcln)
		m->stripped = false;
	if (!m->dwarf && !m->gopcln && m->debug_fd < 0)
		load_fetched(ctx, m, has_symtab);
	/* the DWARF lives in its own mapping now: descriptors can go */
	if (m->debug_fd >= 0)
		close(m->debug_fd);
	m->debug_fd = -1;
	if (ctx->mod_fds > SYM_MOD_FDS_MAX)
		mod_close_fd(ctx, m);
	mark_loaded(ctx, m);
	evict_for(ctx, m);
	return 0;
}

void sym_modcache_account(struct sym_ctx *ctx, struct sym_module *m)
{
	size_t b = module_bytes(m);
	ctx->loaded_bytes += b - m->bytes;
	m->bytes = b;
}

static int cache_grow(struct sym_module *m)
{
	size_t cap = m->cache_cap ? m->cache_cap * 2 : 1024;
	struct sym_addr_entry *nc = malloc(cap * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		nc[i].vaddr = UINT64_MAX;
	for (size_t i = 0; i < m->cache_cap; i++) {
		if (m->cache[i].vaddr == UINT64_MAX)
			continue;
		size_t h = (size_t)(m->cache[i].vaddr * 0x9E3779B97F4A7C15ull >>
				    32) & (cap - 1);
		while (nc[h].vaddr != UINT64_MAX)
			h = (h + 1) & (cap - 1);
		nc[h] = m->cache[i];
	}
	free(m->cache);
	m->cache = nc;
	m->cache_cap = cap;
	return 0;
}

static void cache_reset(struct sym_module *m)
{
	for (size_t i = 0; i < m->cache_cap; i++)
		m->cache[i].vaddr = UINT64_MAX;
	m->cache_used = 0;
	m->pool_n = 0;
	sym_arena_free(&m->pool_names);
}

static struct sym_addr_entry *cache_slot(struct sym_module *m, uint64_t v)
{
	size_t mask = m->cache_cap - 1;
	size_t h = (size_t)(v * 0x9E3779B97F4A7C15ull >> 32) & mask;
	while (m->cache[h].vaddr != UINT64_MAX && m->cache[h].vaddr != v)
		h = (h + 1) & mask;
	return &m->cache[h];
}

static int pool_reserve(struct sym_module *m, size_t n)
{
	if (m->pool_n + n <= m->pool_cap)
		return 0;
	size_t cap = m->pool_cap ? m->pool_cap * 2 : 1024;
	while (cap < m->pool_n + n)
		cap *= 2;
	struct sym_frame *np = realloc(m->pool, cap * sizeof(*np));
	if (!np)
		return -ENOMEM;
	m->pool = np;
	m->pool_cap = cap;
	return 0;
}

/* True when libstdc++'s demangler is there, loading it at the first
 * mangled name (hearth links no C++ runtime; a profile of C code never
 * maps it). */
static bool demangler(struct sym_ctx *ctx)
{
	if (ctx->demangle)
		return true;
	if (!ctx->opts.demangle || ctx->demangle_tried)
		return false;
	ctx->demangle_tried = true;
	ctx->demangle_lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (ctx->demangle_lib)
		*(void **)&ctx->demangle = dlsym(ctx->demangle_lib,
						 "__cxa_demangle");
	return ctx->demangle != NULL;
}

/* Rust's names, both manglings (legacy "_ZN...17h<hash>E" and v0 "_R..."),
 * by libiberty, printed as rustfilt prints them: no hash, no "$LT$"
 * escapes, no ".llvm.<n>" suffix. NULL when @name is not one. */
static char *rust_demangled(const char *name)
{
	if (sym_lang_for_symbol(name) != PROF_LANG_RUST)
		return NULL;
	return cplus_demangle(name, DMGL_RUST | DMGL_PARAMS);
}

/* The demangled form of @name in @m's arena, or @name itself (not
 * mangled, no demangler, or it failed). */
static const char *demangled(struct sym_ctx *ctx, struct sym_module *m,
			     const char *name)
{
	if (!ctx->opts.demangle || name[0] != '_')
		return name;
	char *d = rust_demangled(name);
	if (!d && name[1] == 'Z' && demangler(ctx)) {
		int st = -1;
		d = ctx->demangle(name, NULL, NULL, &st);
		if (d && st != 0) {
			free(d);
			d = NULL;
		}
	}
	if (!d)
		return name;
	const char *c = sym_arena_strdup(&m->pool_names, d, strlen(d));
	free(d);
	return c ? c : name;
}

/* Writes one frame for @vaddr: @name (NULL: "module+0xoff"), file and
 * line from @df, class and language. Returns 0 or -ENOMEM. */
static int fill_frame(struct sym_ctx *ctx, struct sym_module *m,
		      uint64_t vaddr, const struct sym_dwarf_frame *df,
		      const char *name, bool inlined, struct sym_frame *f)
{
	uint8_t flags = 0;
	if (!name) {
		char buf[64 + 256];
		int len = snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->base,
				   vaddr);
		name = sym_arena_strdup(&m->pool_names, buf,
					(size_t)len < sizeof(buf) ?
						(size_t)len : sizeof(buf) - 1);
		if (!name)
			return -ENOMEM;
		flags = SYM_FRAME_UNRESOLVED;
	}
	/* class and language from the name as the binary spells it */
	uint8_t lang = df->lang;
	if (lang == PROF_LANG_UNKNOWN)
		lang = sym_lang_for_symbol(name);
	if (lang == PROF_LANG_UNKNOWN)
		lang = m->lang;
	*f = (struct sym_frame){
		.name = demangled(ctx, m, name),
		.module = m->base,
		.file = df->file,
		.line = df->line,
		.inlined = inlined,
		.cls = sym_class_for_symbol(ctx, name),
		.lang = lang,
		.flags = flags,
	};
	return 0;
}

/* Fills frames for @vaddr into the pool; returns the count (>= 1) or 0
 * when out of memory. */
static size_t resolve_into_pool(struct sym_ctx *ctx,
				struct sym_module *m, uint64_t vaddr)
{
	struct sym_dwarf_frame df[SYM_INLINE_MAX];
	size_t nd = m->dwarf ? sym_dwarf_resolve(m->dwarf, vaddr, df,
						 SYM_INLINE_MAX) :
		    sym_gopcln_resolve(m->gopcln, vaddr, df, SYM_INLINE_MAX);
	const struct sym_elfsym *s = sym_symtab_find(&m->symtab, vaddr);
	const char *symname = s ? sym_symtab_name(&m->symtab, s) : NULL;
	if (nd == 0) {
		df[0] = (struct sym_dwarf_frame){ .name = NULL };
		nd = 1;
	}
	if (pool_reserve(m, nd) != 0)
		return 0;
	for (size_t i = 0; i < nd; i++) {
		const char *name = df[i].name;
		if (!name && i == nd - 1)
			name = symname;
		if (fill_frame(ctx, m, vaddr, &df[i], name, i + 1 < nd,
			       &m->pool[m->pool_n + i]) != 0)
			return 0;
	}
	return nd;
}

const struct sym_frame *sym_module_resolve(struct sym_ctx *ctx,
					   struct sym_module *m,
					   uint64_t vaddr, size_t *n)
{
	if (m->cache_used * 2 >= m->cache_cap) {
		if (m->cache_cap >= ADDR_CACHE_MAX)
			cache_reset(m);
		else if (cache_grow(m) != 0)
			return NULL;
	}
	struct sym_addr_entry *e = cache_slot(m, vaddr);
	if (e->vaddr == vaddr) {
		*n = e->n;
		return &m->pool[e->first];
	}
	size_t first = m->pool_n;
	size_t got = resolve_into_pool(ctx, m, vaddr);
	if (got == 0)
		return NULL;
	m->pool_n += got;
	e->vaddr = vaddr;
	e->first = (uint32_t)first;
	e->n = (uint32_t)got;
	m->cache_used++;
	sym_modcache_account(ctx, m);
	*n = got;
	return &m->pool[first];
}

void sym_modcache_free_all(struct sym_ctx *ctx)
{
	for (size_t i = 0; i < ctx->nmods; i++)
		module_free(ctx, ctx->mods[i]);
	free(ctx->mods);
	ctx->mods = NULL;
	ctx->nmods = ctx->capmods = 0;
}
