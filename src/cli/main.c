/* servelab: measures OpenAI-compatible LLM servers the way their users feel
 * them. This file only dispatches to the subcommands (cli/commands.h). */
#include "cli/commands.h"
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

int main(int argc, char **argv) {
    notice_set_default(cli_notices());
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
        if (!strcmp(argv[1], (*c)->name))
            return (*c)->run(argc - 1, argv + 1);
    fprintf(stderr, "servelab: unknown command '%s' (see servelab --help)\n", argv[1]);
    return 2;
}
