/* SPDX-License-Identifier: MIT */
/* hearth marks: list the marks on hearthd's timeline. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/json.h"

/* {"marks": [{"name": ..., "at_ns": ..., "at": "YYYY-MM-DD HH:MM:SS"}]},
 * oldest first; "at" in local time, as the text shows it. */
static void print_json(const struct ctl_mark *m, size_t n)
{
	struct cli_json j;
	char buf[32];

	cli_json_start(&j, stdout);
	cli_json_object(&j, NULL);
	cli_json_array(&j, "marks");
	for (size_t i = 0; i < n; i++) {
		cli_format_time(m[i].at_ns, buf, sizeof(buf));
		cli_json_object(&j, NULL);
		cli_json_str(&j, "name", m[i].name);
		cli_json_u64(&j, "at_ns", m[i].at_ns);
		cli_json_str(&j, "at", buf);
		cli_json_end(&j);
	}
	cli_json_end(&j);
	cli_json_end(&j);
}

int cmd_marks(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = CLI_DEFAULT_SOCKET;
	struct ctl_request req = { .type = CTL_MARKS };
	struct ctl_mark *m;
	struct cli_reply r;
	uint32_t damaged;
	size_t n;
	char buf[32];
	int c, json = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 's')
			sock = optarg;
		else if (c == 'j')
			json = 1;
		else if (c == 'h') {
			printf("usage: hearth marks [options]\n\n"
			       "Lists every mark, oldest first: time, epoch seconds, name.\n\n"
			       "      --json           as JSON: {\"marks\": [{\"name\", \"at_ns\", \"at\"}]}\n"
			       "      --socket PATH    hearthd's control socket\n"
			       "  -h, --help           this text\n");
			return 0;
		} else
			return 2;
	}
	if (optind < argc) {
		cli_error("marks takes no arguments ('%s').", argv[optind]);
		return 2;
	}
	if (cli_call(sock, &req, 10000, &r) < 0)
		return 1;
	if (ctl_decode_marks(r.payload, r.len, &m, &n, &damaged) < 0) {
		free(r.buf);
		cli_error("hearthd sent a malformed marks reply.");
		return 1;
	}
	free(r.buf);
	if (json) {
		print_json(m, n);
		free(m);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		cli_format_time(m[i].at_ns, buf, sizeof(buf));
		printf("%s  @%llu.%03llu  %s\n", buf, (unsigned long long)(m[i].at_ns / 1000000000ull),
		       (unsigned long long)(m[i].at_ns % 1000000000ull / 1000000), m[i].name);
	}
	if (n == 0 && !damaged)
		printf("no marks yet; 'hearth mark NAME' adds one\n");
	if (damaged)
		fprintf(stderr, "hearth: warning: %u damaged mark(s) could not be read; 'hearthd --verify-store' shows the damage\n",
			damaged);
	free(m);
	return 0;
}
