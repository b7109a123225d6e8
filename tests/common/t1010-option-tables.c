/* The option tables (common/opt): the strict command line, one parser for
 * the command line and campaign files (same values accepted, same words on
 * refusal), defaults that parse, and the generated documents kept current. */
#include "common/opt.h"
#include "common/util.h"
#include "run/run.h"
#include "sim/sim_options.h"
#include "sim/profiles.h"
#include "support.h"
#include "sweep/campaign.h"
#include "test.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* opt_scan + opt_apply on "run ARGS..." (NULL-ended), into *o. */
static int parse_run(run_opts *o, char *err, size_t errlen, ...) {
    char *argv[32] = {"run"};
    int argc = 1;
    va_list ap;
    va_start(ap, errlen);
    for (char *a; argc < 31 && (a = va_arg(ap, char *));)
        argv[argc++] = a;
    va_end(ap);
    run_opts_defaults(o);
    opt_args args;
    if (opt_scan(run_options, argc, argv, &args, err, errlen))
        return -1;
    int rc = opt_apply(&args, o, err, errlen);
    opt_args_free(&args);
    return rc;
}

TEST(opt_exact_names_only) {
    run_opts o;
    char err[512];
    CHECK(parse_run(&o, err, sizeof err, "--rat", "5", NULL) != 0);
    CHECK_STR(err, "unknown option '--rat'");
    CHECK(parse_run(&o, err, sizeof err, "--rate=5", "--url", "http://x", NULL) == 0);
    CHECK_NEAR(o.rate, 5, 0);
    CHECK_STR(o.url, "http://x");
    CHECK(parse_run(&o, err, sizeof err, "--insecure=yes", NULL) != 0);
    CHECK_STR(err, "--insecure takes no value");
    CHECK(parse_run(&o, err, sizeof err, "--timeout", NULL) != 0);
    CHECK_STR(err, "--timeout needs a value");
    CHECK(parse_run(&o, err, sizeof err, "-r", "5", NULL) != 0);
    CHECK_STR(err, "unknown option '-r'");
    /* an optional value only with '=' */
    CHECK(parse_run(&o, err, sizeof err, "--fail-on-slo", "--slo", "ttft=1s", NULL) == 0);
    CHECK(o.fail_on_slo && o.fail_fraction == 1.0);
    CHECK(parse_run(&o, err, sizeof err, "--fail-on-slo=0.9", NULL) == 0);
    CHECK_NEAR(o.fail_fraction, 0.9, 0);
    /* repeatable, and the last of a plain option wins */
    CHECK(parse_run(&o, err, sizeof err, "--header", "A: 1", "--header", "B: 2", "--seed", "4",
                    "--seed", "7", NULL) == 0);
    CHECK_INT(o.headers.n, 2);
    CHECK_STR(o.headers.v[1], "B: 2");
    CHECK_INT(o.seed, 7);
}

TEST(opt_positional_anywhere_and_double_dash) {
    static const opt_def t[] = {
        {.name = "out", .type = OPT_STRING, .at = 0, .size = sizeof(char *)}, {0}};
    char *argv[] = {"report", "a", "--out", "o", "b", "--", "--c", "-"};
    opt_args a;
    char err[256];
    CHECK(opt_scan(t, 8, argv, &a, err, sizeof err) == 0);
    CHECK_INT(a.n_positional, 4);
    CHECK_STR(a.positional[0], "a");
    CHECK_STR(a.positional[1], "b");
    CHECK_STR(a.positional[2], "--c");
    CHECK_STR(a.positional[3], "-");
    CHECK_STR(opt_value(&a, "out"), "o");
    CHECK(!a.help);
    opt_args_free(&a);
    char *help[] = {"report", "x", "-h"};
    CHECK(opt_scan(t, 3, help, &a, err, sizeof err) == 0 && a.help);
    opt_args_free(&a);
}

/* Every default of every table is a value its own row accepts. */
static void defaults_parse(const opt_def *table, size_t size) {
    char *base = xcalloc(1, size), err[256];
    for (const opt_def *d = table; d->name; d++)
        CHECK_MSG(!d->def || opt_set(d, d->def, base, err, sizeof err) == 0,
                  "--%s: default '%s': %s", d->name, d->def, err);
    free(base);
}

TEST(opt_defaults_are_valid_values) {
    defaults_parse(run_options, sizeof(run_opts));
    defaults_parse(sim_options, sizeof(sim_opts));
    defaults_parse(campaign_run_keys, sizeof(campaign_run));
    run_opts o;
    run_opts_defaults(&o);
    CHECK(isinf(o.rate) && o.requests == 100 && o.timeout_s == 600 && o.threads == 1);
    CHECK_STR(o.api, "completions");
    CHECK_STR(o.arrival, "poisson");
    CHECK(o.max_event_bytes == 16 << 20 && !strcmp(o.metrics_interval, "auto"));
}

/* The profile row's choices are the profiles the simulator knows. */
TEST(opt_sim_profiles_match_the_profile_table) {
    const opt_def *d = opt_find(sim_options, "profile");
    char names[128];
    snprintf(names, sizeof names, "%s", d->choices);
    int n = 0;
    for (char *t = strtok(names, "|"); t; t = strtok(NULL, "|"), n++)
        CHECK_MSG(sim_profile_find(t) != NULL, "no profile '%s'", t);
    CHECK_INT(n, 5);
    CHECK_STR(sim_profile_names(), "tiny, gpu-7b, cpu-1b, cpu-1b-2c, vllm-cpu");
}

/* --speedup divides every step-cost term, the profile's and the flags'. */
TEST(opt_sim_speedup_scales_the_step_costs) {
    sim_opts o;
    CHECK_INT(sim_opts_init(&o, "cpu-1b-2c"), 0);
    double base = o.cfg.engine.decode_base_ms, seq = o.cfg.engine.decode_per_seq_ms;
    CHECK(o.cfg.engine.n_step_points >= 4); /* the fitted file's table */
    double step4 = o.cfg.engine.step_ms[3], ctx = o.cfg.engine.prefill_ctx_per_1k_ms;
    o.cfg.engine.prefill_per_token_ms = 5; /* as --prefill-per-token-ms 5 would */
    o.speedup = 10;
    char err[256];
    CHECK_MSG(sim_opts_finish(&o, err, sizeof err) == 0, "%s", err);
    CHECK(fabs(o.cfg.engine.decode_base_ms - base / 10) < 1e-12);
    CHECK(fabs(o.cfg.engine.decode_per_seq_ms - seq / 10) < 1e-12);
    CHECK(fabs(o.cfg.engine.prefill_per_token_ms - 0.5) < 1e-12);
    CHECK(fabs(o.cfg.engine.step_ms[3] - step4 / 10) < 1e-12);
    CHECK(fabs(o.cfg.engine.prefill_ctx_per_1k_ms - ctx / 10) < 1e-12);
}

/* A bad value given to `run` on the command line and the same value given
 * to a campaign key: refused by both, in the same words. */
static void same_words(const char *flag, const char *key, const char *value) {
    run_opts o;
    char cli[512], yaml[2048], err[512];
    char arg[128];
    snprintf(arg, sizeof arg, "--%s=%s", flag, value);
    CHECK_MSG(parse_run(&o, cli, sizeof cli, arg, NULL) != 0, "%s accepted", arg);
    /* "--rate: expected ..." -> "expected ..." */
    const char *cli_words = strchr(cli, ' ') + 1;
    snprintf(yaml, sizeof yaml, "name: t\ntarget: {url: http://x}\n%s: '%s'\nruns: [{name: a}]\n",
             key, value);
    campaign c;
    CHECK(campaign_load_string(yaml, "t.yaml", &c, err, sizeof err) != 0);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "t.yaml:3: %s: ", key);
    CHECK_MSG(!strncmp(err, prefix, strlen(prefix)), "%s", err);
    CHECK_MSG(!strcmp(err + strlen(prefix), cli_words), "campaign: '%s'\n    run: '%s'",
              err + strlen(prefix), cli_words);
}

TEST(opt_run_and_campaign_refuse_alike) {
    same_words("rate", "rate", "0");
    same_words("rate", "rate", "infinity");
    same_words("requests", "requests", "1.5");
    same_words("warmup", "warmup", "-1");
    same_words("concurrency", "concurrency", "99999999999");
    same_words("threads", "threads", "65");
    same_words("timeout", "timeout", "10 minutes");
    same_words("metrics-interval", "metrics_interval", "5ms");
    same_words("burstiness", "burstiness", "0");
    same_words("arrival", "arrival", "uniform");
    same_words("http-client", "http_client", "wget");
    same_words("api", "api", "responses");
    same_words("continuous-usage", "continuous_usage", "maybe");
    same_words("max-event-bytes", "max_event_bytes", "10");
    same_words("cost-per-hour", "cost_per_hour", "-1");
    same_words("seed", "seed", "x");
}

/* And what one accepts, the other reads as the same value. */
TEST(opt_run_and_campaign_accept_alike) {
    run_opts o;
    char err[512];
    CHECK(parse_run(&o, err, sizeof err, "--rate", "2.5", "--timeout", "1.5m", "--metrics-interval",
                    "250ms", "--seed", "12345678901", NULL) == 0);
    campaign c;
    CHECK(campaign_load_string("name: t\ntarget: {url: http://x}\nrate: 2.5\ntimeout: 1.5m\n"
                               "metrics_interval: 250ms\nseed: 12345678901\nruns: [{name: a}]\n",
                               "t.yaml", &c, err, sizeof err) == 0);
    const run_opts *p = &c.runs[0].p;
    CHECK(p->rate == o.rate && p->timeout_s == o.timeout_s &&
          run_metrics_interval_s(p, 0) == run_metrics_interval_s(&o, 0) && p->seed == o.seed);
    CHECK_NEAR(run_metrics_interval_s(p, 0), 0.25, 1e-12);
    campaign_free(&c);
}

/* docs/servelab.1 and docs/options.md are what the tables print now. */
static void doc_is_current(const char *what, const char *path) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s help %s", servelab_bin(), what);
    int code;
    char *now = run_capture(cmd, &code);
    CHECK_INT(code, 0);
    size_t n;
    char *committed = read_file(path, &n);
    CHECK_MSG(committed != NULL, "%s missing", path);
    CHECK_MSG(!strcmp(now, committed), "%s is not current: run make docs", path);
}

TEST(opt_generated_docs_are_current) {
    doc_is_current("--man", "docs/servelab.1");
    doc_is_current("--markdown", "docs/options.md");
}

/* Every run option is in --help, in the man page and in options.md. */
TEST(opt_every_option_documented) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s run --help", servelab_bin());
    char *help = run_capture(cmd, NULL);
    char *man = read_file("docs/servelab.1", NULL), *md = read_file("docs/options.md", NULL);
    for (const opt_def *d = run_options; d->name; d++) {
        char flag[96], roff[192];
        snprintf(flag, sizeof flag, "--%s", d->name);
        size_t k = 0;
        for (const char *s = flag; *s && k + 2 < sizeof roff; s++) {
            if (*s == '-')
                roff[k++] = '\\';
            roff[k++] = *s;
        }
        roff[k] = 0;
        CHECK_MSG(strstr(help, flag) && strstr(md, flag) && strstr(man, roff), "%s undocumented",
                  flag);
    }
}
