/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the reading of the kernel's "%pS" answers and the cache that
 * keeps them: the input is a list of answers, one a line, each given for
 * the next address looked up; every name found must lie in its range.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct feed {
	const char *p, *end;
	char line[512];
};

/* Answers with the next line of the input, or fails when there is none. */
static int next_answer(void *arg, const uint64_t *addrs, size_t n,
		       const char **out)
{
	struct feed *f = arg;
	(void)addrs;
	for (size_t i = 0; i < n; i++) {
		if (f->p >= f->end)
			return -5;
		const char *nl = memchr(f->p, '\n', (size_t)(f->end - f->p));
		size_t len = (size_t)((nl ? nl : f->end) - f->p);
		if (len >= sizeof(f->line))
			len = sizeof(f->line) - 1;
		memcpy(f->line, f->p, len);
		f->line[len] = '\0';
		f->p = nl ? nl + 1 : f->end;
		out[i] = f->line;
	}
	return 0;
}

/* Places every name at 0x2000. */
static int every_name(void *arg, const char *const *names, size_t n,
		    uint64_t *addrs)
{
	(void)arg;
	(void)names;
	for (size_t i = 0; i < n; i++)
		addrs[i] = 0x2000;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_ksym_rec r;
	if (sym_ksym_parse((const char *)data, size, &r) == 0) {
		if (r.name < (const char *)data ||
		    r.name + r.name_len > (const char *)data + size)
			__builtin_trap();
		if (r.module && (r.module < (const char *)data ||
				 r.module + r.module_len > (const char *)data + size))
			__builtin_trap();
	}
	struct feed f = { .p = (const char *)data, .end = (const char *)data + size };
	const uint64_t text[4] = { 0x1000, 0x100000, 0x200000, 0x210000 };
	struct sym_ksym *k = sym_ksym_new(next_answer, every_name, &f, text);
	if (!k)
		return 0;
	uint64_t addr = 0x1234, now = 1;
	for (int i = 0; i < 64 && f.p < f.end; i++) {
		struct sym_ksym_hit h;
		if (sym_ksym_find(k, addr, now, &h) == 0 &&
		    (addr < h.start || (h.size && addr - h.start >= h.size) ||
		     !h.name))
			__builtin_trap();
		addr = addr * 6364136223846793005ull + 1442695040888963407ull;
		addr &= 0x3fffff;
		now += SYM_KSYM_TTL_NS / 3;
		if (i % 16 == 15)
			sym_ksym_forget_volatile(k);
	}
	sym_ksym_free(k);
	return 0;
}
