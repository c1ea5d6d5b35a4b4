/* SPDX-License-Identifier: MIT */
/*
 * profile: the data model every part of hearth shares.
 *
 * A profile owns three tables:
 *   - strings: interned, id 0 is the empty string;
 *   - frames:  interned (name, module, file, line, kind, class, lang);
 *   - a call tree: node 0 is the invisible root; each node holds one frame,
 *     a total (itself plus everything below) and a self value.
 *
 * Stacks are added root first. Values are in the profile's unit (samples,
 * nanoseconds or bytes). Nothing here prints, allocates globals or knows
 * about BPF, SDL or /proc.
 */
#ifndef HEARTH_PROFILE_H
#define HEARTH_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum prof_unit {
	PROF_UNIT_SAMPLES = 0,
	PROF_UNIT_NANOSECONDS = 1,
	PROF_UNIT_BYTES = 2,
};

enum prof_frame_kind {
	PROF_KIND_USER = 0,   /* a user-space function */
	PROF_KIND_KERNEL = 1, /* a kernel function, folded as name_[k] */
	PROF_KIND_INLINE = 2, /* a user function inlined into its caller, _[i] */
	PROF_KIND_PROCESS = 3,/* the per-process root row (comm) */
	PROF_KIND_THREAD = 4, /* a per-thread row (name and tid) */
	/* A pprof sample's numeric label, a row after the process and
	 * thread rows: name the key, file the value in decimal, module the
	 * unit. Only in the profiles export --pprof re-writes
	 * (prof_pprof_decode_all()), so a label survives a re-export. */
	PROF_KIND_LABEL = 5,
};

/* Ownership classes, the viewer's colours (SPEC.md). */
enum prof_class {
	PROF_CLASS_UNKNOWN = 0,
	PROF_CLASS_YOURS = 1,   /* orange */
	PROF_CLASS_LIBRARY = 2, /* blue */
	PROF_CLASS_RUNTIME = 3, /* violet */
	PROF_CLASS_SYSTEM = 4,  /* grey */
	PROF_CLASS_WAITING = 5, /* pale grey */
	PROF_CLASS_COUNT
};

enum prof_lang {
	PROF_LANG_UNKNOWN = 0,
	PROF_LANG_C,
	PROF_LANG_CPP,
	PROF_LANG_RUST,
	PROF_LANG_GO,
	PROF_LANG_ASM,
	PROF_LANG_JIT,
	PROF_LANG_PYTHON,
	PROF_LANG_COUNT
};

/* One frame; string fields are ids in the profile's string table. */
struct prof_frame {
	uint32_t name;
	uint32_t module; /* 0 = unknown */
	uint32_t file;   /* 0 = unknown */
	uint32_t line;   /* 0 = unknown */
	uint8_t kind;    /* enum prof_frame_kind */
	uint8_t cls;     /* enum prof_class */
	uint8_t lang;    /* enum prof_lang */
	uint8_t pad;
};

struct prof_node {
	uint32_t frame;   /* index in the frame table; root: 0 */
	uint32_t parent;  /* root's parent is 0 */
	uint32_t child;   /* first child, 0 = none */
	uint32_t sibling; /* next sibling, 0 = none */
	uint64_t total;
	uint64_t self;
};

/* The question a profile answers, which words its answer (the viewer's
 * sentence, pprof's sample type). */
enum prof_question {
	PROF_Q_USUAL = 0,   /* on-CPU samples, or waits when off_cpu is set */
	PROF_Q_WALL = 1,    /* elapsed time, running and waiting, in ns */
	PROF_Q_THREADS = 2, /* each thread's interval, the same width each */
	PROF_Q_LOCKS = 3,   /* time waiting on locks and conditions, in ns */
	PROF_Q_ALLOC = 4,   /* bytes allocated, by where they were */
	PROF_Q_HELD = 5,    /* bytes allocated and not freed at the end */
	PROF_Q_GROWTH = 6,  /* requests to the kernel for more memory */
};

/* Metadata a profile carries beside its tree. */
struct prof_meta {
	enum prof_unit unit;
	uint64_t start_ns;    /* wall clock (CLOCK_REALTIME) of the first sample */
	uint64_t duration_ns; /* length of the capture, 0 = unknown */
	uint32_t hz;          /* on-CPU sampling frequency, 0 = not sampled */
	uint32_t off_cpu;     /* 1 when values are blocked time */
	uint64_t drops;       /* samples the sampler lost, all causes */
	uint64_t negative;    /* samples read but left out: a negative value */
	uint32_t question;    /* enum prof_question */
	/* The pprof sample type read, when it is none of hearth's own
	 * ("inuse_space", "alloc_objects"); written back under that name.
	 * "" otherwise. */
	char sample_type[32];
	/* A pprof file's period when it is not the sampling rate (hz): a Go
	 * heap profile's space/bytes 524288, one sample every so many bytes;
	 * written back as read. "", "" and 0 otherwise. */
	char period_type[32];
	char period_unit[32];
	uint64_t period;
};

struct prof_profile;

/* Returns a new empty profile in @unit, or NULL when out of memory.
 * Free with prof_free(). */
struct prof_profile *prof_new(enum prof_unit unit);

/* Frees @p and everything it owns. Accepts NULL. */
void prof_free(struct prof_profile *p);

/* The profile's metadata, writable by the owner. Never NULL. */
struct prof_meta *prof_meta(struct prof_profile *p);
const struct prof_meta *prof_meta_const(const struct prof_profile *p);

/* Interns @len bytes of @s (need not be NUL-terminated). Returns the string
 * id (> 0 for non-empty strings, 0 for the empty string), or UINT32_MAX when
 * out of memory. */
uint32_t prof_intern(struct prof_profile *p, const char *s, size_t len);

/* Same as prof_intern() for a NUL-terminated string; NULL interns as 0. */
uint32_t prof_intern_cstr(struct prof_profile *p, const char *s);

/* Returns the NUL-terminated string with id @id, owned by @p; "" for 0 or an
 * unknown id. Valid until @p is freed. */
const char *prof_str(const struct prof_profile *p, uint32_t id);

/* Length in bytes of string @id (which may hold NUL bytes when it was
 * interned with them); 0 for 0 or an unknown id. */
size_t prof_str_len(const struct prof_profile *p, uint32_t id);

/* Number of strings interned, including the empty string. */
uint32_t prof_str_count(const struct prof_profile *p);

/* Interns a frame. Two frames are the same when every field is equal.
 * Returns the frame id (>= 1; frame 0 is the root's), UINT32_MAX on ENOMEM. */
uint32_t prof_frame_intern(struct prof_profile *p, const struct prof_frame *f);

/* Returns the frame with id @id, or NULL when out of range. */
const struct prof_frame *prof_frame_get(const struct prof_profile *p,
					uint32_t id);

/* Number of frames, including frame 0. */
uint32_t prof_frame_count(const struct prof_profile *p);

/* Re-interns frame @frame of @src into @dst (strings, frame, and its
 * place when it has one; @src and @dst differ). Returns the frame's id
 * in @dst, UINT32_MAX on ENOMEM or an unknown @frame. */
uint32_t prof_frame_copy(struct prof_profile *dst,
			 const struct prof_profile *src, uint32_t frame);

/* Where code was seen: a file mapped into a process, as pprof's Mapping
 * says it, so that other tools can find the file and its symbols again. */
struct prof_mapping {
	uint64_t start;    /* the first address of the mapping */
	uint64_t limit;    /* the address past its end */
	uint64_t offset;   /* the file offset mapped at start */
	uint32_t file;     /* string id: the file's path as the process saw it */
	uint32_t build_id; /* string id: its GNU build-id in hex; 0 = none */
};

/* Interns mapping @m (two are the same when every field is equal).
 * Returns its id (>= 1), or UINT32_MAX on ENOMEM or an unknown string. */
uint32_t prof_mapping_intern(struct prof_profile *p,
			     const struct prof_mapping *m);

/* Returns the mapping with id @id, NULL for 0 or an unknown id. */
const struct prof_mapping *prof_mapping_get(const struct prof_profile *p,
					    uint32_t id);

/* Number of mappings, including the unused id 0. */
uint32_t prof_mapping_count(const struct prof_profile *p);

/* Records that frame @frame was seen at address @addr of mapping
 * @mapping. A frame has one place, the first one given (a frame at one
 * line may run at several addresses; any of them names it). Places are
 * not part of a frame's identity. Returns 0, -EINVAL for an unknown frame
 * or mapping, or -ENOMEM. */
int prof_frame_place(struct prof_profile *p, uint32_t frame,
		     uint32_t mapping, uint64_t addr);

/* The address of frame @frame's place, with its mapping in *@mapping
 * (may be NULL); 0 and mapping 0 when it has none. */
uint64_t prof_frame_addr(const struct prof_profile *p, uint32_t frame,
			 uint32_t *mapping);

/* Gives frame @frame of @dst the place of frame @src_frame of @src, when
 * that has one (its mapping is re-interned into @dst). 0 or -ENOMEM. */
int prof_frame_place_as(struct prof_profile *dst, uint32_t frame,
			const struct prof_profile *src, uint32_t src_frame);

/* Adds @value to the stack @frames[0..n) (root first, leaf last): every node
 * on the path gains @value in total, the leaf gains it in self. Returns the
 * leaf node's id, 0 when n == 0 (value goes to the root's self), or
 * UINT32_MAX when out of memory or when a frame id is 0 or unknown (the
 * profile is unchanged then). Totals saturate at UINT64_MAX. */
uint32_t prof_add_stack(struct prof_profile *p, const uint32_t *frames,
			size_t n, uint64_t value);

/* Returns the node with id @id (0 = root), NULL when out of range. Node
 * pointers are invalidated by prof_add_stack(). */
const struct prof_node *prof_node_get(const struct prof_profile *p,
				      uint32_t id);

/* Number of nodes, including the root. */
uint32_t prof_node_count(const struct prof_profile *p);

/* Bytes @p holds from the heap: its arrays and tables at their capacity
 * and its strings' chunks (what a bound on a long-lived profile counts). */
size_t prof_memory(const struct prof_profile *p);

/* The nodes as one array: node i is at [i], for i < prof_node_count().
 * For walks over every node (the same as prof_node_get() of each, without
 * a call per node). Invalidated by prof_add_stack() like node pointers. */
const struct prof_node *prof_nodes(const struct prof_profile *p);

/* 1 when the node ids follow the preorder of the current sibling order
 * (a bulk-loaded profile after prof_sort()): node i's subtree is then
 * i, i + 1, ... and every parent id is below its children's. Else 0. */
int prof_ids_preorder(const struct prof_profile *p);

/* Total of the whole profile (the root's total). */
uint64_t prof_total(const struct prof_profile *p);

/* Returns the child of @parent holding frame @frame, or 0 when none. */
uint32_t prof_child_find(const struct prof_profile *p, uint32_t parent,
			 uint32_t frame);

/* Returns the child of @parent holding frame @frame, appending a new one
 * with zero values when none exists. A node's parent always has a smaller
 * id than the node. Returns UINT32_MAX when out of memory or when @parent
 * or @frame (which must be >= 1) is unknown. */
uint32_t prof_child_get(struct prof_profile *p, uint32_t parent,
			uint32_t frame);

/* Appends a new child of @parent holding @frame without looking for an
 * existing one: the caller guarantees @parent has no child with @frame
 * (as when copying or merging whole trees). Much faster than
 * prof_child_get() for building big trees: the lookup index is brought up
 * to date only when a later prof_add_stack() or prof_child_get() needs it.
 * Returns the new node's id, or UINT32_MAX when out of memory or for
 * unknown ids. */
uint32_t prof_child_append(struct prof_profile *p, uint32_t parent,
			   uint32_t frame);

/* Adds @total to node @node's total and @self to its self, without
 * touching its ancestors (the caller keeps the tree consistent, as a
 * node-by-node copy does). Values saturate. Returns 0, or -EINVAL for an
 * unknown node. */
int prof_node_add(struct prof_profile *p, uint32_t node, uint64_t total,
		  uint64_t self);

/* Reorders every sibling list by frame name (bytewise), then by the other
 * frame fields, so equal names sit together and output is deterministic.
 * Names compare as spelled in folded text (kernel frames with "_[k]", each
 * followed by ';'), so folded output comes out in LC_ALL=C sort order.
 * Called by the writers; cheap when already sorted. Returns 0 or -ENOMEM. */
int prof_sort(struct prof_profile *p);

/* Adds every stack of @src into @dst (strings and frames are re-interned;
 * units must match; @src and @dst are different profiles). Metadata:
 * durations add, drops add, start is the earlier. Returns 0, -EINVAL on
 * unit mismatch or @src == @dst, -ENOMEM (then @dst may hold part of
 * @src). */
int prof_merge(struct prof_profile *dst, const struct prof_profile *src);

/* The value a stack of @src adds to another profile: computed from its
 * own @value (0 leaves the stack out). */
typedef uint64_t (*prof_value_fn)(const struct prof_profile *src,
				  const uint32_t *frames, size_t n,
				  uint64_t value, void *arg);

/* Adds every stack of @src into @dst with the value @fn returns for it
 * (stacks for which it returns 0 are left out), whatever the units: the
 * caller converts (on-CPU samples to nanoseconds, say). Metadata is left
 * alone. Returns 0, -EINVAL when @src is @dst, -ENOMEM (then @dst may
 * hold part of @src). */
int prof_merge_mapped(struct prof_profile *dst, const struct prof_profile *src,
		      prof_value_fn fn, void *arg);

/* Calls @fn for every node with self > 0, depth first in sibling order, with
 * the path of frame ids from the top-level node to it (the root's own self,
 * if any, comes first with n == 0). Stops and returns the first non-zero
 * value @fn returns; 0 when every call returned 0; -ENOMEM when the path
 * buffer could not grow. */
typedef int (*prof_stack_fn)(const struct prof_profile *p,
			     const uint32_t *frames, size_t n, uint64_t value,
			     void *arg);
int prof_walk_stacks(const struct prof_profile *p, prof_stack_fn fn,
		     void *arg);

#endif /* HEARTH_PROFILE_H */
