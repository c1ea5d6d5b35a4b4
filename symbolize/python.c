/* SPDX-License-Identifier: MIT */
/*
 * python: CPython's frames, read from the process.
 *
 * A CPython 3.11 process keeps, in _PyRuntime, a list of interpreters;
 * each has a list of thread states (PyThreadState), each pointing through
 * its cframe at the innermost _PyInterpreterFrame; frames link to their
 * callers with `previous`. A frame holds its code object (function name,
 * file, location table) and the last instruction it ran. One native call
 * of the evaluation loop (_PyEval_EvalFrameDefault) runs Python frames
 * from an "entry" frame inwards: that is how the two stacks interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "symbolize/python.h"
#include "symbolize/sym_internal.h"

/* CPython 3.11, x86-64 (checked against the 3.11 headers by the tests). */
static const struct hearth_py_offsets py311 = {
	.runtime_interp_head = 40,
	.interp_threads_head = 16,
	.tstate_next = 8,
	.tstate_native_tid = 160,
	.tstate_cframe = 56,
	.cframe_current = 8,
	.frame_code = 32,
	.frame_previous = 48,
	.frame_prev_instr = 56,
	.frame_is_entry = 68,
	.frame_owner = 69,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_firstlineno = 72,
	.code_adaptive = 184,
};

/* Unicode and bytes objects, the same from 3.11 to 3.13 on 64 bits. */
#define PY_ASCII_STATE 32   /* PyASCIIObject.state */
#define PY_ASCII_LENGTH 16  /* PyASCIIObject.length */
#define PY_ASCII_DATA 48    /* sizeof(PyASCIIObject) */
#define PY_COMPACT_DATA 72  /* sizeof(PyCompactUnicodeObject) */
#define PY_BYTES_SIZE 16    /* PyVarObject.ob_size */
#define PY_BYTES_DATA 32    /* PyBytesObject.ob_sval */

#define PY_NAME_MAX 256
#define PY_TABLE_MAX 65536
#define PY_CACHE_SIZE 4096  /* named code objects kept, all processes */

const struct hearth_py_offsets *sym_py_offsets(unsigned major, unsigned minor)
{
	if (major == 3 && minor == 11)
		return &py311;
	return NULL;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int read_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return read_mem(pid, addr, v, sizeof(*v));
}

/* ---- finding the interpreter ------------------------------------------- */

struct py_syms {
	uint64_t runtime, version; /* st_value, 0 = absent */
	uint64_t seg_vaddr, seg_off; /* the PT_LOAD holding the text mapping */
};

/* Reads the two symbols from the dynamic symbol table of the ELF at @fd,
 * and the PT_LOAD that covers file offset @pgoff. */
static int elf_py_syms(int fd, uint64_t pgoff, struct py_syms *s)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t nph;
	int rc = -ENOENT;

	memset(s, 0, sizeof(*s));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return -EINVAL;
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_offset & ~0xfffull) <= pgoff &&
			    pgoff < ph.p_offset + ph.p_filesz) {
				s->seg_vaddr = ph.p_vaddr;
				s->seg_off = ph.p_offset;
			}
		}
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "_PyRuntime"))
				s->runtime = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				s->version = sym.st_value;
		}
	}
	if (s->runtime && s->version)
		rc = 0;
	elf_end(e);
	return rc;
}

static bool looks_like_python(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10);
}

int sym_py_find(pid_t pid, struct hearth_py_proc *out, char version[16])
{
	char path[64], line[4096];
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (rc == -ENOENT && fgets(line, sizeof(line), f)) {
		struct sym_maps_line ml;
		struct py_syms s;
		char file[PATH_MAX + 64];
		uint64_t bias, ver;
		const struct hearth_py_offsets *off;
		int fd;

		if (sym_maps_parse_line(line, strcspn(line, "\n"), &ml) || !ml.exec ||
		    !ml.path_len || ml.path[0] != '/' || ml.deleted)
			continue;
		snprintf(file, sizeof(file), "/proc/%d/root%.*s", (int)pid,
			 (int)ml.path_len, ml.path);
		if (!looks_like_python(file))
			continue;
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		rc = elf_py_syms(fd, ml.pgoff, &s);
		close(fd);
		if (rc)
			continue;
		bias = ml.start - (s.seg_vaddr - s.seg_off + ml.pgoff);
		rc = read_u64(pid, bias + s.version, &ver);
		if (rc)
			break;
		/* Py_Version is PY_VERSION_HEX: 0xMMmmPPLS */
		if (version)
			snprintf(version, 16, "%u.%u", (unsigned)(ver >> 24 & 0xff),
				 (unsigned)(ver >> 16 & 0xff));
		off = sym_py_offsets((unsigned)(ver >> 24 & 0xff), (unsigned)(ver >> 16 & 0xff));
		if (!off) {
			rc = -ENOTSUP;
			break;
		}
		out->runtime = bias + s.runtime;
		out->off = *off;
	}
	fclose(f);
	return rc;
}

/* ---- walking a thread's frames ------------------------------------------ */

/* The thread state of @tid, or 0. */
static uint64_t find_tstate(pid_t pid, const struct hearth_py_proc *py, pid_t tid)
{
	const struct hearth_py_offsets *o = &py->off;
	uint64_t interp, ts;

	if (read_u64(pid, py->runtime + o->runtime_interp_head, &interp) || !interp)
		return 0;
	if (read_u64(pid, interp + o->interp_threads_head, &ts))
		return 0;
	for (int i = 0; ts && i < HEARTH_PY_THREADS; i++) {
		uint64_t native;

		if (read_u64(pid, ts + o->tstate_native_tid, &native))
			return 0;
		if (native == (uint64_t)tid)
			return ts;
		if (read_u64(pid, ts + o->tstate_next, &ts))
			return 0;
	}
	return 0;
}

int sym_py_walk(pid_t pid, const struct hearth_py_proc *py, pid_t tid,
		struct hearth_py_frame *out, size_t max)
{
	const struct hearth_py_offsets *o = &py->off;
	uint64_t ts = find_tstate(pid, py, tid), cframe, frame;
	size_t n = 0;

	if (!ts)
		return 0;
	if (read_u64(pid, ts + o->tstate_cframe, &cframe) || !cframe ||
	    read_u64(pid, cframe + o->cframe_current, &frame))
		return 0;
	while (frame && n < max && n < HEARTH_PY_DEPTH) {
		uint64_t code, prev, instr;
		uint8_t entry;
		int rc;

		if ((rc = read_u64(pid, frame + o->frame_code, &code)) ||
		    (rc = read_u64(pid, frame + o->frame_previous, &prev)) ||
		    (rc = read_u64(pid, frame + o->frame_prev_instr, &instr)) ||
		    (rc = read_mem(pid, frame + o->frame_is_entry, &entry, 1)))
			return n ? (int)n : rc;
		out[n++] = (struct hearth_py_frame){
			.code = code,
			.instr = instr > code + o->code_adaptive
				 ? (uint32_t)((instr - code - o->code_adaptive) / 2) : 0,
			.flags = entry ? HEARTH_PY_ENTRY : 0,
		};
		frame = prev;
	}
	return (int)n;
}

/* ---- line numbers --------------------------------------------------------- */

static bool varint(const uint8_t *t, size_t len, size_t *i, uint32_t *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (*i >= len || shift > 24)
			return false;
		b = t[(*i)++];
		*v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return true;
}

static bool svarint(const uint8_t *t, size_t len, size_t *i, int *v)
{
	uint32_t u;

	if (!varint(t, len, i, &u))
		return false;
	*v = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
	return true;
}

/* The 3.11 location table (Objects/locations.md in CPython): entries of a
 * first byte 1CCCCLLL (code, length - 1 in code units) and what the code
 * says follows. Only the line is kept. */
uint32_t sym_py_line(const uint8_t *t, size_t len, int firstlineno, uint32_t instr)
{
	size_t i = 0;
	uint32_t at = 0;
	int line = firstlineno;

	while (i < len) {
		uint8_t b = t[i++];
		unsigned code = (b >> 3) & 15, n = (b & 7) + 1;
		int delta = 0;
		uint32_t skip;
		bool none = false;

		if (!(b & 0x80))
			return 0; /* not the first byte of an entry: damaged */
		switch (code) {
		case 15:
			none = true;
			break;
		case 14:
			if (!svarint(t, len, &i, &delta) || !varint(t, len, &i, &skip) ||
			    !varint(t, len, &i, &skip) || !varint(t, len, &i, &skip))
				return 0;
			break;
		case 13:
			if (!svarint(t, len, &i, &delta))
				return 0;
			break;
		case 10: case 11: case 12:
			delta = (int)code - 10;
			i += 2;
			break;
		default:
			i += 1;
			break;
		}
		line += delta;
		if (instr < at + n)
			return none || line <= 0 ? 0 : (uint32_t)line;
		at += n;
	}
	return 0;
}

/* ---- naming code objects --------------------------------------------------- */

struct py_code {
	pid_t pid;
	uint64_t code;
	char name[PY_NAME_MAX];
	char file[PY_NAME_MAX];
	int firstlineno;
	uint8_t *table;
	size_t table_len;
	bool used;
};

struct sym_py_names {
	struct py_code slot[PY_CACHE_SIZE];
	/* Bit pid % PY_CACHE_SIZE set while a slot may hold a code object
	 * of such a pid: forgetting any other (every exit and exec of a
	 * host, Python or not) looks at one bit instead of 4096 slots. */
	uint64_t pid_bits[PY_CACHE_SIZE / 64];
};

static size_t pid_bit(pid_t pid)
{
	return (size_t)(uint32_t)pid % PY_CACHE_SIZE;
}

struct sym_py_names *sym_py_names_new(void)
{
	return calloc(1, sizeof(struct sym_py_names));
}

static void code_clear(struct py_code *c)
{
	free(c->table);
	memset(c, 0, sizeof(*c));
}

void sym_py_names_free(struct sym_py_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < PY_CACHE_SIZE; i++)
		free(n->slot[i].table);
	free(n);
}

void sym_py_names_forget(struct sym_py_names *n, pid_t pid)
{
	size_t b = pid_bit(pid);
	bool others = false;

	if (!n || !(n->pid_bits[b / 64] & (1ull << (b % 64))))
		return;
	for (size_t i = 0; i < PY_CACHE_SIZE; i++) {
		struct py_code *c = &n->slot[i];

		if (!c->used)
			continue;
		if (c->pid == pid)
			code_clear(c);
		else if (pid_bit(c->pid) == b)
			others = true;
	}
	if (!others)
		n->pid_bits[b / 64] &= ~(1ull << (b % 64));
}

/* Reads the str object at @addr as UTF-8 into @buf (ASCII and Latin-1
 * compact strings, the kinds names and paths are). */
static int read_str(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	uint64_t hdr[PY_COMPACT_DATA / 8];
	uint32_t state;
	uint64_t len;
	unsigned kind;
	uint8_t raw[PY_NAME_MAX];
	size_t o = 0;
	int rc;

	if (!addr)
		return -EINVAL;
	if ((rc = read_mem(pid, addr, hdr, sizeof(hdr))))
		return rc;
	memcpy(&state, (char *)hdr + PY_ASCII_STATE, sizeof(state));
	memcpy(&len, (char *)hdr + PY_ASCII_LENGTH, sizeof(len));
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || kind != 1) /* compact, one byte a char */
		return -ENOTSUP;
	if (len > sizeof(raw))
		len = sizeof(raw);
	rc = read_mem(pid, addr + (((state >> 6) & 1) ? PY_ASCII_DATA : PY_COMPACT_DATA),
		      raw, len);
	if (rc)
		return rc;
	for (size_t i = 0; i < len && o + 3 < size; i++) {
		if (raw[i] < 0x80) {
			buf[o++] = (char)raw[i];
		} else { /* Latin-1 to UTF-8 */
			buf[o++] = (char)(0xc0 | raw[i] >> 6);
			buf[o++] = (char)(0x80 | (raw[i] & 0x3f));
		}
	}
	buf[o] = '\0';
	return 0;
}

static int code_load(struct py_code *c, pid_t pid, const struct hearth_py_proc *py,
		     uint64_t code)
{
	const struct hearth_py_offsets *o = &py->off;
	uint64_t name, qual, file, table, tlen;
	int32_t first;
	int rc;

	code_clear(c);
	if ((rc = read_u64(pid, code + o->code_qualname, &qual)) ||
	    (rc = read_u64(pid, code + o->code_name, &name)) ||
	    (rc = read_u64(pid, code + o->code_filename, &file)) ||
	    (rc = read_u64(pid, code + o->code_linetable, &table)) ||
	    (rc = read_mem(pid, code + o->code_firstlineno, &first, sizeof(first))))
		return rc;
	if (read_str(pid, qual, c->name, sizeof(c->name)) &&
	    (rc = read_str(pid, name, c->name, sizeof(c->name))))
		return rc;
	if ((rc = read_str(pid, file, c->file, sizeof(c->file))))
		return rc;
	if (table && !read_u64(pid, table + PY_BYTES_SIZE, &tlen) && tlen <= PY_TABLE_MAX) {
		c->table = malloc(tlen ? tlen : 1);
		if (c->table && !read_mem(pid, table + PY_BYTES_DATA, c->table, tlen))
			c->table_len = tlen;
	}
	c->pid = pid;
	c->code = code;
	c->firstlineno = first;
	c->used = true;
	return 0;
}

/* The interpreter's own library: /usr/lib/python3.N/ without a
 * site-packages or dist-packages below it. */
static uint8_t py_class(const char *file)
{
	if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
		return PROF_CLASS_LIBRARY;
	if (!strncmp(file, "<frozen ", 8) || strstr(file, "/lib/python3."))
		return PROF_CLASS_RUNTIME;
	return PROF_CLASS_YOURS;
}

int sym_py_name(struct sym_py_names *n, pid_t pid, const struct hearth_py_proc *py,
		const struct hearth_py_frame *f, struct sym_frame *out)
{
	size_t h = (size_t)((f->code >> 4) ^ (uint64_t)pid * 0x9e3779b97f4a7c15ull) % PY_CACHE_SIZE;
	struct py_code *c = &n->slot[h];
	const char *base;
	int rc = 0;

	*out = (struct sym_frame){ .name = "[unknown python frame]", .module = "python",
				   .cls = PROF_CLASS_UNKNOWN, .lang = PROF_LANG_PYTHON,
				   .flags = SYM_FRAME_UNRESOLVED };
	if (!c->used || c->pid != pid || c->code != f->code) {
		size_t b = pid_bit(pid);

		n->pid_bits[b / 64] |= 1ull << (b % 64);
		rc = code_load(c, pid, py, f->code);
	}
	if (rc) {
		code_clear(c);
		return rc;
	}
	base = strrchr(c->file, '/');
	out->name = c->name;
	out->file = c->file;
	out->module = base ? base + 1 : c->file;
	out->line = sym_py_line(c->table, c->table_len, c->firstlineno, f->instr);
	out->cls = py_class(c->file);
	out->flags = 0;
	return 1;
}

int sym_py_is_eval(const char *native_name)
{
	return native_name && !strcmp(native_name, "_PyEval_EvalFrameDefault");
}
