/* SPDX-License-Identifier: MIT */
/*
 * unwind_shared: copied stacks unwound with rules read once per module,
 * not once per process: the symbolizer's view of the process's mappings
 * gives each frame's module, the module's own .eh_frame (libdw, over the
 * mapped file) its rule. A host that starts a thousand processes running
 * the same libc reads libc's CFI once. Rules and libdw's state count in
 * the module's memory, under the symbol cache's budget.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <libelf.h>

#include "symbolize/sym_internal.h"
#include "symbolize/unwind_rules.h"

/* libdw keeps each FDE (and its CIE) it looked up: about this much per
 * rule read, counted with the rules. */
#define LIBDW_BYTES_PER_RULE 160

struct sym_ucfi {
	Elf *elf;
	Dwarf_CFI *cfi; /* .eh_frame; NULL when the file has none */
	struct sym_rules rules;
};

void sym_ucfi_free(struct sym_ucfi *u)
{
	if (!u)
		return;
	sym_rules_free(&u->rules);
	if (u->cfi)
		dwarf_cfi_end(u->cfi);
	elf_end(u->elf);
	free(u);
}

size_t sym_ucfi_bytes(const struct sym_ucfi *u)
{
	return u ? sizeof(*u) + sym_rules_bytes(&u->rules) + u->rules.n * LIBDW_BYTES_PER_RULE : 0;
}

/* Opens @m's .eh_frame, the file opened as process @pid sees it. The
 * file stays mapped (pages are read as rules are), not open. */
static struct sym_ucfi *ucfi_open(struct sym_ctx *ctx, struct sym_module *m, pid_t pid)
{
	struct sym_ucfi *u = calloc(1, sizeof(*u));
	int fd = m->fd >= 0 ? dup(m->fd) : sym_modcache_open(ctx, m, pid);

	if (!u || fd < 0)
		goto err;
	elf_version(EV_CURRENT);
	u->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!u->elf || elf_kind(u->elf) != ELF_K_ELF || elf_cntl(u->elf, ELF_C_FDDONE) != 0)
		goto err;
	close(fd);
	u->cfi = dwarf_getcfi_elf(u->elf);
	if (!u->cfi) {
		sym_ucfi_free(u);
		return NULL;
	}
	return u;
err:
	if (fd >= 0)
		close(fd);
	sym_ucfi_free(u);
	return NULL;
}

static void rule_read(void *arg, uint64_t pc, struct sym_rule *r)
{
	struct sym_ucfi *u = arg;

	sym_rule_read(u->cfi, pc, r);
}

struct walk_ctx {
	struct sym_ctx *ctx;
	struct sym_proc *p;
};

/* The rule of @at through the module mapped there (NULL for anything
 * but a file with CFI: the vDSO, JIT code, an unknown address). */
static const struct sym_rule *rule_at(void *arg, uint64_t at)
{
	struct walk_ctx *w = arg;
	const struct sym_map *map = sym_proc_map_lookup(w->ctx, w->p, at);
	const struct sym_rule *r;
	struct sym_module *m;

	if (!map || map->kind != SYM_MAP_FILE || !map->mod)
		return NULL;
	m = map->mod;
	m->last_use = w->ctx->tick;
	/* Its memory is counted while loaded: the frames are symbolized
	 * next anyway. */
	sym_modcache_load(w->ctx, m, w->p->pid);
	if (!m->loaded || m->ucfi_failed)
		return NULL;
	if (!m->ucfi && !(m->ucfi = ucfi_open(w->ctx, m, w->p->pid))) {
		m->ucfi_failed = true;
		return NULL;
	}
	r = sym_rules_get(&m->ucfi->rules, sym_module_vaddr(m, at - map->start + map->pgoff),
			  rule_read, m->ucfi);
	sym_modcache_account(w->ctx, m);
	return r;
}

int sym_unwind_shared(struct sym_ctx *ctx, pid_t pid, const struct sym_stack_copy *copy,
		      uint64_t *pcs, size_t max, int *complete)
{
	struct walk_ctx w = { ctx, sym_proc_find(ctx, pid) };
	size_t n;
	int rc;

	*complete = 0;
	if (!max)
		return -EINVAL;
	/* Not read yet (or cleared by an exec or a fork): now. */
	if (!w.p || (w.p->nmaps == 0 && !w.p->gone)) {
		rc = sym_proc_load(ctx, pid);
		w.p = sym_proc_find(ctx, pid);
		if (!w.p || w.p->nmaps == 0)
			return rc < 0 ? rc : -ESRCH;
	}
	if (w.p->nmaps == 0)
		return -ESRCH; /* gone before it could be read */
	ctx->tick++;
	w.p->last_use = ctx->tick;
	rc = sym_rules_walk(copy, rule_at, &w, pcs, max, &n);
	if (rc < 0)
		return -EAGAIN;
	*complete = rc;
	return (int)n;
}
