/* SPDX-License-Identifier: MIT */
/* DWARF CFI unwinding of copied user stacks with libdw. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <dwarf.h>

#include <gelf.h>

#include "symbolize/sym_internal.h"
#include "symbolize/unwind.h"
#include "symbolize/unwind_rules.h"

/* x86-64 DWARF register numbers. */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7

/* A process's mappings are read again at most this often when an unwind
 * lands in code libdw does not know (a library loaded since). */
#define REPORT_INTERVAL_NS 1000000000ULL

/* Sessions open at once: each holds libdw's view of a process and the
 * CFI of its modules (tens of MiB for a compiler's), so the least
 * recently used one is closed past this. They serve only what the
 * rules shared by module cannot (sym_unwind_shared()). */
#define SESSIONS_OPEN_MAX 4

struct session {
	pid_t pid;
	pid_t alias_of; /* forked child: use this process's session */
	/* How to find the caller from one pc, read once from the CFI with
	 * libdw and kept, so most unwinds never run libdw's interpreter. */
	struct sym_rules rules;
	pid_t tid;                        /* thread being unwound */
	Dwfl *dwfl;
	const struct sym_stack_copy *cur; /* valid during one sym_unwind() */
	uint64_t reported_ns;
	uint64_t last_use;
};

struct sym_unwinder {
	/* Sessions are allocated one by one: libdw keeps a pointer to each as
	 * its callbacks' argument, so they must never move. */
	struct session **v;
	size_t len, cap;
	uint64_t tick;
};

struct walk {
	uint64_t *pcs;
	size_t n, max;
};

/* Opens a mapped file as the process sees it: through /proc/PID/root,
 * so a process in another mount namespace (a container) or a chroot gets
 * its own binaries, not whatever the host has at the same path. Anything
 * else (the vDSO, a file that cannot be opened that way) goes to libdw's
 * own callback. The session is the module's userdata (set once the
 * mappings are reported). */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name,
		    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const struct session *s = *userdata;
	char path[PATH_MAX];
	struct stat st;
	int n, fd;

	if (!s || name[0] != '/')
		goto fallback;
	n = snprintf(path, sizeof(path), "/proc/%d/root%s", (int)s->pid, name);
	/* Only regular files: a mapped device could block on open. */
	if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		goto fallback;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fallback;
	*file_name = strdup(path);
	if (!*file_name) {
		close(fd);
		return -1;
	}
	return fd;
fallback:
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

/* A separate debug file only for a module without .eh_frame: libdw asks
 * for one for .debug_frame, after .eh_frame had no rule (an entry point,
 * hand-written code), and opening it inflates every compressed section
 * at once: milliseconds for libc's, in every process of an exec storm
 * (40% of hearthd's CPU under 10 new processes a second). A file built
 * without .eh_frame and stripped keeps its CFI in the debug file, and
 * gets it. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	Dwarf_Addr bias;

	if (dwfl_module_eh_cfi(mod, &bias)) {
		*debuginfo_file_name = NULL;
		return -1;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

/* dwfl_getmodules callback: hands each module its session. */
static int set_session(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr start, void *arg)
{
	(void)mod;
	(void)name;
	(void)start;
	*userdata = arg;
	return DWARF_CB_OK;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct session *s = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = s;
	return s->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Serves reads from the copied stack only: the unwinder never touches the
 * live process. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	const struct sym_stack_copy *c = ((struct session *)arg)->cur;

	(void)dwfl;
	if (!c || addr < c->regs.sp || addr - c->regs.sp > c->size ||
	    c->size - (addr - c->regs.sp) < sizeof(*result))
		return false;
	memcpy(result, c->data + (addr - c->regs.sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct sym_stack_copy *c = ((struct session *)thread_arg)->cur;
	Dwarf_Word regs[2] = { c->regs.bp, c->regs.sp };

	dwfl_thread_state_register_pc(thread, c->regs.ip);
	return dwfl_thread_state_registers(thread, DWARF_REG_RBP, 2, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static void session_close(struct session *s)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->dwfl = NULL;
	sym_rules_free(&s->rules);
}

/* (Re)reads the process's mappings into a fresh libdw session. */
static int session_open(struct session *s)
{
	session_close(s);
	s->reported_ns = mono_ns();
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->dwfl) {
		session_close(s);
		return -ENOMEM;
	}
	if (dwfl_linux_proc_report(s->dwfl, s->pid) != 0 ||
	    dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
		session_close(s);
		return -ESRCH;
	}
	/* Before attaching: that already opens a module (for its machine). */
	dwfl_getmodules(s->dwfl, set_session, s, 0);
	if (!dwfl_attach_state(s->dwfl, NULL, s->pid, &thread_callbacks, s)) {
		session_close(s);
		return -ESRCH;
	}
	return 0;
}

static struct session *session_find(struct sym_unwinder *u, pid_t pid)
{
	for (size_t i = 0; i < u->len; i++)
		if (u->v[i]->pid == pid)
			return u->v[i];
	return NULL;
}

/* Finds or adds the session of @pid. */
static struct session *session_get(struct sym_unwinder *u, pid_t pid)
{
	struct session *s = session_find(u, pid);

	if (s)
		return s;
	if (u->len == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 16;
		struct session **v = realloc(u->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->v = v;
		u->cap = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid = pid;
	u->v[u->len++] = s;
	return s;
}

struct sym_unwinder *sym_unwinder_new(void)
{
	return calloc(1, sizeof(struct sym_unwinder));
}

void sym_unwinder_free(struct sym_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->len; i++) {
		session_close(u->v[i]);
		free(u->v[i]);
	}
	free(u->v);
	free(u);
}

int sym_unwind_fork(struct sym_unwinder *u, pid_t parent, pid_t child)
{
	struct session *s;

	sym_unwind_forget(u, child);
	s = session_get(u, child);
	if (!s)
		return -ENOMEM;
	s->alias_of = parent;
	return 0;
}

void sym_unwind_forget(struct sym_unwinder *u, pid_t pid)
{
	/* Children that borrowed this session (it exited, or exec'd into
	 * another image) open their own from now on. */
	for (size_t i = 0; i < u->len; i++)
		if (u->v[i]->alias_of == pid)
			u->v[i]->alias_of = 0;
	for (size_t i = 0; i < u->len; i++) {
		if (u->v[i]->pid != pid)
			continue;
		session_close(u->v[i]);
		free(u->v[i]);
		u->v[i] = u->v[--u->len];
		return;
	}
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	if (w->n >= w->max)
		return DWARF_CB_ABORT;
	w->pcs[w->n++] = pc;
	return DWARF_CB_OK;
}

static int walk(struct session *s, pid_t tid, const struct sym_stack_copy *copy,
		struct walk *w)
{
	int rc;

	s->tid = tid;
	s->cur = copy;
	w->n = 0;
	rc = dwfl_getthread_frames(s->dwfl, tid, on_frame, w);
	s->cur = NULL;
	return rc;
}

/* Reads the rule for @pc from the session's module holding it (.eh_frame,
 * else .debug_frame). */
static void rule_read(void *arg, uint64_t pc, struct sym_rule *r)
{
	struct session *s = arg;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;

	if (!mod)
		return;
	/* .debug_frame only for a module without .eh_frame: where .eh_frame
	 * has no rule the file's own DWARF has none either, and asking for
	 * it inflates the file's compressed debug sections (an unstripped
	 * build's) in each process. */
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi)
		sym_rule_read(cfi, pc - bias, r);
}

static const struct sym_rule *rule_at(void *arg, uint64_t at)
{
	struct session *s = arg;

	return sym_rules_get(&s->rules, at, rule_read, s);
}

/* Closes the least recently used open session but @keep when
 * SESSIONS_OPEN_MAX are open. */
static void sessions_bound(struct sym_unwinder *u, const struct session *keep)
{
	struct session *lru = NULL;
	size_t open = 0;

	for (size_t i = 0; i < u->len; i++) {
		struct session *s = u->v[i];

		if (!s->dwfl)
			continue;
		open++;
		if (s != keep && (!lru || s->last_use < lru->last_use))
			lru = s;
	}
	if (open >= SESSIONS_OPEN_MAX && lru)
		session_close(lru);
}

/* Marks @s used and opens it when it is closed. Returns 0 or -errno. */
static int session_ready(struct sym_unwinder *u, struct session *s)
{
	s->last_use = ++u->tick;
	if (s->dwfl)
		return 0;
	sessions_bound(u, s);
	return session_open(s);
}

int sym_unwind(struct sym_unwinder *u, pid_t pid, pid_t tid,
	       const struct sym_stack_copy *copy, uint64_t *pcs, size_t max,
	       int *complete)
{
	struct session *s = session_get(u, pid);
	struct walk w = { .pcs = pcs, .max = max };
	int rc;

	*complete = 0;
	if (!s)
		return -ENOMEM;
	if (s->alias_of && !s->dwfl) {
		pid_t ppid = s->alias_of;
		struct session *parent = session_get(u, ppid);

		if (parent && session_ready(u, parent) < 0) {
			sym_unwind_forget(u, ppid); /* gone too */
			parent = NULL;
		}
		s = parent ? parent : session_find(u, pid);
		if (!s)
			return -ENOMEM;
	}
	if (!max)
		return -EINVAL;
	if ((rc = session_ready(u, s)) < 0) {
		sym_unwind_forget(u, pid);
		return rc;
	}
	rc = sym_rules_walk(copy, rule_at, s, pcs, max, &w.n);
	if (rc >= 0 && w.n > 1) {
		*complete = rc;
		return (int)w.n;
	}
	rc = walk(s, tid, copy, &w);
	/* Stopped in code libdw does not know: a library mapped since the
	 * session was opened. Read the mappings again, not more than once a
	 * second. */
	if (rc != 0 && w.n > 0 && !dwfl_addrmodule(s->dwfl, w.pcs[w.n - 1]) &&
	    mono_ns() - s->reported_ns > REPORT_INTERVAL_NS && session_open(s) == 0)
		rc = walk(s, tid, copy, &w);
	if (w.n == 0)
		pcs[w.n++] = copy->regs.ip;
	*complete = rc == 0;
	return (int)w.n;
}

size_t sym_unwind_splice(const uint64_t *dwarf, size_t nd, const uint64_t *fp,
			 size_t nf, uint64_t *out, size_t max)
{
	const uint64_t *src;
	size_t n;

	/* The deepest DWARF frame the FP walk also has: from there on, the
	 * FP walk knows the callers the copy was too short for. In recursion
	 * the same return address repeats: take the occurrence at the most
	 * similar depth, so no level is added or lost. */
	for (size_t j = nd; j-- > 1;) {
		size_t best = 0, dist = SIZE_MAX;

		for (size_t i = 1; i < nf; i++) {
			size_t d = i > j ? i - j : j - i;

			if (fp[i] == dwarf[j] && d < dist) {
				best = i;
				dist = d;
			}
		}
		if (!best)
			continue;
		n = 0;
		for (size_t k = 0; k <= j && n < max; k++)
			out[n++] = dwarf[k];
		for (size_t k = best + 1; k < nf && n < max; k++)
			out[n++] = fp[k];
		return n;
	}
	src = nd >= nf ? dwarf : fp;
	n = nd >= nf ? nd : nf;
	if (n > max)
		n = max;
	memcpy(out, src, n * sizeof(*out));
	return n;
}

struct exec_maps_walk {
	sym_exec_map_fn fn;
	void *arg;
};

static int exec_map_line(void *arg, struct sym_maps_line *ml)
{
	struct exec_maps_walk *w = arg;
	char path[PATH_MAX];
	struct sym_exec_map m = {
		.start = ml->start,
		.end = ml->end,
		.pgoff = ml->pgoff,
		.dev = ((uint64_t)ml->dev_major << 32) | ml->dev_minor,
		.ino = ml->ino,
		.path = path,
		.deleted = ml->deleted,
	};

	if (!ml->exec || ml->path_len == 0 || ml->path[0] != '/' ||
	    ml->path_len >= sizeof(path))
		return 0;
	memcpy(path, ml->path, ml->path_len);
	path[ml->path_len] = '\0';
	return w->fn(w->arg, &m);
}

int sym_unwind_exec_maps(pid_t pid, sym_exec_map_fn fn, void *arg)
{
	struct exec_maps_walk w = { fn, arg };
	char path[64], name[PATH_MAX];
	int fd, rc;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	rc = sym_maps_query(fd, name, sizeof(name), exec_map_line, &w);
	if (rc != -ENOTTY) {
		close(fd);
		return rc;
	}
	return sym_maps_text(fd, exec_map_line, &w);
}

int sym_unwind_open_mapped(pid_t pid, const struct sym_exec_map *m)
{
	char full[PATH_MAX];
	struct stat st;
	int n = m->deleted ? snprintf(full, sizeof(full), "/proc/%d/map_files/%llx-%llx", (int)pid,
				      (unsigned long long)m->start, (unsigned long long)m->end)
			   : snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, m->path);
	int fd;

	if (n < 0 || (size_t)n >= sizeof(full))
		return -ENAMETOOLONG;
	fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* Only regular files: a mapped device could block or change. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int sym_unwind_seg_bias(int fd, uint64_t pgoff, uint64_t *bias)
{
	Elf *e;
	size_t n;
	int rc = -ENOENT;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n) != 0) {
		elf_end(e);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* The mapping starts on the page that holds the segment's
		 * first byte. */
		if ((ph.p_offset & ~(uint64_t)4095) <= pgoff && pgoff < ph.p_offset + ph.p_filesz) {
			*bias = ph.p_vaddr - ph.p_offset;
			rc = 0;
			break;
		}
	}
	elf_end(e);
	return rc;
}
