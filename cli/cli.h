/* SPDX-License-Identifier: MIT */
/* The hearth command: one file per subcommand, wired by main.c's table. */
#ifndef HEARTH_CLI_H
#define HEARTH_CLI_H

#include <stdbool.h>

/* Each subcommand takes argv with argv[0] = its own name; returns the exit
 * status. */
int cmd_record(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_marks(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* The one error sink: prints "hearth: <sentence>\n" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


#endif
