/* SPDX-License-Identifier: MIT */
/*
 * Python frames of CPython processes, read without flags on the process:
 * find a process's interpreter state, walk a thread's frame chain, and
 * name a frame's code object (function, file, line).
 *
 * Supported: CPython 3.11 on x86-64 (Debian 12's python3.11). The
 * version is read from the process (Py_Version); others are refused with
 * -ENOTSUP, so a later version needs one more offsets table, nothing else
 * (3.13 publishes its offsets in _Py_DebugOffsets for exactly this).
 *
 * Nothing here prints. Errors are negative errno values. Memory of the
 * process is read with process_vm_readv (CAP_SYS_PTRACE, or the same
 * user): a process that changes under the reader gives an error or a
 * frame named "[unknown python frame]", never a crash.
 */
#ifndef HEARTH_SYMBOLIZE_PYTHON_H
#define HEARTH_SYMBOLIZE_PYTHON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/python.h"
#include "symbolize/symbolize.h"

/* Finds the interpreter of @pid: the module that exports _PyRuntime and
 * Py_Version (python3.X itself, or libpython3.X.so). 0 with *out filled;
 * -ENOENT when @pid runs no CPython; -ENOTSUP for a version without
 * offsets here (its "3.N" in @version when given); other errors from
 * reading the process. */
int sym_py_find(pid_t pid, struct hearth_py_proc *out, char version[16]);

/* The offsets for CPython major.minor, or NULL when not supported. */
const struct hearth_py_offsets *sym_py_offsets(unsigned major, unsigned minor);

/* Reads the Python frames of thread @tid of the process found in @py,
 * innermost first, into out[0..max). Returns how many (0: the thread
 * runs no Python code now, or is not the interpreter's), or an error. */
int sym_py_walk(pid_t pid, const struct hearth_py_proc *py, pid_t tid,
		struct hearth_py_frame *out, size_t max);

/* The line of code unit @instr in a 3.11 location table (co_linetable)
 * of a code object starting at @firstlineno; 0 when the table gives none
 * (or is damaged). Pure: no I/O. */
uint32_t sym_py_line(const uint8_t *table, size_t len, int firstlineno, uint32_t instr);

/* A cache of named code objects, per process. */
struct sym_py_names;

struct sym_py_names *sym_py_names_new(void);
void sym_py_names_free(struct sym_py_names *n);

/* Names Python frame @f of @pid: out->name is the qualified function
 * name, file and line where it is, module the file's basename, language
 * Python, class by where the file lives (site-packages and dist-packages
 * are libraries, the interpreter's own library the runtime, anything else
 * your code). Strings stay valid until the next call on @n. Returns 1,
 * or an error (the frame is then still named "[unknown python frame]"). */
int sym_py_name(struct sym_py_names *n, pid_t pid, const struct hearth_py_proc *py,
		const struct hearth_py_frame *f, struct sym_frame *out);

/* Forgets what is cached for @pid (it exited or exec'd). */
void sym_py_names_forget(struct sym_py_names *n, pid_t pid);

/* True for the native frame that runs Python frames: the evaluation
 * loop, which Python frames replace in a stack. */
int sym_py_is_eval(const char *native_name);

#endif /* HEARTH_SYMBOLIZE_PYTHON_H */
