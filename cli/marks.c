/* SPDX-License-Identifier: MIT */
/* hearth marks: list the marks on hearthd's timeline. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/client.h"

int cmd_marks(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = CLI_DEFAULT_SOCKET;
	struct ctl_request req = { .type = CTL_MARKS };
	struct ctl_mark *m;
	struct cli_reply r;
	size_t n;
	char buf[32];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 's')
			sock = optarg;
		else if (c == 'h') {
			printf("usage: hearth marks [options]\n\n"
			       "Lists every mark, oldest first: time, epoch seconds, name.\n\n"
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
	if (ctl_decode_marks(r.payload, r.len, &m, &n) < 0) {
		free(r.buf);
		cli_error("hearthd sent a malformed marks reply.");
		return 1;
	}
	free(r.buf);
	for (size_t i = 0; i < n; i++) {
		cli_format_time(m[i].at_ns, buf, sizeof(buf));
		printf("%s  @%llu.%03llu  %s\n", buf, (unsigned long long)(m[i].at_ns / 1000000000ull),
		       (unsigned long long)(m[i].at_ns % 1000000000ull / 1000000), m[i].name);
	}
	if (n == 0)
		printf("no marks yet; 'hearth mark NAME' adds one\n");
	free(m);
	return 0;
}
