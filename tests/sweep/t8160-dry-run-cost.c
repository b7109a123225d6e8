/* A dry run says what a campaign will cost before anything runs: how many
 * requests and how long their arrivals take, and whether the managed
 * server's program is there at all. The sample vLLM campaign tells the
 * truth about what its runs change. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int dry_run(const char *path_prefix, const char *cfg, char **out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "sweep --dry-run %s", cfg);
    if (!path_prefix)
        return servelab_cmd(cmd, out);
    char full[8192];
    snprintf(full, sizeof full, "PATH=%s:$PATH %s %s 2>&1", path_prefix, servelab_bin(), cmd);
    int code;
    *out = run_capture(full, &code);
    return code;
}

TEST(dry_run_estimates_requests_and_arrival_time) {
    char *dir = temp_dir(), cfg[1024], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fputs("name: t\ntarget: {url: http://127.0.0.1:1}\nrequests: 100\nrate: 10\nrepetitions: 2\n"
          "runs:\n  - {name: a}\n  - {name: b, duration: 30, rate: 5}\n  - {name: c, rate: inf}\n",
          f);
    fclose(f);
    CHECK_INT(dry_run(NULL, cfg, &out), 0);
    /* a: 2 x 100 over 9.9 s; b: 2 x 150 over 30 s; c: 2 x 100 at once */
    CHECK_MSG(strstr(out, "6 planned runs, about 700 requests; arrivals take 80 s") &&
                  strstr(out, "all arrive at once (2)"),
              "%s", out);
}

/* A rate plan's run: its expected count and its stages' length (and the
 * warmup at the plan's mean rate). */
TEST(dry_run_estimates_a_rate_plan) {
    char *dir = temp_dir(), cfg[1024], *out;
    snprintf(cfg, sizeof cfg, "%s/p.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fputs("name: p\ntarget: {url: http://127.0.0.1:1}\nrate_plan: \"2@10s,ramp:2-6@20s\"\n"
          "warmup: 0\nruns:\n  - {name: a}\n",
          f);
    fclose(f);
    CHECK_INT(dry_run(NULL, cfg, &out), 0);
    /* 2 x 10 + (2 + 6) / 2 x 20 = 100 requests over 30 s */
    CHECK_MSG(strstr(out, "rate plan \"2@10s,ramp:2-6@20s\"") &&
                  strstr(out, "1 planned runs, about 100 requests; arrivals take 30 s"),
              "%s", out);
}

TEST(dry_run_checks_the_server_program_and_vllm_sample) {
    char *dir = temp_dir(), *out;
    /* without vllm on PATH: refused, naming it */
    CHECK_INT(dry_run(NULL, "configs/vllm.yaml", &out), 2);
    CHECK_MSG(strstr(out, "target.server.command: 'vllm' is not on PATH"), "%s", out);
    /* with a vllm on PATH: the plan, with its cost */
    char bin[1024];
    snprintf(bin, sizeof bin, "%s/vllm", dir);
    FILE *f = fopen(bin, "w");
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    chmod(bin, 0755);
    CHECK_INT(dry_run(dir, "configs/vllm.yaml", &out), 0);
    CHECK_MSG(strstr(out, "21 planned runs, about 6300 requests"), "%s", out);
    /* the server listens on loopback only; the prefix-cache run is the baseline without it
     * (vLLM's V1 engine caches prefixes by default); memory is not called KV */
    char *yaml = read_file("configs/vllm.yaml", NULL);
    CHECK(strstr(yaml, "--host 127.0.0.1") && strstr(yaml, "--no-enable-prefix-caching"));
    CHECK(!strstr(yaml, "\"--enable-prefix-caching\"") && !strstr(yaml, "kv0.45"));
}
