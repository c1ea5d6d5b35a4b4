/* SPDX-License-Identifier: MIT */
/*
 * symbolize: the public entry points — the context, processes, user and
 * kernel lookups, counters.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "sym_internal.h"

#define DEFAULT_MAX_BYTES ((size_t)256 << 20)
#define RELOAD_MIN_NS 100000000ull /* reread maps on a miss at most 10/s */
#define FORK_REREAD_NS 20000000ull /* a parent's view older than 20 ms */
/* ... unless its last two reads agreed: a process that forks all day
 * (a shell, make) maps its libraries once; a later dlopen is still found
 * by the reread on a miss while the child lives. */
#define FORK_REREAD_SETTLED_NS 2000000000ull
#define SYM_PROCS_MAX 32768 /* processes cached at most */
#define KALLSYMS_RELOAD_NS 5000000000ull /* and kallsyms every 5 s */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sym_ctx *sym_new(const struct sym_options *opts)
{
	struct sym_ctx *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	if (opts)
		ctx->opts = *opts;
	snprintf(ctx->kallsyms_path, sizeof(ctx->kallsyms_path), "%s",
		 opts && opts->kallsyms_path ? opts->kallsyms_path :
					       "/proc/kallsyms");
	ctx->opts.kallsyms_path = ctx->kallsyms_path;
	/* a table named by the caller (tests) is read as given; and
	 * HEARTH_KSYM=kallsyms asks for the table whatever the kernel can */
	const char *ksym_env = getenv("HEARTH_KSYM");
	ctx->ksym_off = (opts && opts->kallsyms_path) ||
			(ksym_env && strcmp(ksym_env, "kallsyms") == 0);
	snprintf(ctx->debug_root, sizeof(ctx->debug_root), "%s",
		 opts && opts->debug_root ? opts->debug_root : "/usr/lib/debug");
	ctx->opts.debug_root = ctx->debug_root;
	ctx->self = getpid();
	ctx->max_bytes = ctx->opts.max_module_bytes ?
		ctx->opts.max_module_bytes : DEFAULT_MAX_BYTES;
	return ctx;
}

static void proc_free(struct sym_ctx *ctx, struct sym_proc *p)
{
	sym_proc_free_maps(ctx, p);
	sym_perfmap_free(p->perfmap);
	free(p);
}

void sym_free(struct sym_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t b = 0; b < SYM_PROC_BUCKETS; b++) {
		struct sym_proc *p = ctx->procs[b];
		while (p) {
			struct sym_proc *next = p->next;
			proc_free(ctx, p);
			p = next;
		}
	}
	sym_modcache_free_all(ctx);
	sym_kallsyms_free(ctx->kallsyms);
	sym_ksym_free(ctx->ksym);
	sym_ksym_bpf_free(ctx->ksym_bpf);
	if (ctx->demangle_lib)
		dlclose(ctx->demangle_lib);
	if (ctx->vdso)
		sym_symtab_free(ctx->vdso);
	free(ctx->vdso);
	free(ctx);
}


static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : (x > y);
}

/* Drops every process matching: gone ones (@gone_only) or those last used
 * at or before @before; never those in use by the current call. */
static void procs_drop(struct sym_ctx *ctx, bool gone_only, uint64_t before)
{
	for (size_t b = 0; b < SYM_PROC_BUCKETS; b++) {
		struct sym_proc **pp = &ctx->procs[b];
		while (*pp) {
			struct sym_proc *p = *pp;
			bool drop = p->last_use != ctx->tick &&
				    (gone_only ? p->gone : p->last_use <= before);
			if (!drop) {
				pp = &p->next;
				continue;
			}
			*pp = p->next;
			ctx->nprocs--;
			if (ctx->last_proc == p)
				ctx->last_proc = NULL;
			proc_free(ctx, p);
		}
	}
}

/* At the cap, drops an eighth of the processes in one pass: first those
 * already gone, then the least recently used. Processes nobody forgets
 * must not grow memory forever. */
static void procs_trim(struct sym_ctx *ctx)
{
	if (ctx->nprocs < SYM_PROCS_MAX)
		return;
	size_t target = SYM_PROCS_MAX - SYM_PROCS_MAX / 8;
	procs_drop(ctx, true, 0);
	if (ctx->nprocs <= target)
		return;
	uint64_t *ages = malloc(ctx->nprocs * sizeof(*ages));
	if (!ages)
		return;
	size_t n = 0;
	for (size_t b = 0; b < SYM_PROC_BUCKETS; b++)
		for (struct sym_proc *p = ctx->procs[b]; p; p = p->next)
			ages[n++] = p->last_use;
	qsort(ages, n, sizeof(*ages), cmp_u64);
	uint64_t before = ages[n - target - 1];
	free(ages);
	procs_drop(ctx, false, before);
}

struct sym_proc *sym_proc_new(struct sym_ctx *ctx, pid_t pid)
{
	procs_trim(ctx);
	struct sym_proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->last_use = ctx->tick;
	size_t b = (unsigned)pid % SYM_PROC_BUCKETS;
	p->next = ctx->procs[b];
	ctx->procs[b] = p;
	ctx->nprocs++;
	return p;
}

static void proc_unlink(struct sym_ctx *ctx, struct sym_proc *p)
{
	struct sym_proc **pp = &ctx->procs[(unsigned)p->pid % SYM_PROC_BUCKETS];
	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	ctx->nprocs--;
	if (ctx->last_proc == p)
		ctx->last_proc = NULL;
}

int sym_proc_load(struct sym_ctx *ctx, pid_t pid)
{
	if (pid <= 0)
		return -EINVAL;
	struct sym_proc *p = sym_proc_find(ctx, pid);
	if (!p && !(p = sym_proc_new(ctx, pid)))
		return -ENOMEM;
	p->loaded_ns = now_ns();
	int err = sym_proc_read_maps(ctx, p);
	p->gone = err == -ESRCH;
	/* a JIT's map is read now: it may be gone with the process */
	for (size_t i = 0; !p->gone && i < p->nmaps; i++) {
		if (p->maps[i].kind == SYM_MAP_ANON) {
			sym_perfmap_refresh(ctx, p);
			break;
		}
	}
	return err;
}

int sym_proc_fork(struct sym_ctx *ctx, pid_t parent, pid_t child)
{
	if (parent <= 0 || child <= 0 || parent == child)
		return -EINVAL;
	ctx->tick++;
	struct sym_proc *pp = sym_proc_find(ctx, parent);
	if (pp)
		pp->last_use = ctx->tick;
	/* A parent not seen yet is read now: it usually outlives a short
	 * child, whose own maps may already be gone. A parent read long ago
	 * (at its exec, before its libraries were mapped) is read again. */
	if ((!pp || (!pp->gone && now_ns() - pp->loaded_ns >
				  (pp->settled ? FORK_REREAD_SETTLED_NS : FORK_REREAD_NS))) &&
	    sym_proc_load(ctx, parent) == 0)
		pp = sym_proc_find(ctx, parent);
	if (!pp || pp->nmaps == 0)
		return sym_proc_load(ctx, child);
	struct sym_proc *c = sym_proc_find(ctx, child);
	if (!c && !(c = sym_proc_new(ctx, child)))
		return -ENOMEM;
	struct sym_map *maps = malloc(pp->nmaps * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	for (size_t i = 0; i < pp->nmaps; i++) {
		maps[i] = pp->maps[i];
		maps[i].name = NULL;
		if (pp->maps[i].name && !(maps[i].name = strdup(pp->maps[i].name))) {
			while (i-- > 0)
				free(maps[i].name);
			free(maps);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < pp->nmaps; i++)
		if (maps[i].mod)
			maps[i].mod->refs++;
	sym_proc_free_maps(ctx, c);
	c->maps = maps;
	c->nmaps = pp->nmaps;
	c->loaded_ns = pp->loaded_ns;
	c->gone = false;
	c->settled = pp->settled;
	return 0;
}

bool sym_proc_named(struct sym_ctx *ctx, pid_t pid)
{
	const struct sym_proc *p = sym_proc_find(ctx, pid);

	return p && p->nmaps > 0;
}

bool sym_proc_known(const struct sym_ctx *ctx, pid_t pid)
{
	for (const struct sym_proc *p = ctx->procs[(unsigned)pid % SYM_PROC_BUCKETS]; p; p = p->next)
		if (p->pid == pid)
			return true;
	return false;
}

int sym_proc_clear(struct sym_ctx *ctx, pid_t pid)
{
	struct sym_proc *p = sym_proc_find(ctx, pid);

	if (!p && !(p = sym_proc_new(ctx, pid)))
		return -ENOMEM;
	sym_proc_free_maps(ctx, p);
	p->gone = false;
	p->settled = false;
	p->loaded_ns = 0;
	return 0;
}

void sym_proc_forget(struct sym_ctx *ctx, pid_t pid)
{
	struct sym_proc *p = sym_proc_find(ctx, pid);
	if (!p)
		return;
	proc_unlink(ctx, p);
	proc_free(ctx, p);
}

static int frame_synthetic(struct sym_ctx *ctx, struct sym_frame *out,
			   const char *module, uint64_t off, uint8_t cls)
{
	snprintf(ctx->namebuf, sizeof(ctx->namebuf), "%s+0x%" PRIx64, module,
		 off);
	*out = (struct sym_frame){
		.name = ctx->namebuf, .module = module, .cls = cls,
		.flags = SYM_FRAME_UNRESOLVED,
	};
	ctx->st.misses++;
	return 1;
}

const struct sym_map *sym_proc_map_lookup(struct sym_ctx *ctx, struct sym_proc *p,
					  uint64_t addr)
{
	const struct sym_map *m = sym_proc_map_find(p, addr);
	if (m || p->gone)
		return m;
	uint64_t now = now_ns();
	if (now - p->loaded_ns < RELOAD_MIN_NS)
		return NULL;
	p->loaded_ns = now;
	ctx->proc_reloads++;
	if (sym_proc_read_maps(ctx, p) == -ESRCH)
		p->gone = true;
	return sym_proc_map_find(p, addr);
}

/* Names ELF virtual address @vaddr of @mod, opened through process @pid;
 * @cls is the class of the module in that process. */
static int user_file(struct sym_ctx *ctx, pid_t pid, struct sym_module *mod,
		     uint8_t cls, uint64_t vaddr, struct sym_frame *out,
		     size_t max)
{
	mod->last_use = ctx->tick;
	sym_modcache_load(ctx, mod, pid);
	size_t n = 0;
	const struct sym_frame *fr = sym_module_resolve(ctx, mod, vaddr, &n);
	if (!fr || n == 0)
		return frame_synthetic(ctx, out, mod->base, vaddr, cls);
	/* Deeper than @max: the innermost frames and the function holding
	 * them, which a stack must not lose (Rust inlines chains of 17). */
	size_t keep = n > max ? max - 1 : n;
	for (size_t i = 0; i < keep; i++)
		out[i] = fr[i];
	if (keep < n)
		out[keep++] = fr[n - 1];
	n = keep;
	for (size_t i = 0; i < n; i++) {
		if (out[i].cls == PROF_CLASS_UNKNOWN)
			out[i].cls = cls;
		if (mod->stripped)
			out[i].flags |= SYM_FRAME_STRIPPED;
		/* named better soon; not while the servers are away, so
		 * stacks through the module are remembered meanwhile */
		if (mod->dbgd_pending && !ctx->dbgd_down)
			out[i].flags |= SYM_FRAME_PENDING;
	}
	if (out[0].flags & SYM_FRAME_UNRESOLVED)
		ctx->st.misses++;
	return (int)n;
}

/* Process @pid, read when new, its use counted on the LRU clock; NULL
 * when it cannot be read. */
static struct sym_proc *proc_used(struct sym_ctx *ctx, pid_t pid)
{
	struct sym_proc *p = sym_proc_find(ctx, pid);

	if (!p) {
		sym_proc_load(ctx, pid);
		if (!(p = sym_proc_find(ctx, pid)))
			return NULL;
	}
	ctx->tick++;
	ctx->last_proc = p;
	p->last_use = ctx->tick;
	return p;
}

int sym_user(struct sym_ctx *ctx, pid_t pid, uint64_t addr,
	     struct sym_frame *out, size_t max)
{
	if (max == 0)
		return -EINVAL;
	if (ctx->dbgd_pending)
		sym_modcache_fetched(ctx);
	ctx->st.lookups++;
	struct sym_proc *p = proc_used(ctx, pid);
	if (!p)
		return frame_synthetic(ctx, out, "[unknown]", addr,
				       PROF_CLASS_UNKNOWN);
	const struct sym_map *map = sym_proc_map_lookup(ctx, p, addr);
	if (!map)
		return frame_synthetic(ctx, out, "[unknown]", addr,
				       PROF_CLASS_UNKNOWN);
	switch (map->kind) {
	case SYM_MAP_FILE:
		return user_file(ctx, p->pid, map->mod, map->cls,
				 sym_module_vaddr(map->mod, addr - map->start +
							    map->pgoff),
				 out, max);
	case SYM_MAP_ANON:
		if (sym_perfmap_lookup(ctx, p, addr, out) == 0)
			return 1;
		return frame_synthetic(ctx, out, "[anon]", addr - map->start,
				       PROF_CLASS_YOURS);
	default:
		if (map->name && strcmp(map->name, "[vdso]") == 0 &&
		    sym_vdso_lookup(ctx, addr - map->start, out) == 0)
			return 1;
		return frame_synthetic(ctx, out,
				       map->name ? map->name : "[unknown]",
				       addr - map->start, PROF_CLASS_SYSTEM);
	}
}

int sym_user_place(struct sym_ctx *ctx, pid_t pid, uint64_t addr, struct sym_place *out)
{
	struct sym_proc *p = proc_used(ctx, pid);
	const struct sym_map *map = p ? sym_proc_map_lookup(ctx, p, addr) : NULL;

	if (!map || map->kind != SYM_MAP_FILE || !map->mod)
		return -ENOENT;
	/* a use, as sym_user() counts it: a module named from the caller's
	 * cache must not look unused to eviction */
	map->mod->last_use = ctx->tick;
	*out = (struct sym_place){
		.module = map->mod->serial, .cls = map->cls,
		.vaddr = sym_module_vaddr(map->mod, addr - map->start + map->pgoff),
	};
	return 0;
}

int sym_user_mapping(struct sym_ctx *ctx, pid_t pid, uint64_t addr,
		     struct sym_mapping *out)
{
	const struct sym_proc *p = sym_proc_find(ctx, pid);
	const struct sym_map *map = p ? sym_proc_map_find(p, addr) : NULL;

	if (!map || map->kind != SYM_MAP_FILE || !map->mod || !map->mod->path)
		return -ENOENT;
	*out = (struct sym_mapping){
		.start = map->start, .limit = map->end, .offset = map->pgoff,
		.path = map->mod->path,
		.build_id = map->mod->build_id_len ? map->mod->build_id : NULL,
		.build_id_len = map->mod->build_id_len,
	};
	return 0;
}

int sym_file(struct sym_ctx *ctx, const char *path, uint64_t vaddr,
	     struct sym_frame *out, size_t max)
{
	if (max == 0)
		return -EINVAL;
	if (ctx->dbgd_pending)
		sym_modcache_fetched(ctx);
	ctx->tick++;
	ctx->st.lookups++;
	struct sym_module *mod = NULL;
	uint8_t cls;
	if (ctx->file_last && strcmp(ctx->file_last_path, path) == 0) {
		mod = ctx->file_last;
		cls = ctx->file_last_cls;
	} else {
		mod = sym_modcache_find_path(ctx, path);
		if (!mod) {
			struct stat st;
			if (stat(path, &st) != 0)
				return -errno;
			struct sym_maps_line ml = {
				.dev_major = major(st.st_dev),
				.dev_minor = minor(st.st_dev),
				.ino = st.st_ino, .path = path,
				.path_len = strlen(path),
			};
			/* the reference is the context's own until sym_free() */
			mod = sym_modcache_get(ctx, ctx->self, &ml);
			if (!mod)
				return -ENOENT;
		}
		cls = sym_class_for_path(ctx, path, false);
		size_t pl = strlen(path);
		ctx->file_last = NULL;
		if (pl < sizeof(ctx->file_last_path)) {
			memcpy(ctx->file_last_path, path, pl + 1);
			ctx->file_last = mod;
			ctx->file_last_cls = cls;
		}
	}
	return user_file(ctx, ctx->self, mod, cls, vaddr, out, max);
}

static int kernel_load(struct sym_ctx *ctx)
{
	if (ctx->kallsyms)
		return 0;
	if (ctx->kallsyms_failed)
		return -ENOENT;
	ctx->kallsyms = sym_kallsyms_load(ctx->kallsyms_path);
	ctx->kallsyms_loaded_ns = now_ns();
	if (!ctx->kallsyms) {
		ctx->kallsyms_failed = true;
		return -errno;
	}
	return 0;
}

int sym_kernel_reload(struct sym_ctx *ctx)
{
	if (ctx->ksym) {
		/* asked one by one: modules and programs are asked again */
		sym_ksym_forget_volatile(ctx->ksym);
		return 0;
	}
	struct sym_kallsyms *k = sym_kallsyms_load(ctx->kallsyms_path);
	if (!k)
		return -errno;
	sym_kallsyms_free(ctx->kallsyms);
	ctx->kallsyms = k;
	ctx->kallsyms_failed = false;
	return 0;
}

/* Loads the program that asks the kernel one address at a time. Returns
 * 0, or -errno (the table is read instead from then on). */
static int ksym_open(struct sym_ctx *ctx)
{
	ctx->ksym_bpf = sym_ksym_bpf_open();
	if (!ctx->ksym_bpf)
		return -errno;
	uint64_t text[4];
	sym_ksym_bpf_text(ctx->ksym_bpf, text);
	ctx->ksym = sym_ksym_new(sym_ksym_bpf_ask, sym_ksym_bpf_lookup,
				 ctx->ksym_bpf, text);
	if (!ctx->ksym) {
		sym_ksym_bpf_free(ctx->ksym_bpf);
		ctx->ksym_bpf = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Names @addr by asking the kernel. Returns 0, -ENOENT (no symbol), or
 * -EAGAIN when the table must answer instead: the program is not wanted,
 * could not load, or failed (then it is dropped for good). */
static int ksym_find(struct sym_ctx *ctx, uint64_t addr, const char **name,
		     const char **mod)
{
	if (ctx->ksym_off)
		return -EAGAIN;
	if (!ctx->ksym && ksym_open(ctx) != 0) {
		ctx->ksym_off = true;
		return -EAGAIN;
	}
	struct sym_ksym_hit h;
	int err = sym_ksym_find(ctx->ksym, addr, now_ns(), &h);
	if (err == 0) {
		*name = h.name;
		*mod = h.module;
		return 0;
	}
	if (err == -ENOENT)
		return err;
	if (err == -EPROTO) /* this address only: the table names it */
		return -EAGAIN;
	sym_ksym_free(ctx->ksym);
	sym_ksym_bpf_free(ctx->ksym_bpf);
	ctx->ksym = NULL;
	ctx->ksym_bpf = NULL;
	ctx->ksym_off = true;
	return -EAGAIN;
}

/* Finds @addr by asking the kernel, else in kallsyms, reading them again
 * (at most every few seconds) on a miss: modules and BPF programs come
 * and go. */
static int kernel_find(struct sym_ctx *ctx, uint64_t addr, const char **name,
		       const char **mod)
{
	int err = ksym_find(ctx, addr, name, mod);
	if (err != -EAGAIN)
		return err;
	if (kernel_load(ctx) != 0)
		return -ENOENT;
	if (sym_kallsyms_find(ctx->kallsyms, addr, name, mod) == 0)
		return 0;
	uint64_t *missed = &ctx->kallsyms_missed[(addr >> 4) % 64];
	if (*missed == addr)
		return -ENOENT;
	uint64_t now = now_ns();
	if (now - ctx->kallsyms_loaded_ns < KALLSYMS_RELOAD_NS)
		return -ENOENT;
	ctx->kallsyms_loaded_ns = now;
	if (sym_kernel_reload(ctx) != 0)
		return -ENOENT;
	if (sym_kallsyms_find(ctx->kallsyms, addr, name, mod) == 0)
		return 0;
	*missed = addr;
	return -ENOENT;
}

int sym_kernel(struct sym_ctx *ctx, uint64_t addr, struct sym_frame *out)
{
	const char *name, *mod;
	ctx->st.lookups++;
	if (kernel_find(ctx, addr, &name, &mod) != 0) {
		frame_synthetic(ctx, out, "[kernel]", addr, PROF_CLASS_SYSTEM);
		out->lang = PROF_LANG_C;
		return 1;
	}
	*out = (struct sym_frame){
		.name = name,
		.module = mod ? mod : "[kernel]",
		.cls = PROF_CLASS_SYSTEM,
		.lang = PROF_LANG_C,
		.flags = sym_kernel_name_is_bpf(name, mod) ? SYM_FRAME_BPF : 0,
	};
	return 1;
}

int sym_kernel_is_bpf(struct sym_ctx *ctx, uint64_t addr)
{
	const char *name, *mod;
	if (kernel_find(ctx, addr, &name, &mod) != 0)
		return 0;
	return sym_kernel_name_is_bpf(name, mod) ? 1 : 0;
}

void sym_stats(const struct sym_ctx *ctx, struct sym_stats *st)
{
	*st = ctx->st;
	st->modules = ctx->nmods;
	st->module_bytes = ctx->loaded_bytes + sym_kallsyms_bytes(ctx->kallsyms) +
			   sym_ksym_bytes(ctx->ksym);
	st->budget_bytes = ctx->loaded_bytes;
	st->budget_limit = ctx->max_bytes;
	st->procs = ctx->nprocs;
	st->evictions = ctx->evictions;
	st->proc_reloads = ctx->proc_reloads;
	st->stripped = sym_stripped_modules(ctx, NULL, 0);
}

size_t sym_stripped_modules(const struct sym_ctx *ctx, const char **out,
			    size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < ctx->nmods; i++) {
		const struct sym_module *m = ctx->mods[i];
		if (!m->loaded || !m->stripped)
			continue;
		if (out && n < max)
			out[n] = m->path;
		n++;
	}
	return n;
}
