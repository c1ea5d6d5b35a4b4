/* SPDX-License-Identifier: MIT */
/* hearth mark: stamp a named moment (a deploy) on hearthd's timeline. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: hearth mark NAME [options]\n\n"
		     "Stamps NAME (1-63 of A-Z a-z 0-9 . _ : @ + -) on hearthd's timeline.\n"
		     "A mark made now ends hearthd's open window there, so 'hearth diff --at'\n"
		     "compares exactly the time before it against the time after.\n\n"
		     "      --at TIME        when (default now): now, HH:MM[:SS],\n"
		     "                       'YYYY-MM-DD HH:MM[:SS]', @EPOCH or -DURATION (ago)\n"
		     "      --socket PATH    hearthd's control socket\n"
		     "  -h, --help           this text\n");
}

int cmd_mark(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "at", required_argument, NULL, 'a' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = CLI_DEFAULT_SOCKET, *at = NULL, *name;
	struct ctl_request req = { .type = CTL_MARK };
	struct cli_reply r;
	uint64_t when = 0;
	char buf[32];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'a')
			at = optarg;
		else if (c == 's')
			sock = optarg;
		else if (c == 'h')
			return usage(stdout), 0;
		else
			return usage(stderr), 2;
	}
	if (optind + 1 != argc) {
		cli_error("mark takes one NAME; 'hearth mark --help' shows the form.");
		return 2;
	}
	name = argv[optind];
	if (strlen(name) > CTL_NAME_MAX || !name[0] || strspn(name,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:@+-") != strlen(name)) {
		cli_error("'%s' is not a mark name: use 1-63 of A-Z a-z 0-9 . _ : @ + -.", name);
		return 2;
	}
	if (at && cli_parse_time(at, cli_now_ns(), &when) < 0) {
		cli_error("'%s' is not a time (now, HH:MM[:SS], 'YYYY-MM-DD HH:MM', @EPOCH or -5m).", at);
		return 2;
	}
	req.u.mark.at_ns = when;
	snprintf(req.u.mark.name, sizeof(req.u.mark.name), "%s", name);
	if (cli_call(sock, &req, 10000, &r) < 0)
		return 1;
	if (ctl_decode_mark(r.payload, r.len, &when) < 0) {
		free(r.buf);
		cli_error("hearthd sent a malformed mark reply.");
		return 1;
	}
	free(r.buf);
	cli_format_time(when, buf, sizeof(buf));
	printf("marked %s at %s\n", name, buf);
	return 0;
}
