/* SPDX-License-Identifier: MIT */
/*
 * The CFI compiler against the real tools: every row readelf's
 * frames-interp table prints for libc and the no-frame-pointer fixtures
 * must have our rule over its whole range, and real stacks stopped with
 * ptrace must unwind with our rows to the return addresses libdw's
 * unwinder (symbolize/unwind.c) finds in the same bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/cfi.h"
#include "tests/unit/sym_child.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LD_SO "/lib64/ld-linux-x86-64.so.2"

/* ---- what readelf says -------------------------------------------------- */

struct ref_row {
	uint64_t loc;
	char cfa[32], rbp[32], ra[32];
};

struct ref_cie;

struct ref_fde {
	uint64_t start, end;
	const struct ref_cie *cie;
	size_t first, n; /* rows in ref.rows */
};

struct ref_cie {
	unsigned long off;
	bool signal;
	struct ref_row init;
};

struct ref {
	struct ref_fde *fdes;
	size_t nfdes;
	struct ref_row *rows;
	size_t nrows;
	struct ref_cie cies[64];
	size_t ncies;
};

/* An ELF file's layout, read independently of the compiler. */
struct layout {
	uint64_t base;
	uint64_t seg_lo[4], seg_hi[4];
	size_t nsegs;
	uint64_t plt_lo, plt_hi; /* .plt */
};

static void *grow(void *v, size_t n, size_t size)
{
	/* Doubling at powers of two is enough for a test. */
	if (n && (n & (n - 1)))
		return v;
	v = realloc(v, (n ? n * 2 : 64) * size);
	assert_non_null(v);
	return v;
}

/* The columns of one table line: readelf writes a register held in
 * another as "r9 (r9)", so a word opening with '(' joins the one before. */
static size_t split(char *line, char **cols, size_t max)
{
	size_t n = 0;

	for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
		if (tok[0] == '(' && n)
			continue; /* the name of the register in the word before */
		if (n < max)
			cols[n++] = tok;
	}
	return n;
}

static void take_row(struct ref_row *r, char **names, size_t nnames, char **vals,
		     size_t nvals)
{
	memset(r, 0, sizeof(*r));
	r->loc = strtoull(vals[0], NULL, 16);
	for (size_t i = 1; i < nnames && i < nvals; i++) {
		char *dst = !strcmp(names[i], "CFA") ? r->cfa :
			    !strcmp(names[i], "rbp") ? r->rbp :
			    !strcmp(names[i], "ra") ? r->ra : NULL;

		if (dst)
			snprintf(dst, sizeof(r->cfa), "%s", vals[i]);
	}
}

static struct ref_cie *cie_of(struct ref *ref, unsigned long off)
{
	for (size_t i = 0; i < ref->ncies; i++)
		if (ref->cies[i].off == off)
			return &ref->cies[i];
	return NULL;
}

/* readelf --debug-dump=frames-interp of @path. */
static void ref_read(const char *path, struct ref *ref)
{
	char cmd[PATH_MAX + 64], line[1024], header[1024] = "", *names[32];
	size_t nnames = 0;
	struct ref_cie *cie = NULL;
	struct ref_fde *fde = NULL;
	FILE *p;

	memset(ref, 0, sizeof(*ref));
	/* Not following links: libc's separate debug file has a NOBITS
	 * .eh_frame that makes readelf fail. */
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=no-follow-links "
		 "--debug-dump=frames-interp '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long off, cieoff;
		unsigned long long lo, hi;
		char aug[32], *vals[32];
		size_t nvals;
		int k = sscanf(line, "%lx %*x %*x CIE \"%31[^\"]\"", &off, aug);

		if (k >= 1 && strstr(line, " CIE \"")) {
			if (k < 2)
				aug[0] = '\0';
			assert_true(ref->ncies < 64);
			cie = &ref->cies[ref->ncies++];
			*cie = (struct ref_cie){ .off = off, .signal = strchr(aug, 'S') != NULL };
			fde = NULL;
		} else if (sscanf(line, "%*x %*x %*x FDE cie=%lx pc=%llx..%llx",
				  &cieoff, &lo, &hi) == 3) {
			struct ref_cie *c = cie_of(ref, cieoff);

			assert_non_null(c);
			ref->fdes = grow(ref->fdes, ref->nfdes, sizeof(*ref->fdes));
			fde = &ref->fdes[ref->nfdes++];
			*fde = (struct ref_fde){ .start = lo, .end = hi,
						 .cie = c,
						 .first = ref->nrows };
			cie = NULL;
		} else if (strstr(line, "   LOC ")) {
			snprintf(header, sizeof(header), "%s", line);
			nnames = split(header, names, 32);
		} else if (line[0] >= '0' && line[0] <= '9' && strlen(line) > 17 &&
			   line[16] == ' ' && (cie || fde) && nnames) {
			nvals = split(line, vals, 32);
			if (cie) {
				take_row(&cie->init, names, nnames, vals, nvals);
				continue;
			}
			ref->rows = grow(ref->rows, ref->nrows, sizeof(*ref->rows));
			take_row(&ref->rows[ref->nrows++], names, nnames, vals, nvals);
			fde->n++;
		}
	}
	assert_int_equal(pclose(p), 0);
}

static void ref_free(struct ref *ref)
{
	free(ref->fdes);
	free(ref->rows);
}

static void layout_read(const char *path, struct layout *l)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t nph, shstrndx;
	Elf_Scn *scn = NULL;
	Elf *e;

	memset(l, 0, sizeof(*l));
	l->base = UINT64_MAX;
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		assert_non_null(gelf_getphdr(e, (int)i, &ph));
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < l->base)
			l->base = ph.p_vaddr & ~0xfffULL;
		if ((ph.p_flags & PF_X) && l->nsegs < 4) {
			l->seg_lo[l->nsegs] = ph.p_vaddr;
			l->seg_hi[l->nsegs++] = ph.p_vaddr + ph.p_memsz;
		}
	}
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(e, shstrndx, sh.sh_name), ".plt")) {
			l->plt_lo = sh.sh_addr;
			l->plt_hi = sh.sh_addr + sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
}

/* The executable segment's part of [*lo, *hi); false when none. */
static bool clip_exec(const struct layout *l, uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < l->nsegs; i++) {
		if (*lo >= l->seg_hi[i] || *hi <= l->seg_lo[i])
			continue;
		if (*lo < l->seg_lo[i])
			*lo = l->seg_lo[i];
		if (*hi > l->seg_hi[i])
			*hi = l->seg_hi[i];
		return *lo < *hi;
	}
	return false;
}

/* A readelf cell "reg+N" / "c-N": its number after @prefix. */
static bool cell_off(const char *cell, const char *prefix, long *off)
{
	size_t n = strlen(prefix);
	char *end;

	if (strncmp(cell, prefix, n) != 0 || (cell[n] != '+' && cell[n] != '-'))
		return false;
	*off = strtol(cell + n, &end, 10);
	return *end == '\0';
}

/* The row the contract of bpf/unwind.h asks for, from readelf's cells,
 * in the order the rules apply: a signal frame, the return address, the
 * saved rbp, then the CFA. */
static struct hearth_cfi_row expected(const struct ref_row *r, bool signal,
				      bool in_plt)
{
	struct hearth_cfi_row x = { .cfa_rule = HEARTH_CFA_MORE };
	long off;

	if (signal)
		return x;
	if (!strcmp(r->ra, "u")) {
		x.cfa_rule = HEARTH_CFA_END;
		return x;
	}
	if (strcmp(r->ra, "c-8") != 0)
		return x;
	/* Not mentioned, or "u" before its first save: rbp unchanged. */
	if (cell_off(r->rbp, "c", &off) && off >= INT16_MIN && off <= INT16_MAX) {
		x.fp_rule = HEARTH_FP_AT_CFA;
		x.fp_off = (int16_t)off;
	} else if (r->rbp[0] && strcmp(r->rbp, "u") && strcmp(r->rbp, "s")) {
		return x;
	}
	if (!strcmp(r->cfa, "exp") && in_plt) {
		x.cfa_rule = HEARTH_CFA_PLT;
	} else if (cell_off(r->cfa, "rsp", &off) && off >= 8 && off <= INT16_MAX) {
		x.cfa_rule = HEARTH_CFA_SP;
		x.cfa_off = (int16_t)off;
	} else if (cell_off(r->cfa, "rbp", &off) && off >= INT16_MIN && off <= INT16_MAX) {
		x.cfa_rule = HEARTH_CFA_FP;
		x.cfa_off = (int16_t)off;
	} else {
		x.fp_rule = 0;
		x.fp_off = 0;
	}
	return x;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct ref_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void assert_row(const struct hearth_cfi_row *got, const struct hearth_cfi_row *want,
		       uint64_t vaddr)
{
	if (got && got->cfa_rule == want->cfa_rule && got->cfa_off == want->cfa_off &&
	    got->fp_rule == want->fp_rule && got->fp_off == want->fp_off)
		return;
	fail_msg("at %#llx: got rule %d off %d fp %d/%d, readelf says %d off %d fp %d/%d",
		 (unsigned long long)vaddr, got ? got->cfa_rule : -1, got ? got->cfa_off : 0,
		 got ? got->fp_rule : -1, got ? got->fp_off : 0, want->cfa_rule,
		 want->cfa_off, want->fp_rule, want->fp_off);
}

/* Checks one readelf row [lo, hi): our row at lo has its rule and no
 * other row starts before hi. */
static void check_range(const struct sym_cfi_table *t, uint64_t lo, uint64_t hi,
			const struct hearth_cfi_row *want)
{
	const struct hearth_cfi_row *got = sym_cfi_find(t, lo - t->base);

	assert_row(got, want, lo);
	if (got + 1 < t->rows + t->n && got[1].pc < hi - t->base)
		fail_msg("a row starts at %#llx inside readelf's [%#llx, %#llx)",
			 (unsigned long long)(got[1].pc + t->base),
			 (unsigned long long)lo, (unsigned long long)hi);
}

/* Every address readelf describes has our rule; every gap between FDEs,
 * a NONE row; every row of ours lies in an FDE. Returns the rows
 * checked. */
static size_t compare_with_readelf(const char *path)
{
	struct ref ref;
	struct layout l;
	struct sym_cfi_table t;
	size_t checked = 0;
	int fd;

	ref_read(path, &ref);
	layout_read(path, &l);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(sym_cfi_compile(fd, &t), 0);
	close(fd);
	assert_int_equal(t.base, l.base);
	assert_true(ref.nfdes > 0);
	qsort(ref.fdes, ref.nfdes, sizeof(*ref.fdes), fde_cmp);
	for (size_t i = 0; i < ref.nfdes; i++) {
		const struct ref_fde *f = &ref.fdes[i];
		uint64_t flo = f->start, fhi = f->end;

		/* These files have no FDEs that overlap. */
		assert_true(i == 0 || ref.fdes[i - 1].end <= f->start);
		if (!clip_exec(&l, &flo, &fhi))
			continue;
		for (size_t k = 0; k <= f->n; k++) {
			const struct ref_row *r = k < f->n ? &ref.rows[f->first + k] : NULL;
			uint64_t lo = k ? ref.rows[f->first + k - 1].loc : f->start;
			uint64_t hi = r ? r->loc : f->end;
			const struct ref_row *rule = k ? &ref.rows[f->first + k - 1] : NULL;
			struct hearth_cfi_row want;

			/* Before the first printed row, or with none: the
			 * CIE's initial rules. */
			if (!rule && f->n && ref.rows[f->first].loc <= f->start)
				continue;
			if (!rule)
				rule = &f->cie->init;
			if (!clip_exec(&l, &lo, &hi))
				continue;
			want = expected(rule, f->cie->signal, lo >= l.plt_lo && lo < l.plt_hi);
			check_range(&t, lo, hi, &want);
			checked++;
		}
		/* A gap after this FDE: no rule there. */
		if ((i + 1 == ref.nfdes || ref.fdes[i + 1].start > f->end) && f->end == fhi) {
			const struct hearth_cfi_row *g = sym_cfi_find(&t, fhi - t.base);

			assert_non_null(g);
			assert_int_equal(g->cfa_rule, HEARTH_CFA_NONE);
		}
	}
	/* The other way: each row of ours inside an FDE readelf shows. */
	for (size_t i = 0; i < t.n; i++) {
		uint64_t v = t.rows[i].pc + t.base;
		size_t lo = 0, hi = ref.nfdes;

		if (t.rows[i].cfa_rule == HEARTH_CFA_NONE)
			continue;
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (ref.fdes[mid].start <= v)
				lo = mid;
			else
				hi = mid;
		}
		if (!(ref.fdes[lo].start <= v && v < ref.fdes[lo].end))
			fail_msg("row at %#llx lies in no FDE", (unsigned long long)v);
	}
	sym_cfi_table_free(&t);
	ref_free(&ref);
	return checked;
}

static void test_libc_matches_readelf(void **state)
{
	(void)state;
	/* libc has thousands of FDEs; each row of each was checked. */
	assert_true(compare_with_readelf(LIBC) > 20000);
}

static void test_nofp_fixture_matches_readelf(void **state)
{
	(void)state;
	assert_true(compare_with_readelf(fix("unwind_nofp")) > 20);
}

/* Not a PIE: the base is 0x400000 and every pc is relative to it. */
static void test_nopie_fixture_matches_readelf(void **state)
{
	(void)state;
	assert_true(compare_with_readelf(fix("unwind_nofp_nopie")) > 20);
}

static void test_cxx_library_matches_readelf(void **state)
{
	(void)state;
	assert_true(compare_with_readelf(fix("libnofp.so")) > 10);
}

/* The rows libc needs beyond SP/FP + offset are there: its lazy PLT,
 * the outermost frame of a new thread, the signal return trampoline. */
static void test_libc_special_rows(void **state)
{
	struct sym_cfi_table t;
	struct layout l;
	size_t plt = 0, end = 0, more = 0;
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(sym_cfi_compile(fd, &t), 0);
	close(fd);
	layout_read(LIBC, &l);
	assert_int_equal(t.build_id_len, 20);
	for (size_t i = 0; i < t.n; i++) {
		if (i)
			assert_true(t.rows[i - 1].pc < t.rows[i].pc);
		plt += t.rows[i].cfa_rule == HEARTH_CFA_PLT;
		end += t.rows[i].cfa_rule == HEARTH_CFA_END;
		more += t.rows[i].cfa_rule == HEARTH_CFA_MORE;
		if (t.rows[i].cfa_rule == HEARTH_CFA_PLT)
			assert_true(t.rows[i].pc + t.base >= l.plt_lo &&
				    t.rows[i].pc + t.base < l.plt_hi);
	}
	assert_int_equal(plt, 1);
	assert_true(end >= 1);
	assert_true(more >= 1);
	sym_cfi_table_free(&t);
}

/* The entry point of @path, and the compiled rows of @path in @t. */
static uint64_t compile_with_entry(const char *path, struct sym_cfi_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	GElf_Ehdr eh;

	assert_true(fd >= 0);
	assert_int_equal(sym_cfi_compile(fd, t), 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_non_null(gelf_getehdr(e, &eh));
	elf_end(e);
	close(fd);
	return eh.e_entry;
}

/* A program whose _start has no CFI (as musl's): its entry function is
 * the outermost frame, up to the next function and no further; glibc's
 * _start keeps the rule its own CFI gives, a library's entry point
 * (libc's prints its version) is left alone, and the loader's _start,
 * without CFI, is the outermost frame too. */
static void test_entry_without_cfi(void **state)
{
	struct sym_cfi_table t;
	uint64_t entry = compile_with_entry(fix("start_nocfi"), &t);
	const struct hearth_cfi_row *r;

	(void)state;
	r = sym_cfi_find(&t, entry - t.base);
	assert_non_null(r);
	assert_int_equal(r->cfa_rule, HEARTH_CFA_END);
	/* the return address of its call to start_c (xor, mov, and, call:
	 * 3 + 3 + 4 + 5 bytes) */
	r = sym_cfi_find(&t, entry + 15 - t.base);
	assert_int_equal(r->cfa_rule, HEARTH_CFA_END);
	/* the next function has CFI: an SP rule, not the entry's */
	r = sym_cfi_find(&t, entry + 16 - t.base);
	assert_true(r->cfa_rule == HEARTH_CFA_NONE || r->cfa_rule == HEARTH_CFA_SP);
	for (size_t i = 0; i < t.n; i++) {
		if (i)
			assert_true(t.rows[i - 1].pc < t.rows[i].pc);
		if (t.rows[i].cfa_rule == HEARTH_CFA_END)
			assert_true(t.rows[i].pc + t.base == entry);
	}
	sym_cfi_table_free(&t);

	entry = compile_with_entry(fix("unwind_nofp"), &t);
	r = sym_cfi_find(&t, entry - t.base);
	assert_true(r->cfa_rule != HEARTH_CFA_NONE && r->cfa_rule != HEARTH_CFA_MORE);
	sym_cfi_table_free(&t);

	entry = compile_with_entry(LIBC, &t);
	r = sym_cfi_find(&t, entry - t.base);
	assert_int_equal(r->cfa_rule, HEARTH_CFA_SP);
	sym_cfi_table_free(&t);

	/* glibc's loader: its _start calls _dl_start without CFI */
	entry = compile_with_entry(LD_SO, &t);
	r = sym_cfi_find(&t, entry - t.base);
	assert_int_equal(r->cfa_rule, HEARTH_CFA_END);
	sym_cfi_table_free(&t);
}

static void test_not_elf_or_no_cfi(void **state)
{
	struct sym_cfi_table t;
	char path[] = "/tmp/hearth-cfi-XXXXXX", cmd[PATH_MAX + 128];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file at all", 22), 22);
	assert_int_equal(sym_cfi_compile(fd, &t), -EINVAL);
	assert_null(t.rows);
	close(fd);
	/* A separate debug file: its .eh_frame is NOBITS, and gcc wrote no
	 * .debug_frame. */
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s' '%s'",
		 fix("unwind_nofp"), path);
	assert_int_equal(system(cmd), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(sym_cfi_compile(fd, &t), -ENOENT);
	close(fd);
	unlink(path);
}

/* ---- real stacks -------------------------------------------------------- */

struct proc_maps {
	struct sym_cfi_map maps[64];
	struct sym_cfi_table tables[64];
	size_t n;
	uint64_t stack_end; /* of the mapping holding the stack pointer */
};

/* The load bias of the file mapping [start, ...) at file offset @off: from
 * the PT_LOAD that holds that offset. */
static uint64_t bias_of(int fd, uint64_t start, uint64_t off)
{
	uint64_t bias = 0;
	size_t nph;
	Elf *e;

	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && off >= (ph.p_offset & ~0xfffULL) &&
		    off < ph.p_offset + ph.p_filesz)
			bias = start - (off - ph.p_offset + ph.p_vaddr);
	}
	elf_end(e);
	return bias;
}

/* The vDSO of @pid, copied from its memory into a file. */
static int vdso_copy(pid_t pid, uint64_t lo, uint64_t hi)
{
	char path[64];
	uint8_t *buf = malloc(hi - lo);
	int mem, fd = memfd_create("vdso", MFD_CLOEXEC);

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	assert_non_null(buf);
	assert_true(mem >= 0 && fd >= 0);
	assert_int_equal(pread(mem, buf, hi - lo, (off_t)lo), (ssize_t)(hi - lo));
	assert_int_equal(write(fd, buf, hi - lo), (ssize_t)(hi - lo));
	close(mem);
	free(buf);
	return fd;
}

static void maps_read(pid_t pid, uint64_t sp, struct proc_maps *pm)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	memset(pm, 0, sizeof(*pm));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], file[PATH_MAX] = "";
		int fd;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %4095s", &lo, &hi, perms,
			   &off, file) < 4)
			continue;
		if (sp >= lo && sp < hi)
			pm->stack_end = hi;
		if (perms[2] != 'x' || (file[0] != '/' && strcmp(file, "[vdso]")))
			continue;
		assert_true(pm->n < 64);
		fd = file[0] == '/' ? open(file, O_RDONLY | O_CLOEXEC) : vdso_copy(pid, lo, hi);
		assert_true(fd >= 0);
		assert_int_equal(sym_cfi_compile(fd, &pm->tables[pm->n]), 0);
		pm->maps[pm->n] = (struct sym_cfi_map){
			.start = lo, .end = hi, .bias = bias_of(fd, lo, off),
			.table = &pm->tables[pm->n] };
		close(fd);
		pm->n++;
	}
	fclose(f);
}

static void maps_free(struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		sym_cfi_table_free(&pm->tables[i]);
}

/* Stops thread @tid of @pid, copies its registers and stack (up to 256
 * KiB, or the stack mapping's end), and lets it run again. */
static void capture(pid_t pid, pid_t tid, struct sym_stack_copy *c, uint8_t *buf,
		    size_t cap, struct proc_maps *pm)
{
	struct user_regs_struct r;
	char path[64];
	int st, fd;
	size_t size;

	assert_int_equal(ptrace(PTRACE_SEIZE, tid, 0, 0), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, tid, 0, 0), 0);
	assert_int_equal(waitpid(tid, &st, __WALL), tid);
	assert_int_equal(ptrace(PTRACE_GETREGS, tid, 0, &r), 0);
	c->regs = (struct sym_regs){ .ip = r.rip, .sp = r.rsp, .bp = r.rbp };
	maps_read(pid, r.rsp, pm);
	assert_true(pm->stack_end > r.rsp);
	size = pm->stack_end - r.rsp < cap ? pm->stack_end - r.rsp : cap;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, size, (off_t)r.rsp), (ssize_t)size);
	close(fd);
	c->data = buf;
	c->size = size;
	assert_int_equal(ptrace(PTRACE_DETACH, tid, 0, 0), 0);
}

/* The address range of function @name in the ELF at @path (vaddr). */
static void symbol_range(const char *path, const char *name, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	Elf *e;

	*lo = *hi = 0;
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;

			if (gelf_getsym(d, (int)i, &s) &&
			    !strcmp(elf_strptr(e, sh.sh_link, s.st_name), name)) {
				*lo = s.st_value;
				*hi = s.st_value + s.st_size;
			}
		}
	}
	elf_end(e);
	close(fd);
	assert_true(*lo < *hi);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The pc of @tid blocked in a system call, as the kernel reports it;
 * waits up to 5 s for it to block. */
static uint64_t blocked_pc(pid_t pid, pid_t tid)
{
	char path[96], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		char *last;
		size_t n;

		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (n && buf[0] >= '0' && buf[0] <= '9' && (last = strrchr(buf, ' ')))
			return strtoull(last + 1, NULL, 16);
		nap_ms(10);
	}
	fail_msg("thread %d never blocked", (int)tid);
	return 0;
}

/* One stop of @tid: our walk and libdw's give the same return addresses,
 * whole; returns how many frames (0 when @chain is asked and missing). With @blocked, the stop is taken while
 * the thread sleeps in a system call (a thread stopped anywhere else may
 * be in code no CFI covers: clone3's child before its first
 * instruction). With @chain, level3's return address in the fixture @exe
 * is looked for among the frames. */
static size_t compare_walks(struct sym_unwinder *u, pid_t pid, pid_t tid,
			    const char *exe, bool blocked, bool chain)
{
	static uint8_t buf[256 << 10];
	struct sym_stack_copy c;
	struct proc_maps pm;
	uint64_t ours[128], theirs[128], lo, hi;
	int ours_whole, theirs_whole, n;
	size_t m;
	bool found = false;

	for (int tries = 0;; tries++) {
		uint64_t pc = blocked ? blocked_pc(pid, tid) : 0;

		capture(pid, tid, &c, buf, sizeof(buf), &pm);
		if (!blocked || c.regs.ip == pc)
			break;
		maps_free(&pm); /* it woke up in between */
		assert_true(tries < 20);
	}
	m = sym_cfi_walk(pm.maps, pm.n, &c, ours, 128, &ours_whole);
	n = sym_unwind(u, pid, tid, &c, theirs, 128, &theirs_whole);
	assert_true(n > 0);
	for (size_t i = 0; i < m && i < (size_t)n; i++)
		if (ours[i] != theirs[i])
			fail_msg("frame %zu of %zu: ours %#llx, libdw's %#llx", i, m,
				 (unsigned long long)ours[i], (unsigned long long)theirs[i]);
	assert_int_equal(m, (size_t)n);
	assert_true(ours_whole);
	assert_true(theirs_whole);
	if (chain) {
		symbol_range(exe, "level3", &lo, &hi);
		for (size_t i = 0; i < pm.n; i++) {
			const struct sym_cfi_map *mp = &pm.maps[i];

			if (lo + mp->bias < mp->start || lo + mp->bias >= mp->end)
				continue;
			for (size_t k = 1; k < m; k++)
				found |= ours[k] - 1 >= lo + mp->bias &&
					 ours[k] - 1 < hi + mp->bias;
		}
	}
	maps_free(&pm);
	return chain && !found ? 0 : m;
}

static pid_t start_fixture(const char *exe, const char *mode, const char *secs)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execl(exe, exe, mode, secs, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void stop_fixture(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
}

/* Stops a CPU-bound chain at 40 random points (prologues, epilogues,
 * the loop): each one unwinds like libdw, through main and libc's start
 * to _start. */
static void test_walk_spinning_stack(void **state)
{
	const char *exes[] = { fix("unwind_nofp"), fix("unwind_nofp_nopie") };
	struct sym_unwinder *u = sym_unwinder_new();

	(void)state;
	assert_non_null(u);
	for (size_t e = 0; e < 2; e++) {
		pid_t pid = start_fixture(exes[e], "spin", "30");

		nap_ms(200);
		for (int i = 0; i < 20; i++) {
			assert_true(compare_walks(u, pid, pid, exes[e], false, false) >= 5);
			nap_ms(7 + i % 5);
		}
		stop_fixture(pid);
		sym_unwind_forget(u, pid);
	}
	sym_unwinder_free(u);
}

/* Three stops of @pid's main thread blocked under the chain (level1 to
 * leaf), once it got there: each must unwind whole, like libdw. */
static void walk_chain(struct sym_unwinder *u, pid_t pid, const char *exe)
{
	int found = 0;

	for (int i = 0; i < 40 && found < 3; i++) {
		size_t n = compare_walks(u, pid, pid, exe, true, true);

		if (n) {
			assert_true(n >= 10);
			found++;
		}
		nap_ms(50);
	}
	assert_int_equal(found, 3);
}

/* Stopped in libc's sleep and in its mutex wait (the syscall, deep in
 * libc without frame pointers), and the thread holding the mutex, whose
 * stack ends at clone3's outermost row. */
static void test_walk_blocked_stacks(void **state)
{
	const char *exe = fix("unwind_nofp");
	struct sym_unwinder *u = sym_unwinder_new();
	struct dirent *de;
	char path[64];
	pid_t pid, tid = 0;
	DIR *d;

	(void)state;
	assert_non_null(u);
	pid = start_fixture(exe, "sleep", "50");
	walk_chain(u, pid, exe);
	stop_fixture(pid);
	sym_unwind_forget(u, pid);

	pid = start_fixture(exe, "mutex", "30");
	walk_chain(u, pid, exe);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (atoi(de->d_name) > 0 && atoi(de->d_name) != pid)
			tid = atoi(de->d_name);
	closedir(d);
	assert_true(tid > 0);
	assert_true(compare_walks(u, pid, tid, exe, true, false) >= 4);
	stop_fixture(pid);
	sym_unwinder_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc_matches_readelf),
		cmocka_unit_test(test_nofp_fixture_matches_readelf),
		cmocka_unit_test(test_nopie_fixture_matches_readelf),
		cmocka_unit_test(test_cxx_library_matches_readelf),
		cmocka_unit_test(test_libc_special_rows),
		cmocka_unit_test(test_entry_without_cfi),
		cmocka_unit_test(test_not_elf_or_no_cfi),
		cmocka_unit_test(test_walk_spinning_stack),
		cmocka_unit_test(test_walk_blocked_stacks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
