/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the Go table reader (symbolize/gopclntab.c): the input is XORed
 * over a small valid table (Go 1.18 layout: two functions, the first with
 * an inlined call, their line and file tables) and the inline tree after
 * it, so mutations reach past the header; then every address of the text
 * it describes is resolved. Names and files must lie inside the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TEXT 0x1000u

struct tmpl {
	uint8_t hdr[72];
	char names[24];       /* "main.a\0main.b\0main.inl\0" */
	uint32_t cutab[1];
	char files[8];        /* "/x.go\0" */
	uint8_t pc[24];       /* per-PC tables */
	uint32_t ftab[6];     /* 2 functions and the end */
	uint8_t func[2][40 + 3 * 4 + 4 * 4];
	uint8_t inl[20];      /* the inline tree (go:func.*) */
};

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void build(struct tmpl *t)
{
	static const uint8_t pc[24] = {
		0,                          /* offset 0 means none */
		2, 0x40, 0,                 /* 1: file 0 over 0x40 bytes */
		22, 0x20, 2, 0x20, 0,       /* 4: line 10, then 11 */
		0, 0x10, 2, 0x10, 1, 0x20, 0, /* 9: inline index -1, 0, -1 */
	};
	memset(t, 0, sizeof(*t));
	put32(t->hdr, 0xfffffff0u);
	t->hdr[6] = 1;
	t->hdr[7] = 8;
	put64(t->hdr + 8, 2);
	put64(t->hdr + 16, 1);
	put64(t->hdr + 24, TEXT);
	put64(t->hdr + 32, offsetof(struct tmpl, names));
	put64(t->hdr + 40, offsetof(struct tmpl, cutab));
	put64(t->hdr + 48, offsetof(struct tmpl, files));
	put64(t->hdr + 56, offsetof(struct tmpl, pc));
	put64(t->hdr + 64, offsetof(struct tmpl, ftab));
	memcpy(t->names, "main.a\0main.b\0main.inl", 23);
	memcpy(t->files, "/x.go", 6);
	memcpy(t->pc, pc, sizeof(pc));
	uint32_t f0 = offsetof(struct tmpl, func) - offsetof(struct tmpl, ftab);
	uint32_t ftab[6] = { 0, f0, 0x40, f0 + sizeof(t->func[0]), 0x80, 0 };
	memcpy(t->ftab, ftab, sizeof(ftab));
	for (int i = 0; i < 2; i++) {
		uint8_t *f = t->func[i];
		put32(f, i * 0x40);   /* entry */
		put32(f + 4, i * 7);  /* name */
		put32(f + 20, 1);     /* pcfile */
		put32(f + 24, 4);     /* pcln */
		put32(f + 28, 3);     /* npcdata */
		f[39] = 4;            /* nfuncdata */
		put32(f + 40 + 8, 9); /* pcdata[2]: inline index */
		for (int k = 0; k < 4; k++)
			put32(f + 52 + 4 * k, i == 0 && k == 3 ? 0 : UINT32_MAX);
	}
	put32(t->inl, 0xffff);        /* parent -1, funcID 0 */
	put32(t->inl + 8, 5);         /* line */
	put32(t->inl + 12, 14);       /* "main.inl" */
	put32(t->inl + 16, 0x08);     /* parent PC */
}

static void inside(const char *s, const uint8_t *buf, size_t len)
{
	if (s && (s < (const char *)buf || s >= (const char *)buf + len))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tmpl t;
	build(&t);
	size_t len = sizeof(t) > size ? sizeof(t) : size;
	uint8_t *img = calloc(1, len);
	if (!img)
		return 0;
	memcpy(img, &t, sizeof(t));
	for (size_t i = 0; i < size; i++)
		img[i] ^= data[i];
	size_t tab = offsetof(struct tmpl, inl);
	struct sym_gopcln *g = sym_gopcln_mem(img, tab, img + tab, len - tab);
	if (size == 0) { /* the template itself: an inlined call, line 10 */
		struct sym_dwarf_frame f[8];
		if (!g || sym_gopcln_resolve(g, TEXT + 0x10, f, 8) != 2 ||
		    strcmp(f[0].name, "main.inl") != 0 || f[0].line != 10 ||
		    strcmp(f[1].name, "main.a") != 0 || strcmp(f[1].file, "/x.go") != 0)
			__builtin_trap();
	}
	for (uint64_t a = TEXT - 4; g && a < TEXT + 0x90; a++) {
		struct sym_dwarf_frame f[8];
		size_t n = sym_gopcln_resolve(g, a, f, 8);
		if (n > 8)
			__builtin_trap();
		for (size_t k = 0; k < n; k++) {
			inside(f[k].name, img, len);
			inside(f[k].file, img, len);
		}
	}
	sym_gopcln_free(g);
	free(img);
	return 0;
}
