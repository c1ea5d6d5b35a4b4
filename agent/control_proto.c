/* SPDX-License-Identifier: MIT */
/* control_proto: bounded, validated encoding of control requests/replies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/control_proto.h"
#include "agent/store_endian.h"

#define PID_LIMIT 4194304u                 /* the kernel's PID_MAX_LIMIT */
#define NS_DAY (86400ull * 1000000000ull)
#define LAST_MAX (3660ull * NS_DAY)        /* --last looks back 10 years */

void ctl_hdr_put(uint8_t b[CTL_HDR_SIZE], uint16_t type, uint32_t len)
{
	le32_put(b, CTL_MAGIC);
	le16_put(b + 4, CTL_VERSION);
	le16_put(b + 6, type);
	le32_put(b + 8, len);
}

int ctl_hdr_get(const uint8_t b[CTL_HDR_SIZE], uint32_t max, struct ctl_hdr *h)
{
	if (le32_get(b) != CTL_MAGIC)
		return -EPROTO;
	h->version = le16_get(b + 4);
	h->type = le16_get(b + 6);
	h->len = le32_get(b + 8);
	if (h->version != CTL_VERSION)
		return -EPROTONOSUPPORT;
	if (h->len > max)
		return -EMSGSIZE;
	return 0;
}

static bool name_valid(const uint8_t *s, size_t len)
{
	if (len == 0 || len > CTL_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
		      c == '@' || c == '+' || c == '-'))
			return false;
	}
	return true;
}

static bool comm_valid(const uint8_t *s, size_t len)
{
	if (len > CTL_COMM_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

static int snap_mode_check(const struct ctl_snapshot_req *r, const char **why)
{
	uint32_t kind = r->flags & ~(uint32_t)CTL_SNAP_WAKER;
	int modes = (r->last_ns > 0) + (r->next_ns > 0) +
		    (r->since_ns > 0 || r->until_ns > 0);

	if (modes != 1)
		return *why = "a snapshot needs exactly one of last, next, or since/until", -EINVAL;
	if (r->next_ns > CTL_NEXT_MAX_NS)
		return *why = "a snapshot waits for the next 10 minutes at most", -EINVAL;
	if (r->last_ns > LAST_MAX)
		return *why = "the snapshot's time span is out of range", -EINVAL;
	if (r->until_ns && !(r->since_ns < r->until_ns))
		return *why = "since must be earlier than until", -EINVAL;
	if (r->flags & ~(uint32_t)CTL_SNAP_KNOWN)
		return *why = "unknown snapshot flags", -EINVAL;
	if (kind & (kind - 1))
		return *why = "a snapshot is of one kind: off-CPU, wall, locks, growth, alloc or held", -EINVAL;
	if ((r->flags & CTL_SNAP_WAKER) && (!(kind & CTL_SNAP_WAITS) || !r->next_ns))
		return *why = "a waker snapshot is of the next seconds' off-CPU, wall or lock waits", -EINVAL;
	if ((r->flags & CTL_SNAP_PROBES) && (!r->next_ns || !r->npids || r->comm[0]))
		return *why = "an allocation snapshot is of the next seconds of chosen pids", -EINVAL;
	if (r->sample_bytes > CTL_SAMPLE_BYTES_MAX)
		return *why = "the mean bytes between samples is out of range", -EINVAL;
	return 0;
}

static int decode_snapshot(const uint8_t *p, size_t len,
			   struct ctl_snapshot_req *r, const char **why)
{
	size_t need = 40, clen, extra;

	if (len < need)
		return *why = "the snapshot request is truncated", -EBADMSG;
	r->since_ns = le64_get(p);
	r->until_ns = le64_get(p + 8);
	r->last_ns = le64_get(p + 16);
	r->next_ns = le64_get(p + 24);
	r->flags = le32_get(p + 32);
	r->npids = le32_get(p + 36);
	if (r->npids > CTL_PIDS_MAX)
		return *why = "too many pids in the snapshot request", -EINVAL;
	need += 4 * (size_t)r->npids + 1;
	if (len < need)
		return *why = "the snapshot request is truncated", -EBADMSG;
	for (uint32_t i = 0; i < r->npids; i++) {
		r->pids[i] = le32_get(p + 40 + 4 * i);
		if (r->pids[i] == 0 || r->pids[i] > PID_LIMIT)
			return *why = "a pid is out of range", -EINVAL;
	}
	clen = p[need - 1];
	extra = r->flags & CTL_SNAP_PROBES ? 8 : 0;
	if (len == need + clen + extra && extra)
		r->sample_bytes = le64_get(p + need + clen);
	if (len != need + clen + extra)
		return *why = "the snapshot request's length does not match its fields", -EBADMSG;
	if (!comm_valid(p + need, clen))
		return *why = "the process name is not 1-15 printable characters", -EINVAL;
	memcpy(r->comm, p + need, clen);
	r->comm[clen] = 0;
	return snap_mode_check(r, why);
}

int ctl_request_decode(uint16_t type, const uint8_t *p, size_t len,
		       struct ctl_request *req, const char **why)
{
	memset(req, 0, sizeof(*req));
	req->type = type;
	*why = NULL;
	if (len > CTL_REQ_MAX)
		return *why = "the request is too large", -EBADMSG;
	switch (type) {
	case CTL_STATUS:
	case CTL_MARKS:
		if (len != 0)
			return *why = "this request takes no payload", -EBADMSG;
		return 0;
	case CTL_SNAPSHOT:
		return decode_snapshot(p, len, &req->u.snap, why);
	case CTL_MARK:
		if (len < 9 || len != 9 + (size_t)p[8])
			return *why = "the mark request's length does not match its fields", -EBADMSG;
		if (!name_valid(p + 9, p[8]))
			return *why = "a mark name is 1-63 characters of A-Z a-z 0-9 . _ : @ + -", -EINVAL;
		req->u.mark.at_ns = le64_get(p);
		memcpy(req->u.mark.name, p + 9, p[8]);
		req->u.mark.name[p[8]] = 0;
		return 0;
	default:
		return *why = "unknown request type", -EINVAL;
	}
}

int ctl_request_encode(const struct ctl_request *req, uint8_t *b, size_t cap)
{
	uint8_t *p = b + CTL_HDR_SIZE;
	size_t len = 0, n;

	if (cap < CTL_HDR_SIZE + CTL_REQ_MAX)
		return -ENOSPC;
	switch (req->type) {
	case CTL_STATUS:
	case CTL_MARKS:
		break;
	case CTL_SNAPSHOT: {
		const struct ctl_snapshot_req *r = &req->u.snap;

		n = strnlen(r->comm, sizeof(r->comm));
		if (r->npids > CTL_PIDS_MAX || n > CTL_COMM_MAX)
			return -EINVAL;
		le64_put(p, r->since_ns);
		le64_put(p + 8, r->until_ns);
		le64_put(p + 16, r->last_ns);
		le64_put(p + 24, r->next_ns);
		le32_put(p + 32, r->flags);
		le32_put(p + 36, r->npids);
		len = 40;
		for (uint32_t i = 0; i < r->npids; i++, len += 4)
			le32_put(p + len, r->pids[i]);
		p[len++] = (uint8_t)n;
		memcpy(p + len, r->comm, n);
		len += n;
		if (r->flags & CTL_SNAP_PROBES) {
			le64_put(p + len, r->sample_bytes);
			len += 8;
		}
		break;
	}
	case CTL_MARK:
		n = strnlen(req->u.mark.name, sizeof(req->u.mark.name));
		if (n > CTL_NAME_MAX)
			return -EINVAL;
		le64_put(p, req->u.mark.at_ns);
		p[8] = (uint8_t)n;
		memcpy(p + 9, req->u.mark.name, n);
		len = 9 + n;
		break;
	default:
		return -EINVAL;
	}
	ctl_hdr_put(b, req->type, (uint32_t)len);
	return (int)(CTL_HDR_SIZE + len);
}

/* ---- replies ----------------------------------------------------------- */

static uint8_t *reply_new(uint16_t type, size_t payload, size_t *len)
{
	uint8_t *b;

	if (payload > CTL_REPLY_MAX)
		return NULL;
	b = calloc(1, CTL_HDR_SIZE + payload);
	if (!b)
		return NULL;
	ctl_hdr_put(b, type, (uint32_t)payload);
	*len = CTL_HDR_SIZE + payload;
	return b;
}

uint8_t *ctl_reply_error(int err, const char *msg, size_t *len)
{
	size_t n = strnlen(msg, CTL_ERRMSG_MAX);
	uint8_t *b = reply_new(CTL_ERROR, 6 + n, len);

	if (!b)
		return NULL;
	le32_put(b + CTL_HDR_SIZE, (uint32_t)(err < 0 ? -err : err));
	le16_put(b + CTL_HDR_SIZE + 4, (uint16_t)n);
	memcpy(b + CTL_HDR_SIZE + 6, msg, n);
	return b;
}

uint8_t *ctl_reply_status(const struct ctl_status *st, size_t *len)
{
	const uint64_t *f = (const uint64_t *)st;
	uint8_t *b = reply_new(CTL_STATUS | CTL_REPLY, 4 + 8 * CTL_STATUS_FIELDS, len);

	if (!b)
		return NULL;
	le32_put(b + CTL_HDR_SIZE, (uint32_t)CTL_STATUS_FIELDS);
	for (size_t i = 0; i < CTL_STATUS_FIELDS; i++)
		le64_put(b + CTL_HDR_SIZE + 4 + 8 * i, f[i]);
	return b;
}

uint8_t *ctl_reply_snapshot(const struct ctl_snapshot_reply *r, size_t *len)
{
	uint8_t *b = reply_new(CTL_SNAPSHOT | CTL_REPLY, 36 + (size_t)r->blob_len, len);
	uint8_t *p;

	if (!b)
		return NULL;
	p = b + CTL_HDR_SIZE;
	le64_put(p, r->from_ns);
	le64_put(p + 8, r->to_ns);
	le32_put(p + 16, r->windows);
	le32_put(p + 20, r->corrupt);
	le32_put(p + 24, r->torn);
	le32_put(p + 28, r->flags);
	le32_put(p + 32, r->blob_len);
	if (r->blob_len)
		memcpy(p + 36, r->blob, r->blob_len);
	return b;
}

uint8_t *ctl_reply_mark(uint64_t at_ns, size_t *len)
{
	uint8_t *b = reply_new(CTL_MARK | CTL_REPLY, 8, len);

	if (b)
		le64_put(b + CTL_HDR_SIZE, at_ns);
	return b;
}

uint8_t *ctl_reply_marks(const struct ctl_mark *m, size_t n, uint32_t damaged,
			 size_t *len)
{
	size_t payload = 4 + (damaged ? 4 : 0), off = CTL_HDR_SIZE + 4;
	uint8_t *b;

	if (n > CTL_MARKS_MAX)
		n = CTL_MARKS_MAX;
	for (size_t i = 0; i < n; i++)
		payload += 9 + strnlen(m[i].name, CTL_NAME_MAX);
	b = reply_new(CTL_MARKS | CTL_REPLY, payload, len);
	if (!b)
		return NULL;
	le32_put(b + CTL_HDR_SIZE, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		size_t k = strnlen(m[i].name, CTL_NAME_MAX);

		le64_put(b + off, m[i].at_ns);
		b[off + 8] = (uint8_t)k;
		memcpy(b + off + 9, m[i].name, k);
		off += 9 + k;
	}
	if (damaged)
		le32_put(b + off, damaged);
	return b;
}

int ctl_decode_error(const uint8_t *p, size_t len, int *err, char *msg,
		     size_t msglen)
{
	size_t n;

	if (len < 6 || msglen == 0)
		return -EBADMSG;
	n = le16_get(p + 4);
	if (len != 6 + n || n > CTL_ERRMSG_MAX)
		return -EBADMSG;
	*err = (int)(le32_get(p) & 0xffff);
	if (n >= msglen)
		n = msglen - 1;
	for (size_t i = 0; i < n; i++)
		msg[i] = (p[6 + i] >= 0x20 && p[6 + i] < 0x7f) ? (char)p[6 + i] : '?';
	msg[n] = 0;
	return 0;
}

/* The first causes' fields run in enum drop_cause's order, since start
 * then in the last window; the later ones were added at the end. */
#define CTL_DROP_CAUSES_FIRST 6u
_Static_assert(offsetof(struct ctl_status, window_drop_collisions) -
	       offsetof(struct ctl_status, drop_collisions) == CTL_DROP_CAUSES_FIRST * 8 &&
	       offsetof(struct ctl_status, drop_unkept) -
	       offsetof(struct ctl_status, window_drop_collisions) == CTL_DROP_CAUSES_FIRST * 8,
	       "struct ctl_status's first drop fields are contiguous, in enum drop_cause's order");

/* The offset of cause @cause's field, or 0 for none. */
static size_t drop_off(unsigned cause, bool window)
{
	if (cause < CTL_DROP_CAUSES_FIRST)
		return (window ? offsetof(struct ctl_status, window_drop_collisions)
			       : offsetof(struct ctl_status, drop_collisions)) + 8 * cause;
	if (cause == CTL_DROP_CAUSES_FIRST)
		return window ? offsetof(struct ctl_status, window_drop_growth_ring)
			      : offsetof(struct ctl_status, drop_growth_ring);
	return 0;
}

uint64_t ctl_status_drop(const struct ctl_status *st, unsigned cause, bool window)
{
	size_t off = drop_off(cause, window);
	uint64_t v = 0;

	if (off)
		memcpy(&v, (const char *)st + off, sizeof(v));
	return v;
}

void ctl_status_set_drop(struct ctl_status *st, unsigned cause, bool window, uint64_t v)
{
	size_t off = drop_off(cause, window);

	if (off)
		memcpy((char *)st + off, &v, sizeof(v));
}

int ctl_decode_status(const uint8_t *p, size_t len, struct ctl_status *st)
{
	uint64_t *f = (uint64_t *)st;
	uint32_t n;

	memset(st, 0, sizeof(*st));
	if (len < 4)
		return -EBADMSG;
	n = le32_get(p);
	if (n < CTL_STATUS_FIELDS_MIN || n > 4096 || len != 4 + 8 * (size_t)n)
		return -EBADMSG;
	for (size_t i = 0; i < CTL_STATUS_FIELDS && i < n; i++)
		f[i] = le64_get(p + 4 + 8 * i);
	return 0;
}

int ctl_decode_snapshot(const uint8_t *p, size_t len,
			struct ctl_snapshot_reply *r)
{
	if (len < 36)
		return -EBADMSG;
	r->from_ns = le64_get(p);
	r->to_ns = le64_get(p + 8);
	r->windows = le32_get(p + 16);
	r->corrupt = le32_get(p + 20);
	r->torn = le32_get(p + 24);
	r->flags = le32_get(p + 28);
	r->blob_len = le32_get(p + 32);
	if (len != 36 + (size_t)r->blob_len)
		return -EBADMSG;
	r->blob = p + 36;
	return 0;
}

int ctl_decode_mark(const uint8_t *p, size_t len, uint64_t *at_ns)
{
	if (len != 8)
		return -EBADMSG;
	*at_ns = le64_get(p);
	return 0;
}

int ctl_decode_marks(const uint8_t *p, size_t len, struct ctl_mark **out,
		     size_t *n, uint32_t *damaged)
{
	struct ctl_mark *m = NULL;
	size_t off = 4;
	uint32_t cnt;

	*out = NULL;
	*n = 0;
	*damaged = 0;
	if (len < 4)
		return -EBADMSG;
	cnt = le32_get(p);
	if (cnt > CTL_MARKS_MAX || cnt > (len - 4) / 10)
		return -EBADMSG;
	m = calloc(cnt ? cnt : 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (uint32_t i = 0; i < cnt; i++) {
		size_t k;

		if (len - off < 9 || len - off - 9 < p[off + 8] ||
		    !name_valid(p + off + 9, p[off + 8])) {
			free(m);
			return -EBADMSG;
		}
		k = p[off + 8];
		m[i].at_ns = le64_get(p + off);
		memcpy(m[i].name, p + off + 9, k);
		off += 9 + k;
	}
	/* The damaged count is there only when it is not 0. */
	if (len - off == 4 && le32_get(p + off) != 0)
		*damaged = le32_get(p + off);
	else if (off != len) {
		free(m);
		return -EBADMSG;
	}
	if (!cnt) {
		free(m);
		m = NULL;
	}
	*out = m;
	*n = cnt;
	return 0;
}
