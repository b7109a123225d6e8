/* commands: the subcommands and what they share. Each src/cli/NAME.c holds
 * one command: its description, its option table (common/opt.h), the
 * parsing of its command line and its exit code (0 ok, 1 run/check failed,
 * 2 bad usage or input, 128 + signal when stopped). Only these files end
 * the process; everything below them returns errors. main.c dispatches;
 * help.c prints --help, the man page and docs/options.md from the same
 * descriptions and tables. */
#ifndef SERVELAB_COMMANDS_H
#define SERVELAB_COMMANDS_H

#include "common/notice.h"
#include "common/opt.h"
#include "common/outcome.h"

#include <stdio.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    const char *usage;                 /* after "servelab ": "run --url URL [options]" */
    const char *about;                 /* one line, for servelab --help */
    const char *text;                  /* a paragraph for --help and the man page */
    const opt_def *options;            /* its table; NULL-named row ends it */
    const char *notes;                 /* printed after the options; NULL: none */
    const char *key_prefix;            /* where its options' campaign keys sit ("target.sim.") */
} command;

extern const command cmd_sim, cmd_run, cmd_sweep, cmd_capacity, cmd_predict, cmd_report,
    cmd_compare, cmd_merge, cmd_fit, cmd_demo, cmd_calibrate, cmd_env, cmd_completion, cmd_help;
/* Every command, in the order servelab --help lists them; NULL ends it. */
extern const command *const commands[];

/* Reads argv against the command's table into the struct at `base` (which
 * holds the defaults). Returns 0; 1 when --help was asked (printed on
 * stdout); -1 after printing the error on stderr (exit code 2). With
 * max_positional >= 0, more positional arguments than that are an error.
 * `args` keeps the scan (opt_args_free it) and may be NULL. */
int cli_parse(const command *c, int argc, char **argv, void *base, int max_positional,
              opt_args *args);
/* "servelab NAME: MESSAGE" on stderr; returns 2. */
int cli_fail(const command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The command's --help. */
void cli_help(FILE *f, const command *c);
/* The sink every command gives the code below it (common/notice.h), on
 * stderr a whole line at a time: a warning as "servelab: warning: TEXT",
 * progress as it is, anything else as "servelab: TEXT"; live displays draw
 * on stderr. main sets it as the process's default. */
const notice_sink *cli_notices(void);

/* The exit code for an outcome: 0 ok, 1 failed, 2 bad input, 128 + the
 * stop signal (common/stop.h) when stopped. */
int cli_exit_code(outcome o);

/* The path of this binary, for starting itself as the simulator. */
const char *cli_self_path(const char *argv0);

#endif
