/* servelab: measures OpenAI-compatible LLM servers the way their users feel
 * them. This file only dispatches to the subcommands. */
#include "cli/commands.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *about;
} commands[] = {
    {"sim", cmd_sim, "simulated OpenAI-compatible server (the fixture)"},
    {"run", cmd_run, "one load run against a server"},
    {"sweep", cmd_sweep, "a campaign: runs x repetitions, warmup, server restarts"},
    {"report", cmd_report, "tables, figures and HTML from raw rows"},
    {"demo", cmd_demo, "embedded simulator + small sweep + report, no setup"},
    {"calibrate", cmd_calibrate, "how far this machine measures within 1 ms"},
    {"env", cmd_env, "environment and metadata as JSON (GPU, driver, CUDA, server)"},
};

static void usage(FILE *f) {
    fprintf(f,
            "servelab %s: measure LLM servers the way their users feel them\n\n"
            "usage: servelab COMMAND [options]   (servelab COMMAND --help for more)\n\n",
            SERVELAB_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].about);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("servelab %s\n", SERVELAB_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "servelab: unknown command '%s' (see servelab --help)\n", argv[1]);
    return 2;
}
