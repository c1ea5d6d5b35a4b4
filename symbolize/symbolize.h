/* SPDX-License-Identifier: MIT */
/*
 * symbolize: addresses to frames.
 *
 * A sym_ctx caches, per process, the executable mappings read from
 * /proc/PID/maps, and per module (keyed by build-id, else by path, device
 * and inode) the ELF symbol tables (.symtab, .dynsym) and DWARF (file,
 * line, inline chains; from the binary or its separate debug file, found
 * by build-id or .gnu_debuglink), so one libc is read once for every
 * process. Files are opened through /proc/PID/root (deleted ones through
 * /proc/PID/map_files) so processes in other mount namespaces are named.
 * JIT code is named from /tmp/perf-PID.map, the vDSO from our own copy,
 * kernel addresses by the kernel itself, one at a time (a BPF program
 * printing "%pS"; needs CAP_BPF and CAP_PERFMON), else from the whole
 * /proc/kallsyms table (HEARTH_KSYM=kallsyms asks for the table; so does a
 * kallsyms_path option). Every frame gets an ownership
 * class (a table of rules, see sym_options.class_rules) and a language.
 * Modules are evicted least recently used beyond a memory budget; warm
 * lookups allocate nothing.
 *
 * Nothing here prints. Errors come back as negative errno values. A
 * context is used by one thread at a time.
 *
 * Option arrays (yours_prefixes, system_prefixes) are not copied: they
 * must outlive the context. Strings (kallsyms_path, debug_root) are.
 * With a debuginfod fetcher, missing debug files come by build-id from
 * debuginfod servers, fetched by the fetcher's own thread.
 */
#ifndef HEARTH_SYMBOLIZE_H
#define HEARTH_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../profile/profile.h"

/* One resolved frame. Strings are owned by the sym_ctx and stay valid until
 * the next call on the context (any of them may evict or reload a
 * module): copy or intern them before the next call. */
struct sym_frame {
	const char *name;   /* never NULL: the symbol, or "module+0xoffset" */
	const char *module; /* basename of the mapped file, "[kernel]" or the
			     * kernel module name; never NULL */
	const char *file;   /* source file, NULL when unknown */
	uint32_t line;      /* 0 when unknown */
	uint8_t inlined;    /* 1 when this frame was inlined into the next */
	uint8_t cls;        /* enum prof_class */
	uint8_t lang;       /* enum prof_lang */
	uint8_t flags;      /* SYM_FRAME_* bits */
};

/* sym_frame.flags */
#define SYM_FRAME_UNRESOLVED 0x01 /* no symbol: name is "module+0xoff" */
#define SYM_FRAME_BPF 0x02        /* BPF machinery: drop from stacks */
#define SYM_FRAME_STRIPPED 0x04   /* the module has no symbol table */
#define SYM_FRAME_JIT 0x08        /* named from /tmp/perf-PID.map */
#define SYM_FRAME_PENDING 0x10    /* the module's debug file is being
				   * fetched (servers reachable): the frame
				   * may be named better soon */

/* An ownership rule (configuration adds its own before the defaults):
 * frames whose module basename, module path or symbol starts with
 * @pattern get class @cls. */
enum sym_rule_match {
	SYM_MATCH_BASENAME = 0, /* the module file's basename */
	SYM_MATCH_PATH = 1,     /* the module's path as the process sees it */
	SYM_MATCH_SYMBOL = 2,   /* the function name (mangled as in ELF) */
};

struct sym_class_rule {
	const char *pattern;
	uint8_t match; /* enum sym_rule_match */
	uint8_t cls;   /* enum prof_class */
};

struct sym_options {
	/* Path prefixes whose binaries count as "your code" beyond the main
	 * executable (NULL-terminated array, may be NULL). */
	const char *const *yours_prefixes;
	/* The kernel symbol file; tests point it elsewhere. Copied. */
	const char *kallsyms_path; /* NULL = /proc/kallsyms */
	/* Folders whose libraries come from system packages ("libraries"
	 * class); a library elsewhere counts as your code. NULL-terminated,
	 * NULL = /usr/, /lib/, /lib64/, ... */
	const char *const *system_prefixes;
	/* Memory budget for cached modules (symbols, debug info, resolved
	 * addresses); least recently used modules are evicted beyond it.
	 * 0 = 256 MiB. */
	size_t max_module_bytes;
	/* Root of separate debug files (".build-id/xx/rest.debug" and
	 * "<dir>/<debuglink>" below it); NULL = /usr/lib/debug. Copied. */
	const char *debug_root;
	/* Rules tried before the built-in table (first match wins); not
	 * copied: they must outlive the context. */
	const struct sym_class_rule *class_rules;
	size_t nclass_rules;
	/* 1: C++ and Rust names demangled: C++ ("ns::f(int)" for
	 * "_ZN2ns1fEi") with libstdc++'s demangler loaded at run time (names
	 * stay mangled where it is missing), Rust in both manglings (legacy
	 * "_ZN...17h<hash>E", v0 "_R...") by libiberty as rustfilt prints
	 * them ("<a::S as a::T>::f", no hash); 0: names as the binary spells
	 * them, as `eu-addr2line -f` prints them. Class and language are
	 * decided on the mangled name either way. */
	int demangle;
	/* Fetches the debug files of modules that have neither DWARF nor a
	 * local debug file, by build-id (symbolize/debuginfod.h); NULL =
	 * none. Not owned: it must outlive the context. A module's frames
	 * carry SYM_FRAME_PENDING while its file is on the way (not while
	 * the servers are unreachable: that may last), and are named from
	 * it from the first lookup after it arrives. */
	struct sym_debuginfod *debuginfod;
};

struct sym_stats {
	uint64_t lookups;
	uint64_t misses;        /* addresses with no symbol */
	uint64_t modules;       /* modules currently cached */
	uint64_t module_bytes;  /* memory held by cached modules and the
				 * kernel's symbols */
	uint64_t budget_bytes;  /* the part the budget counts: loaded modules */
	uint64_t budget_limit;  /* the budget (max_module_bytes or its default) */
	uint64_t procs;         /* processes currently cached */
	uint64_t evictions;     /* modules unloaded to stay in budget */
	uint64_t proc_reloads;  /* /proc/PID/maps rereads after a miss */
	uint64_t stripped;      /* cached modules without a symbol table */
};

struct sym_ctx;

/* Returns a new context, or NULL with errno set. @opts may be NULL. */
struct sym_ctx *sym_new(const struct sym_options *opts);

/* Frees @ctx and every cached module and process. Accepts NULL. */
void sym_free(struct sym_ctx *ctx);

/* Resolves user address @addr in process @pid into frames, innermost first
 * (an inlined callee comes before its caller). Writes at most @max frames
 * to @out (of a deeper inline chain, the innermost @max - 1 and the
 * function holding them) and returns how many (>= 1: an address that
 * cannot be resolved still yields one frame named "module+0xoff" or
 * "[unknown]"), or a negative errno when @max is 0. */
int sym_user(struct sym_ctx *ctx, pid_t pid, uint64_t addr,
	     struct sym_frame *out, size_t max);

/* Where a user address lies in the ELF file that holds it: the same code
 * of two processes of one binary has the same place, whatever their
 * load addresses, so what was named for one names the other. */
struct sym_place {
	uint64_t module; /* the file's number in the context, never given
			  * to another file */
	uint64_t vaddr;  /* the address as an ELF virtual address of it */
	uint8_t cls;     /* the file's class in this process */
};

/* Fills @out with the place of user address @addr of process @pid,
 * reading the process's mappings when it is new to @ctx (as sym_user()
 * does). Frames sym_user() gives for the address are the same for every
 * address of the same place, until the file's names change (a debug file
 * fetched: SYM_FRAME_PENDING). Returns 0, or -ENOENT when no ELF file
 * holds the address (anonymous memory, the vDSO, an unknown process). */
int sym_user_place(struct sym_ctx *ctx, pid_t pid, uint64_t addr, struct sym_place *out);

/* The file mapping that holds a user address, as the process mapped it:
 * what pprof's Mapping says, so that other tools find the file again. */
struct sym_mapping {
	uint64_t start, limit;   /* the executable mapping's addresses */
	uint64_t offset;         /* the file offset mapped at start */
	const char *path;        /* the file as the process sees it */
	const uint8_t *build_id; /* its GNU build-id, NULL when it has none */
	size_t build_id_len;
};

/* Writes build-id @id (@len bytes) as lowercase hex into @out, which
 * holds 2 * @len + 1 bytes, and terminates it. */
void sym_build_id_hex(const uint8_t *id, size_t len, char *out);

/* Fills @out with the mapping of an ELF file holding user address @addr
 * of process @pid, as sym_user() last read the process's mappings (it
 * does not read them again). Returns 0, or -ENOENT when no file holds the
 * address (anonymous memory, the vDSO, a process not read). Strings are
 * owned by @ctx, valid until the next call on it. */
int sym_user_mapping(struct sym_ctx *ctx, pid_t pid, uint64_t addr,
		     struct sym_mapping *out);

/* Resolves @vaddr, an ELF virtual address (as addr2line takes it) in the
 * file at @path, into frames like sym_user(). The file is opened in our
 * own mount namespace and stays cached until sym_free() (or eviction of
 * its data). Returns the number of frames (>= 1), or a negative errno:
 * -EINVAL when @max is 0, -ENOENT when the file cannot be read as ELF. */
int sym_file(struct sym_ctx *ctx, const char *path, uint64_t vaddr,
	     struct sym_frame *out, size_t max);

/* Resolves kernel address @addr into one frame ("func" with module
 * "[kernel]", or "func" with module "modname"). Returns 1, or a negative
 * errno. */
int sym_kernel(struct sym_ctx *ctx, uint64_t addr, struct sym_frame *out);

/* Reads /proc/@pid/maps now (on exec, or while a short-lived process is
 * still alive), replacing any cached view of the process. Returns 0 or a
 * negative errno (-ESRCH when the process is gone). */
int sym_proc_load(struct sym_ctx *ctx, pid_t pid);

/* Makes @child share a copy of @parent's cached mappings (on fork, when the
 * child may exit before it is looked at). Returns 0 or a negative errno. */
int sym_proc_fork(struct sym_ctx *ctx, pid_t parent, pid_t child);

/* Whether the mappings of @pid are known (read while it lived): false
 * when its user addresses can only be "[unknown]". */
bool sym_proc_named(struct sym_ctx *ctx, pid_t pid);

/* Drops what is cached for @pid (after exit, once its samples are
 * symbolized). */
void sym_proc_forget(struct sym_ctx *ctx, pid_t pid);

/* Whether anything is cached for @pid. */
bool sym_proc_known(const struct sym_ctx *ctx, pid_t pid);

/* Drops the mappings cached for @pid (an exec made them stale, a fork
 * left them unknown) and keeps the process known: its mappings are read
 * at its next lookup, or come with sym_proc_set_exit_maps(). Returns 0 or
 * -ENOMEM. */
int sym_proc_clear(struct sym_ctx *ctx, pid_t pid);

/* One executable mapping of a process as the kernel saw it at its exit. */
struct sym_exit_map {
	uint64_t start, end;
	uint64_t pgoff;          /* file offset of start */
	unsigned dev_major, dev_minor;
	uint64_t ino;
	const char *path;        /* where this process opens the file, or
				  * NULL: then only a module already known by
				  * device and inode names it */
	bool exe;                /* the process's executable */
	bool vdso;               /* the kernel's vDSO (no file) */
};

/* Gives @pid, which exited, the mappings @maps[0..n) (sorted or not) it
 * had, replacing any cached view and never reading /proc for it again
 * (until sym_proc_forget()). A file is the module already known by its
 * device and inode, else the one at its path when that is the same file.
 * Returns 0 or -ENOMEM. */
int sym_proc_set_exit_maps(struct sym_ctx *ctx, pid_t pid, const struct sym_exit_map *maps,
			   size_t n);

/* A new window of samples begins (its stacks were drained): the modules
 * used since the last call may be evicted from now on. Until it is first
 * called, and past twice the budget, eviction is least recently used
 * first; between, a module the current window used is kept over the
 * budget. */
void sym_window_begin(struct sym_ctx *ctx);

/* Fills @st with the context's counters. */
void sym_stats(const struct sym_ctx *ctx, struct sym_stats *st);

/* Returns 1 when kernel address @addr lies in BPF machinery (a JITed BPF
 * program, a trampoline, bpf_trace_run*, __bpf_trace_*) that the sampler
 * drops from stacks, 0 when not (or when unknown). sym_kernel() marks such
 * frames with SYM_FRAME_BPF too. */
int sym_kernel_is_bpf(struct sym_ctx *ctx, uint64_t addr);

/* Rereads the kernel symbols (after modules or BPF programs were loaded):
 * the table, or, when the kernel is asked one address at a time, what it
 * said of modules and BPF programs is forgotten (it is asked again anyway
 * 5 s after each answer). Returns 0 or a negative errno (-EPERM when
 * addresses are hidden). */
int sym_kernel_reload(struct sym_ctx *ctx);

/* Writes up to @max paths (as the processes see them) of cached modules
 * that have no symbol table and no debug file, and returns how many there
 * are in total. Strings are owned by @ctx, valid until the next call that
 * may evict. Frames from such modules carry SYM_FRAME_STRIPPED. */
size_t sym_stripped_modules(const struct sym_ctx *ctx, const char **out,
			    size_t max);

#endif /* HEARTH_SYMBOLIZE_H */
