/* cli/env: `servelab env [--url URL]`: the metadata a run records, as JSON
 * on stdout (run/environment.c gathers it). */
#include "cli/commands.h"
#include "run/environment.h"
#include "run/run.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct env_cli {
    const char *url;
    int insecure;
} env_cli;

#define ENV(field) OPT_AT(env_cli, field)
static const opt_def env_options[] = {
    {.name = "url",
     .type = OPT_STRING,
     ENV(url),
     .arg = "URL",
     .help = "also ask the server at URL about itself"},
    {.name = "insecure", .type = OPT_FLAG, ENV(insecure), .help = "do not verify TLS certificates"},
    {0}};

static int env_main(int argc, char **argv) {
    env_cli o = {0};
    int rc = cli_parse(&cmd_env, argc, argv, &o, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    char err[256];
    if (o.url && opt_find(run_options, "url")->check(o.url, err, sizeof err))
        return cli_fail(&cmd_env, "--url: %s", err);
    json_t *j = environment_json(o.url, o.insecure);
    char *s = json_dumps(j, JSON_INDENT(2));
    puts(s);
    free(s);
    json_decref(j);
    return 0;
}

const command cmd_env = {
    .name = "env",
    .run = env_main,
    .usage = "env [--url URL] [--insecure]",
    .about = "environment and metadata as JSON (GPU, driver, CUDA, server)",
    .text = "Environment and metadata as JSON: tool, host, GPUs, and the server at URL.",
    .options = env_options,
};
