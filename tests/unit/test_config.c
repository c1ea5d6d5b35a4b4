/* SPDX-License-Identifier: MIT */
/* hearthd.conf: defaults, every key, comments and quotes, flags spelled
 * with dashes, and errors naming the line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config.h"
#include "agent/sampler.h"

#define SEC 1000000000ull

static void test_defaults(void **state)
{
	struct hearthd_config c;

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.state_dir, "/var/lib/hearth");
	assert_string_equal(c.socket_path, "/run/hearth/control.sock");
	assert_string_equal(c.socket_group, "hearth");
	assert_int_equal(c.window_ns, 10 * SEC);
	assert_int_equal(c.retention_age_ns, 24 * 3600 * SEC);
	assert_int_equal(c.retention_bytes, 1ull << 30);
	assert_int_equal(c.frequency, 99);
	assert_true(c.on_cpu && c.off_cpu && c.kernel_stacks);
	assert_int_equal(c.off_cpu_min_block_ns, 1000000);
	assert_int_equal(c.unwind, SAMPLER_UNWIND_AUTO);
	assert_int_equal(c.nexclude, 0);
	assert_int_equal(c.max_clients, 16);
}

static void test_every_key(void **state)
{
	static const char text[] =
		"# a comment\n"
		"\n"
		"state_dir = /srv/hearth\n"
		"socket=/run/h.sock\n"
		"  socket_group = \"wheel\"   # trailing comment\n"
		"window = 500ms\n"
		"retention_age = 2d\n"
		"retention_size = 256M\n"
		"frequency = 49\n"
		"on_cpu = yes\n"
		"off_cpu = off\n"
		"off_cpu_min_block = 10us\n"
		"kernel_stacks = false\n"
		"unwind = dwarf\n"
		"exclude_comm = sshd, cron  systemd-journal\n"
		"max_clients = 4\r\n";
	struct hearthd_config c;
	char err[128] = "";

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_parse(&c, text, strlen(text), err, sizeof(err)), 0);
	assert_string_equal(c.state_dir, "/srv/hearth");
	assert_string_equal(c.socket_path, "/run/h.sock");
	assert_string_equal(c.socket_group, "wheel");
	assert_int_equal(c.window_ns, 500000000ull);
	assert_int_equal(c.retention_age_ns, 2 * 86400 * SEC);
	assert_int_equal(c.retention_bytes, 256ull << 20);
	assert_int_equal(c.frequency, 49);
	assert_true(c.on_cpu);
	assert_false(c.off_cpu);
	assert_int_equal(c.off_cpu_min_block_ns, 10000);
	assert_false(c.kernel_stacks);
	assert_int_equal(c.unwind, SAMPLER_UNWIND_DWARF);
	assert_int_equal(c.nexclude, 3);
	assert_string_equal(c.exclude_comm[0], "sshd");
	assert_string_equal(c.exclude_comm[2], "systemd-journal");
	assert_int_equal(c.max_clients, 4);
}

static void expect_error(const char *text, const char *needle)
{
	struct hearthd_config c;
	char err[160] = "";

	config_defaults(&c);
	assert_int_equal(config_parse(&c, text, strlen(text), err, sizeof(err)), -EINVAL);
	if (!strstr(err, needle)) {
		print_error("error '%s' lacks '%s'\n", err, needle);
		fail();
	}
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("window = 10s\nbogus = 1\n", "line 2: 'bogus' is not a hearthd setting");
	expect_error("window\n", "line 1: expected 'key = value'");
	expect_error("window = 10x\n", "not a valid value for window");
	expect_error("window = 50ms\n", "window");          /* below 100 ms */
	expect_error("window = 2h\n", "window");            /* above 1 h */
	expect_error("window = -1s\n", "window");
	expect_error("frequency = 0\n", "frequency");
	expect_error("frequency = 10001\n", "frequency");
	expect_error("frequency = 99abc\n", "frequency");
	expect_error("retention_size = 1Q\n", "retention_size");
	expect_error("retention_size = 99999999999999999999\n", "retention_size");
	expect_error("retention_age = 999999999999999999d\n", "retention_age");
	expect_error("off_cpu = maybe\n", "off_cpu");
	expect_error("state_dir = relative/path\n", "state_dir");
	expect_error("socket =\n", "socket");
	expect_error("unwind = guess\n", "unwind");
	expect_error("exclude_comm = averyveryverylongname\n", "exclude_comm");
}

static void test_flags_and_parsers(void **state)
{
	struct hearthd_config c;
	char err[128];
	uint64_t v;
	bool b;

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_set(&c, "state-dir", "/tmp/x", err, sizeof(err)), 0);
	assert_string_equal(c.state_dir, "/tmp/x");
	assert_int_equal(config_set(&c, "retention-size", "1GiB", err, sizeof(err)), 0);
	assert_int_equal(c.retention_bytes, 1ull << 30);
	assert_int_equal(config_set(&c, "no-such-flag", "1", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'no_such_flag' is not a hearthd setting");
	assert_int_equal(c.stack_map_size, SAMPLER_STACK_MAP_SIZE);
	assert_int_equal(config_set(&c, "stack-map-size", "65536", err, sizeof(err)), 0);
	assert_int_equal(c.stack_map_size, 65536);
	assert_int_equal(config_set(&c, "stack_map_size", "1023", err, sizeof(err)), -EINVAL);
	assert_int_equal(config_set(&c, "stack_map_size", "1048577", err, sizeof(err)), -EINVAL);
	assert_int_equal(c.stack_map_size, 65536);
	assert_int_equal(config_parse_duration("90", &v), 0);
	assert_int_equal(v, 90 * SEC);
	assert_int_equal(config_parse_duration("5m", &v), 0);
	assert_int_equal(v, 300 * SEC);
	assert_int_equal(config_parse_duration("", &v), -EINVAL);
	/* One grammar for the command and the config: decimals and days. */
	assert_int_equal(config_parse_duration("1.5s", &v), 0);
	assert_true(v == 1500000000ull);
	assert_int_equal(config_parse_duration("0.25", &v), 0);
	assert_true(v == 250000000ull);
	assert_int_equal(config_parse_duration("2d", &v), 0);
	assert_true(v == 2ull * 86400 * 1000000000ull);
	assert_int_equal(config_parse_duration("0.001ms", &v), 0);
	assert_true(v == 1000);
	assert_int_equal(config_parse_duration("1.", &v), -EINVAL);
	assert_int_equal(config_parse_duration("1.5x", &v), -EINVAL);
	assert_int_equal(config_parse_duration("99999999999d", &v), -EINVAL);
	assert_int_equal(config_parse_size("4K", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(config_parse_size("2T", &v), 0);
	assert_int_equal(v, 2ull << 40);
	assert_int_equal(config_parse_size("4KB", &v), 0);
	assert_int_equal(config_parse_size("4k", &v), -EINVAL);
	assert_int_equal(config_parse_bool("On", &b), 0);
	assert_true(b);
	assert_int_equal(config_parse_bool("0", &b), 0);
	assert_false(b);
	assert_int_equal(config_parse_bool("2", &b), -EINVAL);
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/hearth-test-conf.XXXXXX";
	struct hearthd_config c;
	char err[160];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "window = 3s\n", 12), 12);
	close(fd);
	config_defaults(&c);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.window_ns, 3 * SEC);
	unlink(path);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), -ENOENT);
	assert_int_equal(c.window_ns, 3 * SEC); /* untouched */
}

/* The shipped etc/hearthd.conf sets every key to its default. */
static void test_shipped_file_is_defaults(void **state)
{
	struct hearthd_config a, b;
	char err[160] = "";

	(void)state;
	config_defaults(&a);
	memset(&b, 0x5a, sizeof(b));
	config_defaults(&b);
	b.frequency = 1;
	b.window_ns = 1;
	b.max_clients = 1;
	if (config_load(&b, "etc/hearthd.conf", err, sizeof(err)) == -ENOENT &&
	    config_load(&b, "../etc/hearthd.conf", err, sizeof(err)) == -ENOENT)
		fail_msg("etc/hearthd.conf not found from %s", getcwd(err, sizeof(err)));
	assert_int_equal(b.frequency, a.frequency);
	assert_int_equal(b.window_ns, a.window_ns);
	assert_int_equal(b.max_clients, a.max_clients);
	assert_memory_equal(&a, &b, sizeof(a));
}

/* debuginfod_urls: empty by default (the environment's), a checked
 * server list, back to empty; a flag spelled with dashes. */
static void test_debuginfod_urls(void **state)
{
	struct hearthd_config c;
	char err[300];

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.debuginfod_urls, "");
	assert_int_equal(config_set(&c, "debuginfod-urls", "https://debuginfod.debian.net http://127.0.0.1:8002",
				    err, sizeof(err)), 0);
	assert_string_equal(c.debuginfod_urls, "https://debuginfod.debian.net http://127.0.0.1:8002");
	assert_int_equal(config_set(&c, "debuginfod_urls", "debuginfod.debian.net", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'debuginfod.debian.net' is not a valid value for debuginfod_urls");
	assert_string_equal(c.debuginfod_urls, "https://debuginfod.debian.net http://127.0.0.1:8002");
	assert_int_equal(config_parse(&c, "debuginfod_urls =\n", 17, err, sizeof(err)), 0);
	assert_string_equal(c.debuginfod_urls, "");
}

/* prometheus_file: none by default, an absolute path, back to none. */
static void test_prometheus_file(void **state)
{
	struct hearthd_config c;
	char err[300];

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.prometheus_file, "");
	assert_int_equal(config_set(&c, "prometheus-file", "/var/lib/prometheus/node-exporter/hearth.prom",
				    err, sizeof(err)), 0);
	assert_string_equal(c.prometheus_file, "/var/lib/prometheus/node-exporter/hearth.prom");
	assert_int_equal(config_set(&c, "prometheus_file", "hearth.prom", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'hearth.prom' is not a valid value for prometheus_file");
	assert_int_equal(config_parse(&c, "prometheus_file =\n", 18, err, sizeof(err)), 0);
	assert_string_equal(c.prometheus_file, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_flags_and_parsers),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_shipped_file_is_defaults),
		cmocka_unit_test(test_debuginfod_urls),
		cmocka_unit_test(test_prometheus_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
