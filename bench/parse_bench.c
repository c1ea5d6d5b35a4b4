/* SPDX-License-Identifier: MIT */
/*
 * The load benchmark: CPU time (and wall time) of each step of loading a
 * folded profile for the viewer — read, parse (profile/folded.c), sort
 * (prof_sort) and the viewer's model (render/model.c) — so a change in
 * one step can be measured on a loaded machine, where CPU time varies less
 * than wall time. Steps can be skipped to profile one of them alone.
 *
 * usage: parse_bench FILE [parse|sort|model]   (stop after that step;
 *        default model)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "profile/folded.h"
#include "profile/load.h"
#include "render/model.h"

struct stamp {
	double wall, cpu;
};

static struct stamp stamp(void)
{
	struct timespec w, c;

	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
	return (struct stamp){ (double)w.tv_sec + (double)w.tv_nsec / 1e9,
			       (double)c.tv_sec + (double)c.tv_nsec / 1e9 };
}

static void report(const char *what, struct stamp a, struct stamp b)
{
	printf("%-8s cpu %7.3f s  wall %7.3f s\n", what, b.cpu - a.cpu,
	       b.wall - a.wall);
}

int main(int argc, char **argv)
{
	const char *stop = argc > 2 ? argv[2] : "model";
	struct prof_profile *p = NULL;
	struct rd_model *m = NULL;
	struct stamp t0, t1, t2, t3;
	struct rusage ru;
	char err[256];

	if (argc < 2) {
		fprintf(stderr, "usage: parse_bench FILE [parse|sort|model]\n");
		return 2;
	}
	t0 = stamp();
	if (prof_load(argv[1], NULL, &p, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "parse_bench: %s\n", err);
		return 1;
	}
	t1 = stamp();
	report("load", t0, t1);
	printf("         %u nodes, %u frames, %u strings, total %llu\n",
	       prof_node_count(p), prof_frame_count(p), prof_str_count(p),
	       (unsigned long long)prof_total(p));
	t2 = t1;
	if (strcmp(stop, "parse") != 0) {
		if (prof_sort(p) < 0) {
			fprintf(stderr, "parse_bench: out of memory\n");
			return 1;
		}
		t2 = stamp();
		report("sort", t1, t2);
	}
	t3 = t2;
	if (strcmp(stop, "model") == 0) {
		if (!(m = rd_model_new(p))) {
			fprintf(stderr, "parse_bench: out of memory\n");
			return 1;
		}
		t3 = stamp();
		report("model", t2, t3);
	}
	report("all", t0, t3);
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
	rd_model_free(m);
	prof_free(p);
	return 0;
}
