/* SPDX-License-Identifier: MIT */
/*
 * control_proto: the control socket's wire format, shared by hearthd and
 * the hearth command. Pure encoding and decoding; no I/O, no printing.
 *
 * Every message is a 12-byte header and a payload, little-endian:
 *   u32 magic "HRTH", u16 version (1), u16 type, u32 payload length.
 * Requests are at most CTL_REQ_MAX payload bytes and must be exactly as
 * long as their fields say. A reply's type is the request's type with
 * CTL_REPLY set, or CTL_ERROR (payload: u32 errno, u16 length, message).
 *
 * Request payloads:
 *   STATUS, MARKS: empty.
 *   SNAPSHOT: u64 since, u64 until, u64 last, u64 next (ns; exactly one of
 *     last, next, or since[/until] is used), u32 flags, u32 npids,
 *     npids x u32 pid, u8 comm length, comm bytes; with ALLOC or HELD,
 *     then u64 sample bytes (0 = the default).
 *   MARK: u64 at (ns, 0 = now), u8 name length, name bytes.
 * Reply payloads:
 *   STATUS: u32 count, count x u64 (struct ctl_status in field order;
 *     readers accept more fields than they know, and fewer, down to
 *     CTL_STATUS_FIELDS_MIN: the missing ones read as 0).
 *   SNAPSHOT: u64 from, u64 to, u32 windows, u32 corrupt, u32 torn,
 *     u32 flags, u32 blob length, blob (store_codec profile; a memory
 *     question's second values beside, store_codec_pair_pack()).
 *   MARK: u64 at.
 *   MARKS: u32 count, count x (u64 at, u8 length, name), then, only when
 *     some marks could not be read (damaged on disk), u32 their count.
 */
#ifndef HEARTH_CONTROL_PROTO_H
#define HEARTH_CONTROL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_MAGIC 0x48545248u /* "HRTH" */
#define CTL_VERSION 1u
#define CTL_HDR_SIZE 12u
#define CTL_REQ_MAX 1024u
#define CTL_REPLY_MAX (256u << 20)
#define CTL_PIDS_MAX 64u
#define CTL_COMM_MAX 15u
#define CTL_NAME_MAX 63u
#define CTL_ERRMSG_MAX 512u
#define CTL_MARKS_MAX 100000u
#define CTL_SAMPLE_BYTES_MAX (1ull << 40)
/* The longest snapshot of the next seconds: a request holds a client slot
 * that long. */
#define CTL_NEXT_MAX_NS (600ull * 1000000000ull)

enum ctl_type {
	CTL_STATUS = 1,
	CTL_SNAPSHOT = 2,
	CTL_MARK = 3,
	CTL_MARKS = 4,
	CTL_REPLY = 0x8000,
	CTL_ERROR = 0xffff,
};

/* What a snapshot is of: on-CPU samples when none of these is set, and
 * never more than one of them. */
enum ctl_snap_flags {
	CTL_SNAP_OFFCPU = 1u << 0,
	CTL_SNAP_WALL = 1u << 1,  /* elapsed time: samples and waits, in ns */
	CTL_SNAP_LOCKS = 1u << 2, /* the waits on locks and conditions */
	CTL_SNAP_GROWTH = 1u << 3, /* requests for more memory, bytes beside */
	/* Not from the store: hearthd probes the chosen pids' allocator for
	 * the next seconds (next only, at least one pid). */
	CTL_SNAP_ALLOC = 1u << 4,  /* bytes allocated, objects beside */
	CTL_SNAP_HELD = 1u << 5,   /* bytes still held at the end, objects beside */
	/* Each thread's elapsed time (ns), one row the same width each;
	 * threads asleep the whole time found as the request arrives. */
	CTL_SNAP_THREADS = 1u << 6,
	/* Beside OFFCPU, WALL or LOCKS, not a kind of its own: each wait
	 * with the stacks of the task that woke it above a frame "--".
	 * Not from the store either: hearthd notes wake-ups for the next
	 * seconds only (next only). */
	CTL_SNAP_WAKER = 1u << 7,
	CTL_SNAP_KNOWN = CTL_SNAP_OFFCPU | CTL_SNAP_WALL | CTL_SNAP_LOCKS | CTL_SNAP_GROWTH |
			 CTL_SNAP_ALLOC | CTL_SNAP_HELD | CTL_SNAP_THREADS | CTL_SNAP_WAKER,
	CTL_SNAP_PROBES = CTL_SNAP_ALLOC | CTL_SNAP_HELD,
	CTL_SNAP_WAITS = CTL_SNAP_OFFCPU | CTL_SNAP_WALL | CTL_SNAP_LOCKS, /* what WAKER takes */
	/* Answered by an on-demand session of the next seconds. */
	CTL_SNAP_SESSIONS = CTL_SNAP_PROBES | CTL_SNAP_WAKER,
};

struct ctl_hdr {
	uint16_t version;
	uint16_t type;
	uint32_t len;
};

struct ctl_snapshot_req {
	uint64_t since_ns;
	uint64_t until_ns;  /* 0 = now */
	uint64_t last_ns;
	uint64_t next_ns;
	uint32_t flags;
	uint32_t npids;
	uint32_t pids[CTL_PIDS_MAX];
	char comm[CTL_COMM_MAX + 1];
	uint64_t sample_bytes; /* ALLOC, HELD: mean bytes between samples,
				* 0 = default */
};

struct ctl_request {
	uint16_t type;
	union {
		struct ctl_snapshot_req snap;
		struct {
			uint64_t at_ns;
			char name[CTL_NAME_MAX + 1];
		} mark;
	} u;
};

/* The status reply, every field a u64 on the wire in this order. */
struct ctl_status {
	uint64_t pid;
	uint64_t uptime_ns;
	uint64_t window_ns;
	uint64_t windows;          /* stored */
	uint64_t store_bytes;
	uint64_t segments;
	uint64_t samples;          /* since start */
	uint64_t idle_samples;
	uint64_t offcpu_ns;
	uint64_t drops;
	uint64_t cpu_ns;           /* hearthd's user + sys since start */
	uint64_t cpu_pct_milli;    /* of one core, over the last window, x1000 */
	uint64_t rss_bytes;
	uint64_t last_window_end_ns;
	uint64_t windows_skipped;  /* lost: not written, not held in memory */
	uint64_t store_error;      /* errno of the last failed write, 0 = none */
	uint64_t retention_bytes;
	uint64_t retention_age_ns;
	uint64_t clients;
	uint64_t bpf_run_ns;
	uint64_t bpf_run_cnt;
	/* Fields added later: a reply without them reads them as 0. */
	uint64_t sym_modules;      /* modules the symbolizer holds */
	uint64_t sym_module_bytes; /* memory they take */
	uint64_t sym_module_limit; /* its budget (least recently used evicted past it) */
	uint64_t sym_evictions;    /* modules evicted to stay within it */
	uint64_t windows_held;     /* in memory while the store cannot write */
	/* Push (agent/push.h); all 0 when push is off. */
	uint64_t push_on;          /* 1: push_url is set */
	uint64_t push_windows;     /* windows the backend took whole */
	uint64_t push_requests;
	uint64_t push_bytes;
	uint64_t push_rejected;    /* parts skipped on a 4xx answer */
	uint64_t push_retries;
	uint64_t push_lag_ns;
	uint64_t push_pending;     /* windows waiting (about) */
	uint64_t push_last_err;    /* enum push_err of the last failure */
	uint64_t push_last_status; /* its HTTP status, 0 = none */
	uint64_t push_last_err_ns; /* CLOCK_REALTIME, 0 = never */
	/* The user-stack unwinder (fields added later still). */
	uint64_t unwind_mode;      /* enum sampler_unwind + 1; 0 = not sent */
	uint64_t cfi_walks;        /* user stacks walked in the kernel */
	uint64_t cfi_fallbacks;    /* walks that fell back to a copy */
	uint64_t cfi_no_table;     /* of which: tables not loaded yet */
	uint64_t stack_copies;     /* stacks copied and unwound in user space */
	uint64_t copy_fallbacks;   /* copies wanted but over budget or ring
				    * full: frame pointers used */
	uint64_t waits_reused;     /* waits that reused their last stack ids */
	uint64_t cfi_processes;    /* processes with tables loaded */
	uint64_t cfi_modules;      /* modules with rows loaded */
	uint64_t cfi_bytes;        /* kernel memory the tables use */
	uint64_t cfi_pool_bytes;   /* and may use (unwind_memory) */
	uint64_t oncpu_run_ns;     /* BPF run time per program, when */
	uint64_t oncpu_run_cnt;    /* kernel.bpf_stats_enabled is 1 */
	uint64_t offcpu_run_ns;
	uint64_t offcpu_run_cnt;
	/* Drops by cause (agent/drops.h: enum drop_cause's order), since
	 * start and in the last window; a hearthd older than these fields
	 * sends none (stack_map_size 0). */
	uint64_t drop_collisions;  /* kept as lost: a slot held another stack */
	uint64_t drop_stack_full;  /* kept as lost: the stack map was full */
	uint64_t drop_map_full;    /* the aggregation map was full */
	uint64_t drop_ring_full;   /* events lost, copies not made */
	uint64_t drop_copy_budget; /* waits over the copy budget: FP walk */
	uint64_t drop_unnamed;     /* process gone before its mappings were read */
	uint64_t window_drop_collisions;
	uint64_t window_drop_stack_full;
	uint64_t window_drop_map_full;
	uint64_t window_drop_ring_full;
	uint64_t window_drop_copy_budget;
	uint64_t window_drop_unnamed;
	uint64_t drop_unkept;      /* of drop_map_full: in no profile at all */
	uint64_t drop_events;      /* of drop_ring_full: process events */
	uint64_t stack_map_size;   /* the setting, as loaded */
	uint64_t window_drops;     /* drops (as drops counts them) in the
				    * last window */
	/* Drop causes added later (a field each, since start and in the
	 * last window; see ctl_status_drop()). */
	uint64_t drop_growth_ring; /* requests for more memory lost: ring full */
	uint64_t window_drop_growth_ring;
};
#define CTL_STATUS_FIELDS (sizeof(struct ctl_status) / sizeof(uint64_t))
/* The fields of the first status reply (up to bpf_run_cnt): the least a
 * reply may carry. */
#define CTL_STATUS_FIELDS_MIN 21u

/* The drop causes a status reply carries (agent/drops.h's enum
 * drop_cause, in its order). */
#define CTL_DROP_CAUSES 7u

/* Cause @cause's drops in @st: since start, or in the last window when
 * @window. 0 for a cause past CTL_DROP_CAUSES. */
uint64_t ctl_status_drop(const struct ctl_status *st, unsigned cause, bool window);

/* Sets cause @cause's drops in @st to @v (since start, or in the last
 * window when @window); a cause past CTL_DROP_CAUSES is ignored. */
void ctl_status_set_drop(struct ctl_status *st, unsigned cause, bool window, uint64_t v);

struct ctl_snapshot_reply {
	uint64_t from_ns;
	uint64_t to_ns;
	uint32_t windows;
	uint32_t corrupt;
	uint32_t torn;
	uint32_t flags;
	const uint8_t *blob;   /* points into the decoded buffer */
	uint32_t blob_len;
};

struct ctl_mark {
	uint64_t at_ns;
	char name[CTL_NAME_MAX + 1];
};

/* Writes a header into @b. */
void ctl_hdr_put(uint8_t b[CTL_HDR_SIZE], uint16_t type, uint32_t len);

/* Decodes a header. @max is the largest payload the reader accepts.
 * Returns 0, -EPROTO (bad magic), -EPROTONOSUPPORT (other version) or
 * -EMSGSIZE (longer than @max). */
int ctl_hdr_get(const uint8_t b[CTL_HDR_SIZE], uint32_t max, struct ctl_hdr *h);

/* Validates and decodes a request payload of type @type. Returns 0, or
 * -EINVAL / -EBADMSG with a static reason in *@why (unknown type, wrong
 * length, bad field). */
int ctl_request_decode(uint16_t type, const uint8_t *p, size_t len,
		       struct ctl_request *req, const char **why);

/* Encodes @req (header and payload) into @b of @cap bytes. Returns the
 * length, or -EINVAL when a field is out of range, -ENOSPC when @cap is
 * too small. */
int ctl_request_encode(const struct ctl_request *req, uint8_t *b, size_t cap);

/* Reply builders: each returns a new buffer (header + payload, free()) and
 * its length in *@len, or NULL when out of memory. */
uint8_t *ctl_reply_error(int err, const char *msg, size_t *len);
uint8_t *ctl_reply_status(const struct ctl_status *st, size_t *len);
uint8_t *ctl_reply_snapshot(const struct ctl_snapshot_reply *r, size_t *len);
uint8_t *ctl_reply_mark(uint64_t at_ns, size_t *len);
uint8_t *ctl_reply_marks(const struct ctl_mark *m, size_t n, uint32_t damaged,
			 size_t *len);

/* Reply decoders, for the payload of a reply whose header was checked.
 * Each returns 0 or -EBADMSG. */
int ctl_decode_error(const uint8_t *p, size_t len, int *err, char *msg,
		     size_t msglen);
int ctl_decode_status(const uint8_t *p, size_t len, struct ctl_status *st);
int ctl_decode_snapshot(const uint8_t *p, size_t len,
			struct ctl_snapshot_reply *r);
int ctl_decode_mark(const uint8_t *p, size_t len, uint64_t *at_ns);
/* Marks: *@out is a new array (free()), NULL when @n is 0; *@damaged the
 * marks hearthd could not read. -ENOMEM too. */
int ctl_decode_marks(const uint8_t *p, size_t len, struct ctl_mark **out,
		     size_t *n, uint32_t *damaged);

#endif /* HEARTH_CONTROL_PROTO_H */
