/* SPDX-License-Identifier: MIT */
/* hearthd: the always-on profiler daemon's entry point and flags. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"
#include "agent/daemon.h"
#include "agent/store.h"
#include "agent/store_codec.h"
#include "agent/store_verify.h"
#include "agent/trusted_dir.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hearthd [--config FILE] [--KEY VALUE ...]\n"
		"       hearthd --verify-store [DIR]\n\n"
		"Runs in the foreground, logs to stderr.\n\n"
		"  --config FILE          settings (default /etc/hearth/hearthd.conf)\n"
		"  --verify-store [DIR]   check every stored window and list it, check the\n"
		"                         roll-ups, indexes and marks; exit status 0 when\n"
		"                         nothing is damaged, 2 when something is (a torn last\n"
		"                         record is reported, not damage)\n"
		"  --version              hearthd's version\n"
		"  -h, --help             this text\n\n"
		"Every hearthd.conf key is also a flag, underscores written as dashes; a\n"
		"flag overrides the file. Defaults and details in hearthd.conf(5).\n"
		"  --state-dir DIR               where the store is kept\n"
		"  --socket PATH                 the control socket\n"
		"  --socket-group GROUP          who may use the socket besides root\n"
		"  --window DURATION             length of one window (100ms to 1h)\n"
		"  --retention-age DURATION      delete older windows (0: never)\n"
		"  --retention-size SIZE         the store's size limit (0: none)\n"
		"  --symbol-cache SIZE           memory for symbols and debug information\n"
		"  --rollup-memory SIZE          memory for the open 10 minutes' roll-up\n"
		"  --full-disk-hold DURATION     newest windows kept in memory while the\n"
		"                                store cannot write (0: none)\n"
		"  --frequency HZ                on-CPU samples per second per CPU\n"
		"  --on-cpu BOOL                 sample where CPUs run\n"
		"  --off-cpu BOOL                record where threads wait\n"
		"  --off-cpu-min-block DURATION  shorter waits are not recorded\n"
		"  --kernel-stacks BOOL          include kernel frames\n"
		"  --memory-growth BOOL          record requests for more memory\n"
		"  --unwind MODE                 auto (in-kernel CFI walker), fp or dwarf\n"
		"  --unwind-memory SIZE          kernel memory for auto's unwind tables\n"
		"  --stack-map-size N            distinct stacks the kernel holds per window\n"
		"  --exclude-comm NAMES          process names never stored\n"
		"  --max-clients N               control clients served at once\n"
		"  --debuginfod-urls URLS        debuginfod servers for stripped binaries\n"
		"  --prometheus-file FILE        hearthd's health for a node exporter's\n"
		"                                textfile collector, each window (empty: off)\n"
		"  --push-url URL                send windows to Pyroscope / Grafana (empty: off)\n"
		"  --push-format FORMAT          pyroscope\n"
		"  --push-auth-file FILE         a 0600 file: bearer token or user:password\n"
		"  --push-tenant ID              sent as X-Scope-OrgID\n"
		"  --push-labels 'K=V, ...'      static labels for every profile pushed\n"
		"  --push-timeout DURATION       time allowed for one request\n"
		"See hearthd(8) and hearthd.conf(5).\n");
}

struct verify_ctx {
	unsigned long long undecodable;
};

static int verify_window(uint64_t start, uint64_t end, const void *payload,
			 size_t len, void *arg)
{
	struct verify_ctx *v = arg;
	struct store_window w;
	int rc = store_codec_window_unpack(payload, len, &w);

	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		v->undecodable++;
		printf("bad    %llu %llu %zu\n", (unsigned long long)start,
		       (unsigned long long)end, len);
		return 0;
	}
	printf("window %llu %llu %zu %llu\n", (unsigned long long)start,
	       (unsigned long long)end, len, (unsigned long long)w.samples);
	store_window_clear(&w);
	return 0;
}

static int verify_store(const char *dir)
{
	struct store_verify_report vr;
	const struct store_scan_report *r = &vr.scan;
	struct verify_ctx v = { 0 };
	int rc = store_verify(dir, verify_window, &v, &vr);

	if (rc == -EPERM) {
		fprintf(stderr, "hearthd: refusing %s: %s\n", dir, TRUSTED_DIR_RULE);
		return 1;
	}
	if (rc < 0) {
		fprintf(stderr, "hearthd: cannot read %s (%s)\n", dir, strerror(-rc));
		return 1;
	}
	/* Levels 1 and 2 are the 10-minute and hour roll-ups hearthd writes;
	 * a damaged one is counted as corrupt in the summary too. */
	printf("roll-ups checked: %llu 10-minute, %llu hour; damaged: %llu 10-minute, %llu hour\n",
	       (unsigned long long)(vr.rollups[0] + vr.rollups_bad[0]),
	       (unsigned long long)(vr.rollups[1] + vr.rollups_bad[1]),
	       (unsigned long long)vr.rollups_bad[0], (unsigned long long)vr.rollups_bad[1]);
	/* Index damage loses no window (records are read from their own
	 * headers) but is damage all the same; so is a damaged mark. */
	printf("indexes: %llu damaged entries or headers, %llu torn tails, %llu segments without one\n",
	       (unsigned long long)r->idx_bad, (unsigned long long)r->idx_torn,
	       (unsigned long long)r->idx_missing);
	if (vr.marks_err)
		printf("marks: unreadable (%s)\n", strerror(-vr.marks_err));
	else
		printf("marks: %llu good, %llu damaged, header %s%s\n", (unsigned long long)vr.marks,
		       (unsigned long long)vr.mk.bad, vr.mk.header_bad ? "damaged" : "good",
		       vr.mk.torn_bytes ? ", a torn last record" : "");
	printf("%llu windows, %llu corrupt, %llu undecodable, %llu torn tails, %llu bad segments in %llu segments\n",
	       (unsigned long long)r->windows, (unsigned long long)r->corrupt, v.undecodable,
	       (unsigned long long)r->torn, (unsigned long long)r->bad_segments,
	       (unsigned long long)r->segments);
	if (r->first_bad_seg[0])
		printf("first problem: %s at offset %llu\n", r->first_bad_seg,
		       (unsigned long long)r->first_bad_off);
	if (r->first_bad_idx[0])
		printf("first damaged index: %s\n", r->first_bad_idx);
	return r->corrupt || v.undecodable || r->bad_segments || r->idx_bad || vr.marks_err ||
	       vr.mk.bad || vr.mk.header_bad ? 2 : 0;
}

static int add_override(struct daemon_args *a, const char *key, const char *value)
{
	if (a->noverrides == DAEMON_OVERRIDES_MAX) {
		fprintf(stderr, "hearthd: too many flags\n");
		return -1;
	}
	a->overrides[a->noverrides].key = key;
	a->overrides[a->noverrides].value = value;
	a->noverrides++;
	return 0;
}

int main(int argc, char **argv)
{
	static struct daemon_args a;
	struct hearthd_config probe;
	char err[300];

	for (int i = 1; i < argc; i++) {
		char *arg = argv[i], *eq;

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(arg, "--version")) {
			printf("hearthd %s\n", HEARTH_VERSION);
			return 0;
		}
		if (!strcmp(arg, "--verify-store")) {
			config_defaults(&probe);
			return verify_store(i + 1 < argc ? argv[i + 1] : probe.state_dir);
		}
		if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
			fprintf(stderr, "hearthd: unexpected argument '%s'; 'hearthd --help' lists the flags\n", arg);
			return 2;
		}
		arg += 2;
		eq = strchr(arg, '=');
		if (eq)
			*eq++ = 0;
		else if (i + 1 < argc)
			eq = argv[++i];
		else {
			fprintf(stderr, "hearthd: --%s needs a value\n", arg);
			return 2;
		}
		if (!strcmp(arg, "config")) {
			a.config_path = eq;
			a.config_required = 1;
			continue;
		}
		/* Check the flag now so a typo fails at once, not on reload. */
		config_defaults(&probe);
		if (config_set(&probe, arg, eq, err, sizeof(err)) < 0) {
			fprintf(stderr, "hearthd: --%s: %s\n", arg, err);
			return 2;
		}
		if (add_override(&a, arg, eq) < 0)
			return 2;
	}
	return daemon_run(&a);
}
