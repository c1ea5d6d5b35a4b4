/* SPDX-License-Identifier: MIT */
/* Push: the push_* config keys, the cursor file (round trip, damage,
 * crash-safe replace), the ingest URL and its name, units from
 * /proc/PID/cgroup, the auth file's rule, and a window cut by service
 * with every value kept. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config.h"
#include "agent/push_auth.h"
#include "agent/push_cursor.h"
#include "agent/push_pins.h"
#include "agent/push_request.h"
#include "agent/push_service.h"
#include "agent/push_split.h"
#include "agent/trusted_dir.h"

static void test_config_keys(void **state)
{
	struct hearthd_config c;
	char err[300] = "";

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.push_url, "");
	assert_int_equal(c.push_timeout_ns, 10000000000ull);
	assert_int_equal(config_set(&c, "push-url", "https://profiles.example.net/api/", err, sizeof(err)), 0);
	assert_string_equal(c.push_url, "https://profiles.example.net/api");
	assert_int_equal(config_set(&c, "push_url", "", err, sizeof(err)), 0);
	assert_string_equal(c.push_url, "");
	assert_int_equal(config_set(&c, "push_url", "ftp://x", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_url", "http://x/ingest?a=1", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_url", "http:///x", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_format", "pyroscope", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "push_format", "otlp", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "otlp is not supported"));
	assert_int_equal(config_set(&c, "push_format", "zipkin", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_auth_file", "/etc/hearth/push-auth", err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "push_auth_file", "relative", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_tenant", "team-a", err, sizeof(err)), 0);
	assert_string_equal(c.push_tenant, "team-a");
	assert_int_equal(config_set(&c, "push_tenant", "a b", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_labels", "env=prod, region=eu-west-1", err, sizeof(err)), 0);
	assert_int_equal(c.npush_labels, 2);
	assert_string_equal(c.push_labels[1].key, "region");
	assert_string_equal(c.push_labels[1].value, "eu-west-1");
	assert_int_equal(config_set(&c, "push_labels", "", err, sizeof(err)), 0);
	assert_int_equal(c.npush_labels, 0);
	assert_int_equal(config_set(&c, "push_labels", "env", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_labels", "9x=1", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_labels", "a=b}", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_labels", "a=1 a=2", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "push_timeout", "30s", err, sizeof(err)), 0);
	assert_int_equal(c.push_timeout_ns, 30000000000ull);
	assert_int_equal(config_set(&c, "push_timeout", "10ms", err, sizeof(err)), -EINVAL);
}

static void test_cursor_text(void **state)
{
	struct push_cursor a = { .start_ns = 1700000000123456789ull,
				 .end_ns = 1700000010123456789ull }, b;
	char buf[PUSH_CURSOR_TEXT_MAX];
	size_t n;

	(void)state;
	snprintf(a.after, sizeof(a.after), "nginx.service\1\0010");
	n = push_cursor_format(&a, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(push_cursor_parse(buf, n, &b), 0);
	assert_true(b.start_ns == a.start_ns && b.end_ns == a.end_ns);
	assert_false(b.done);
	assert_string_equal(b.after, a.after);
	a.done = true;
	n = push_cursor_format(&a, buf, sizeof(buf));
	assert_int_equal(push_cursor_parse(buf, n, &b), 0);
	assert_true(b.done);
	/* Every flipped byte and every cut is caught. */
	for (size_t i = 0; i < n; i++) {
		buf[i] ^= 0x01;
		assert_int_equal(push_cursor_parse(buf, n, &b), -EBADMSG);
		buf[i] ^= 0x01;
		assert_int_equal(push_cursor_parse(buf, i, &b), -EBADMSG);
	}
}

static void test_cursor_file(void **state)
{
	char dir[] = "/tmp/hearth-test-push.XXXXXX";
	struct push_cursor a = { .start_ns = 5, .end_ns = 9, .done = true }, b;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fd = trusted_dir_open(dir, false);
	assert_true(fd >= 0);
	assert_int_equal(push_cursor_load(fd, &b), -ENOENT);
	assert_int_equal(push_cursor_write(fd, PUSH_CURSOR_FILE, &a, true), 0);
	a.end_ns = 11;
	assert_int_equal(push_cursor_write(fd, PUSH_CURSOR_FILE, &a, true), 0);
	assert_int_equal(push_cursor_load(fd, &b), 0);
	assert_int_equal(b.end_ns, 11);
	assert_int_equal(faccessat(fd, "push-cursor.tmp", F_OK, 0), -1);
	/* A part further on wins; one of a finished window does not. */
	a = (struct push_cursor){ .start_ns = 11, .end_ns = 13 };
	snprintf(a.after, sizeof(a.after), "x");
	assert_int_equal(push_cursor_write(fd, PUSH_CURSOR_PART_FILE, &a, false), 0);
	assert_int_equal(push_cursor_load(fd, &b), 0);
	assert_true(b.end_ns == 13 && !b.done && !strcmp(b.after, "x"));
	a = (struct push_cursor){ .start_ns = 11, .end_ns = 13, .done = true };
	assert_int_equal(push_cursor_write(fd, PUSH_CURSOR_FILE, &a, true), 0);
	assert_int_equal(push_cursor_load(fd, &b), 0);
	assert_true(b.end_ns == 13 && b.done);
	assert_int_equal(unlinkat(fd, PUSH_CURSOR_PART_FILE, 0), 0);
	/* A symbolic link in its place is refused, not followed. */
	assert_int_equal(unlinkat(fd, PUSH_CURSOR_FILE, 0), 0);
	assert_int_equal(symlinkat("/etc/passwd", fd, PUSH_CURSOR_FILE), 0);
	assert_int_equal(push_cursor_load(fd, &b), -EPERM);
	assert_int_equal(unlinkat(fd, PUSH_CURSOR_FILE, 0), 0);
	assert_int_equal(symlinkat("/tmp/hearth-test-push-nowhere", fd, "push-cursor.tmp"), 0);
	assert_int_equal(push_cursor_write(fd, PUSH_CURSOR_FILE, &a, true), -EPERM);
	assert_int_equal(unlinkat(fd, "push-cursor.tmp", 0), 0);
	close(fd);
	assert_int_equal(rmdir(dir), 0);
}

/* The services a window was cut by come back as they were written; a
 * damaged or cut file is refused, a symbolic link not followed. */
static void test_pins(void **state)
{
	char dir[] = "/tmp/hearth-test-pins.XXXXXX";
	struct push_pins a = { .start_ns = 1700000000123456789ull,
			       .end_ns = 1700000001123456789ull }, b = { 0 };
	struct push_service unit = { .name = "nginx.service", .container = "" };
	struct push_service box = { .name = "app.scope", .container = "0123abcd" };
	const struct push_service *got;
	char *buf;
	size_t n;
	int fd;

	(void)state;
	assert_int_equal(push_pins_add(&a, 42, "nginx", 5, &unit), 0);
	/* A comm with a space and one longer than 15 bytes. */
	assert_int_equal(push_pins_add(&a, 7, "my app", 6, &box), 0);
	assert_int_equal(push_pins_add(&a, 8, "a-very-long-command-name", 24, &unit), 0);
	assert_int_equal(push_pins_format(&a, &buf, &n), 0);
	assert_int_equal(push_pins_parse(buf, n, &b), 0);
	assert_true(b.start_ns == a.start_ns && b.end_ns == a.end_ns);
	assert_int_equal(b.n, 3);
	got = push_pins_find(&b, 7, "my app", 6);
	assert_non_null(got);
	assert_string_equal(got->name, "app.scope");
	assert_string_equal(got->container, "0123abcd");
	got = push_pins_find(&b, 8, "a-very-long-command-name-too", 28);
	assert_non_null(got);
	assert_string_equal(got->name, "nginx.service");
	assert_string_equal(got->container, "");
	/* Another program under the same pid is not the one pinned. */
	assert_null(push_pins_find(&b, 42, "bash", 4));
	for (size_t i = 0; i < n; i++) {
		buf[i] ^= 0x01;
		assert_int_equal(push_pins_parse(buf, n, &b), -EBADMSG);
		buf[i] ^= 0x01;
		assert_int_equal(push_pins_parse(buf, i, &b), -EBADMSG);
	}
	free(buf);

	assert_non_null(mkdtemp(dir));
	fd = trusted_dir_open(dir, false);
	assert_true(fd >= 0);
	assert_int_equal(push_pins_read(fd, &b), -ENOENT);
	assert_int_equal(push_pins_write(fd, &a), 0);
	assert_int_equal(push_pins_read(fd, &b), 0);
	assert_int_equal(b.n, 3);
	assert_true(b.end_ns == a.end_ns);
	assert_int_equal(faccessat(fd, PUSH_PINS_FILE ".tmp", F_OK, 0), -1);
	assert_int_equal(unlinkat(fd, PUSH_PINS_FILE, 0), 0);
	assert_int_equal(symlinkat("/etc/passwd", fd, PUSH_PINS_FILE), 0);
	assert_int_equal(push_pins_read(fd, &b), -EPERM);
	assert_int_equal(unlinkat(fd, PUSH_PINS_FILE, 0), 0);
	close(fd);
	assert_int_equal(rmdir(dir), 0);
	push_pins_free(&a);
	push_pins_free(&b);
}

static void test_request_url(void **state)
{
	const struct push_label labels[] = {
		{ "hostname", "web-1" }, { "hearth_version", "0.1.0" },
		{ "env", "prod" }, { "hostname", "web-1.eu" },
	};
	struct push_request r = {
		.base_url = "https://pyro:4040", .service = "nginx.service", .labels = labels,
		.nlabels = 4, .start_ns = 1700000000900000000ull,
		.end_ns = 1700000010900000000ull, .hz = 99,
	};
	char out[PUSH_URL_MAX];

	(void)state;
	assert_true(push_request_name(&r, out, sizeof(out)) > 0);
	assert_string_equal(out, "nginx.service{env=prod,hearth_version=0.1.0,hostname=web-1.eu}");
	assert_true(push_request_url(&r, out, sizeof(out)) > 0);
	assert_string_equal(out, "https://pyro:4040/ingest?name=nginx.service%7Benv%3Dprod%2C"
				 "hearth_version%3D0.1.0%2Chostname%3Dweb-1.eu%7D&from=1700000000"
				 "&until=1700000010&format=pprof&spyName=hearth&units=samples"
				 "&sampleRate=99");
	r.kind = PUSH_OFFCPU;
	assert_true(push_request_url(&r, out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "&units=nanoseconds"));
	assert_null(strstr(out, "sampleRate"));
	r.kind = PUSH_GROWTH;
	assert_true(push_request_url(&r, out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "&units=objects&aggregationType=sum"));
	assert_null(strstr(out, "sampleRate"));
	assert_int_equal(push_request_url(&r, out, 40), 0);
	push_request_clean_value("a b,c{d}=\"é", out, sizeof(out));
	assert_string_equal(out, "a_b_c_d_____");
}

static void unit_of(const char *text, const char *unit, const char *container)
{
	char u[PUSH_SERVICE_MAX], c[PUSH_CONTAINER_MAX];
	bool found = push_service_from_cgroup(text, strlen(text), u, c);

	if (!unit) {
		assert_false(found);
		return;
	}
	assert_true(found);
	assert_string_equal(u, unit);
	assert_string_equal(c, container);
}

static void test_cgroup_units(void **state)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char text[512], scope[128];

	(void)state;
	unit_of("0::/system.slice/nginx.service\n", "nginx.service", "");
	unit_of("0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service\n",
		"foo.service", "");
	unit_of("0::/user.slice/user-1000.slice/session-3.scope\n", "session-3.scope", "");
	unit_of("0::/system.slice/systemd-fsck@dev-disk-by\\x2duuid-1.service\n",
		"systemd-fsck_dev-disk-by_x2duuid-1.service", "");
	snprintf(text, sizeof(text), "0::/system.slice/docker-%s.scope\n", id);
	snprintf(scope, sizeof(scope), "docker-%s.scope", id);
	unit_of(text, scope, id);
	snprintf(text, sizeof(text),
		 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podx.slice/cri-containerd-%s.scope\n", id);
	snprintf(scope, sizeof(scope), "cri-containerd-%s.scope", id);
	unit_of(text, scope, id);
	/* Hybrid and legacy boots: the name=systemd hierarchy. */
	unit_of("9:name=systemd:/system.slice/cron.service\n0::/\n", "cron.service", "");
	unit_of("12:memory:/x\n1:name=systemd:/system.slice/ssh.service\n", "ssh.service", "");
	unit_of("0::/\n9:name=systemd:/\n", NULL, NULL);
	unit_of("0::/init.scope\n", "init.scope", "");
	unit_of("0::/mygroup/worker\n", NULL, NULL);
	unit_of("", NULL, NULL);
}

static void test_auth_file(void **state)
{
	char path[] = "/tmp/hearth-test-auth.XXXXXX", out[PUSH_AUTH_MAX];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "  glc_token:s3cret \nsecond line\n", 32), 32);
	close(fd);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(push_auth_read(path, out), 0);
	assert_string_equal(out, "glc_token:s3cret");
	assert_int_equal(chmod(path, 0400), 0);
	assert_int_equal(push_auth_read(path, out), 0);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(push_auth_read(path, out), -EPERM);
	assert_int_equal(chmod(path, 0604), 0);
	assert_int_equal(push_auth_read(path, out), -EPERM);
	assert_int_equal(chmod(path, 0600), 0);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "\n", 1), 1);
	close(fd);
	assert_int_equal(push_auth_read(path, out), -EINVAL);
	unlink(path);
	assert_int_equal(push_auth_read(path, out), -ENOENT);
}

/* Processes 10 and 11 are "web" in one unit, 12 is "db" in another. */
static const struct push_service *fake_service(void *arg, uint32_t pid, const char *comm,
					       size_t len)
{
	static struct push_service s;

	(void)arg;
	(void)len;
	snprintf(s.name, sizeof(s.name), "%s", pid == 12 ? "db.service" : "web.service");
	s.container[0] = 0;
	assert_true(!strncmp(comm, pid == 12 ? "db" : "web", 2));
	return &s;
}

static uint32_t frame(struct prof_profile *p, const char *name, int kind, uint32_t line)
{
	struct prof_frame f = { .name = prof_intern_cstr(p, name), .kind = (uint8_t)kind,
				.line = line };

	return prof_frame_intern(p, &f);
}

static void test_split(void **state)
{
	struct prof_profile *p = prof_new(PROF_UNIT_SAMPLES);
	struct push_parts parts = { 0 };
	uint32_t s[3], t[4];

	(void)state;
	prof_meta(p)->hz = 99;
	s[0] = frame(p, "web", PROF_KIND_PROCESS, 10);
	s[1] = frame(p, "main", PROF_KIND_USER, 0);
	s[2] = frame(p, "serve", PROF_KIND_USER, 0);
	prof_add_stack(p, s, 3, 5);
	prof_add_stack(p, s, 2, 1);
	/* A thread row (hearthd keeps them for snapshots) is not pushed. */
	t[0] = frame(p, "web", PROF_KIND_PROCESS, 11);
	t[1] = frame(p, "web-11", PROF_KIND_THREAD, 0);
	t[2] = s[1];
	t[3] = s[2];
	prof_add_stack(p, t, 4, 7);
	s[0] = frame(p, "db", PROF_KIND_PROCESS, 12);
	prof_add_stack(p, s, 3, 11);
	/* serve's code was seen in /usr/bin/web at 0x401234 */
	{
		struct prof_mapping m = { 0x400000, 0x500000, 0, prof_intern_cstr(p, "/usr/bin/web"),
					  prof_intern_cstr(p, "0badc0de") };

		assert_int_equal(prof_frame_place(p, s[2], prof_mapping_intern(p, &m), 0x401234), 0);
	}
	assert_int_equal(push_split(p, 0, fake_service, NULL, &parts), 0);
	assert_int_equal(parts.n, 2);
	assert_string_equal(parts.v[0].svc.name, "db.service");
	assert_string_equal(parts.v[1].svc.name, "web.service");
	assert_int_equal(prof_total(parts.v[0].prof), 11);
	assert_int_equal(prof_total(parts.v[1].prof), 13);
	assert_int_equal(prof_meta(parts.v[1].prof)->hz, 99);
	/* web's two processes merge under one row without a pid. */
	{
		const struct prof_profile *w = parts.v[1].prof;
		const struct prof_node *root = prof_node_get(w, 0), *row, *mn;

		row = prof_node_get(w, root->child);
		assert_int_equal(row->sibling, 0);
		assert_int_equal(prof_frame_get(w, row->frame)->line, 0);
		assert_string_equal(prof_str(w, prof_frame_get(w, row->frame)->name), "web");
		assert_int_equal(row->total, 13);
		mn = prof_node_get(w, row->child);
		assert_int_equal(mn->sibling, 0);
		assert_string_equal(prof_str(w, prof_frame_get(w, mn->frame)->name), "main");
		assert_int_equal(mn->total, 13);
		assert_int_equal(mn->self, 1);
		assert_int_equal(prof_node_get(w, mn->child)->self, 12);
		/* serve keeps its place: the pprof sent has its mapping and address */
		{
			uint32_t mid;
			uint64_t a = prof_frame_addr(w, prof_node_get(w, mn->child)->frame, &mid);
			const struct prof_mapping *m = prof_mapping_get(w, mid);

			assert_int_equal(a, 0x401234);
			assert_non_null(m);
			assert_int_equal(m->start, 0x400000);
			assert_int_equal(m->limit, 0x500000);
			assert_string_equal(prof_str(w, m->file), "/usr/bin/web");
			assert_string_equal(prof_str(w, m->build_id), "0badc0de");
		}
	}
	/* The off-CPU parts sort after the on-CPU one of each service. */
	assert_int_equal(push_split(p, 1, fake_service, NULL, &parts), 0);
	assert_int_equal(parts.n, 4);
	assert_int_equal(parts.v[0].kind, PUSH_ONCPU);
	assert_int_equal(parts.v[1].kind, PUSH_OFFCPU);
	assert_string_equal(parts.v[1].svc.name, "db.service");
	push_parts_free(&parts);
	prof_free(p);
}

/* Growth's requests and their bytes are cut the same way: each
 * service's bytes ride with its requests, and its parts sort after its
 * on-CPU and off-CPU ones. */
static void test_split_pair(void **state)
{
	struct prof_profile *req = prof_new(PROF_UNIT_SAMPLES), *bytes = prof_new(PROF_UNIT_BYTES);
	struct push_parts parts = { 0 };
	uint32_t s[2];

	(void)state;
	s[0] = frame(req, "web", PROF_KIND_PROCESS, 10);
	s[1] = frame(req, "grow", PROF_KIND_USER, 0);
	prof_add_stack(req, s, 2, 3);
	s[0] = frame(req, "db", PROF_KIND_PROCESS, 12);
	prof_add_stack(req, s, 2, 2);
	s[0] = frame(bytes, "web", PROF_KIND_PROCESS, 10);
	s[1] = frame(bytes, "grow", PROF_KIND_USER, 0);
	prof_add_stack(bytes, s, 2, 3 << 20);
	s[0] = frame(bytes, "db", PROF_KIND_PROCESS, 12);
	prof_add_stack(bytes, s, 2, 8192);
	assert_int_equal(push_split(req, PUSH_ONCPU, fake_service, NULL, &parts), 0);
	assert_int_equal(push_split_pair(req, bytes, PUSH_GROWTH, fake_service, NULL, &parts), 0);
	assert_int_equal(parts.n, 4);
	assert_int_equal(parts.v[0].kind, PUSH_ONCPU);
	assert_null(parts.v[0].second);
	assert_int_equal(parts.v[1].kind, PUSH_GROWTH);
	assert_string_equal(parts.v[1].svc.name, "db.service");
	assert_int_equal(prof_total(parts.v[1].prof), 2);
	assert_non_null(parts.v[1].second);
	assert_int_equal(prof_total(parts.v[1].second), 8192);
	assert_int_equal(prof_meta(parts.v[1].second)->unit, PROF_UNIT_BYTES);
	assert_string_equal(parts.v[3].svc.name, "web.service");
	assert_int_equal(prof_total(parts.v[3].prof), 3);
	assert_int_equal(prof_total(parts.v[3].second), 3 << 20);
	push_parts_free(&parts);
	/* No bytes: the requests go alone. */
	assert_int_equal(push_split_pair(req, NULL, PUSH_GROWTH, fake_service, NULL, &parts), 0);
	assert_int_equal(parts.n, 2);
	assert_null(parts.v[0].second);
	push_parts_free(&parts);
	prof_free(req);
	prof_free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_cursor_text),
		cmocka_unit_test(test_cursor_file),
		cmocka_unit_test(test_pins),
		cmocka_unit_test(test_request_url),
		cmocka_unit_test(test_cgroup_units),
		cmocka_unit_test(test_auth_file),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
