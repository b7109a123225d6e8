/* servelab: measures OpenAI-compatible LLM servers the way their users feel
 * them. This file only dispatches to the subcommands (cli/commands.h), each
 * under a mapfile guard: a file truncated while a command reads its mapping
 * (a run rewritten under its report) ends the command with one line naming
 * the file, not a SIGBUS. The libraries allocate through servelab's
 * checked allocator (common/lib_alloc.h): out of memory is one line, then
 * abort, wherever it happens. */
#include "cli/commands.h"
#include "common/lib_alloc.h"
#include "common/mapfile.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f,
            "servelab %s: measure LLM servers the way their users feel them\n\n"
            "usage: servelab COMMAND [options]   (servelab COMMAND --help for more)\n\n",
            SERVELAB_VERSION);
    for (const command *const *c = commands; *c; c++)
        fprintf(f, "  %-9s %s\n", (*c)->name, (*c)->about);
}

typedef struct call {
    const command *c;
    int argc;
    char **argv;
    int rc;
} call;

static int run_call(void *arg) {
    call *k = arg;
    k->rc = k->c->run(k->argc, k->argv);
    return 0;
}

int main(int argc, char **argv) {
    notice_set_default(cli_notices());
    lib_alloc_checked();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        (!strcmp(argv[1], "help") && argc == 2)) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("servelab %s\n", SERVELAB_VERSION);
        return 0;
    }
    for (const command *const *c = commands; *c; c++)
        if (!strcmp(argv[1], (*c)->name)) {
            call k = {*c, argc - 1, argv + 1, 0};
            char err[4400];
            if (mapfile_guard(run_call, &k, err, sizeof err)) {
                fprintf(stderr, "servelab: %s: %s\n", argv[1], err);
                return cli_exit_code(OUTCOME_BAD_INPUT);
            }
            return k.rc;
        }
    fprintf(stderr, "servelab: unknown command '%s' (see servelab --help)\n", argv[1]);
    return 2;
}
