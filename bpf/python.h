/* SPDX-License-Identifier: MIT */
/*
 * Python frames: where a CPython interpreter keeps each thread's frame
 * chain, as user space finds it (per process) and a walker reads it.
 * Types only, no logic. Offsets are bytes into the interpreter's structs
 * for one CPython version on x86-64.
 */
#ifndef HEARTH_BPF_PYTHON_H
#define HEARTH_BPF_PYTHON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The most Python frames read per stack. */
#define HEARTH_PY_DEPTH 64
/* The most threads of one interpreter searched for the current one. */
#define HEARTH_PY_THREADS 64

struct hearth_py_offsets {
	__u16 runtime_interp_head;   /* _PyRuntimeState.interpreters.head */
	__u16 interp_threads_head;   /* PyInterpreterState.threads.head */
	__u16 tstate_next;           /* PyThreadState.next */
	__u16 tstate_native_tid;     /* PyThreadState.native_thread_id */
	__u16 tstate_cframe;         /* PyThreadState.cframe */
	__u16 cframe_current;        /* _PyCFrame.current_frame */
	__u16 frame_code;            /* _PyInterpreterFrame.f_code */
	__u16 frame_previous;        /* _PyInterpreterFrame.previous */
	__u16 frame_prev_instr;      /* _PyInterpreterFrame.prev_instr */
	__u16 frame_is_entry;        /* _PyInterpreterFrame.is_entry (bool) */
	__u16 frame_owner;           /* _PyInterpreterFrame.owner (char) */
	__u16 code_filename;         /* PyCodeObject.co_filename */
	__u16 code_name;             /* PyCodeObject.co_name */
	__u16 code_qualname;         /* PyCodeObject.co_qualname */
	__u16 code_linetable;        /* PyCodeObject.co_linetable */
	__u16 code_firstlineno;      /* PyCodeObject.co_firstlineno (int) */
	__u16 code_adaptive;         /* PyCodeObject.co_code_adaptive */
	__u16 pad;
};

/* A Python process: where its runtime state lives. */
struct hearth_py_proc {
	__u64 runtime;               /* address of _PyRuntime */
	struct hearth_py_offsets off;
};

/* hearth_py_frame.flags */
#define HEARTH_PY_ENTRY 0x1          /* the first frame a C call of the
				      * evaluation loop ran: one native
				      * _PyEval_EvalFrameDefault ends here */

/* One Python frame: its code object and the instruction it was at (in
 * 2-byte code units from the start of the code). */
struct hearth_py_frame {
	__u64 code;
	__u32 instr;
	__u32 flags;
};

/* A Python stack, innermost frame first, kept by its hash (py_stacks). */
struct hearth_py_stack {
	__u32 n;
	__u32 pad;
	struct hearth_py_frame f[HEARTH_PY_DEPTH];
};

#endif /* HEARTH_BPF_PYTHON_H */
