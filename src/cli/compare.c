/* cli/compare: `servelab compare BASE NEW`: did the new run (or campaign)
 * move any figure from the base's by more than the noise, and by more
 * than --fail-on allows? report/comparison.h pairs and compares the runs,
 * report/comparison_render.h prints them; here are the options, the help
 * and the exit code: 0, 1 when a gate tripped, 2 for bad usage or input. */
#include "analysis/gate.h"
#include "cli/commands.h"
#include "report/comparison.h"
#include "report/comparison_render.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct compare_cli {
    const char *fail_on, *slo;
    int markdown, json;
    int resamples;
    int64_t seed;
} compare_cli;

#define CMP(field) OPT_AT(compare_cli, field)
static const opt_def compare_options[] = {
    {.name = "fail-on",
     .type = OPT_STRING,
     CMP(fail_on),
     .arg = "LIST",
     .help = "exit 1 on a significant regression beyond a gate, e.g. 'ttft_p95>+10%,"
             "goodput_fraction<-1%'"},
    {.name = "markdown",
     .type = OPT_FLAG,
     CMP(markdown),
     .help = "print GitHub-flavoured Markdown (a pull request's comment)"},
    {.name = "json", .type = OPT_FLAG, CMP(json), .help = "print JSON"},
    {.name = "resamples",
     .type = OPT_INT,
     CMP(resamples),
     .arg = "N",
     .min = 100,
     .max = 100000,
     .def = "2000",
     .help = "bootstrap resamples of each side"},
    {.name = "seed", .type = OPT_INT, CMP(seed), .arg = "N", .def = "0", .help = "resampling seed"},
    {.name = "slo",
     .type = OPT_STRING,
     CMP(slo),
     .arg = "SPEC",
     .help = "judge both sides' goodput against this SLO (default: the base's)"},
    {0}};

/* The gates of --fail-on into g: their count, or -1 after the message. */
static int read_gates(const compare_cli *o, gate *g) {
    if (!o->fail_on)
        return 0;
    char err[512];
    int n = gate_parse(o->fail_on, g, err, sizeof err);
    if (n < 0)
        cli_fail(&cmd_compare, "--fail-on: %s", err);
    return n;
}

static void print_output(const compare_cli *o, const comparison *c, const gate *g, int n_gates) {
    if (o->json) {
        json_t *doc = comparison_json(c, g, n_gates);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        fputc('\n', stdout);
        json_decref(doc);
        return;
    }
    strbuf b = {0};
    if (o->markdown)
        comparison_markdown(c, g, n_gates, &b);
    else
        comparison_text(c, g, n_gates, &b);
    fwrite(b.s, 1, b.n, stdout);
    sb_free(&b);
}

/* One line on stderr naming each gate that tripped, for a CI log whose
 * stdout went into a comment. */
static void name_trips(const comparison *c, const gate *g, int n_gates) {
    fflush(stdout); /* the output first, where both go to one place */
    fputs("servelab: compare: regressed beyond --fail-on:", stderr);
    for (int i = 0; i < n_gates; i++)
        for (int k = 0; k < c->n_runs; k++)
            if (gate_tripped(&g[i], &c->runs[k].fig[g[i].fig]))
                fprintf(stderr, " %s (%s)", g[i].text, c->runs[k].name);
    fputc('\n', stderr);
}

static int compare_main(int argc, char **argv) {
    compare_cli o = {0};
    opt_defaults(compare_options, &o);
    opt_args args;
    int rc = cli_parse(&cmd_compare, argc, argv, &o, 2, &args);
    if (rc)
        return rc > 0 ? 0 : 2;
    gate g[GATE_MAX];
    int n_gates = read_gates(&o, g);
    if (args.n_positional != 2 || n_gates < 0 || (o.json && o.markdown)) {
        opt_args_free(&args);
        if (n_gates < 0)
            return 2;
        return cli_fail(&cmd_compare, o.json && o.markdown
                                          ? "--json and --markdown: give one of them"
                                          : "give two directories, BASE and NEW (see servelab "
                                            "compare --help)");
    }
    comparison_opts co = {.slo = o.slo, .resamples = o.resamples, .seed = (uint64_t)o.seed};
    comparison c;
    char err[2048];
    rc = comparison_build(args.positional[0], args.positional[1], &co, &c, err, sizeof err);
    if (rc) {
        opt_args_free(&args);
        return cli_fail(&cmd_compare, "%s", err);
    }
    int unmeasured = comparison_unmeasured_gate(&c, g, n_gates);
    int code = 0;
    if (unmeasured >= 0) {
        code =
            cli_fail(&cmd_compare, "--fail-on: '%s': no compared run measures %s%s",
                     g[unmeasured].text, figure_name(g[unmeasured].fig),
                     g[unmeasured].fig >= FIG_GOODPUT_RPS ? " (the runs state no SLO: --slo)" : "");
    } else {
        print_output(&o, &c, g, n_gates);
        if (comparison_trips(&c, g, n_gates)) {
            name_trips(&c, g, n_gates);
            code = 1;
        }
    }
    comparison_free(&c);
    opt_args_free(&args);
    return code;
}

const command cmd_compare = {
    .name = "compare",
    .run = compare_main,
    .usage = "compare BASE NEW [--fail-on LIST] [--markdown | --json]",
    .about = "what changed between two runs or campaigns, beyond the noise",
    .text = "Compares two run or campaign directories: for each run (paired by name,\n"
            "repetitions pooled; two single runs pair whatever their names) the change of\n"
            "TTFT, TPOT, ITL and E2E at p50, p95 and p99, output_tokens_per_s, achieved_rps\n"
            "and, with an SLO, goodput_rps and goodput_fraction, with a 95% bootstrap\n"
            "interval of the change (each side's requests resampled on their own) and a\n"
            "verdict: better or worse when the interval leaves out 0, else no significant\n"
            "change. Runs on one side only are listed, not compared.",
    .options = compare_options,
    .notes = "--fail-on LIST: comma-separated FIGURE>+N% (a latency grew by more than N%)\n"
             "or FIGURE<-N% (a rate or goodput shrank by more than N%); N may instead be\n"
             "in the figure's unit: ms, s, us; tok/s; req/s; pp for goodput_fraction.\n"
             "A gate trips when the change is significantly worse (its interval leaves out\n"
             "0) and beyond N. Exit 0, 1 when a gate tripped, 2 for bad input.\n"
             "Figures: ttft_p50 ttft_p95 ttft_p99 tpot_p50 tpot_p95 tpot_p99 itl_p50\n"
             "itl_p95 itl_p99 e2e_p50 e2e_p95 e2e_p99 output_tokens_per_s achieved_rps\n"
             "goodput_rps goodput_fraction. Details: docs/commands.md.\n",
};
