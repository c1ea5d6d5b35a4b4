/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/stack_build.h"
#include "symbolize/python.h"

/* Room for a full user and kernel stack, with inline expansion. */
#define MAX_FRAMES 1024
#define MAX_INLINE 16
/* Remembered stacks: direct-mapped, a newer stack takes its slot. An
 * always-on host sees a few thousand distinct stacks a window. */
#define MEMO_SLOTS 8192
/* Remembered stacks by process, to forget one process's quickly. */
#define TGID_BUCKETS 1024
/* Remembered stacks' frames live in a dictionary profile kept across
 * epochs; past this many frames it starts over (bounded memory). */
#define DICT_MAX_FRAMES (1u << 17)
/* Stacks seen once, by hash: a stack is remembered the second time it
 * comes (a host starting processes all day sees most stacks once, and
 * remembering costs a second interning). ~hash marks a stack that cannot
 * be remembered. */
#define SEEN_SLOTS 16384
/* Frames of an address, per profile, for an epoch: most stacks of a drain
 * share their kernel path and their libraries' frames. */
#define ADDR_BITS 13
#define ADDR_POOL_MAX (1u << 18)
/* Profiles filled through the memo in one epoch: a drain's two, and the
 * copies' two pending ones. */
#define MAX_TARGETS 4

/* One remembered stack: its input (the key) and its frame ids in the
 * dictionary. */
struct memo {
	struct memo *tnext, **tprev; /* in by_tgid[tgid % TGID_BUCKETS] */
	uint64_t hash;
	uint32_t tgid, tid; /* tid 0 unless per thread */
	uint32_t flags;
	uint32_t nu, nk, nframes;
	uint32_t born;      /* epoch */
	char comm[16], tcomm[16];
	uint64_t ips[];     /* nu user, nk kernel, then nframes uint32_t */
};

/* The frames one address became in one profile (this epoch). */
struct addr_entry {
	uint64_t ip;       /* ADDR_FILE: the ELF virtual address */
	uint64_t who;      /* ADDR_USER: the tgid; ADDR_FILE: the file's
			    * number (sym_place); 0 for kernel addresses */
	uint32_t epoch;
	uint32_t first;    /* in pool */
	uint32_t gen;      /* ADDR_USER: tgid_gen of its process's bucket
			    * when put; ADDR_FILE: the file's class */
	uint8_t prof;      /* profile slot + 1, 0 = empty */
	uint8_t kind;      /* enum addr_kind */
	uint8_t n;
	uint8_t unstable;
};

/* A user address in a file is cached by its place in the file, not by
 * process: an exec storm's processes of one binary, each new, share
 * their frames (by process, each named every frame again: a quarter of
 * hearthd's CPU at 200 execs a second). Other user addresses (JIT code,
 * the vDSO) by process. */
enum addr_kind { ADDR_USER, ADDR_KERNEL, ADDR_KERNEL_WAIT, ADDR_FILE };

/* The process row last pushed into one profile (this epoch). */
struct row_memo {
	uint32_t epoch, line, id; /* id 0 = none */
	char comm[16];
};

/* A profile filled in this epoch: dictionary frame id -> its frame id. */
struct target {
	const struct prof_profile *p;
	uint32_t *map; /* 0 = not copied yet (frame ids are >= 1) */
	size_t cap;
};

struct stack_builder {
	uint32_t frames[MAX_FRAMES];
	uint32_t path[MAX_FRAMES];
	struct sym_frame scratch[MAX_INLINE];
	bool unstable; /* the last build named a frame that may change */
	struct prof_profile *dict;
	struct memo *memo[MEMO_SLOTS];
	struct memo *by_tgid[TGID_BUCKETS];
	/* Bumped when a process of the bucket is forgotten (exec, fork):
	 * the frames cached for its addresses this epoch no longer hold. */
	uint32_t tgid_gen[TGID_BUCKETS];
	uint64_t seen[SEEN_SLOTS];
	struct addr_entry addr[1u << ADDR_BITS];
	/* by profile slot (the dictionary's last): a process's stacks come
	 * in runs (its requests for memory a burst), each of a new process
	 * of a storm built once, its row interned again for each */
	struct row_memo rows[MAX_TARGETS + 1];
	uint32_t *pool;
	size_t npool, cappool;
	int cur; /* profile slot of the build under way, -1 = none */
	struct target tg[MAX_TARGETS];
	size_t ntg;
	uint32_t epoch;
	struct sym_py_names *py; /* named Python code objects */
};

struct stack_builder *stack_builder_new(void)
{
	struct stack_builder *b = calloc(1, sizeof(struct stack_builder));

	if (b && !(b->py = sym_py_names_new())) {
		free(b);
		return NULL;
	}
	return b;
}

static void memo_drop(struct stack_builder *b, struct memo *m)
{
	struct memo **slot = &b->memo[m->hash % MEMO_SLOTS];

	if (*slot == m)
		*slot = NULL;
	*m->tprev = m->tnext;
	if (m->tnext)
		m->tnext->tprev = m->tprev;
	free(m);
}

static void targets_clear(struct stack_builder *b)
{
	for (size_t i = 0; i < b->ntg; i++)
		free(b->tg[i].map);
	memset(b->tg, 0, sizeof(b->tg));
	b->ntg = 0;
}

void stack_builder_forget(struct stack_builder *b)
{
	for (size_t i = 0; i < MEMO_SLOTS; i++)
		if (b->memo[i])
			memo_drop(b, b->memo[i]);
	targets_clear(b);
	prof_free(b->dict);
	b->dict = NULL;
	memset(b->addr, 0, sizeof(b->addr));
	memset(b->rows, 0, sizeof(b->rows));
	b->npool = 0;
}

void stack_builder_next_epoch(struct stack_builder *b)
{
	targets_clear(b);
	b->epoch++;
	b->npool = 0;
}

void stack_builder_forget_tgid(struct stack_builder *b, uint32_t tgid)
{
	struct memo *m = b->by_tgid[tgid % TGID_BUCKETS], *next;

	/* An exec known in the middle of an epoch: the addresses cached for
	 * the old image (the same numbers may be other code now) go too. */
	b->tgid_gen[tgid % TGID_BUCKETS]++;
	sym_py_names_forget(b->py, (pid_t)tgid);
	for (; m; m = next) {
		next = m->tnext;
		if (m->tgid == tgid)
			memo_drop(b, m);
	}
}

void stack_builder_free(struct stack_builder *b)
{
	if (!b)
		return;
	stack_builder_forget(b);
	sym_py_names_free(b->py);
	free(b->pool);
	free(b);
}

static uint32_t intern_frame(struct prof_profile *p, const struct sym_frame *sf,
			     uint8_t kind, uint8_t cls)
{
	struct prof_frame f = {
		.name = prof_intern_cstr(p, sf->name),
		.module = prof_intern_cstr(p, sf->module),
		.file = prof_intern_cstr(p, sf->file),
		.line = sf->line,
		.kind = kind,
		.cls = cls,
		.lang = sf->lang,
	};

	if (f.name == UINT32_MAX || f.module == UINT32_MAX || f.file == UINT32_MAX)
		return UINT32_MAX;
	return prof_frame_intern(p, &f);
}

static int push(struct stack_builder *b, size_t *n, uint32_t id)
{
	if (id == UINT32_MAX)
		return -ENOMEM;
	if (*n < MAX_FRAMES)
		b->frames[(*n)++] = id;
	return 0;
}

static int push_named(struct stack_builder *b, struct prof_profile *p,
		      size_t *n, const char *name, uint8_t kind, uint32_t line)
{
	struct sym_frame sf = { .name = name, .module = "", .line = line };

	return push(b, n, intern_frame(p, &sf, kind, PROF_CLASS_UNKNOWN));
}

/* A frame named from something that can change while the address stays:
 * a JIT's map, a debug file on its way, or no mapping or symbol table yet
 * ("[unknown]", "[anon]", "[kernel]": mappings, perf maps and kernel
 * symbols read later may name it). An address in a file without its
 * symbol stays unnamed. */
static bool may_change(const struct sym_frame *sf)
{
	if (sf->flags & (SYM_FRAME_JIT | SYM_FRAME_PENDING))
		return true;
	return (sf->flags & SYM_FRAME_UNRESOLVED) && (!sf->module || sf->module[0] == '[');
}

/* The key of a cached address: what it is in whose (struct addr_entry). */
struct addr_key {
	uint64_t ip, who;
	uint32_t gen;
	uint8_t kind;
};

/* The key of kernel address @ip. */
static struct addr_key kernel_key(uint64_t ip, uint8_t kind)
{
	return (struct addr_key){ .ip = ip, .kind = kind };
}

/* The key of user address @ip of process @tgid: its place in the file
 * that holds it, else the process's address. */
static struct addr_key user_key(const struct stack_builder *b, struct sym_ctx *sym,
				uint32_t tgid, uint64_t ip)
{
	struct sym_place pl;

	if (b->cur >= 0 && sym_user_place(sym, (pid_t)tgid, ip, &pl) == 0)
		return (struct addr_key){ .ip = pl.vaddr, .who = pl.module, .gen = pl.cls,
					  .kind = ADDR_FILE };
	return (struct addr_key){ .ip = ip, .who = tgid, .kind = ADDR_USER,
				  .gen = tgid ? b->tgid_gen[tgid % TGID_BUCKETS] : 0 };
}

/* The cache entry of @k in the current profile; NULL when no profile is
 * set. */
static struct addr_entry *addr_entry(struct stack_builder *b, const struct addr_key *k)
{
	uint64_t h = (k->ip ^ k->who << 40 ^ k->who >> 24 ^ (uint64_t)b->cur << 56 ^ k->kind) *
		     0x9e3779b97f4a7c15ULL;

	return b->cur < 0 ? NULL : &b->addr[h >> (64 - ADDR_BITS)];
}

/* Pushes the cached frames of @e when it holds @k; returns whether. */
static bool addr_take(struct stack_builder *b, const struct addr_entry *e,
		      const struct addr_key *k, size_t *n)
{
	if (!e || e->prof != b->cur + 1 || e->epoch != b->epoch || e->ip != k->ip ||
	    e->who != k->who || e->kind != k->kind || e->gen != k->gen)
		return false;
	for (uint32_t j = 0; j < e->n && *n < MAX_FRAMES; j++)
		b->frames[(*n)++] = b->pool[e->first + j];
	b->unstable |= e->unstable;
	return true;
}

/* Remembers that @k became b->frames[@from..@to) for this epoch. Out of
 * room or memory, it is not remembered. */
static void addr_put(struct stack_builder *b, struct addr_entry *e, const struct addr_key *k,
		     size_t from, size_t to, bool unstable)
{
	if (!e || !(to - from <= MAX_INLINE) || !(b->npool + (to - from) <= ADDR_POOL_MAX))
		return;
	if (b->npool + (to - from) > b->cappool) {
		size_t cap = b->cappool ? b->cappool * 2 : 4096;
		uint32_t *v = realloc(b->pool, cap * sizeof(*v));

		if (!v)
			return;
		b->pool = v;
		b->cappool = cap;
	}
	memcpy(b->pool + b->npool, b->frames + from, (to - from) * sizeof(*b->frames));
	*e = (struct addr_entry){ .ip = k->ip, .who = k->who, .epoch = b->epoch,
				  .first = (uint32_t)b->npool, .gen = k->gen,
				  .prof = (uint8_t)(b->cur + 1),
				  .kind = k->kind, .n = (uint8_t)(to - from),
				  .unstable = unstable };
	b->npool += to - from;
}

/* Gives the frames of user address @ip, b->frames[@from..@to), their
 * place: the file mapping that holds it, as pprof's Mapping writes it.
 * An address outside any file (JIT code, the vDSO) has none. Returns 0
 * or -ENOMEM. */
static int place_user(struct sym_ctx *sym, struct prof_profile *p, uint32_t tgid,
		      uint64_t ip, const uint32_t *frames, size_t n)
{
	struct sym_mapping sm;
	struct prof_mapping m = { 0 };
	char hex[2 * 64 + 1];
	uint32_t id;

	if (!n || sym_user_mapping(sym, (pid_t)tgid, ip, &sm) < 0)
		return 0;
	/* (once per address named: snprintf a byte was 2% of hearthd) */
	sym_build_id_hex(sm.build_id, sm.build_id_len < 64 ? sm.build_id_len : 64, hex);
	m = (struct prof_mapping){ .start = sm.start, .limit = sm.limit,
				   .offset = sm.offset,
				   .file = prof_intern_cstr(p, sm.path),
				   .build_id = sm.build_id_len ? prof_intern_cstr(p, hex) : 0 };
	if (m.file == UINT32_MAX || m.build_id == UINT32_MAX ||
	    (id = prof_mapping_intern(p, &m)) == UINT32_MAX)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (prof_frame_place(p, frames[i], id, ip) < 0)
			return -ENOMEM;
	return 0;
}

/* In place of the evaluation loop's frame at b->frames[@at] and above:
 * the Python frames it runs, outermost first, from *@next (an index into
 * in->py, counting down to the innermost): the entry frame the native call
 * began with and every frame it called without another native call.
 * Returns 0 or -ENOMEM. */
static int add_python(struct stack_builder *b, struct prof_profile *p,
		      const struct stack_input *in, size_t at, size_t *n, int *next)
{
	struct sym_frame sf;

	*n = at;
	do {
		const struct hearth_py_frame *f = &in->py->f[*next];

		sym_py_name(b->py, (pid_t)in->tgid, in->pyproc, f, &sf);
		if (push(b, n, intern_frame(p, &sf, PROF_KIND_USER, sf.cls)) < 0)
			return -ENOMEM;
		(*next)--;
	} while (*next >= 0 && !(in->py->f[*next].flags & HEARTH_PY_ENTRY));
	return 0;
}

/* Puts all of in->py's frames, outermost first, at b->frames[@at],
 * before the native frames pushed from there. Returns 0 or -ENOMEM. */
static int python_first(struct stack_builder *b, struct prof_profile *p,
			const struct stack_input *in, size_t at, size_t *n)
{
	size_t native = *n - at;
	int next = (int)in->py->n - 1;
	uint32_t saved[MAX_FRAMES];

	memcpy(saved, b->frames + at, native * sizeof(*saved));
	*n = at;
	while (next >= 0)
		if (add_python(b, p, in, *n, n, &next) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < native; i++)
		if (push(b, n, saved[i]) < 0)
			return -ENOMEM;
	return 0;
}

/* Whether b->frames[@i] is the evaluation loop's frame. */
static bool is_eval_frame(const struct stack_builder *b, struct prof_profile *p, size_t i)
{
	const struct prof_frame *f = prof_frame_get(p, b->frames[i]);

	return f && sym_py_is_eval(prof_str(p, f->name));
}

/* When the frames of one address, b->frames[@from..*@n), hold the
 * evaluation loop, it and the interpreter's helpers inlined into it at
 * that address give way to the Python frames it runs. */
static int splice_python(struct stack_builder *b, struct prof_profile *p,
			 const struct stack_input *in, size_t from, size_t *n, int *next)
{
	for (size_t i = from; i < *n; i++)
		if (is_eval_frame(b, p, i))
			return add_python(b, p, in, i, n, next);
	return 0;
}

static int add_user(struct stack_builder *b, struct sym_ctx *sym,
		    struct prof_profile *p, const struct stack_input *in,
		    size_t *n)
{
	int py_next = in->py && in->pyproc ? (int)in->py->n - 1 : -1;
	size_t start = *n;
	int rc;

	/* Outermost caller first. Return addresses point after the call:
	 * step back one byte so the call's own line and inline chain are
	 * found. The leaf (index 0) is the sampled instruction itself. */
	for (size_t i = in->nu; i-- > 0;) {
		uint64_t ip = in->uips[i] - (i > 0 ? 1 : 0);
		struct addr_key key = user_key(b, sym, in->tgid, ip);
		struct addr_entry *e = addr_entry(b, &key);
		size_t from = *n;
		bool unstable = false;
		int k;

		if (addr_take(b, e, &key, n)) {
			if (py_next >= 0 && splice_python(b, p, in, from, n, &py_next) < 0)
				return -ENOMEM;
			continue;
		}
		k = sym_user(sym, (pid_t)in->tgid, ip, b->scratch, MAX_INLINE);
		for (int j = k - 1; j >= 0; j--) {
			const struct sym_frame *sf = &b->scratch[j];
			uint8_t kind = sf->inlined ? PROF_KIND_INLINE : PROF_KIND_USER;

			unstable |= may_change(sf);
			if (push(b, n, intern_frame(p, sf, kind, sf->cls)) < 0)
				return -ENOMEM;
		}
		b->unstable |= unstable;
		if (place_user(sym, p, in->tgid, ip, b->frames + from, *n - from) < 0)
			return -ENOMEM;
		addr_put(b, e, &key, from, *n, unstable);
		if (py_next >= 0 && splice_python(b, p, in, from, n, &py_next) < 0)
			return -ENOMEM;
	}
	/* No evaluation loop among the native frames (a frame-pointer walk
	 * through an interpreter built without them stops early): the
	 * Python frames still come, above what native frames there are. */
	if (in->py && in->pyproc && py_next == (int)in->py->n - 1 && py_next >= 0)
		if ((rc = python_first(b, p, in, start, n)) < 0)
			return rc;
	return 0;
}

/* Kernel address @ip as a frame pushed onto b->frames (none for the
 * sampler's own frames). Returns 0 or -ENOMEM. */
static int add_kernel_frame(struct stack_builder *b, struct sym_ctx *sym,
			    struct prof_profile *p, uint64_t ip, bool off_cpu, size_t *n)
{
	struct addr_key key = kernel_key(ip, off_cpu ? ADDR_KERNEL_WAIT : ADDR_KERNEL);
	struct addr_entry *e = addr_entry(b, &key);
	size_t from = *n;
	struct sym_frame sf;
	bool unstable;

	if (addr_take(b, e, &key, n))
		return 0;
	if (sym_kernel(sym, ip, &sf) < 1) {
		b->unstable = true;
		return 0;
	}
	unstable = may_change(&sf);
	/* The sampler's own frames say nothing about the profile. In a
	 * wait, the kernel frames are where the thread waited. */
	if (!(sf.flags & SYM_FRAME_BPF) &&
	    push(b, n, intern_frame(p, &sf, PROF_KIND_KERNEL,
				   off_cpu ? PROF_CLASS_WAITING : sf.cls)) < 0)
		return -ENOMEM;
	b->unstable |= unstable;
	addr_put(b, e, &key, from, *n, unstable);
	return 0;
}

static int add_kernel(struct stack_builder *b, struct sym_ctx *sym,
		      struct prof_profile *p, const struct stack_input *in,
		      size_t *n)
{
	for (size_t i = in->nk; i-- > 0;)
		if (add_kernel_frame(b, sym, p, in->kips[i], in->off_cpu, n) < 0)
			return -ENOMEM;
	return 0;
}

/* The stack of the task that woke a wait, leaf first, onto b->frames:
 * STACK_WAKER_FRAME, its kernel frames, its user frames (each inline
 * chain innermost first), its process name. All of them are waiting
 * (pale grey): the wait's time is not spent there, and the answer looks
 * past them to the wait's own frames. Returns 0 or -ENOMEM. */
static int add_waker(struct stack_builder *b, struct sym_ctx *sym,
		     struct prof_profile *p, const struct stack_waker *w, size_t *n)
{
	struct sym_frame sf = { .name = STACK_WAKER_FRAME, .module = "" };

	if (push(b, n, intern_frame(p, &sf, PROF_KIND_USER, PROF_CLASS_WAITING)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < w->nk; i++) {
		if (sym_kernel(sym, w->kips[i], &sf) < 1 || (sf.flags & SYM_FRAME_BPF))
			continue;
		if (push(b, n, intern_frame(p, &sf, PROF_KIND_KERNEL, PROF_CLASS_WAITING)) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < w->nu; i++) {
		int k = sym_user(sym, (pid_t)w->tgid, w->uips[i] - (i > 0 ? 1 : 0),
				 b->scratch, MAX_INLINE);

		for (int j = 0; j < k; j++) {
			const struct sym_frame *f = &b->scratch[j];

			if (push(b, n, intern_frame(p, f, f->inlined ? PROF_KIND_INLINE
							       : PROF_KIND_USER, PROF_CLASS_WAITING)) < 0)
				return -ENOMEM;
		}
	}
	sf = (struct sym_frame){ .name = w->comm && w->comm[0] ? w->comm : "[unknown]", .module = "" };
	return push(b, n, intern_frame(p, &sf, PROF_KIND_USER, PROF_CLASS_WAITING));
}

/* Pushes the process row @comm (@line) onto b->frames. Returns 0 or
 * -ENOMEM. */
static int push_row(struct stack_builder *b, struct prof_profile *p, size_t *n,
		    const char *comm, uint32_t line)
{
	struct row_memo *r = b->cur >= 0 ? &b->rows[b->cur] : NULL;
	size_t len = strlen(comm);

	if (r && r->id && r->epoch == b->epoch && r->line == line && len < sizeof(r->comm) &&
	    !memcmp(r->comm, comm, len + 1))
		return push(b, n, r->id);
	if (push_named(b, p, n, comm, PROF_KIND_PROCESS, line) < 0)
		return -ENOMEM;
	if (r && len < sizeof(r->comm)) {
		*r = (struct row_memo){ .epoch = b->epoch, .line = line, .id = b->frames[*n - 1] };
		memcpy(r->comm, comm, len + 1);
	}
	return 0;
}

/* Symbolizes @in into b->frames; returns how many, or -ENOMEM. */
static long build(struct stack_builder *b, struct sym_ctx *sym,
		  struct prof_profile *p, const struct stack_input *in)
{
	const char *comm = in->comm[0] ? in->comm : "[unknown]";
	size_t n = 0;
	char thread[64];

	b->unstable = false;
	if (push_row(b, p, &n, comm, in->pid_row ? in->tgid : 0) < 0)
		return -ENOMEM;
	if (in->per_thread) {
		snprintf(thread, sizeof(thread), "%s-%u", in->tcomm, in->tid);
		if (push_named(b, p, &n, thread, PROF_KIND_THREAD, 0) < 0)
			return -ENOMEM;
	}
	if (in->lost)
		return push_named(b, p, &n, STACK_LOST_FRAME, PROF_KIND_USER, 0) < 0
			? -ENOMEM : (long)n;
	if (add_user(b, sym, p, in, &n) < 0)
		return -ENOMEM;
	if (in->mark) {
		struct sym_frame sf = { .name = in->mark, .module = "" };

		if (push(b, &n, intern_frame(p, &sf, PROF_KIND_USER, PROF_CLASS_WAITING)) < 0)
			return -ENOMEM;
	}
	if (add_kernel(b, sym, p, in, &n) < 0)
		return -ENOMEM;
	if (in->off_cpu && in->involuntary) {
		struct sym_frame sf = { .name = "[waiting for a CPU]", .module = "" };

		if (push(b, &n, intern_frame(p, &sf, PROF_KIND_KERNEL, PROF_CLASS_WAITING)) < 0)
			return -ENOMEM;
	}
	if (in->waker && add_waker(b, sym, p, in->waker, &n) < 0)
		return -ENOMEM;
	return (long)n;
}

/* Builds @in into @p (profile slot @cur, -1 = none) and adds @value. */
static int add_built(struct stack_builder *b, struct sym_ctx *sym,
		     struct prof_profile *p, int cur, const struct stack_input *in,
		     uint64_t value)
{
	long n;

	b->cur = cur;
	n = build(b, sym, p, in);
	if (n < 0)
		return (int)n;
	if (prof_add_stack(p, b->frames, (size_t)n, value) == UINT32_MAX)
		return -ENOMEM;
	return 0;
}

int stack_builder_add(struct stack_builder *b, struct sym_ctx *sym,
		      struct prof_profile *p, const struct stack_input *in,
		      uint64_t value)
{
	return add_built(b, sym, p, -1, in, value);
}

/* The memo's key of @in, without the addresses. */
static void memo_key(const struct stack_input *in, struct memo *k)
{
	bool thread = in->per_thread;

	memset(k, 0, sizeof(*k));
	k->tgid = in->tgid;
	k->tid = thread ? in->tid : 0;
	k->flags = (uint32_t)in->off_cpu | (uint32_t)in->involuntary << 1 |
		   (uint32_t)thread << 2 | (uint32_t)in->pid_row << 3;
	k->nu = (uint32_t)in->nu;
	k->nk = (uint32_t)in->nk;
	strncpy(k->comm, in->comm, sizeof(k->comm) - 1);
	if (thread)
		strncpy(k->tcomm, in->tcomm, sizeof(k->tcomm) - 1);
	k->hash = ((uint64_t)k->tgid << 32 | k->tid) * 0x9e3779b97f4a7c15ULL ^ k->flags;
	for (size_t i = 0; i < in->nu; i++)
		k->hash = (k->hash ^ in->uips[i]) * 0x100000001b3ULL;
	for (size_t i = 0; i < in->nk; i++)
		k->hash = (k->hash ^ in->kips[i]) * 0x100000001b3ULL;
	k->hash ^= k->hash >> 31;
}

static bool memo_matches(const struct memo *m, const struct memo *k,
			 const struct stack_input *in)
{
	return m->hash == k->hash && m->tgid == k->tgid &&
	       m->tid == k->tid && m->flags == k->flags && m->nu == k->nu &&
	       m->nk == k->nk && memcmp(m->comm, k->comm, sizeof(k->comm)) == 0 &&
	       memcmp(m->tcomm, k->tcomm, sizeof(k->tcomm)) == 0 &&
	       (!in->nu || memcmp(m->ips, in->uips, in->nu * sizeof(uint64_t)) == 0) &&
	       (!in->nk || memcmp(m->ips + in->nu, in->kips, in->nk * sizeof(uint64_t)) == 0);
}

static const uint32_t *memo_frames(const struct memo *m)
{
	return (const uint32_t *)(m->ips + m->nu + m->nk);
}

/* Remembers the stack just built into the dictionary (b->frames, @n) for
 * key @k. Out of memory, it is simply not remembered. */
static void memo_put(struct stack_builder *b, const struct memo *k,
		     const struct stack_input *in, size_t n)
{
	size_t nips = in->nu + in->nk;
	struct memo *m = malloc(sizeof(*m) + nips * sizeof(uint64_t) + n * sizeof(uint32_t));
	struct memo **head = &b->by_tgid[k->tgid % TGID_BUCKETS];

	if (!m)
		return;
	if (b->memo[k->hash % MEMO_SLOTS])
		memo_drop(b, b->memo[k->hash % MEMO_SLOTS]);
	*m = *k;
	m->born = b->epoch;
	m->nframes = (uint32_t)n;
	if (in->nu)
		memcpy(m->ips, in->uips, in->nu * sizeof(uint64_t));
	if (in->nk)
		memcpy(m->ips + in->nu, in->kips, in->nk * sizeof(uint64_t));
	memcpy(m->ips + nips, b->frames, n * sizeof(uint32_t));
	m->tnext = *head;
	if (*head)
		(*head)->tprev = &m->tnext;
	m->tprev = head;
	*head = m;
	b->memo[k->hash % MEMO_SLOTS] = m;
}

/* The target of @p in this epoch, NULL when there is no room for another. */
static struct target *target_of(struct stack_builder *b, const struct prof_profile *p)
{
	for (size_t i = 0; i < b->ntg; i++)
		if (b->tg[i].p == p)
			return &b->tg[i];
	if (b->ntg == MAX_TARGETS)
		return NULL;
	b->tg[b->ntg].p = p;
	return &b->tg[b->ntg++];
}

/* Frame @id of the dictionary as a frame of @p: copied the first time.
 * Returns UINT32_MAX when out of memory. */
static uint32_t to_target(struct stack_builder *b, struct target *t,
			  struct prof_profile *p, uint32_t id)
{
	const struct prof_profile *d = b->dict;

	if (id < t->cap && t->map[id])
		return t->map[id];
	if (!(id < t->cap)) {
		size_t cap = prof_frame_count(d) + 64;
		uint32_t *map = realloc(t->map, cap * sizeof(*map));

		if (!map)
			return UINT32_MAX;
		memset(map + t->cap, 0, (cap - t->cap) * sizeof(*map));
		t->map = map;
		t->cap = cap;
	}
	return t->map[id] = prof_frame_copy(p, d, id);
}

/* Adds @value to the dictionary stack @frames[0..n) in @p. */
static int add_from_dict(struct stack_builder *b, struct target *t,
			 struct prof_profile *p, const uint32_t *frames, size_t n,
			 uint64_t value)
{
	for (size_t i = 0; i < n; i++) {
		b->path[i] = to_target(b, t, p, frames[i]);
		if (b->path[i] == UINT32_MAX)
			return -ENOMEM;
	}
	return prof_add_stack(p, b->path, n, value) == UINT32_MAX ? -ENOMEM : 0;
}

/* The dictionary, started over when it grew past its bound (every
 * remembered stack and copied frame then goes). NULL on ENOMEM. */
static struct prof_profile *dict(struct stack_builder *b)
{
	if (b->dict && prof_frame_count(b->dict) > DICT_MAX_FRAMES)
		stack_builder_forget(b);
	if (!b->dict)
		b->dict = prof_new(PROF_UNIT_SAMPLES);
	return b->dict;
}

int stack_builder_add_memo(struct stack_builder *b, struct sym_ctx *sym,
			   struct prof_profile *p, const struct stack_input *in,
			   uint64_t value)
{
	struct target *t;
	struct memo k;
	const struct memo *m;
	long n;

	/* (Python frames, marks, wakers and losses are not part of the memo's key.) */
	if (in->py || in->mark || in->lost || in->waker || !dict(b) ||
	    !(t = target_of(b, p)))
		return stack_builder_add(b, sym, p, in, value);
	memo_key(in, &k);
	m = b->memo[k.hash % MEMO_SLOTS];
	if (m && b->epoch - m->born < STACK_MEMO_MAX_AGE && memo_matches(m, &k, in))
		return add_from_dict(b, t, p, memo_frames(m), m->nframes, value);
	/* First sight, or a stack that named a frame that may change
	 * (marked ~hash): built straight into @p. */
	if (b->seen[k.hash % SEEN_SLOTS] != k.hash) {
		if (b->seen[k.hash % SEEN_SLOTS] != ~k.hash)
			b->seen[k.hash % SEEN_SLOTS] = k.hash;
		return add_built(b, sym, p, (int)(t - b->tg), in, value);
	}
	b->cur = MAX_TARGETS; /* the dictionary */
	n = build(b, sym, b->dict, in);
	if (n < 0)
		return (int)n;
	if (b->unstable)
		b->seen[k.hash % SEEN_SLOTS] = ~k.hash;
	else
		memo_put(b, &k, in, (size_t)n);
	return add_from_dict(b, t, p, b->frames, (size_t)n, value);
}
