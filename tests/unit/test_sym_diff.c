/* SPDX-License-Identifier: MIT */
/*
 * symbolize: the differential check — for 10,000 addresses sampled from
 * libc, libstdc++ and two fixtures, every frame's function, file and line
 * equal what `eu-addr2line -f -i` says, inline frames included; and the
 * same for the run-time addresses of live fixture processes, linked by
 * LLD and by BFD, against `eu-addr2line -p`. The tolerated differences
 * are documented where they are accepted. And a Go program stripped of
 * symbols and DWARF, named from its own table, against the DWARF of its
 * unstripped twin.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize/sym_internal.h"
#include "symbolize/symbolize.h"

#include "sym_child.h"

/* ---- differential check against eu-addr2line ---- */

struct a2l_frame {
	char *name; /* owned */
	char *file; /* owned */
	uint32_t line;
};

/* Frames kept per address, here and in our lookups: a deeper answer
 * fails the test. */
#define A2L_FRAMES 32

struct a2l_addr {
	uint64_t addr;
	int n;
	struct a2l_frame f[A2L_FRAMES];
};

static void a2l_free(struct a2l_addr *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < a[i].n; k++) {
			free(a[i].f[k].name);
			free(a[i].f[k].file);
		}
	}
	free(a);
}

/* "file:line[:col]" or "??:0" (eu-addr2line); "file:line", "file:line
 * (discriminator N)" or "??:?" (GNU style) */
static void parse_loc(const char *s, struct a2l_frame *f)
{
	char tmp[8192];
	snprintf(tmp, sizeof(tmp), "%s", s);
	char *disc = strstr(tmp, " (discriminator ");
	if (disc)
		*disc = '\0';
	if (strcmp(tmp, "??:?") == 0)
		tmp[2] = '\0';
	unsigned long nums[2];
	int k = 0;
	char *colon;
	while (k < 2 && (colon = strrchr(tmp, ':'))) {
		char *end;
		unsigned long v = strtoul(colon + 1, &end, 10);
		if (end == colon + 1 || *end)
			break;
		nums[k++] = v;
		*colon = '\0';
	}
	/* two numbers: line then column; one: the line */
	f->line = k == 2 ? (uint32_t)nums[1] : k == 1 ? (uint32_t)nums[0] : 0;
	f->file = strdup(tmp);
	assert_non_null(f->file);
}

/* Runs @tool ("eu-addr2line -e 'file'" for ELF virtual addresses,
 * "eu-addr2line -p PID" for a process's run-time addresses, or
 * llvm-symbolizer in GNU style) with -a -f -i on @n addresses. */
static size_t run_addr2line(const char *tool, const uint64_t *addrs,
			    size_t n, struct a2l_addr *out)
{
	char in[] = "/tmp/hearth-a2l-in-XXXXXX";
	int fd = mkstemp(in);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0x%llx\n", (unsigned long long)addrs[i]);
	fclose(f);
	char cmd[PATH_MAX * 2];
	snprintf(cmd, sizeof(cmd), "%s -a -f -i < %s", tool, in);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[8192];
	size_t got = 0;
	struct a2l_addr *cur = NULL;
	bool want_loc = false;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		if (!want_loc && strncmp(line, "0x", 2) == 0) {
			assert_true(got < n);
			cur = &out[got++];
			memset(cur, 0, sizeof(*cur));
			cur->addr = strtoull(line, NULL, 16);
			continue;
		}
		assert_non_null(cur);
		if (!want_loc) {
			char *in_at = strstr(line, " inlined at ");
			if (in_at)
				*in_at = '\0';
			assert_true(cur->n < A2L_FRAMES);
			cur->f[cur->n].name = strdup(line);
			assert_non_null(cur->f[cur->n].name);
			want_loc = true;
		} else {
			parse_loc(line, &cur->f[cur->n]);
			cur->n++; /* counts a frame once both its strings are there */
			want_loc = false;
		}
	}
	/* exit status 1 only says some address had no DWARF; every address
	 * must still have its answer (checked by the caller) */
	int st = pclose(p);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) <= 1);
	unlink(in);
	return got;
}

/* Where the executable PT_LOAD of a file lies, and the first PT_LOAD. */
struct text_seg {
	uint64_t lo, hi;      /* its virtual addresses [lo, hi) */
	uint64_t off;         /* its file offset */
	uint64_t first_vaddr; /* p_vaddr of the first PT_LOAD */
};

static void text_range(const char *path, struct text_seg *t)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	size_t nph;
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	memset(t, 0, sizeof(*t));
	bool first = true;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		if (first)
			t->first_vaddr = ph.p_vaddr;
		first = false;
		if (ph.p_flags & PF_X) {
			t->lo = ph.p_vaddr;
			t->hi = ph.p_vaddr + ph.p_filesz;
			t->off = ph.p_offset;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(t->lo < t->hi);
}

struct diff_counts {
	size_t addrs, frames, equal;
	size_t unnamed_both;   /* "??" there, module+0x here */
	size_t row_quirk;      /* -i chain taken at the line row's start */
};

/* Frame @k of ours equals eu-addr2line's: name ("??" matches an
 * unresolved module+0x name), file ("??" = none) and line. */
static bool frame_equal(const struct a2l_frame *r, const struct sym_frame *f)
{
	if (strcmp(r->name, "??") == 0) {
		if (!(f->flags & SYM_FRAME_UNRESOLVED))
			return false;
	} else if (strcmp(r->name, f->name) != 0) {
		return false;
	}
	const char *file = f->file ? f->file : "??";
	return strcmp(r->file, file) == 0 && r->line == f->line;
}

/* Frames [from, to) of eu-addr2line's answer equal ours. */
static bool frames_equal(const struct a2l_addr *r, int from, int to,
			 const struct sym_frame *f, int n)
{
	if (to > n)
		return false;
	for (int k = from; k < to; k++)
		if (!frame_equal(&r->f[k], &f[k]))
			return false;
	return true;
}

/* eu-addr2line's callers (frames 1..) equal ours at the row start, whose
 * innermost frame is the function ours at the address names last. */
static bool chain_equal(const struct a2l_addr *r, const struct sym_frame *row,
			int nrow, const struct sym_frame *at, int nat)
{
	if (r->n != nrow || nrow < 1 || nat < 1)
		return false;
	/* same outermost function either way */
	if (strcmp(row[nrow - 1].name, at[nat - 1].name) != 0)
		return false;
	return frames_equal(r, 1, r->n, row, nrow);
}

static int dw_fd = -1;

/* The DWARF of @bin (its separate debug file by build-id, else itself). */
static struct sym_dwarf *dwarf_of(const char *bin)
{
	struct sym_module m = { .fd = -1, .debug_fd = -1 };
	int fd = open(bin, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(sym_elf_read_header(fd, &m), 0);
	free(m.segs);
	if (m.build_id_len > 1) {
		char path[PATH_MAX];
		int o = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/",
				 m.build_id[0]);
		for (size_t i = 1; i < m.build_id_len; i++)
			o += snprintf(path + o, sizeof(path) - (size_t)o, "%02x",
				      m.build_id[i]);
		snprintf(path + o, sizeof(path) - (size_t)o, ".debug");
		int dfd = open(path, O_RDONLY);
		if (dfd >= 0) {
			close(fd);
			fd = dfd;
		}
	}
	size_t bytes = 0;
	dw_fd = fd;
	return sym_dwarf_open(fd, &bytes);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* True when our @got frames @f for one address equal eu-addr2line's
 * @ref frame for frame; counts them in @dc. */
static bool same_frames(const struct a2l_addr *ref, const struct sym_frame *f,
			int got, struct diff_counts *dc)
{
	if (!frames_equal(ref, 0, 1, f, got) ||
	    !frames_equal(ref, 1, ref->n, f, got) || got != ref->n)
		return false;
	for (int k = 0; k < got; k++)
		dc->unnamed_both += strcmp(ref->f[k].name, "??") == 0;
	dc->equal += (size_t)got;
	dc->frames += (size_t)got;
	return true;
}

/* eu-addr2line names the innermost frame at the address but builds the
 * -i chain at the start of the address's line-table row (dwfl_lineinfo
 * overwrites the address it is given). Accepts exactly that: our
 * innermost frame @f at the address, our callers @fr (@gr of them, 0 when
 * the row starts at the address) at the row start; fails otherwise. */
static void row_quirk(const char *bin, const struct a2l_addr *ref,
		      const struct sym_frame *f, int got,
		      const struct sym_frame *fr, int gr,
		      struct diff_counts *dc)
{
	bool ok = gr > 0 && frames_equal(ref, 0, 1, f, got) &&
		  chain_equal(ref, fr, gr, f, got);
	if (!ok) {
		print_error("%s 0x%llx: ours %d frames (%s %s:%u), "
			    "eu-addr2line %d (%s %s:%u)\n", bin,
			    (unsigned long long)ref->addr, got, f[0].name,
			    f[0].file ? f[0].file : "??", f[0].line, ref->n,
			    ref->f[0].name, ref->f[0].file, ref->f[0].line);
		fail();
	}
	dc->row_quirk++;
	dc->frames += (size_t)ref->n;
	dc->equal += (size_t)ref->n;
}

static void diff_module(const char *bin, size_t n, uint64_t seed,
			struct diff_counts *dc)
{
	struct text_seg ts;
	text_range(bin, &ts);
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	struct a2l_addr *ref = calloc(n, sizeof(*ref));
	char target[PATH_MAX + 32];
	assert_non_null(addrs);
	assert_non_null(ref);
	for (size_t i = 0; i < n; i++)
		addrs[i] = ts.lo + rng_next(&seed) % (ts.hi - ts.lo);
	snprintf(target, sizeof(target), "eu-addr2line -e '%s'", bin);
	assert_int_equal(run_addr2line(target, addrs, n, ref), n);
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_dwarf *dw = dwarf_of(bin);
	for (size_t i = 0; i < n; i++) {
		struct sym_frame f[A2L_FRAMES], fr[A2L_FRAMES];
		int got = sym_file(ctx, bin, addrs[i], f, A2L_FRAMES);
		assert_true(got >= 1);
		assert_true(ref[i].addr == addrs[i]);
		dc->addrs++;
		if (same_frames(&ref[i], f, got, dc))
			continue;
		uint64_t row;
		int gr = 0;
		if (sym_dwarf_line_addr(dw, addrs[i], &row) == 0 &&
		    row != addrs[i])
			gr = sym_file(ctx, bin, row, fr, A2L_FRAMES);
		row_quirk(bin, &ref[i], f, got, fr, gr, dc);
	}
	sym_dwarf_free(dw);
	if (dw_fd >= 0)
		close(dw_fd);
	dw_fd = -1;
	sym_free(ctx);
	free(addrs);
	a2l_free(ref, n);
}

/* ---- a live process against `eu-addr2line -p` ---- */

/* One fixture file a process maps. */
struct proc_file {
	char path[PATH_MAX];
	uint64_t base;    /* load bias, the way the kernel and libdwfl place
			   * it: the lowest mapping less the first PT_LOAD's
			   * page */
	uint64_t lo, hi;  /* run-time addresses of the executable segment's
			   * bytes, from the mapping's file offset */
};

/* The files under the fixture folder that @pid maps, at most @max. */
static size_t proc_files(pid_t pid, struct proc_file *pf, size_t max)
{
	char path[64], line[PATH_MAX + 128];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], file[PATH_MAX];
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start,
			   &end, perms, &pgoff, file) != 5 ||
		    strncmp(file, fixture_dir(), strlen(fixture_dir())) != 0)
			continue;
		size_t i = 0;
		while (i < n && strcmp(pf[i].path, file) != 0)
			i++;
		struct text_seg ts;
		text_range(file, &ts);
		if (i == n) { /* its lowest mapping comes first */
			assert_true(n < max);
			n++;
			snprintf(pf[i].path, sizeof(pf[i].path), "%s", file);
			pf[i].base = start - (ts.first_vaddr & ~0xfffull);
			pf[i].lo = pf[i].hi = 0;
		}
		if (perms[2] != 'x')
			continue;
		/* the executable segment's bytes this mapping holds */
		uint64_t lo = start + ts.off - pgoff;
		uint64_t hi = lo + (ts.hi - ts.lo);
		pf[i].lo = lo > start ? lo : start;
		pf[i].hi = hi < end ? hi : end;
	}
	fclose(f);
	return n;
}

struct proc_counts {
	size_t named;   /* addresses eu-addr2line names */
	size_t lines;   /* ... with a file and line */
	size_t blind;   /* ... without the inline frames we show */
};

/* eu-addr2line (elfutils 0.188) finds no scope for a function whose DIE
 * sits in a DW_TAG_namespace, as LLVM (clang, rustc) writes them: its
 * scope walk prunes DIEs without addresses. It then prints the ELF
 * symbol holding the address, with the line-table row's line and no
 * inline frame, where llvm-symbolizer shows the chain we show. True when
 * @ref may be that: one frame whose file and line are our innermost
 * frame's (llvm-symbolizer then checks our whole chain). */
static bool scope_blind(const struct a2l_addr *ref, const struct sym_frame *f)
{
	const char *file = f[0].file ? f[0].file : "??";
	return ref->n == 1 && strcmp(ref->f[0].name, "??") != 0 &&
	       strcmp(ref->f[0].file, file) == 0 && ref->f[0].line == f[0].line;
}

/* The linkage name (else the name) of the DW_TAG_subprogram holding
 * @vaddr among the DIEs below @die, found by walking all of them; or
 * NULL. */
static const char *dwarf_fn_name(Dwarf_Die *die, uint64_t vaddr)
{
	Dwarf_Die ch;
	if (dwarf_child(die, &ch) != 0)
		return NULL;
	do {
		if (dwarf_tag(&ch) == DW_TAG_subprogram &&
		    dwarf_haspc(&ch, vaddr) == 1) {
			Dwarf_Attribute at;
			const char *n = dwarf_formstring(
				dwarf_attr_integrate(&ch, DW_AT_linkage_name, &at));
			return n ? n : dwarf_diename(&ch);
		}
		const char *n = dwarf_fn_name(&ch, vaddr);
		if (n)
			return n;
	} while (dwarf_siblingof(&ch, &ch) == 0);
	return NULL;
}

/* llvm-symbolizer names the outermost function from the symbol table,
 * which may differ from DWARF's name for it: a local that LLVM promoted
 * carries ".llvm.<n>" there, and of functions merged into one body one
 * symbol remains. Ours, like eu-addr2line's where it finds the scope, is
 * DWARF's: true when @ours is that of the subprogram holding @vaddr. */
static bool outer_name_ok(Dwarf *dw, uint64_t vaddr, const char *ours,
			  const char *llvm)
{
	Dwarf_Die cu;
	if (strcmp(ours, llvm) == 0)
		return true;
	if (!dwarf_addrdie(dw, vaddr, &cu))
		return false;
	const char *n = dwarf_fn_name(&cu, vaddr);
	return n && strcmp(n, ours) == 0;
}

/* Our frames for the run-time addresses @addrs[@idx[0..n)] in @p equal
 * what llvm-symbolizer says of their ELF virtual addresses, frame for
 * frame (the outermost function's name as outer_name_ok() has it). */
static void check_llvm(struct sym_ctx *ctx, pid_t pid,
		       const struct proc_file *p, const uint64_t *addrs,
		       const size_t *idx, size_t n, struct proc_counts *pc)
{
	uint64_t *va = calloc(n ? n : 1, sizeof(*va));
	struct a2l_addr *ref = calloc(n ? n : 1, sizeof(*ref));
	char tool[PATH_MAX + 80];
	int fd = open(p->path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	assert_non_null(va);
	assert_non_null(ref);
	assert_non_null(dw);
	for (size_t i = 0; i < n; i++)
		va[i] = addrs[idx[i]] - p->base;
	if (snprintf(tool, sizeof(tool), "llvm-symbolizer --obj='%s' "
		     "--no-demangle --output-style=GNU", p->path) >= (int)sizeof(tool))
		fail_msg("path too long: %s", p->path);
	assert_int_equal(run_addr2line(tool, va, n, ref), n);
	for (size_t i = 0; i < n; i++) {
		struct sym_frame f[A2L_FRAMES];
		int got = sym_user(ctx, pid, addrs[idx[i]], f, A2L_FRAMES);
		const struct a2l_frame *ro = &ref[i].f[got - 1];
		const char *of = f[got - 1].file ? f[got - 1].file : "??";
		if (got == ref[i].n && frames_equal(&ref[i], 0, got - 1, f, got) &&
		    strcmp(ro->file, of) == 0 && ro->line == f[got - 1].line &&
		    outer_name_ok(dw, va[i], f[got - 1].name, ro->name))
			continue;
		print_error("%s 0x%llx: ours %d frames (%s ... %s), "
			    "llvm-symbolizer %d (%s ... %s)\n", p->path,
			    (unsigned long long)va[i], got, f[0].name,
			    f[got - 1].name, ref[i].n, ref[i].f[0].name,
			    ref[i].f[ref[i].n - 1].name);
		fail();
	}
	pc->blind += n;
	dwarf_end(dw);
	close(fd);
	free(va);
	a2l_free(ref, n);
}

/* Samples @per addresses from the executable segment of every fixture
 * file the running fixture @name maps (every byte when it has fewer),
 * and checks that sym_user() names each as `eu-addr2line -p PID` does,
 * frame for frame (where eu-addr2line is blind to a scope, as
 * llvm-symbolizer does). */
static void diff_process(const char *name, size_t per, uint64_t seed,
			 struct diff_counts *dc, struct proc_counts *pc)
{
	struct child c;
	struct proc_file pf[4];
	child_start(&c, fix(name));
	child_read_addrs(&c, NULL, NULL, 0);
	size_t npf = proc_files(c.pid, pf, 4);
	assert_true(npf >= 1);
	uint64_t *addrs = calloc(npf * per, sizeof(*addrs));
	uint8_t *which = calloc(npf * per, 1);
	uint8_t *blind = calloc(npf * per, 1);
	size_t *idx = calloc(npf * per, sizeof(*idx));
	struct a2l_addr *ref = calloc(npf * per, sizeof(*ref));
	assert_non_null(addrs);
	assert_non_null(which);
	assert_non_null(blind);
	assert_non_null(idx);
	assert_non_null(ref);
	size_t n = 0;
	for (size_t k = 0; k < npf; k++) {
		uint64_t len = pf[k].hi - pf[k].lo;
		assert_true(pf[k].lo < pf[k].hi);
		for (size_t i = 0; i < per && i < len; i++, n++) {
			addrs[n] = pf[k].lo + (len <= per ? i : rng_next(&seed) % len);
			which[n] = (uint8_t)k;
		}
	}
	char tool[64];
	snprintf(tool, sizeof(tool), "eu-addr2line -p %d", (int)c.pid);
	assert_int_equal(run_addr2line(tool, addrs, n, ref), n);
	struct sym_ctx *ctx = sym_new(NULL);
	for (size_t i = 0; i < n; i++) {
		struct sym_frame f[A2L_FRAMES], fr[A2L_FRAMES];
		int got = sym_user(ctx, c.pid, addrs[i], f, A2L_FRAMES);
		assert_true(got >= 1);
		assert_true(ref[i].addr == addrs[i]);
		dc->addrs++;
		pc->named += strcmp(ref[i].f[0].name, "??") != 0;
		pc->lines += ref[i].f[0].line != 0;
		if (same_frames(&ref[i], f, got, dc))
			continue;
		if (scope_blind(&ref[i], f)) {
			blind[i] = 1;
			continue;
		}
		const struct proc_file *p = &pf[which[i]];
		struct sym_dwarf *dw = dwarf_of(p->path);
		uint64_t row, vaddr = addrs[i] - p->base;
		int gr = 0;
		if (sym_dwarf_line_addr(dw, vaddr, &row) == 0 && row != vaddr)
			gr = sym_user(ctx, c.pid, row + p->base, fr, A2L_FRAMES);
		row_quirk(p->path, &ref[i], f, got, fr, gr, dc);
		sym_dwarf_free(dw);
		close(dw_fd);
		dw_fd = -1;
	}
	for (size_t k = 0; k < npf; k++) {
		size_t nb = 0;
		for (size_t i = 0; i < n; i++)
			if (blind[i] && which[i] == k)
				idx[nb++] = i;
		check_llvm(ctx, c.pid, &pf[k], addrs, idx, nb, pc);
	}
	sym_free(ctx);
	child_stop(&c);
	free(addrs);
	free(which);
	free(blind);
	free(idx);
	a2l_free(ref, n);
}

/* Programs linked by LLD, whose read-only and executable segments share
 * the file's first page, and one linked by BFD: every address of their
 * executable segments (C, C++ and its shared library, Rust with its
 * standard library), looked up in the running process, is named as
 * `eu-addr2line -p` names it, inline frames, files and lines included. */
static void test_process_lld(void **state)
{
	(void)state;
	struct diff_counts dc = { 0 };
	struct proc_counts pc = { 0 };
	diff_process("sym_funcs_lld", 2000, 0x56789ab, &dc, &pc);
	diff_process("sym_funcs", 1000, 0x6789abc, &dc, &pc);
	diff_process("sym_cxx_lld", 1500, 0x789abcd, &dc, &pc);
	diff_process("sym_rust_legacy_lld", 1000, 0x89abcde, &dc, &pc);
	assert_int_equal(dc.equal, dc.frames);
	print_message("process: %zu addresses (%zu named, %zu with a line), "
		      "%zu frames equal, %zu unnamed in both, %zu with "
		      "eu-addr2line's row-start chain, %zu checked by "
		      "llvm-symbolizer where it is blind\n", dc.addrs, pc.named, pc.lines,
		      dc.equal, dc.unnamed_both, dc.row_quirk, pc.blind);
	/* most of what was compared has a name and a line to get wrong */
	assert_true(pc.named * 100 >= dc.addrs * 85);
	assert_true(pc.lines * 2 >= dc.addrs);
}

/* ---- a stripped Go program against its unstripped twin ---- */

/* Go name @ours equals DWARF's @dw where each "[...]" of ours stands for
 * a bracketed part of @dw (the table shortens type arguments and array
 * lengths so, as Go's tracebacks print them), and @dw may end in ".abi0"
 * (DWARF names assembly functions with their ABI, the table does not). */
static bool go_name_equal(const char *dw, const char *ours)
{
	while (*ours) {
		if (strncmp(ours, "[...]", 5) == 0 && *dw == '[') {
			int depth = 0;
			do
				depth += *dw == '[' ? 1 : *dw == ']' ? -1 : 0;
			while (*++dw && depth > 0);
			ours += 5;
			continue;
		}
		if (*dw++ != *ours++)
			return false;
	}
	return *dw == '\0' || strcmp(dw, ".abi0") == 0;
}

/* Our frame from the Go table equals llvm-symbolizer's from the twin's
 * DWARF, but for the names' spelling (go_name_equal()) and the file of
 * generated code, "./<autogenerated>" in DWARF, "<autogenerated>" in the
 * table. */
static bool go_frame_equal(const struct a2l_frame *r, const struct sym_frame *f)
{
	const char *file = strcmp(r->file, "./<autogenerated>") == 0 ?
		"<autogenerated>" : r->file;
	return go_name_equal(r->name, f->name) && f->file &&
	       strcmp(file, f->file) == 0 && r->line == f->line &&
	       f->lang == PROF_LANG_GO;
}

/* The addresses of the instructions of @path (objdump's disassembly),
 * but padding (int3, nop, xchg %ax,%ax), at most @max; how many. */
static size_t instructions(const char *path, uint64_t *out, size_t max)
{
	char cmd[PATH_MAX + 64], line[512];
	size_t n = 0;
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s'", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *end, *tab = strchr(line, '\t');
		unsigned long long a = strtoull(line, &end, 16);
		if (!tab || *end != ':' || end == line || n == max ||
		    strncmp(tab + 1, "int3", 4) == 0 ||
		    strncmp(tab + 1, "nop", 3) == 0 ||
		    strncmp(tab + 1, "xchg   %ax,%ax", 14) == 0)
			continue;
		out[n++] = a;
	}
	assert_int_equal(pclose(p), 0);
	return n;
}

/* True when @inner is the value method that the pointer wrapper @outer
 * ("pkg.(*T).M", which the compiler writes for "pkg.T.M") calls: Go's
 * DWARF records no call inlined into such a wrapper (it gives the
 * wrapper's name with the inlined body's line), its table and its
 * tracebacks do. */
static bool go_wrapped(const char *inner, const char *outer)
{
	const char *star = strstr(outer, "(*"), *close;
	if (!star || !(close = strchr(star, ')')))
		return false;
	size_t a = (size_t)(star - outer), b = (size_t)(close - star - 2);
	return strlen(inner) == strlen(outer) - 3 &&
	       strncmp(inner, outer, a) == 0 &&
	       strncmp(inner + a, star + 2, b) == 0 &&
	       strcmp(inner + a + b, close + 1) == 0;
}

/* 3,000 instructions of a Go program (its runtime's among them; not
 * padding, where DWARF and the table may place a line differently),
 * built with `go build -ldflags='-s -w'`: named from .gopclntab, inlined
 * calls included, as llvm-symbolizer names them from the DWARF of the
 * same program built unstripped (same code at the same addresses). Where
 * DWARF knows nothing, the table names the function and no line; where
 * it records no inlined call (in a pointer wrapper, go_wrapped()), the
 * table has one. */
static void test_go_table(void **state)
{
	(void)state;
	enum { N = 3000 };
	const char *bin = fix("sym_go"), *stripped = fix("sym_go_stripped");
	enum { MAXI = 1 << 20 };
	uint64_t seed = 0x9abcdef, *addrs = calloc(N, sizeof(*addrs));
	uint64_t *insn = calloc(MAXI, sizeof(*insn));
	struct a2l_addr *ref = calloc(N, sizeof(*ref));
	char tool[PATH_MAX + 80];
	size_t inl = 0, none = 0, wrapped = 0;
	assert_non_null(addrs);
	assert_non_null(ref);
	assert_non_null(insn);
	size_t ni = instructions(stripped, insn, MAXI);
	assert_true(ni > 10000);
	for (size_t i = 0; i < N; i++)
		addrs[i] = insn[rng_next(&seed) % ni];
	free(insn);
	snprintf(tool, sizeof(tool), "llvm-symbolizer --obj='%s' "
		 "--no-demangle --output-style=GNU", bin);
	assert_int_equal(run_addr2line(tool, addrs, N, ref), N);
	struct sym_ctx *ctx = sym_new(NULL);
	for (size_t i = 0; i < N; i++) {
		struct sym_frame f[A2L_FRAMES];
		int got = sym_file(ctx, stripped, addrs[i], f, A2L_FRAMES);
		bool ok = got >= 1;
		if (ok && strcmp(ref[i].f[0].name, "??") == 0) {
			ok = got == 1 && !f[0].file && f[0].line == 0;
			none++;
		} else if (got == 2 && ref[i].n == 1 &&
			   go_wrapped(f[0].name, f[1].name)) {
			/* a value method inlined into its pointer wrapper */
			struct sym_frame w = f[0];
			w.name = f[1].name;
			ok = go_frame_equal(&ref[i].f[0], &w);
			wrapped++;
		} else {
			ok = ok && got == ref[i].n;
			for (int k = 0; ok && k < got; k++)
				ok = go_frame_equal(&ref[i].f[k], &f[k]) &&
				     f[k].inlined == (k + 1 < got);
			inl += got > 1;
		}
		if (!ok) {
			print_error("0x%llx: ours %d frames (%s %s:%u), "
				    "llvm-symbolizer %d (%s %s:%u)\n",
				    (unsigned long long)addrs[i], got, f[0].name,
				    f[0].file ? f[0].file : "??", f[0].line,
				    ref[i].n, ref[i].f[0].name, ref[i].f[0].file,
				    ref[i].f[0].line);
			fail();
		}
	}
	print_message("go: %d addresses, %zu with inlined calls (%zu in a "
		      "pointer wrapper), %zu where DWARF has nothing\n", N,
		      inl, wrapped, none);
	assert_true(inl > N / 20);
	assert_true(none < N / 10);
	sym_free(ctx);
	free(addrs);
	a2l_free(ref, N);
}

/* The path of a library this process maps (by basename prefix). */
static void mapped_lib(const char *prefix, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		const char *base = strrchr(p, '/') + 1;
		if (strncmp(base, prefix, strlen(prefix)) == 0) {
			snprintf(out, len, "%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
	assert_true(out[0] != '\0');
}

/* 10,000 addresses: names, files and lines equal eu-addr2line's for every
 * frame, inline frames included. The one tolerated difference: where
 * eu-addr2line prints "??" (no symbol at all) we print module+0xoffset,
 * which the test checks is marked unresolved. */
static void test_differential(void **state)
{
	(void)state;
	char libc[PATH_MAX], libstdcxx[PATH_MAX];
	mapped_lib("libc.so", libc, sizeof(libc));
	mapped_lib("libstdc++.so", libstdcxx, sizeof(libstdcxx));
	struct diff_counts dc = { 0 };
	diff_module(libc, 4000, 0x1234567, &dc);
	diff_module(libstdcxx, 3000, 0x2345678, &dc);
	diff_module(fix("sym_funcs"), 1000, 0x3456789, &dc);
	diff_module(fix("sym_cpp"), 2000, 0x456789a, &dc);
	assert_int_equal(dc.addrs, 10000);
	assert_int_equal(dc.equal, dc.frames);
	print_message("differential: %zu addresses, %zu frames equal, %zu "
		      "unnamed in both, %zu with eu-addr2line's row-start chain\n",
		      dc.addrs, dc.equal, dc.unnamed_both, dc.row_quirk);
}

int main(void)
{
	/* libstdc++ mapped here too, so its path is known */
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW);
	if (!cxx) {
		fprintf(stderr, "libstdc++.so.6 cannot be loaded\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_process_lld),
		cmocka_unit_test(test_go_table),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	dlclose(cxx);
	return rc;
}
