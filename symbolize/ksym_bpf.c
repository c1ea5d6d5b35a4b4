/* SPDX-License-Identifier: MIT */
/*
 * ksym_bpf: kernel addresses named by the kernel itself, a batch at a
 * time: bpf/ksym.bpf.c runs under BPF_PROG_TEST_RUN and prints each
 * address with "%pS" into its .bss, which libbpf maps into our memory, so
 * a batch costs one bpf() call and no copies.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/ksym.h"
#include "bpf/ksym.skel.h"
#include "sym_internal.h"

_Static_assert(SYM_KSYM_BATCH == KSYM_BATCH, "one batch size");

struct sym_ksym_bpf {
	struct ksym_bpf *skel;
	int prog_fd;
};

/* libbpf prints its warnings unless told not to; a library stays quiet. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* Runs the program over @n addresses (0: only the text bounds) and points
 * out[i] at each answer. Returns 0 or -errno. */
static int run(struct sym_ksym_bpf *kb, const uint64_t *addrs, size_t n,
	       const char **out)
{
	if (n > SYM_KSYM_BATCH)
		return -EINVAL;
	struct ksym_bpf__bss *b = kb->skel->bss;
	if (n)
		memcpy(b->ksym_addr, addrs, n * sizeof(*addrs));
	b->ksym_n = (uint32_t)n;
	b->ksym_mode = 0;
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	if (bpf_prog_test_run_opts(kb->prog_fd, &topts) != 0)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		/* an answer cut short is no answer */
		if (b->ksym_len[i] == 0 || b->ksym_len[i] > KSYM_STR)
			out[i] = NULL;
		else
			out[i] = b->ksym_out[i];
	}
	return 0;
}

struct sym_ksym_bpf *sym_ksym_bpf_open(void)
{
	struct sym_ksym_bpf *kb = calloc(1, sizeof(*kb));
	if (!kb)
		return NULL;
	libbpf_print_fn_t old = libbpf_set_print(quiet);
	kb->skel = ksym_bpf__open_and_load();
	int err = kb->skel ? 0 : (errno ? -errno : -EPERM);
	libbpf_set_print(old);
	if (!err) {
		kb->prog_fd = bpf_program__fd(kb->skel->progs.ksym_name);
		err = run(kb, NULL, 0, NULL);
	}
	if (err) {
		sym_ksym_bpf_free(kb);
		errno = -err;
		return NULL;
	}
	return kb;
}

void sym_ksym_bpf_free(struct sym_ksym_bpf *kb)
{
	if (!kb)
		return;
	ksym_bpf__destroy(kb->skel);
	free(kb);
}

int sym_ksym_bpf_ask(void *arg, const uint64_t *addrs, size_t n,
		     const char **out)
{
	return run(arg, addrs, n, out);
}

int sym_ksym_bpf_lookup(void *arg, const char *const *names, size_t n,
			uint64_t *addrs)
{
	struct sym_ksym_bpf *kb = arg;
	if (n > SYM_KSYM_BATCH)
		return -EINVAL;
	struct ksym_bpf__bss *b = kb->skel->bss;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		if (len >= KSYM_STR)
			return -ENAMETOOLONG;
		/* the kernel wants the whole buffer NUL-padded */
		memset(b->ksym_out[i], 0, KSYM_STR);
		memcpy(b->ksym_out[i], names[i], len);
	}
	b->ksym_n = (uint32_t)n;
	b->ksym_mode = 1;
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	int err = bpf_prog_test_run_opts(kb->prog_fd, &topts) != 0 ? -errno : 0;
	b->ksym_mode = 0;
	if (err)
		return err;
	memcpy(addrs, b->ksym_addr, n * sizeof(*addrs));
	return 0;
}

void sym_ksym_bpf_text(const struct sym_ksym_bpf *kb, uint64_t text[4])
{
	memcpy(text, kb->skel->bss->ksym_text, 4 * sizeof(*text));
}

uint64_t sym_ksym_bpf_prog_addr(const struct sym_ksym_bpf *kb)
{
	struct bpf_prog_info info;
	uint64_t addr = 0;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (uint64_t)(uintptr_t)&addr;
	if (bpf_obj_get_info_by_fd(kb->prog_fd, &info, &len) != 0)
		return 0;
	return addr;
}
