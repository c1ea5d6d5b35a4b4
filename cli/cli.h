/* SPDX-License-Identifier: MIT */
/* The hearth command: one file per subcommand, wired by main.c's table. */
#ifndef HEARTH_CLI_H
#define HEARTH_CLI_H

#include <stdbool.h>
#include <stddef.h>

struct cli_viewer;

/* Runs the command line @argv (argv[1] the subcommand) with the viewer
 * @v this binary has (cli/viewer.h). Returns the exit status. */
int cli_main(int argc, char **argv, const struct cli_viewer *v);

/* Each subcommand takes argv with argv[0] = its own name; returns the exit
 * status. Those that may draw take the viewer too. (`hearth view` is the
 * viewer's: cli/viewer.h.) */
int cmd_record(int argc, char **argv);
int cmd_export(int argc, char **argv, const struct cli_viewer *v);
int cmd_snapshot(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_mark(int argc, char **argv);
int cmd_marks(int argc, char **argv);
int cmd_diff(int argc, char **argv, const struct cli_viewer *v);

/* The one error sink: prints "hearth: <sentence>\n" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));


/* The options every command that reads profile files takes, as getopt
 * values: --max-input SIZE, --unit UNIT and --sample-type TYPE. */
#define CLI_OPT_MAX_INPUT 0x100
#define CLI_OPT_UNIT 0x101
#define CLI_OPT_SAMPLE_TYPE 0x102
#define CLI_INPUT_OPTIONS                                                      \
	{ "max-input", required_argument, NULL, CLI_OPT_MAX_INPUT },           \
	{ "unit", required_argument, NULL, CLI_OPT_UNIT },                     \
	{ "sample-type", required_argument, NULL, CLI_OPT_SAMPLE_TYPE }
#define CLI_INPUT_HELP                                                         \
	"      --max-input SIZE  read at most SIZE bytes of a file, or of it\n"   \
	"                        decompressed (default 1G; K, M, G)\n"            \
	"      --unit UNIT       what folded counts are: samples, nanoseconds or\n" \
	"                        bytes (default: what hearth's comment lines in\n" \
	"                        the file say, else samples)\n"                  \
	"      --sample-type TYPE  which of a pprof file's sample types to read\n" \
	"                        (inuse_space, alloc_objects, ...; default: its\n" \
	"                        default, else the last)\n"

struct prof_load_opts;
struct prof_profile;

/* Takes the input option @c (CLI_OPT_MAX_INPUT, CLI_OPT_UNIT or
 * CLI_OPT_SAMPLE_TYPE, which keeps @arg: it must outlive @o) with
 * @arg into @o. Returns 0, or -1 after saying what is wrong. */
int cli_input_option(int c, const char *arg, struct prof_load_opts *o);

/* What cli_load() does with a profile with nothing in it. */
enum {
	CLI_LOAD_NONEMPTY = 0,     /* refuses it */
	CLI_LOAD_EMPTY = 1,        /* takes it */
	CLI_LOAD_EMPTY_ANSWER = 2, /* takes it when it answers a question of
				    * time (its emptiness is the answer) */
};

/* Loads the profile file @path ("-": standard input) as @o says (NULL:
 * the defaults), says what the load left out, and refuses a profile with
 * nothing in it as @empty_ok says (CLI_LOAD_*). Returns the profile, or
 * NULL after one sentence. */
struct prof_profile *cli_load(const char *path, const struct prof_load_opts *o,
			      int empty_ok);

struct prof_load_types;

/* cli_load() keeping every sample type of a pprof file, each a profile
 * (prof_load_types()), into @t (free with prof_load_types_free());
 * refuses an empty profile. Returns 0, or -1 after one sentence. */
int cli_load_types(const char *path, const struct prof_load_opts *o,
		   struct prof_load_types *t);

struct cli_progress;

/* cli_load() that says on the progress line @pr (cli/progress.h; NULL:
 * none) which file it reads, and hides the line before it says anything
 * else; the format it read goes to *@format (NULL: not wanted), as
 * struct prof_load_note names it. */
struct prof_profile *cli_load_shown(const char *path, const struct prof_load_opts *o,
				    int empty_ok, struct cli_progress *pr, const char **format);

#endif
