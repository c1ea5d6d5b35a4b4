/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes ELF reading in symbolize/: headers, build-id, load segments,
 * symbol tables, .gnu_debuglink, and the sorted symbol search.
 *
 * Random bytes are rarely ELF, so the input is laid over a small valid
 * ELF built here (XOR from the start, longer inputs extend it): the
 * fuzzer then explores damaged versions of a real file.
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/sym_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { SEC_NULL, SEC_TEXT, SEC_NOTE, SEC_LINK, SEC_SYMTAB, SEC_STRTAB,
       SEC_SHSTR, NSEC };

static const char shstr[] = "\0.text\0.note.gnu.build-id\0.gnu_debuglink\0"
			    ".symtab\0.strtab\0.shstrtab";
static const char strtab[] = "\0alpha\0beta\0gamma";

struct tmpl {
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	uint8_t text[64];
	uint8_t note[16 + 20];
	char link[16];
	Elf64_Sym syms[4];
	char strtab[sizeof(strtab)];
	char shstr[sizeof(shstr)];
	Elf64_Shdr sh[NSEC];
};

static void sec(Elf64_Shdr *s, uint32_t name, uint32_t type, uint64_t flags,
		uint64_t addr, size_t off, size_t size)
{
	*s = (Elf64_Shdr){ .sh_name = name, .sh_type = type, .sh_flags = flags,
			   .sh_addr = addr, .sh_offset = off, .sh_size = size,
			   .sh_addralign = 1 };
}

static void build(struct tmpl *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->eh.e_ident, ELFMAG, SELFMAG);
	t->eh.e_ident[EI_CLASS] = ELFCLASS64;
	t->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	t->eh.e_ident[EI_VERSION] = EV_CURRENT;
	t->eh.e_type = ET_DYN;
	t->eh.e_machine = EM_X86_64;
	t->eh.e_version = EV_CURRENT;
	t->eh.e_phoff = offsetof(struct tmpl, ph);
	t->eh.e_shoff = offsetof(struct tmpl, sh);
	t->eh.e_ehsize = sizeof(Elf64_Ehdr);
	t->eh.e_phentsize = sizeof(Elf64_Phdr);
	t->eh.e_phnum = 1;
	t->eh.e_shentsize = sizeof(Elf64_Shdr);
	t->eh.e_shnum = NSEC;
	t->eh.e_shstrndx = SEC_SHSTR;
	size_t toff = offsetof(struct tmpl, text);
	t->ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			      .p_offset = toff, .p_vaddr = 0x1000 + toff,
			      .p_filesz = sizeof(t->text),
			      .p_memsz = sizeof(t->text), .p_align = 0x1000 };
	uint32_t *n = (uint32_t *)t->note;
	n[0] = 4, n[1] = 20, n[2] = NT_GNU_BUILD_ID;
	memcpy(t->note + 12, "GNU", 4);
	memset(t->note + 16, 0xab, 20);
	memcpy(t->link, "x.debug", 8);
	uint64_t base = 0x1000 + toff;
	for (int i = 1; i < 4; i++)
		t->syms[i] = (Elf64_Sym){
			.st_name = (uint32_t)(i == 1 ? 1 : i == 2 ? 7 : 12),
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = SEC_TEXT, .st_value = base + (uint64_t)i * 16,
			.st_size = i == 3 ? 0 : 16 };
	memcpy(t->strtab, strtab, sizeof(strtab));
	memcpy(t->shstr, shstr, sizeof(shstr));
	sec(&t->sh[SEC_TEXT], 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, base,
	    toff, sizeof(t->text));
	sec(&t->sh[SEC_NOTE], 7, SHT_NOTE, SHF_ALLOC, 0,
	    offsetof(struct tmpl, note), sizeof(t->note));
	sec(&t->sh[SEC_LINK], 26, SHT_PROGBITS, 0, 0,
	    offsetof(struct tmpl, link), sizeof(t->link));
	sec(&t->sh[SEC_SYMTAB], 41, SHT_SYMTAB, 0, 0,
	    offsetof(struct tmpl, syms), sizeof(t->syms));
	t->sh[SEC_SYMTAB].sh_link = SEC_STRTAB;
	t->sh[SEC_SYMTAB].sh_entsize = sizeof(Elf64_Sym);
	sec(&t->sh[SEC_STRTAB], 49, SHT_STRTAB, 0, 0,
	    offsetof(struct tmpl, strtab), sizeof(t->strtab));
	sec(&t->sh[SEC_SHSTR], 57, SHT_STRTAB, 0, 0,
	    offsetof(struct tmpl, shstr), sizeof(t->shstr));
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
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		free(img);
		return 0;
	}
	free(img);
	struct sym_module m = { .fd = -1, .debug_fd = -1 };
	if (sym_elf_read_header(fd, &m) == 0) {
		(void)sym_module_vaddr(&m, 0x1000);
		struct sym_symtab st = { 0 };
		bool has;
		if (sym_elf_load_symbols(fd, &st, &has) == 0) {
			for (size_t i = 0; i < st.n; i++)
				if (!sym_symtab_find(&st, st.syms[i].addr) &&
				    st.syms[i].size > 0)
					__builtin_trap(); /* a start is found */
		}
		sym_symtab_free(&st);
		char link[256];
		(void)sym_elf_debuglink(fd, link, sizeof(link));
	}
	free(m.segs);
	close(fd);
	return 0;
}
