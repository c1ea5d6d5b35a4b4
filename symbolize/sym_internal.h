/* SPDX-License-Identifier: MIT */
/*
 * symbolize internals: the structures the files of symbolize/ share.
 * Not part of the public interface; only symbolize/ and its tests include
 * this header.
 */
#ifndef HEARTH_SYM_INTERNAL_H
#define HEARTH_SYM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <gelf.h>

#include "symbolize.h"

#define SYM_BUILD_ID_MAX 64
#define SYM_INLINE_MAX 32 /* deepest inline chain kept per address */

/* One function symbol of a module, addresses are ELF virtual addresses. */
struct sym_elfsym {
	uint64_t addr;
	uint64_t size; /* 0 = unknown: extends to the next symbol */
	uint32_t name; /* offset in the module's name blob */
	uint32_t rank; /* higher wins among symbols at one address; with
			* SYM_RANK_LIMIT, size is only an upper bound (an
			* unsized symbol's distance to its section's end) */
};
#define SYM_RANK_LIMIT 0x80000000u

/* One PT_LOAD program header. */
struct sym_seg {
	uint64_t off;
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t memsz;
};

/* A growable blob of NUL-terminated strings addressed by offset. */
struct sym_strtab {
	char *buf;
	size_t len;
	size_t cap;
};

/* Returns the offset of a copy of @s (of @n bytes) in @t, or UINT32_MAX
 * when out of memory. */
uint32_t sym_strtab_add(struct sym_strtab *t, const char *s, size_t n);
void sym_strtab_free(struct sym_strtab *t);

/* Stable strings: chunks that never move, freed all at once. */
struct sym_arena {
	struct sym_arena_chunk *head;
	size_t bytes;
};
/* Returns a stable NUL-terminated copy of @s (@n bytes), or NULL. */
const char *sym_arena_strdup(struct sym_arena *a, const char *s, size_t n);
void sym_arena_free(struct sym_arena *a);

/* A sorted symbol table. */
struct sym_symtab {
	struct sym_elfsym *syms;
	size_t n;
	size_t cap;
	struct sym_strtab names;
};

/* Appends a symbol; returns 0 or -ENOMEM. */
int sym_symtab_push(struct sym_symtab *t, uint64_t addr, uint64_t size,
		    const char *name, uint32_t rank);
/* Moves every symbol of @src into @dst and sorts again. */
int sym_symtab_merge(struct sym_symtab *dst, const struct sym_symtab *src);
/* Sorts by address and keeps the best symbol per address. */
void sym_symtab_finish(struct sym_symtab *t);
/* Returns the symbol covering @addr, or NULL. */
const struct sym_elfsym *sym_symtab_find(const struct sym_symtab *t,
					 uint64_t addr);
static inline const char *sym_symtab_name(const struct sym_symtab *t,
					  const struct sym_elfsym *s)
{
	return t->names.buf + s->name;
}
void sym_symtab_free(struct sym_symtab *t);

/* Resolved frames of one address, cached per module. */
struct sym_addr_entry {
	uint64_t vaddr;   /* key; UINT64_MAX = empty slot */
	uint32_t first;   /* index in the module's frame pool */
	uint32_t n;       /* frames, 0 = not resolved */
};

struct sym_dwarf; /* dwarf_lines.c */

/* One ELF file, shared by every process that maps it. */
struct sym_module {
	uint8_t build_id[SYM_BUILD_ID_MAX];
	size_t build_id_len;
	dev_t dev;          /* from /proc/PID/maps, with ino and path: the
			     * identity when there is no build-id */
	ino_t ino;
	char *path;         /* as the process sees it */
	const char *base;   /* basename of path */
	uint64_t serial;    /* its number in the context, never reused:
			     * what sym_user_place() says */
	struct sym_seg *segs;
	size_t nsegs;
	uint16_t e_type;    /* ET_EXEC or ET_DYN */
	uint8_t richness;   /* of the file behind fd: 2 DWARF, 1 .symtab */

	bool loaded;        /* symbols (and debug info) are present */
	bool load_failed;   /* the file could not be read */
	bool stripped;      /* no .symtab and no debug file */
	bool has_debug;     /* DWARF found */
	bool dbgd_pending;  /* its debug file is being fetched */
	uint8_t lang;       /* language guess when DWARF has none */
	struct sym_symtab symtab;
	struct sym_dwarf *dwarf;
	struct sym_gopcln *gopcln; /* Go's table, when there is no DWARF */

	/* per-address cache of resolved frames */
	struct sym_addr_entry *cache;
	size_t cache_cap;   /* power of two, 0 = none */
	size_t cache_used;
	struct sym_frame *pool;
	size_t pool_n, pool_cap;
	struct sym_arena pool_names; /* "module+0x..." and names built here */
	int fd;             /* the open file, -1 when closed */
	int debug_fd;       /* the separate debug file, -1 = none */
	size_t dwarf_bytes; /* memory estimate of the DWARF or Go table */
	char debug_path[256]; /* separate debug file used, "" = none */

	/* Its .eh_frame for unwinding copied stacks, shared by every process
	 * mapping it (unwind_shared.c), opened at first use while loaded. */
	struct sym_ucfi *ucfi;
	bool ucfi_failed;

	size_t bytes;       /* memory held while loaded */
	uint64_t last_use;  /* ctx tick of the last lookup */
	uint32_t refs;      /* process mappings pointing here */
	uint64_t hits;      /* lookups that landed here */
};

/* One executable mapping of a process. */
struct sym_map {
	uint64_t start, end;
	uint64_t pgoff;     /* addr maps file offset addr - start + pgoff */
	struct sym_module *mod; /* NULL: anonymous / special */
	uint8_t cls;        /* ownership class of the module in this process */
	uint8_t kind;       /* enum sym_map_kind */
	char *name;         /* for anonymous mappings: "[anon]", "[vdso]" ... */
};

enum sym_map_kind {
	SYM_MAP_FILE = 0,
	SYM_MAP_ANON = 1,   /* anonymous executable memory: JIT */
	SYM_MAP_SPECIAL = 2,/* [vdso], [vsyscall], ... */
};

struct sym_perfmap; /* perf_map.c */

struct sym_proc {
	struct sym_proc *next; /* hash chain */
	pid_t pid;
	struct sym_map *maps;
	size_t nmaps;
	struct sym_perfmap *perfmap;
	uint64_t last_use;
	uint64_t loaded_ns;   /* when the maps were read */
	bool gone;            /* process exited; do not reread /proc */
	bool settled;         /* the last two reads found the same mappings */
};

/* One parsed line of /proc/PID/maps. */
struct sym_maps_line {
	uint64_t start, end, pgoff;
	bool exec;
	unsigned dev_major, dev_minor;
	uint64_t ino;
	const char *path;   /* points into the parsed line; "" when none */
	size_t path_len;
	bool deleted;       /* path ends with " (deleted)" (stripped off) */
};

/* Reads 1 to 16 hex digits at *@pp, which must end at @stop before @end,
 * into *@v, and moves *@pp past @stop. Returns 0, or -EINVAL (anything
 * else before @stop, no digit, too many, or no @stop). */
int sym_parse_hex(const char **pp, const char *end, char stop, uint64_t *v);

/* Parses one line of /proc/PID/maps (without the newline). Returns 0, or
 * -EINVAL when the line is malformed. @out->path points into @line. */
int sym_maps_parse_line(const char *line, size_t len,
			struct sym_maps_line *out);

/* Called for each executable mapping; non-zero stops the walk and is
 * returned. @ml->path is valid only during the call. */
typedef int (*sym_maps_fn)(void *arg, struct sym_maps_line *ml);

/* Walks the executable mappings of the process whose /proc/PID/maps is
 * open on @fd with the kernel's PROCMAP_QUERY ioctl, in address order,
 * naming each in @name (@namelen bytes; a longer name fails the walk with
 * -E2BIG). Returns 0, -ENOTTY when the kernel has no such query (read the
 * text instead), what @fn returned, or another negative errno (-ESRCH:
 * the process is gone). */
int sym_maps_query(int fd, char *name, size_t namelen, sym_maps_fn fn,
		   void *arg);

/* The same walk over the text of /proc/PID/maps open on @fd (taken and
 * closed), for kernels without the query: malformed lines are skipped.
 * Returns 0, what @fn returned, or a negative errno. */
int sym_maps_text(int fd, sym_maps_fn fn, void *arg);

/* ---- ELF modules (elf_module.c) ---- */

/* Copies the GNU build-id of @e, at most @max bytes (the first ones of a
 * longer id), to @out. Returns its length, 0 when there is none. */
size_t sym_elf_build_id(Elf *e, uint8_t *out, size_t max);

/* Reads the ELF identity of the file open on @fd: PT_LOAD segments, type
 * and build-id into @m. Returns 0 or a negative errno. */
int sym_elf_read_header(int fd, struct sym_module *m);

/* Loads the symbol tables of @fd into @m->symtab (.symtab and .dynsym).
 * Sets *@has_symtab when a .symtab was present. Returns 0 or -errno. */
int sym_elf_load_symbols(int fd, struct sym_symtab *t, bool *has_symtab);

/* Same as sym_elf_load_symbols() for an ELF image in memory. */
int sym_elf_load_symbols_mem(const void *buf, size_t len,
			     struct sym_symtab *t);

/* The first section of @e named @name, its header in @sh; or NULL. */
Elf_Scn *sym_elf_section(Elf *e, const char *name, GElf_Shdr *sh);

/* Reads the .gnu_debuglink name of @fd into @buf. Returns 0, -ENOENT. */
int sym_elf_debuglink(int fd, char *buf, size_t len);

/* The ELF virtual address of file offset @off of @m: through the PT_LOAD
 * segment whose file bytes hold it; @off itself when none does. */
uint64_t sym_module_vaddr(const struct sym_module *m, uint64_t off);

/* ---- DWARF (dwarf_lines.c) ---- */
struct sym_dwarf_frame {
	const char *name; /* NULL when DWARF names no function */
	const char *file; /* NULL when unknown */
	uint32_t line;
	uint8_t lang;     /* enum prof_lang of the compile unit */
};
/* Opens the DWARF of the ELF file on @fd (the fd stays the caller's, who
 * may close it once this returns). Returns NULL when there is none. Adds its
 * memory estimate to *@bytes. */
struct sym_dwarf *sym_dwarf_open(int fd, size_t *bytes);
/* Resolves @vaddr: innermost inline first, the containing function last.
 * Returns the number of frames written (0 = no DWARF for this address). */
size_t sym_dwarf_resolve(struct sym_dwarf *d, uint64_t vaddr,
			 struct sym_dwarf_frame *out, size_t max);
/* The same, with every compressed section inflated whole at open, as
 * libdw does by itself (sym_dwarf_open() inflates only what lookups
 * reach); tests compare the two. */
struct sym_dwarf *sym_dwarf_open_whole(int fd, size_t *bytes);
/* Bytes of compressed sections inflated so far (0 when none is
 * compressed, or with sym_dwarf_open_whole()). */
size_t sym_dwarf_inflated(const struct sym_dwarf *d);
void sym_dwarf_free(struct sym_dwarf *d);
/* The start address of the line-table row holding @vaddr (tests use it
 * to explain eu-addr2line's answers). Returns 0 or -ENOENT. */
int sym_dwarf_line_addr(struct sym_dwarf *d, uint64_t vaddr, uint64_t *row);

/* ---- Go's own table (gopclntab.c) ---- */
struct sym_gopcln;
/* Reads the .gopclntab of the ELF file on @fd (Go 1.18 and later; the
 * caller keeps @fd), mapping the file. Returns NULL when there is none or
 * it cannot be read. Adds its memory estimate to *@bytes. */
struct sym_gopcln *sym_gopcln_open(int fd, size_t *bytes);
/* The same over a table in memory, with go:func.* at @gofunc (NULL: no
 * inlined calls); the memory must outlive the result (tests, fuzzing). */
struct sym_gopcln *sym_gopcln_mem(const void *tab, size_t len,
				  const void *gofunc, size_t gofunc_len);
/* Resolves @vaddr like sym_dwarf_resolve(): inlined calls innermost
 * first, the function last. Returns the frames written (0: no Go
 * function holds @vaddr). */
size_t sym_gopcln_resolve(const struct sym_gopcln *g, uint64_t vaddr,
			  struct sym_dwarf_frame *out, size_t max);
void sym_gopcln_free(struct sym_gopcln *g);

/* ---- separate debug files (debug_file.c) ---- */
/* Opens the separate debug file of @m (by build-id, then .gnu_debuglink),
 * looking inside process @pid's root first, then the host's. Returns an fd
 * (and records the path in @m->debug_path) or -ENOENT. */
int sym_debug_open(struct sym_ctx *ctx, struct sym_module *m, pid_t pid);
/* Opens @m's debug file fetched by the context's debuginfod fetcher (by
 * build-id), asking for it when it was not asked for yet. Returns an fd
 * (the path in @m->debug_path), -EINPROGRESS while it is on the way, or
 * -ENOENT (no fetcher, no build-id, not found, or not @m's). */
int sym_debug_fetched(struct sym_ctx *ctx, struct sym_module *m);

/* ---- debuginfod (debuginfod_fetch.c) ---- */
/* The @i-th build-id the fetcher knows: when READY, writes its module
 * name and cache path and returns 1; 0 when not READY (or the path does
 * not fit); -ENOENT past the last. */
int sym_debuginfod_ready_at(struct sym_debuginfod *d, size_t i, char *module,
			    size_t modlen, char *path, size_t pathlen);

/* ---- kernel (kallsyms.c) ---- */
struct sym_kallsyms;
/* Reads kallsyms from @path. Returns NULL with errno set. */
struct sym_kallsyms *sym_kallsyms_load(const char *path);
/* The same from text in memory (tests, fuzzing). */
struct sym_kallsyms *sym_kallsyms_parse(const char *buf, size_t len);
void sym_kallsyms_free(struct sym_kallsyms *k);
/* Looks up @addr: sets *name and *module (NULL for the core kernel) and
 * returns 0, or -ENOENT. */
int sym_kallsyms_find(const struct sym_kallsyms *k, uint64_t addr,
		      const char **name, const char **module);
size_t sym_kallsyms_bytes(const struct sym_kallsyms *k);
/* The @i-th text symbol in address order (tests compare parses with it):
 * sets *addr, *name and *module (NULL for the core kernel) and returns 0,
 * or -ENOENT past the last. */
int sym_kallsyms_nth(const struct sym_kallsyms *k, size_t i, uint64_t *addr,
		     const char **name, const char **module);

/* The same, with the symbol's start address in *@start (may be NULL). */
int sym_kallsyms_find_at(const struct sym_kallsyms *k, uint64_t addr,
			 const char **name, const char **module,
			 uint64_t *start);

/* ---- kernel, one address at a time (ksym_parse.c, ksym_cache.c,
 * ksym_bpf.c) ---- */

/* One answer of the kernel's "%pS": spans into the parsed text. */
struct sym_ksym_rec {
	const char *name;   /* not NUL-terminated: name_len bytes */
	size_t name_len;
	const char *module; /* NULL for the core kernel and BPF programs */
	size_t module_len;
	uint64_t off;       /* of the address from the symbol's start */
	uint64_t size;      /* of the symbol */
};
/* Parses "name+0xoff/0xsize[ [module]]" (@len bytes at @s). Returns 0,
 * -ENOENT for a bare address (no symbol holds it) or -EINVAL. */
int sym_ksym_parse(const char *s, size_t len, struct sym_ksym_rec *out);

/* Asks the kernel to print @n addresses with "%pS": sets out[i] to each
 * NUL-terminated answer (NULL when it did not fit), valid until the next
 * call. Returns 0 or -errno. */
typedef int (*sym_ksym_ask_fn)(void *arg, const uint64_t *addrs, size_t n,
			       const char **out);

/* Asks the kernel where each of @n names is: sets addrs[i], 0 for a name
 * it does not know. Returns 0 or -errno. */
typedef int (*sym_ksym_lookup_fn)(void *arg, const char *const *names,
				  size_t n, uint64_t *addrs);

/* A module's or BPF program's symbol, or a miss, is asked again after: */
#define SYM_KSYM_TTL_NS 5000000000ull

struct sym_ksym; /* symbols asked for so far, by address range */
struct sym_ksym_hit {
	const char *name;   /* valid until the next call on the cache */
	const char *module; /* NULL core kernel, "bpf" a BPF program */
	uint64_t start, size;
};
/* A cache asking @ask(@arg, ...); @lookup (may be NULL) tells which of
 * an address's names is the system call's own ("__x64_sys_getpid", not
 * the kernel's first alias "__do_sys_getpid"). @text holds the core
 * kernel's text bounds [0], [1]) and its init text's [2], [3]) (zeros when
 * unknown: every answer without a module is then the core kernel's), which
 * tell the core kernel from BPF programs. Returns NULL when out of memory. */
struct sym_ksym *sym_ksym_new(sym_ksym_ask_fn ask, sym_ksym_lookup_fn lookup,
			      void *arg, const uint64_t text[4]);
void sym_ksym_free(struct sym_ksym *k);
/* Names @addr at time @now (ns, monotonic), asking the kernel when no
 * fresh answer covers it. Returns 0, -ENOENT when no symbol holds it,
 * -EPROTO when the kernel's answer for this address could not be read
 * (too long, unparsable: ask another source for this address only), or
 * another negative errno when the kernel could not be asked. */
int sym_ksym_find(struct sym_ksym *k, uint64_t addr, uint64_t now,
		  struct sym_ksym_hit *out);
/* Forgets every module and BPF symbol and every miss (modules or
 * programs changed); the core kernel's stay. */
void sym_ksym_forget_volatile(struct sym_ksym *k);
size_t sym_ksym_bytes(const struct sym_ksym *k);
/* How many answers the kernel gave so far. */
uint64_t sym_ksym_asked(const struct sym_ksym *k);

/* The BPF program that asks (ksym_bpf.c). */
#define SYM_KSYM_BATCH 64
struct sym_ksym_bpf;
/* Loads the program (CAP_BPF and CAP_PERFMON; kernel 5.17+ for bpf_loop) and reads
 * the text bounds. Returns NULL with errno set when it cannot. */
struct sym_ksym_bpf *sym_ksym_bpf_open(void);
void sym_ksym_bpf_free(struct sym_ksym_bpf *kb);
/* A sym_ksym_ask_fn over @arg, a struct sym_ksym_bpf (at most
 * SYM_KSYM_BATCH addresses). */
int sym_ksym_bpf_ask(void *arg, const uint64_t *addrs, size_t n,
		     const char **out);
/* A sym_ksym_lookup_fn over @arg, a struct sym_ksym_bpf (at most
 * SYM_KSYM_BATCH names). */
int sym_ksym_bpf_lookup(void *arg, const char *const *names, size_t n,
			uint64_t *addrs);
/* The text bounds the program found (see sym_ksym_new()). */
void sym_ksym_bpf_text(const struct sym_ksym_bpf *kb, uint64_t text[4]);
/* Where the program's own code lies in the kernel (tests name it), or 0
 * when the kernel does not say. */
uint64_t sym_ksym_bpf_prog_addr(const struct sym_ksym_bpf *kb);

/* True when a kernel symbol belongs to BPF machinery that should not show
 * in a profile (BPF programs, trampolines, the tracing glue). */
bool sym_kernel_name_is_bpf(const char *name, const char *module);

/* ---- the context (symbolize.c, procs.c, modcache.c) ---- */

#define SYM_PROC_BUCKETS 1024

struct sym_ctx {
	struct sym_options opts;
	char kallsyms_path[256];
	char debug_root[256];
	const char **yours; /* copy of opts.yours_prefixes, NULL-terminated */
	struct sym_kallsyms *kallsyms;
	bool kallsyms_failed;
	/* kernel symbols asked one by one (ksym_cache.c), unless the table
	 * is wanted (a kallsyms_path given, HEARTH_KSYM=kallsyms) or the
	 * program cannot load */
	struct sym_ksym *ksym;
	struct sym_ksym_bpf *ksym_bpf;
	bool ksym_off;
	uint64_t kallsyms_loaded_ns;
	/* Kernel addresses that stayed unnamed after a reread: asking about
	 * them again must not reread kallsyms every few seconds. */
	uint64_t kallsyms_missed[64];

	struct sym_proc *procs[SYM_PROC_BUCKETS]; /* chained by pid */
	size_t nprocs;

	struct sym_module **mods;
	size_t nmods, capmods;
	uint64_t mod_serial; /* the last module's serial */
	size_t mod_fds;      /* descriptors modules hold open */
	size_t loaded_bytes; /* bytes of loaded modules */
	size_t max_bytes;    /* eviction threshold */

	uint64_t tick;       /* bumps per lookup: LRU clock */
	uint64_t window_tick; /* the tick when the current window began */
	bool windowed;        /* sym_window_begin() was called */
	struct sym_stats st;
	uint64_t evictions;
	uint64_t proc_reloads;

	struct sym_proc *last_proc; /* one-entry cache for sym_user */
	struct sym_module *file_last; /* one-entry cache for sym_file */
	uint8_t file_last_cls;
	pid_t self;          /* our pid: sym_file opens files as we see them */
	/* __cxa_demangle from libstdc++ when sym_options.demangle, loaded
	 * at the first mangled name (modcache.c) */
	char *(*demangle)(const char *, char *, size_t *, int *);
	void *demangle_lib;
	bool demangle_tried;
	char file_last_path[4096];
	/* modules waiting for a debug file, and the fetcher's generation
	 * when they were last looked at */
	size_t dbgd_pending;
	uint64_t dbgd_gen;
	bool dbgd_down;      /* the fetcher's servers are unreachable */
	struct sym_symtab *vdso;    /* symbols of the kernel's vDSO */
	bool vdso_failed;
	char scratch[4096];  /* paths */
	char namebuf[512];   /* synthetic names, valid until the next call */
};

/* procs.c */
struct sym_proc *sym_proc_find(struct sym_ctx *ctx, pid_t pid);
/* A new, empty process @pid, or NULL (symbolize.c). */
struct sym_proc *sym_proc_new(struct sym_ctx *ctx, pid_t pid);
/* The mapping of @addr in @p, reading the maps again (at most 10 times a
 * second) when none holds it: the process may have mapped it since.
 * (symbolize.c) */
const struct sym_map *sym_proc_map_lookup(struct sym_ctx *ctx, struct sym_proc *p,
					  uint64_t addr);
/* Reads /proc/PID/maps into @p (replacing its maps). Returns 0 or -errno. */
int sym_proc_read_maps(struct sym_ctx *ctx, struct sym_proc *p);
void sym_proc_free_maps(struct sym_ctx *ctx, struct sym_proc *p);
/* Returns the mapping holding @addr, or NULL. */
const struct sym_map *sym_proc_map_find(const struct sym_proc *p,
					uint64_t addr);

/* modcache.c */
/* Finds or creates the module for a file mapping line of process @pid,
 * taking a reference. Returns NULL when the file cannot be opened or is
 * not ELF. */
struct sym_module *sym_modcache_get(struct sym_ctx *ctx, pid_t pid,
				    const struct sym_maps_line *ml);
/* The module of the file (@dev, @ino), taking a reference: one known
 * already (any path), else the file at @path as this process sees it when
 * it is that file (NULL @path: none). NULL when there is none. */
struct sym_module *sym_modcache_get_file(struct sym_ctx *ctx, dev_t dev, ino_t ino,
					 const char *path);
/* Opens @m's file through process @pid, else (the process is gone) as
 * this process sees it when that is the same file. An fd or -errno. */
int sym_modcache_open(struct sym_ctx *ctx, const struct sym_module *m, pid_t pid);
/* The cached module with path @path (any device), or NULL. */
struct sym_module *sym_modcache_find_path(struct sym_ctx *ctx,
					  const char *path);
void sym_modcache_unref(struct sym_ctx *ctx, struct sym_module *m);
/* Makes sure @m's symbols (and DWARF) are loaded, evicting others when
 * over budget. Opens the file through process @pid. Returns 0 or -errno
 * (the module then resolves to module+0xoff). */
int sym_modcache_load(struct sym_ctx *ctx, struct sym_module *m, pid_t pid);
/* Resolves @vaddr in loaded module @m; returns the cached frames (cls is
 * PROF_CLASS_UNKNOWN when the mapping's class applies) and their count. */
const struct sym_frame *sym_module_resolve(struct sym_ctx *ctx,
					   struct sym_module *m,
					   uint64_t vaddr, size_t *n);
void sym_modcache_free_all(struct sym_ctx *ctx);
/* Counts again the memory of loaded module @m, after it grew. */
void sym_modcache_account(struct sym_ctx *ctx, struct sym_module *m);

/* unwind_shared.c: frees @u (NULL accepted); its memory. */
struct sym_ucfi;
void sym_ucfi_free(struct sym_ucfi *u);
size_t sym_ucfi_bytes(const struct sym_ucfi *u);
/* Unloads the modules whose debug file stopped being fetched (arrived or
 * failed) since the last call, so their next lookup loads them with it.
 * Cheap when the fetcher's generation did not move. */
void sym_modcache_fetched(struct sym_ctx *ctx);
/* Opens @path as process @pid sees it; falls back to map_files for the
 * range [@start, @end). Returns an fd or -errno. */
int sym_open_in_proc(struct sym_ctx *ctx, pid_t pid, const char *path,
		     uint64_t start, uint64_t end);

/* perf_map.c */
struct sym_perfmap *sym_perfmap_new(void);
void sym_perfmap_free(struct sym_perfmap *pm);
/* Adds the entries of a perf map text @buf to @pm. Returns 0 or -ENOMEM;
 * malformed lines are skipped. */
int sym_perfmap_parse(struct sym_perfmap *pm, const char *buf, size_t len);
/* The name covering @addr, or NULL. */
const char *sym_perfmap_find(const struct sym_perfmap *pm, uint64_t addr);
/* Reads @p's perf map now (while the process lives). 0 or -errno. */
int sym_perfmap_refresh(struct sym_ctx *ctx, struct sym_proc *p);
/* Names JIT address @addr of @p; 0, or -ENOENT. */
int sym_perfmap_lookup(struct sym_ctx *ctx, struct sym_proc *p,
		       uint64_t addr, struct sym_frame *out);

/* vdso.c: names an offset into the [vdso] mapping; 0, or -ENOENT. */
int sym_vdso_lookup(struct sym_ctx *ctx, uint64_t off, struct sym_frame *out);

/* classify.c */
/* The ownership class of a module at @path (as the process sees it);
 * @is_main for the process's executable. */
uint8_t sym_class_for_path(const struct sym_ctx *ctx, const char *path,
			   bool is_main);
/* A class forced by a symbol name (runtime symbols), or UNKNOWN. */
uint8_t sym_class_for_symbol(const struct sym_ctx *ctx, const char *name);
/* A language guess from a symbol's mangling, or PROF_LANG_UNKNOWN. */
uint8_t sym_lang_for_symbol(const char *name);

#endif /* HEARTH_SYM_INTERNAL_H */
