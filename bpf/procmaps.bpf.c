// SPDX-License-Identifier: GPL-2.0
/*
 * procmaps: a process's executable mappings at its exit. The last thread
 * of a process runs sched_process_exit before its address space is torn
 * down: the program walks the mappings (the task VMA iterator) and sends
 * the executable ones, with the paths of files user space has not been
 * sent yet, in one ring. User space names the process's samples with them
 * however short its life was.
 */
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpf/procmaps.h"

char LICENSE[] SEC("license") = "GPL";

#define VM_EXEC 0x00000004

/* Our own process, never sent. */
const volatile __u32 exclude_tgid = 0;

/* Exits the ring had no room for (their processes go unnamed). */
__u64 pm_lost = 0;

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym __weak;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 512 * 1024);
} pm_events SEC(".maps");

/* Files whose path was sent: not sent again while they are here. User
 * space removes those it forgets. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct hearth_pm_file_key);
	__type(value, __u8);
	__uint(max_entries, 8192);
} pm_known SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_pm_exit);
	__uint(max_entries, 1);
} pm_exit_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct hearth_pm_file);
	__uint(max_entries, 1);
} pm_file_scratch SEC(".maps");

/* The walk's counters and the files to name live in a map value, not on
 * the stack: the verifier then sees them as unknown and the loop over the
 * mappings converges, instead of being checked once per mapping count. */
struct walk {
	__u32 nnew;
	__u64 files[HEARTH_PM_NEW_FILES];
	struct hearth_pm_file_key keys[HEARTH_PM_NEW_FILES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct walk);
	__uint(max_entries, 1);
} pm_walk SEC(".maps");

/* A path's walk up from the file to its namespace's root: its state in a
 * map value (unknown to the verifier, so one step is checked once). */
struct path_walk {
	__u64 d, vm, mnt;     /* struct dentry, vfsmount, mount * */
	__u32 n;
	__u32 too_deep;
	__u64 parts[HEARTH_PM_DEPTH]; /* struct dentry *, the file's first */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct path_walk);
	__uint(max_entries, 1);
} pm_path_walk SEC(".maps");

/* One step up: to the parent directory, or across a mount point. */
static long path_step(__u64 i, void *arg)
{
	struct path_walk *w = *(struct path_walk **)arg;
	struct dentry *d = (struct dentry *)w->d, *up;
	struct vfsmount *vm = (struct vfsmount *)w->vm;
	struct mount *mnt = (struct mount *)w->mnt, *parent;
	__u32 n = w->n;

	(void)i;
	if (d == BPF_CORE_READ(vm, mnt_root)) {
		parent = BPF_CORE_READ(mnt, mnt_parent);
		if (parent == mnt)
			return 1; /* the namespace's root */
		w->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = (__u64)parent;
		w->vm = (__u64)parent + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	up = BPF_CORE_READ(d, d_parent);
	if (up == d)
		return 1;
	if (n >= HEARTH_PM_DEPTH) {
		w->too_deep = 1;
		return 1;
	}
	w->parts[n & (HEARTH_PM_DEPTH - 1)] = (__u64)d;
	w->n = n + 1;
	w->d = (__u64)up;
	return 0;
}

/* Writes the path of @f into @out, from the root of its mount namespace
 * down (len 0 when it is too long or too deep). */
static __always_inline void file_path(struct file *f, struct hearth_pm_file *out)
{
	struct path_walk *w;
	__u32 zero = 0, off = 0, n;

	out->len = 0;
	w = bpf_map_lookup_elem(&pm_path_walk, &zero);
	if (!w)
		return;
	w->d = (__u64)BPF_CORE_READ(f, f_path.dentry);
	w->vm = (__u64)BPF_CORE_READ(f, f_path.mnt);
	w->mnt = w->vm - bpf_core_field_offset(struct mount, mnt);
	w->n = 0;
	w->too_deep = 0;
	bpf_loop(2 * HEARTH_PM_DEPTH, path_step, &w, 0);
	n = w->n;
	if (w->too_deep || n == 0 || n > HEARTH_PM_DEPTH)
		return;
	for (int i = HEARTH_PM_DEPTH - 1; i >= 0; i--) {
		const unsigned char *name;
		struct dentry *part;
		__u32 at;
		long len;

		if (i >= (int)n)
			continue;
		if (off >= HEARTH_PM_PATH - 2)
			return;
		part = (struct dentry *)w->parts[i & (HEARTH_PM_DEPTH - 1)];
		name = BPF_CORE_READ(part, d_name.name);
		at = off;
		barrier_var(at);
		out->path[at & (HEARTH_PM_PATH - 1)] = '/';
		at = off + 1;
		barrier_var(at);
		at &= HEARTH_PM_PATH - 1;
		len = bpf_probe_read_kernel_str(out->path + at, HEARTH_PM_PATH, name);
		if (len <= 1)
			return;
		/* '/' and the name: off is at its NUL, where the next '/'
		 * goes */
		off += (__u32)len;
	}
	if (off >= HEARTH_PM_PATH)
		return;
	out->len = off; /* the last name's NUL ends the path */
}

/* Sends the path of file @f (a struct file *), known as (@dev, @ino), and
 * remembers it was sent. A function of its own: checked once, not once
 * per call. */
__noinline int pm_send_path(__u64 f, __u64 dev, __u64 ino)
{
	struct hearth_pm_file_key k = { dev, ino };
	struct hearth_pm_file *r;
	__u32 zero = 0;
	__u8 one = 1;

	r = bpf_map_lookup_elem(&pm_file_scratch, &zero);
	if (!r)
		return 0;
	r->type = HEARTH_PM_FILE;
	r->dev = dev;
	r->ino = ino;
	file_path((struct file *)f, r);
	if (bpf_ringbuf_output(&pm_events, r, sizeof(*r), 0) == 0)
		bpf_map_update_elem(&pm_known, &k, &one, BPF_ANY);
	return 0;
}

/* Adds @vma to @e when it is executable (a file's, or the vDSO at
 * @vdso), noting in @w a file whose path was not sent yet. */
static __always_inline void add_vma(struct hearth_pm_exit *e, struct walk *w,
				    struct vm_area_struct *vma, __u64 vdso, struct inode *exe)
{
	struct file *f = BPF_CORE_READ(vma, vm_file);
	__u64 start = BPF_CORE_READ(vma, vm_start);
	struct hearth_pm_file_key *k;
	struct hearth_pm_map *m;
	__u32 i = e->n;

	if (!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC) || (!f && start != vdso))
		return;
	if (i >= HEARTH_PM_MAPS) {
		e->more++;
		return;
	}
	m = &e->m[i & (HEARTH_PM_MAPS - 1)];
	e->n = i + 1;
	m->start = start;
	m->end = BPF_CORE_READ(vma, vm_end);
	m->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	m->flags = f ? 0 : HEARTH_PM_VDSO;
	m->dev = 0;
	m->ino = 0;
	if (!f)
		return;
	m->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	m->ino = BPF_CORE_READ(f, f_inode, i_ino);
	if (BPF_CORE_READ(f, f_inode) == exe)
		m->flags |= HEARTH_PM_EXE;
	i = w->nnew;
	if (i >= HEARTH_PM_NEW_FILES)
		return;
	k = &w->keys[i & (HEARTH_PM_NEW_FILES - 1)];
	k->dev = m->dev;
	k->ino = m->ino;
	if (bpf_map_lookup_elem(&pm_known, k))
		return;
	w->files[i & (HEARTH_PM_NEW_FILES - 1)] = (__u64)f;
	w->nnew = i + 1;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pm_exit, struct task_struct *p, bool group_dead)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct hearth_pm_exit *e;
	struct inode *exe;
	struct walk *w;
	__u32 zero = 0, n;
	__u64 vdso;

	if (!group_dead || task->tgid == exclude_tgid || !BPF_CORE_READ(task, mm))
		return 0;
	e = bpf_map_lookup_elem(&pm_exit_scratch, &zero);
	w = bpf_map_lookup_elem(&pm_walk, &zero);
	if (!e || !w)
		return 0;
	e->type = HEARTH_PM_EXIT;
	e->tgid = task->tgid;
	e->exec_id = task->self_exec_id;
	e->n = 0;
	e->more = 0;
	w->nnew = 0;
	vdso = (__u64)BPF_CORE_READ(task, mm, context.vdso);
	exe = BPF_CORE_READ(task, mm, exe_file, f_inode);
	if (bpf_iter_task_vma_new(&it, task, 0) == 0)
		while ((vma = bpf_iter_task_vma_next(&it)))
			add_vma(e, w, vma, vdso, exe);
	bpf_iter_task_vma_destroy(&it);
	/* Paths first: user space knows a file's name when its mappings
	 * come. */
	for (__u32 i = 0; i < HEARTH_PM_NEW_FILES; i++)
		if (i < w->nnew)
			pm_send_path(w->files[i], w->keys[i].dev, w->keys[i].ino);
	n = e->n;
	if (n > HEARTH_PM_MAPS)
		n = HEARTH_PM_MAPS;
	if (bpf_ringbuf_output(&pm_events, e,
			       sizeof(*e) - sizeof(e->m) + n * sizeof(e->m[0]), 0))
		__sync_fetch_and_add(&pm_lost, 1);
	return 0;
}
