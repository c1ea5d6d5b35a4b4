/* SPDX-License-Identifier: MIT */
/*
 * The viewer's benchmark: generates a folded profile of 1,000,000 lines
 * (about 200,000 distinct frames), then measures what a person waits for:
 * load (read + parse + the viewer's model, median of 5 loads), peak memory
 * against the input size, and the frame time of a full view at 1920x1080
 * with SDL's software renderer (layout + drawing, median of 100 frames).
 *
 * usage: render_bench [FILE] [LINES] [hash | hash-copy]   (FILE is written when missing)
 *
 * With "hash", it prints instead a hash per part of the model (answer and
 * cards, every function's sums, class sums, searches, every node's
 * function, the boxes of several layouts, hit tests, the call tree), to
 * check that a change to the model's code keeps what the viewer shows;
 * "hash-copy" does the same with the tree copied (rd_model_new_copied),
 * as for profiles whose ids are not their preorder.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "render/calltree.h"
#include "render/flame.h"
#include "profile/load.h"
#include "render/model.h"
#include "render/sdl.h"
#include "render/ui.h"

#define NFRAMES 200000u

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Tree-shaped stacks: each frame has a handful of likely callees, so
 * prefixes are shared as in a real program, and 200,000 names in all. */
static int generate(const char *path, long lines)
{
	static const char *const procs[] = { "api-server", "worker", "cron", "db-proxy" };
	FILE *f = fopen(path, "w");
	uint64_t s = 0x9E3779B97F4A7C15ull;

	if (!f)
		return -errno;
	for (long i = 0; i < lines; i++) {
		unsigned depth = 4 + (unsigned)(rng(&s) % 20);
		uint64_t fr = rng(&s) % 2000;

		fprintf(f, "%s;main", procs[rng(&s) % 4]);
		for (unsigned d = 0; d < depth; d++) {
			{
				uint64_t r = rng(&s) % 16;

				/* Mostly the usual callee, sometimes another. */
				fr = (fr * 2654435761u + 1 + (r < 11 ? 0 : r - 10)) % NFRAMES;
			}
			if (fr % 7 == 0)
				fprintf(f, ";ns%u::Type%u::method_%lu", (unsigned)(fr % 40),
					(unsigned)(fr % 300), (unsigned long)fr);
			else
				fprintf(f, ";fn_%lu", (unsigned long)fr);
		}
		fprintf(f, " %lu\n", (unsigned long)(1 + rng(&s) % 50));
	}
	return fclose(f) == 0 ? 0 : -EIO;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static long rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int frames(struct rd_model *m, double *median, double *layout_med)
{
	char err[256];
	struct rd_canvas *c = rd_canvas_new(1920, 1080, 1, err, sizeof(err));
	double t[100], l[100];
	struct rd_text tx;
	struct rd_ui ui;

	if (!c) {
		fprintf(stderr, "render_bench: %s\n", err);
		return -1;
	}
	tx = rd_canvas_text(c);
	if (rd_ui_init(&ui, m, &tx) < 0)
		return -1;
	for (int i = 0; i < 100; i++) {
		double t0 = now(), t1;

		ui.mouse_in = i % 2; /* alternate with a tooltip */
		ui.mouse_x = 400 + i;
		ui.mouse_y = 1000;
		rd_ui_layout(&ui, 1920, 1080, 1);
		t1 = now();
		rd_canvas_draw(c, &ui.list);
		t[i] = now() - t0;
		l[i] = t1 - t0;
	}
	qsort(t, 100, sizeof(t[0]), cmp_d);
	qsort(l, 100, sizeof(l[0]), cmp_d);
	*median = (t[49] + t[50]) / 2;
	*layout_med = (l[49] + l[50]) / 2;
	printf("boxes drawn in the full view: %zu\n", ui.boxes.n);
	rd_ui_release(&ui);
	rd_canvas_free(c);
	return 0;
}

/* FNV-1a, 64 bits. */
static void mix(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

static void mix_str(uint64_t *h, const char *s)
{
	mix(h, s, strlen(s) + 1);
}

static void mix_boxes(uint64_t *h, const struct rd_boxes *b)
{
	mix(h, &b->n, sizeof(b->n));
	mix(h, &b->max_depth, sizeof(b->max_depth));
	for (size_t i = 0; i < b->n; i++) {
		const struct rd_box *x = &b->v[i];
		int32_t g[4] = { x->x, x->y, x->w, x->h };
		uint32_t u[5] = { x->node, x->last, x->count, x->depth, x->flags };

		mix(h, g, sizeof(g));
		mix(h, &x->fx, sizeof(x->fx));
		mix(h, &x->fw, sizeof(x->fw));
		mix(h, u, sizeof(u));
		mix(h, &x->value, sizeof(x->value));
	}
}

/* Zooms on every few boxes of @from, their small functions opened or
 * not, and @levels - 1 levels deeper on boxes of those, into @h. Returns
 * how many were laid out, or -ENOMEM. */
static long zooms(const struct rd_model *m, struct rd_flame_opts o,
		  const struct rd_boxes *from, uint64_t *h, int levels)
{
	struct rd_boxes z = { 0 };
	long n = 0, deeper = 0;

	for (size_t i = 0; i < from->n && deeper >= 0; i += 1 + from->n / 6) {
		o.focus = from->v[i].node;
		for (o.bucket = 0; o.bucket < 2 && deeper >= 0; o.bucket++, n++) {
			int rc = rd_flame_layout(&m->tree, &o, &z);

			if (rc == -ENOMEM)
				deeper = rc;
			mix(h, &rc, sizeof(rc));
			mix_boxes(h, &z);
			if (rc == 0 && levels > 1 &&
			    (deeper = zooms(m, o, &z, h, levels - 1)) > 0)
				n += deeper;
		}
	}
	rd_boxes_free(&z);
	return deeper < 0 ? deeper : n;
}

/* Layouts of the full view and zooms on boxes of it, hit tests. */
static int hash_layouts(struct rd_model *m)
{
	struct rd_flame_opts o = { .area = { 0, 40, 1920, 1000 }, .row_h = 18,
				   .min_px = 0.5 };
	struct rd_boxes b = { 0 };
	uint64_t h = 0xcbf29ce484222325ull, hit = h;
	long nz;
	int rc;

	for (int v = 0; v < 4; v++) {
		o.icicle = v & 1;
		o.unfold = v >> 1;
		if ((rc = rd_flame_layout(&m->tree, &o, &b)) < 0)
			return rc;
		mix_boxes(&h, &b);
	}
	o.icicle = o.unfold = 0;
	if ((rc = rd_flame_layout(&m->tree, &o, &b)) < 0)
		return rc;
	if ((nz = zooms(m, o, &b, &h, 3)) < 0)
		return (int)nz;
	for (int y = 40; y < 1040; y += 7)
		for (int x = 0; x < 1920; x += 13) {
			const struct rd_box *r = rd_flame_hit(&b, x, y);
			long i = r ? (long)(r - b.v) : -1;

			mix(&hit, &i, sizeof(i));
		}
	printf("layouts (4 full views, %ld zooms) %016llx\nhits %016llx\n", nz,
	       (unsigned long long)h, (unsigned long long)hit);
	rd_boxes_free(&b);
	return 0;
}

/* The call tree: the first rows opened, and a search's matches. */
static int hash_calltree(struct rd_model *m)
{
	struct rd_calltree ct;
	uint64_t h = 0xcbf29ce484222325ull;
	long n;

	if (rd_calltree_init(&ct, m) < 0)
		return -ENOMEM;
	for (size_t r = 0; r < 12 && r < ct.nrows; r++)
		if (rd_calltree_toggle(&ct, ct.rows[r].pre) < 0)
			return -ENOMEM;
	if ((n = rd_calltree_search(&ct, "fn_1.*3$", 40)) < 0)
		return -ENOMEM;
	for (size_t r = 0; r < ct.nrows; r++)
		mix(&h, &ct.rows[r], sizeof(ct.rows[r]));
	mix(&h, ct.matches, ct.nmatch * sizeof(*ct.matches));
	printf("calltree %ld matches, %zu rows, %016llx\n", n, ct.nrows,
	       (unsigned long long)h);
	rd_calltree_free(&ct);
	return 0;
}

static int hash_model(struct rd_model *m)
{
	static const char *const q[] = { "fn_1.*3$,method_9", "ns3typ", "main" };
	uint64_t h = 0xcbf29ce484222325ull, nf = h;

	printf("answer %s\nnotice %s\n", m->answer, m->notice);
	for (int i = 0; i < m->ncards; i++)
		printf("card %s %.6f\n", rd_model_fn_name(m, m->cards[i].fn),
		       m->cards[i].pct);
	for (uint32_t f = 0; f < m->nfn; f++) {
		const struct rd_fn *x = &m->fns[f];

		mix_str(&h, rd_model_fn_name(m, f));
		mix(&h, &x->frame, sizeof(x->frame));
		mix(&h, &x->self, sizeof(x->self));
		mix(&h, &x->total, sizeof(x->total));
		mix(&h, &x->own, sizeof(x->own));
		mix(&h, &x->nodes, sizeof(x->nodes));
		mix(&h, &x->row, sizeof(x->row));
	}
	printf("functions %u yours %d %016llx\n", m->nfn, m->yours,
	       (unsigned long long)h);
	h = 0xcbf29ce484222325ull;
	mix(&h, m->class_self, sizeof(m->class_self));
	mix(&h, m->lang_self, sizeof(m->lang_self));
	printf("classes %016llx\n", (unsigned long long)h);
	for (uint32_t i = 0; i < m->nnodes; i++) {
		uint32_t f = rd_model_node_fn(m, i);

		mix(&nf, &f, sizeof(f));
	}
	printf("node functions %016llx\n", (unsigned long long)nf);
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
		if (rd_model_search(m, q[k]) < 0)
			return -ENOMEM;
		printf("search %s: %u boxes, value %llu\n", q[k], m->match_boxes,
		       (unsigned long long)m->match_value);
	}
	rd_model_search(m, "");
	if (hash_layouts(m) < 0 || hash_calltree(m) < 0)
		return -ENOMEM;
	return 0;
}

/* One load as the viewer makes it: read and parse, sort (a no-op after a
 * bulk parse), then the viewer's model; its steps' times go to @t. */
struct load_times {
	double parse, sort, model;
};

static int load_once(const char *path, int copy, struct prof_profile **pp,
		     struct rd_model **mp, struct load_times *t, char *err,
		     size_t errlen)
{
	double t0 = now(), t1;

	if (prof_load(path, NULL, pp, NULL, err, errlen) < 0)
		return -1;
	t1 = now();
	t->parse = t1 - t0;
	if (prof_sort(*pp) < 0)
		return -1;
	t->sort = now() - t1;
	t1 = now();
	if (!(*mp = copy ? rd_model_new_copied(*pp) : rd_model_new(*pp)))
		return -1;
	t->model = now() - t1;
	return 0;
}

static int cmp_load(const void *a, const void *b)
{
	const struct load_times *x = a, *y = b;
	double u = x->parse + x->sort + x->model, v = y->parse + y->sort + y->model;

	return u < v ? -1 : u > v;
}

/* Loads timed; the median is reported (this machine's timings vary from
 * run to run by a tenth and more). */
#define LOADS 5

/* load_once() in a child process, as a viewer started afresh would load
 * (a process that loaded before reuses memory its allocator kept).
 * 0 or -1. */
static int load_in_child(const char *path, int copy, struct load_times *t)
{
	int fd[2], status = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct prof_profile *p = NULL;
		struct rd_model *m = NULL;
		struct load_times x;
		char err[256];
		int ok;

		close(fd[0]);
		ok = load_once(path, copy, &p, &m, &x, err, sizeof(err)) == 0 &&
		     write(fd[1], &x, sizeof(x)) == (ssize_t)sizeof(x);
		_exit(ok ? 0 : 1);
	}
	close(fd[1]);
	n = pid < 0 ? -1 : read(fd[0], t, sizeof(*t));
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return n == (ssize_t)sizeof(*t) && WIFEXITED(status) &&
			       WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "render_bench.folded";
	long lines = argc > 2 ? strtol(argv[2], NULL, 10) : 1000000;
	int hash = argc > 3 && !strncmp(argv[3], "hash", 4);
	int copy = argc > 3 && !strcmp(argv[3], "hash-copy");
	struct prof_profile *p = NULL;
	struct rd_model *m = NULL;
	struct load_times lt[LOADS], *med;
	struct stat st;
	char err[512];
	double t1, fmed, lmed;
	long rss0;

	if (stat(path, &st) < 0 && generate(path, lines) < 0) {
		fprintf(stderr, "render_bench: cannot write %s\n", path);
		return 1;
	}
	if (stat(path, &st) < 0)
		return 1;
	/* Four loads timed in child processes before this one loads, so
	 * that each, like this one, starts as a viewer started afresh. */
	if (!hash)
		for (int i = 1; i < LOADS; i++)
			if (load_in_child(path, copy, &lt[i]) < 0) {
				fprintf(stderr, "render_bench: a timed load failed\n");
				return 1;
			}
	rss0 = rss_kib();
	if (load_once(path, copy, &p, &m, &lt[0], err, sizeof(err)) < 0) {
		fprintf(stderr, "render_bench: %s\n", err[0] ? err : "out of memory");
		return 1;
	}
	printf("input: %s, %.1f MiB, %u nodes, %u frames, %u functions\n", path,
	       (double)st.st_size / 1048576.0, prof_node_count(p),
	       prof_frame_count(p), m->nfn);
	if (hash)
		return hash_model(m) < 0;
	if (frames(m, &fmed, &lmed) < 0)
		return 1;
	t1 = now();
	rd_model_search(m, "fn_1.*3$,method_9");
	printf("search (two regular expressions): %.0f ms, %u matching boxes\n",
	       (now() - t1) * 1e3, m->match_boxes);
	t1 = now();
	rd_model_search(m, "ns3typ");
	printf("search (fuzzy): %.0f ms, %u matching boxes\n", (now() - t1) * 1e3,
	       m->match_boxes);
	printf("frame: %.2f ms median of 100 at 1920x1080, software renderer "
	       "(layout %.2f ms)   target <= 16 ms\n", fmed * 1e3, lmed * 1e3);
	/* Memory of this process's one load. */
	printf("memory: peak RSS %.1f MiB (%.1f MiB before loading) = %.1fx the input   target <= 10x\n",
	       (double)rss_kib() / 1024.0, (double)rss0 / 1024.0,
	       (double)(rss_kib() - rss0) * 1024.0 / (double)st.st_size);
	rd_model_free(m);
	prof_free(p);
	qsort(lt, LOADS, sizeof(lt[0]), cmp_load);
	med = &lt[LOADS / 2];
	printf("load: %.3f s median of %d loads (%.3f to %.3f s; read+parse %.3f s, "
	       "sort %.3f s, viewer model %.3f s)   target <= 1 s\n",
	       med->parse + med->sort + med->model, LOADS,
	       lt[0].parse + lt[0].sort + lt[0].model,
	       lt[LOADS - 1].parse + lt[LOADS - 1].sort + lt[LOADS - 1].model,
	       med->parse, med->sort, med->model);
	return 0;
}
