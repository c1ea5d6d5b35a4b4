/* SPDX-License-Identifier: MIT */
/*
 * The diff view's benchmark: two generated folded profiles of LINES lines
 * each (1,000,000 by default; the second moves weight between call paths,
 * drops some and adds new ones), then what a person waits for:
 *   - merge: prof_diff_build() of the two, and the viewer's model of it;
 *   - frame: a full diff view at 1920x1080 with SDL's software renderer
 *     (layout with diff colours + drawing), median of 100 frames;
 *   - live: from a new window's data arriving (its model built off the
 *     drawing thread, as render/live does) to the redrawn frame: the
 *     window's update, layout and drawing, median of 10 updates of a
 *     LIVE_LINES-line window (100,000 by default).
 * The merge is also run RUNS times (5 by default, env DIFF_BENCH_RUNS),
 * each in a forked child so every run starts from the same memory: the
 * minimum and median of its CPU time and the growth of the child's peak
 * RSS. Built with -DDIFF_BENCH_BASE and an older profile/diff.c whose
 * public names are prefixed base_ (bench/diff_bench.sh does this when
 * DIFF_BENCH_BASE names a git revision), it runs the two merges in turn
 * and checks that their union trees are the same, path by path.
 *
 * usage: diff_bench [LINES [LIVE_LINES]]
 */
#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile/diff.h"
#include "profile/folded.h"
#include "render/live.h"
#include "render/sdl.h"
#include "render/ui.h"
#include "render/views.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of this thread: what the work costs when the host is busy. */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A merge to measure: builds the union of @b and @a, stores its node
 * count in *@nodes; 0 or -1. The diff is left for the child's exit. */
typedef int (*merge_fn)(const struct prof_profile *b, const struct prof_profile *a,
			uint32_t *nodes);

static int merge_current(const struct prof_profile *b, const struct prof_profile *a,
			 uint32_t *nodes)
{
	struct prof_diff *d;

	if (prof_diff_build(b, a, &d) < 0)
		return -1;
	*nodes = prof_node_count(prof_diff_tree(d));
	return 0;
}

#ifdef DIFF_BENCH_BASE
/* The older merge, from another revision of profile/diff.c. */
struct base_prof_diff;
int base_prof_diff_build(const struct prof_profile *before,
			 const struct prof_profile *after, struct base_prof_diff **out);
void base_prof_diff_free(struct base_prof_diff *d);
struct prof_profile *base_prof_diff_tree(struct base_prof_diff *d);
struct prof_diff_values base_prof_diff_values(const struct base_prof_diff *d,
					      uint32_t node);

static int merge_base(const struct prof_profile *b, const struct prof_profile *a,
		      uint32_t *nodes)
{
	struct base_prof_diff *d;

	if (base_prof_diff_build(b, a, &d) < 0)
		return -1;
	*nodes = prof_node_count(base_prof_diff_tree(d));
	return 0;
}
#endif

/* Resident set of this process, KiB; 0 when unknown. */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

struct run {
	double cpu;     /* CPU seconds of the merge in the child */
	uint32_t nodes; /* union nodes */
	long rss_kib;   /* growth of the child's peak RSS over its start */
};

/* Runs @fn once in a forked child. Returns 0 or -1. */
static int run_forked(merge_fn fn, const struct prof_profile *b,
		      const struct prof_profile *a, struct run *r)
{
	long start = rss_kib();
	struct rusage ru;
	int fd[2], st, got;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct run c = { 0 };
		double c0 = cpu();

		close(fd[0]);
		if (fn(b, a, &c.nodes) < 0)
			_exit(1);
		c.cpu = cpu() - c0;
		_exit(write(fd[1], &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1);
	}
	close(fd[1]);
	got = read(fd[0], r, sizeof(*r)) == (ssize_t)sizeof(*r);
	close(fd[0]);
	if (wait4(pid, &st, 0, &ru) < 0 || !got || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return -1;
	r->rss_kib = ru.ru_maxrss - start;
	return 0;
}

static int cmp_d(const void *a, const void *b);

/* Prints the minimum and median CPU time of @runs runs @r of one merge,
 * the largest RSS growth and the union's node count. */
static void report(const char *what, struct run *r, int runs)
{
	double c[64];
	long rss = 0;

	for (int i = 0; i < runs; i++) {
		c[i] = r[i].cpu;
		if (rss < r[i].rss_kib)
			rss = r[i].rss_kib;
	}
	qsort(c, (size_t)runs, sizeof(*c), cmp_d);
	printf("%s, %d runs in fresh processes: CPU min %.3f s, median %.3f s; "
	       "peak RSS +%.0f MB; %u union nodes\n", what, runs, c[0],
	       runs % 2 ? c[runs / 2] : (c[runs / 2 - 1] + c[runs / 2]) / 2,
	       (double)rss / 1024.0, r[0].nodes);
}

static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Folded text of @lines stacks: 8 processes, 3,000 call paths that branch
 * in their last three frames (150,000 possible names). @variant 1 is the
 * "after": a quarter of the paths change weight, 1 in 50 is gone and 1 in
 * 40 is new. Returns a malloc'd buffer and its length. */
static char *generate(long lines, int variant, size_t *len)
{
	size_t cap = (size_t)lines * 120 + 4096, n = 0;
	char *buf = malloc(cap);
	uint64_t s = 12345;

	if (!buf)
		return NULL;
	for (long i = 0; i < lines && n + 512 < cap; i++) {
		uint64_t fr = next(&s) % 3000, w = 1 + next(&s) % 40, r = next(&s) % 200;
		unsigned depth = 5 + (unsigned)(next(&s) % 18);

		n += (size_t)snprintf(buf + n, cap - n, "svc%u;main", (unsigned)(i % 8));
		for (unsigned d = 0; d < depth; d++) {
			/* The usual callee down the stack, any near the leaf:
			 * stacks share their prefixes as in a real program. */
			if (d + 3 < depth)
				fr = (fr * 31 + 7) % 150000;
			else
				fr = next(&s) % 150000;
			n += (size_t)snprintf(buf + n, cap - n, ";f%lu", (unsigned long)fr);
		}
		if (variant && r < 4)
			continue; /* gone after */
		if (variant && r < 9)
			n += (size_t)snprintf(buf + n, cap - n, ";new_%lu", (unsigned long)(i % 997));
		if (variant && r < 50)
			w = w * 2 + 1;
		n += (size_t)snprintf(buf + n, cap - n, " %lu\n", (unsigned long)w);
	}
	*len = n;
	return buf;
}

static struct prof_profile *parse(const char *buf, size_t len)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	char err[256];

	if (p && prof_folded_parse(p, buf, len, 1, err, sizeof(err)) < 0) {
		fprintf(stderr, "diff_bench: %s\n", err);
		prof_free(p);
		return NULL;
	}
	return p;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#ifdef DIFF_BENCH_BASE
/* 0 when the union trees of the two merges hold the same paths with the
 * same values, else -1 (and says where). */
static int same_union(const struct prof_profile *b, const struct prof_profile *a)
{
	struct base_prof_diff *x;
	struct prof_diff *y;
	struct prof_profile *tx, *ty;
	uint32_t *st, n = 0, bad = 0;

	if (base_prof_diff_build(b, a, &x) < 0 || prof_diff_build(b, a, &y) < 0)
		return -1;
	tx = base_prof_diff_tree(x);
	ty = prof_diff_tree(y);
	st = malloc(2 * sizeof(*st) * ((size_t)prof_node_count(tx) + 1));
	if (!st || prof_sort(tx) < 0 || prof_sort(ty) < 0 ||
	    prof_node_count(tx) != prof_node_count(ty))
		bad++;
	/* Sorted siblings: walk both trees side by side. */
	if (st) {
		st[n++] = 0;
		st[n++] = 0;
	}
	while (n && !bad) {
		uint32_t j = st[--n], i = st[--n];
		const struct prof_node *p = prof_node_get(tx, i), *q = prof_node_get(ty, j);
		struct prof_diff_values u = base_prof_diff_values(x, i);
		struct prof_diff_values w = prof_diff_values(y, j);
		const struct prof_frame *f = prof_frame_get(tx, p->frame);
		const struct prof_frame *g = prof_frame_get(ty, q->frame);
		uint32_t ci = p->child, cj = q->child;

		if (memcmp(&u, &w, sizeof(u)) || p->total != q->total || p->self != q->self ||
		    (i && (strcmp(prof_str(tx, f->name), prof_str(ty, g->name)) ||
			   strcmp(prof_str(tx, f->module), prof_str(ty, g->module)) ||
			   strcmp(prof_str(tx, f->file), prof_str(ty, g->file)) ||
			   f->line != g->line || f->kind != g->kind)))
			bad++;
		for (; ci && cj && !bad; ci = prof_node_get(tx, ci)->sibling,
					 cj = prof_node_get(ty, cj)->sibling) {
			st[n++] = ci;
			st[n++] = cj;
		}
		if (ci || cj)
			bad++;
	}
	free(st);
	base_prof_diff_free(x);
	prof_diff_free(y);
	return bad ? -1 : 0;
}
#endif

/* The merge RUNS times in fresh processes (and the older one in turn,
 * when built with it). Returns 0, or -1 when a run failed or the two
 * merges disagree. */
static int merge_runs(const struct prof_profile *b, const struct prof_profile *a)
{
	const char *e = getenv("DIFF_BENCH_RUNS");
	int runs = e ? atoi(e) : 5;
	struct run cur[64], base[64];

	if (runs < 1 || 64 < runs)
		runs = 5;
	for (int i = 0; i < runs; i++) {
#ifdef DIFF_BENCH_BASE
		if (run_forked(merge_base, b, a, &base[i]) < 0)
			return -1;
#endif
		if (run_forked(merge_current, b, a, &cur[i]) < 0)
			return -1;
	}
#ifdef DIFF_BENCH_BASE
	report("merge before (base revision)", base, runs);
	if (same_union(b, a) < 0) {
		printf("union trees of the two merges: DIFFERENT\n");
		return -1;
	}
	printf("union trees of the two merges: the same, path by path\n");
#else
	(void)base;
#endif
	report("merge (prof_diff_build)", cur, runs);
	return 0;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The live source: every status says a new window is stored; every
 * snapshot is the "after" profile parsed afresh. */
struct fake {
	const char *buf;
	size_t len;
	uint64_t end;
	sem_t arrived;
};

static int fake_fetch(void *ctx, int snapshot, struct rd_live_answer *a)
{
	struct fake *f = ctx;

	if (!snapshot) {
		a->window_ns = 0;
		a->end_ns = ++f->end;
		return 0;
	}
	a->p = parse(f->buf, f->len);
	a->from_ns = 1;
	a->to_ns = 2;
	return a->p ? 0 : -ENOMEM;
}

static void fake_wake(void *arg)
{
	sem_post(&((struct fake *)arg)->arrived);
}

static int frames(struct rd_canvas *c, struct rd_ui *ui, double *med)
{
	double t[100];

	for (int i = 0; i < 100; i++) {
		double t0 = now();

		ui->mouse_in = i % 2; /* every other frame with a tooltip */
		ui->mouse_x = 300 + i;
		ui->mouse_y = 1000;
		if (rd_ui_layout(ui, 1920, 1080, 1) < 0 || rd_canvas_draw(c, &ui->list) < 0)
			return -1;
		t[i] = now() - t0;
	}
	*med = median(t, 100);
	return 0;
}

static int live(struct rd_canvas *c, const struct rd_text *tx, const char *buf,
		size_t len, double *med)
{
	struct fake f = { .buf = buf, .len = len };
	struct rd_views *v = rd_views_new();
	struct prof_profile *first = parse(buf, len);
	struct rd_live *l = rd_live_new(fake_fetch, &f, 300000000000ull);
	struct rd_model *m;
	struct rd_ui ui;
	double t[10], u[10];

	sem_init(&f.arrived, 0, 0);
	if (!v || !first || !l || rd_views_set_live(v, l, first, 1, 2, &m) < 0 ||
	    rd_ui_init(&ui, m, tx) < 0)
		return -1;
	if (rd_views_attach(v, &ui, fake_wake, &f) < 0 || rd_ui_layout(&ui, 1920, 1080, 1) < 0)
		return -1;
	/* Zoomed somewhere, as a user would be. */
	ui.focus = prof_node_get(m->p, prof_node_get(m->p, 0)->child)->child;
	for (int i = 0; i < 10; i++) {
		double t0;

		sem_wait(&f.arrived);
		t0 = now();
		if (rd_views_update(&ui) != 1)
			return -1;
		u[i] = now() - t0;
		if (rd_ui_layout(&ui, 1920, 1080, 1) < 0 || rd_canvas_draw(c, &ui.list) < 0)
			return -1;
		t[i] = (double)(rd_live_mono_ns() - v->live_arrived_ns) / 1e9;
	}
	rd_views_detach(v);
	printf("live: zoom kept after updates: %s; taking the data (rd_views_update): median %.2f ms\n",
	       ui.focus ? "yes" : "no", median(u, 10) * 1e3);
	*med = median(t, 10);
	rd_ui_release(&ui);
	rd_views_free(v);
	sem_destroy(&f.arrived);
	return 0;
}

int main(int argc, char **argv)
{
	long lines = argc > 1 ? strtol(argv[1], NULL, 10) : 1000000;
	long live_lines = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
	size_t lb = 0, la = 0;
	char *tb, *ta, err[256];
	struct prof_profile *b, *a;
	struct prof_diff *d;
	struct rd_views *v = rd_views_new();
	struct rd_canvas *c;
	struct rd_model *m;
	struct rd_text tx;
	struct rd_ui ui;
	double t0, c0, t_diff, c_diff, t_model, c_model, fmed, lmed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	tb = generate(lines, 0, &lb);
	ta = generate(lines, 1, &la);
	{
		double la[3];

		if (getloadavg(la, 3) == 3)
			printf("load average %.2f %.2f %.2f\n", la[0], la[1], la[2]);
	}
	if (!tb || !ta || !v || lines < 1)
		return 1;
	t0 = now();
	b = parse(tb, lb);
	a = parse(ta, la);
	if (!a || !b)
		return 1;
	printf("diff_bench: %ld lines each (%.1f MB and %.1f MB of folded text), parsed in %.2f s\n",
	       lines, lb / 1e6, la / 1e6, now() - t0);
	t0 = now();
	c0 = cpu();
	if (prof_diff_build(b, a, &d) < 0)
		return 1;
	t_diff = now() - t0;
	c_diff = cpu() - c0;
	printf("union tree: %u nodes from %u + %u\n", prof_node_count(prof_diff_tree(d)),
	       prof_node_count(b), prof_node_count(a));
	prof_diff_free(d);
	if (merge_runs(b, a) < 0)
		return 1;
	t0 = now();
	c0 = cpu();
	if (rd_views_set_diff(v, b, a, &m, err, sizeof(err)) < 0)
		return 1;
	t_model = now() - t0;
	c_model = cpu() - c0;
	printf("merge (prof_diff_build): %.3f s wall, %.3f s CPU (target <= 1 s)\n", t_diff, c_diff);
	printf("merge + the viewer's model of the diff (rd_views_set_diff): %.3f s wall, %.3f s CPU\n",
	       t_model, c_model);
	printf("answer: %s\n", m->answer);
	if (!(c = rd_canvas_new(1920, 1080, 1, err, sizeof(err)))) {
		fprintf(stderr, "diff_bench: %s\n", err);
		return 1;
	}
	tx = rd_canvas_text(c);
	if (rd_ui_init(&ui, m, &tx) < 0 || rd_views_attach(v, &ui, NULL, NULL) < 0 ||
	    frames(c, &ui, &fmed) < 0)
		return 1;
	printf("frame, full diff view 1920x1080, software renderer: median %.2f ms of 100 (target <= 16 ms); %zu boxes\n",
	       fmed * 1e3, ui.boxes.n);
	rd_views_detach(v);
	rd_ui_release(&ui);
	rd_views_free(v);
	free(tb);
	free(ta);
	if (live_lines < 1 || !(ta = generate(live_lines, 1, &la)) || live(c, &tx, ta, la, &lmed) < 0)
		return 1;
	printf("live update of a %ld-line window, arrival to redrawn frame: median %.2f ms of 10 (target <= 50 ms)\n",
	       live_lines, lmed * 1e3);
	rd_canvas_free(c);
	free(ta);
	return 0;
}
