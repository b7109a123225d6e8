/* cli: what every command shares: the list of commands, reading a command
 * line against a command's option table, its --help, and its errors. */
#include "cli/commands.h"
#include "common/stop.h"
#include "common/util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const command *const commands[] = {
    &cmd_sim,       &cmd_run,     &cmd_sweep,      &cmd_capacity, &cmd_predict,
    &cmd_report,    &cmd_compare, &cmd_merge,      &cmd_fit,      &cmd_demo,
    &cmd_calibrate, &cmd_env,     &cmd_completion, &cmd_help,     NULL};

static void notices_to_stderr(void *ctx, notice_kind kind, const char *text) {
    (void)ctx;
    char line[2200];
    snprintf(line, sizeof line, "%s%s%s\n", kind == NOTICE_PROGRESS ? "" : "servelab: ",
             kind == NOTICE_WARNING ? "warning: "
             : kind == NOTICE_FATAL ? "fatal: "
                                    : "",
             text);
    fputs(line, stderr);
    if (kind == NOTICE_PROGRESS)
        fflush(stderr);
}

const notice_sink *cli_notices(void) {
    static notice_sink sink;
    sink = (notice_sink){notices_to_stderr, NULL, stderr};
    return &sink;
}

int cli_fail(const command *c, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "servelab: %s: %s\n", c->name, msg);
    return 2;
}

void cli_help(FILE *f, const command *c) {
    fprintf(f, "usage: servelab %s\n%s\n", c->usage, c->text);
    if (c->options && c->options->name) {
        fputc('\n', f);
        opt_print_help(f, c->options);
    }
    if (c->notes)
        fprintf(f, "\n%s", c->notes);
}

int cli_parse(const command *c, int argc, char **argv, void *base, int max_positional,
              opt_args *args) {
    static const opt_def none[] = {{0}};
    const opt_def *table = c->options ? c->options : none;
    opt_args a;
    char err[1024];
    if (opt_scan(table, argc, argv, &a, err, sizeof err)) {
        cli_fail(c, "%s (see servelab %s --help)", err, c->name);
        return -1;
    }
    int rc = 0;
    if (a.help) {
        cli_help(stdout, c);
        rc = 1;
    } else if (max_positional >= 0 && a.n_positional > max_positional) {
        cli_fail(c, "unexpected argument '%s'", a.positional[max_positional]);
        rc = -1;
    } else if (opt_apply(&a, base, err, sizeof err)) {
        cli_fail(c, "%s", err);
        rc = -1;
    }
    if (args && rc == 0)
        *args = a;
    else
        opt_args_free(&a);
    return rc;
}

int cli_exit_code(outcome o) {
    return outcome_exit_code(o, stop_signal());
}

const char *cli_self_path(const char *argv0) {
    static char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = 0;
        return buf;
    }
    return argv0;
}
