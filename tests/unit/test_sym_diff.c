/* SPDX-License-Identifier: MIT */
/*
 * symbolize: the differential check — for 10,000 addresses sampled from
 * libc, libstdc++ and two fixtures, every frame's function, file and line
 * equal what `eu-addr2line -f -i` says, inline frames included. The
 * tolerated differences are documented where they are accepted.
 */
#include <dlfcn.h>
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

static char fixdir[PATH_MAX];

static const char *fix(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", fixdir, name);
	return buf[k];
}

/* ---- differential check against eu-addr2line ---- */

struct a2l_frame {
	char name[512];
	char file[512];
	uint32_t line;
};

struct a2l_addr {
	uint64_t addr;
	int n;
	struct a2l_frame f[8];
};

/* "file:line[:col]" or "??:0" */
static void parse_loc(const char *s, struct a2l_frame *f)
{
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%.511s", s);
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
	snprintf(f->file, sizeof(f->file), "%.511s", tmp);
}

static size_t run_addr2line(const char *bin, const uint64_t *addrs,
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
	snprintf(cmd, sizeof(cmd), "eu-addr2line -a -f -i -e '%s' < %s", bin,
		 in);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[1024];
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
			if (cur->n < 8)
				snprintf(cur->f[cur->n].name,
					 sizeof(cur->f[0].name), "%.511s", line);
			want_loc = true;
		} else {
			if (cur->n < 8)
				parse_loc(line, &cur->f[cur->n]);
			cur->n++;
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

/* The bounds of the executable PT_LOAD of @path. */
static void text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	size_t nph;
	assert_int_equal(elf_getphdrnum(e, &nph), 0);
	*lo = *hi = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*lo = ph.p_vaddr;
			*hi = ph.p_vaddr + ph.p_filesz;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(*lo < *hi);
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

static void diff_module(const char *bin, size_t n, uint64_t seed,
			struct diff_counts *dc)
{
	uint64_t lo, hi;
	text_range(bin, &lo, &hi);
	uint64_t *addrs = calloc(n, sizeof(*addrs));
	struct a2l_addr *ref = calloc(n, sizeof(*ref));
	assert_non_null(addrs);
	assert_non_null(ref);
	for (size_t i = 0; i < n; i++)
		addrs[i] = lo + rng_next(&seed) % (hi - lo);
	assert_int_equal(run_addr2line(bin, addrs, n, ref), n);
	struct sym_ctx *ctx = sym_new(NULL);
	struct sym_dwarf *dw = dwarf_of(bin);
	for (size_t i = 0; i < n; i++) {
		struct sym_frame f[16], fr[16];
		int got = sym_file(ctx, bin, addrs[i], f, 16);
		assert_true(got >= 1);
		assert_true(ref[i].addr == addrs[i]);
		dc->addrs++;
		if (frames_equal(&ref[i], 0, 1, f, got) &&
		    frames_equal(&ref[i], 1, ref[i].n, f, got) &&
		    got == ref[i].n) {
			for (int k = 0; k < got; k++)
				dc->unnamed_both += strcmp(ref[i].f[k].name, "??") == 0;
			dc->equal += (size_t)got;
			dc->frames += (size_t)got;
			continue;
		}
		/* eu-addr2line names the innermost frame at the address but
		 * builds the -i chain at the start of the address's line-table
		 * row (dwfl_lineinfo overwrites the address it is given).
		 * Accept exactly that: our innermost frame at the address,
		 * our callers at the row start. */
		uint64_t row;
		int gr = 0;
		if (sym_dwarf_line_addr(dw, addrs[i], &row) == 0 &&
		    row != addrs[i])
			gr = sym_file(ctx, bin, row, fr, 16);
		bool ok = gr > 0 && frames_equal(&ref[i], 0, 1, f, got) &&
			  chain_equal(&ref[i], fr, gr, f, got);
		if (!ok) {
			print_error("%s 0x%llx: ours %d frames (%s %s:%u), "
				    "eu-addr2line %d (%s %s:%u)\n", bin,
				    (unsigned long long)addrs[i], got, f[0].name,
				    f[0].file ? f[0].file : "??", f[0].line,
				    ref[i].n, ref[i].f[0].name, ref[i].f[0].file,
				    ref[i].f[0].line);
			fail();
		}
		dc->row_quirk++;
		dc->frames += (size_t)ref[i].n;
		dc->equal += (size_t)ref[i].n;
	}
	sym_dwarf_free(dw);
	if (dw_fd >= 0)
		close(dw_fd);
	dw_fd = -1;
	sym_free(ctx);
	free(addrs);
	free(ref);
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
	const char *d = getenv("FIXTURES");
	if (d)
		snprintf(fixdir, sizeof(fixdir), "%s", d);
	else if (!realpath("build-test/fixtures", fixdir))
		snprintf(fixdir, sizeof(fixdir), "build-test/fixtures");
	/* libstdc++ mapped here too, so its path is known */
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW);
	if (!cxx) {
		fprintf(stderr, "libstdc++.so.6 cannot be loaded\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	dlclose(cxx);
	return rc;
}
