/* report_campaigns: `servelab report A B` over two campaigns keeps them
 * apart. Two sweeps of one plan have runs of the same names; the report
 * names each run after its campaign ("base/load-2rps"), so both are kept
 * with figure files of their own, each run carries its campaign, the load
 * figures draw one set of curves per campaign, and figures an earlier report left in --out that
 * this one does not draw are removed, and nothing else is. */
#include "report/report.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR                                                                                        \
    "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,"     \
    "output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms\n"

static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* A campaign folder (campaign.json named `name`, none when NULL) holding
 * load-2rps and load-6rps, each one run directory with rows and meta.json;
 * `ttft` sets the rows' TTFT so that the two campaigns differ. */
static void make_campaign(const char *dir, const char *name, double ttft) {
    char p[2400], text[2048];
    CHECK_MSG(mkdir(dir, 0755) == 0, "mkdir %s", dir);
    if (name) {
        snprintf(p, sizeof p, "%s/campaign.json", dir);
        snprintf(text, sizeof text, "{\"name\": \"%s\", \"runs\": []}\n", name);
        put(p, text);
    }
    const int rates[2] = {2, 6};
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/load-%drps", dir, rates[i]);
        CHECK(mkdir(p, 0755) == 0);
        size_t n = (size_t)snprintf(text, sizeof text, HDR);
        for (int k = 0; k < 4; k++) {
            double s = k * 1000.0 / rates[i];
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "req-%d,short,%.3f,%.3f,%.3f,%.3f,%.3f,10,4,%.3f,2.000,%.3f,"
                                  "length,200,,4,0.010\n",
                                  k, s, s + 0.1, s + 0.1 + ttft, s + 6.1 + ttft, s + 6.2 + ttft,
                                  ttft, ttft + 6.1);
        }
        snprintf(p, sizeof p, "%s/load-%drps/requests.csv", dir, rates[i]);
        put(p, text);
        snprintf(p, sizeof p, "%s/load-%drps/meta.json", dir, rates[i]);
        snprintf(text, sizeof text, "{\"config\": {\"rate\": %d, \"max_tokens\": 4}}\n", rates[i]);
        put(p, text);
    }
}

static int exists(const char *dir, const char *name) {
    char p[2400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

TEST(report_two_campaigns_with_the_same_run_names_keeps_both) {
    char *root = temp_dir();
    char a[1200], b[1200], out[1200], figs[1300], args[4096], list[4096], p[1400];
    snprintf(a, sizeof a, "%s/A", root);
    snprintf(b, sizeof b, "%s/B", root);
    snprintf(out, sizeof out, "%s/rep", root);
    snprintf(figs, sizeof figs, "%s/figures", out);
    make_campaign(a, "base", 20);
    make_campaign(b, "tuned", 80);
    /* an earlier report of A alone, and files of the user's own in --out */
    snprintf(args, sizeof args, "report %s --out %s", a, out);
    servelab_ok(args);
    CHECK_MSG(exists(figs, "timeline-load-2rps.svg"), "one campaign: names as they were");
    put(strcat(strcpy(p, figs), "/mine.svg"), "<svg/>\n");
    put(strcat(strcpy(p, out), "/notes.txt"), "mine\n");

    snprintf(args, sizeof args, "report %s %s --out %s", a, b, out);
    servelab_ok(args);
    snprintf(p, sizeof p, "%s/summary.csv", out);
    char *csv = read_file(p, NULL);
    CHECK_MSG(strstr(csv, "\nbase/load-2rps,") && strstr(csv, "\ntuned/load-2rps,") &&
                  strstr(csv, "\nbase/load-6rps,") && strstr(csv, "\ntuned/load-6rps,"),
              "every run of both campaigns, named by campaign:\n%s", csv);
    free(csv);
    int n = files_with_prefix(figs, "timeline-", list, sizeof list);
    CHECK_MSG(n == 4, "%d timeline figures for 4 runs:\n%s", n, list);
    CHECK_MSG(strstr(list, "timeline-base~2Fload-2rps.svg\n") &&
                  strstr(list, "timeline-tuned~2Fload-2rps.svg\n"),
              "%s", list);
    /* the earlier report's figure this one does not draw is gone; the
     * user's files are not */
    CHECK_MSG(!exists(figs, "timeline-load-2rps.svg") && !exists(figs, "server-load-2rps.svg"),
              "stale figures kept:\n%s", list);
    CHECK(exists(figs, "mine.svg") && exists(out, "notes.txt"));
    /* the load figures draw one set of curves per campaign */
    snprintf(p, sizeof p, "%s/latency_vs_load.svg", figs);
    char *svg = read_file(p, NULL);
    CHECK_MSG(svg && strstr(svg, "base: TTFT p95") && strstr(svg, "tuned: TTFT p95") &&
                  strstr(svg, "base: TTFT p50") && strstr(svg, "tuned: TTFT p50"),
              "latency figure without a curve per campaign:\n%.2000s", svg ? svg : "(none)");
    free(svg);
    snprintf(p, sizeof p, "%s/throughput_vs_load.svg", figs);
    svg = read_file(p, NULL);
    CHECK_MSG(svg && strstr(svg, "base: output tokens/s") && strstr(svg, "tuned: output tokens/s"),
              "throughput figure without a curve per campaign");
    free(svg);
    /* every figure linked is there, and --check agrees */
    snprintf(p, sizeof p, "%s/summary.md", out);
    char *md = read_file(p, NULL);
    for (char *q = md; (q = strstr(q, "](figures/")); q++) {
        char file[600];
        CHECK(sscanf(q + 2, "%599[^)]", file) == 1);
        CHECK_MSG(exists(out, file), "summary.md links to %s, not written", file);
    }
    free(md);
    snprintf(args, sizeof args, "report %s %s --out %s --check", a, b, out);
    servelab_ok(args);
    free(root);
}

/* What the load figures group by: each run's campaign and its index, the
 * runs of each campaign in order of offered load. */
TEST(report_runs_carry_their_campaign) {
    char *root = temp_dir();
    char a[1200], b[1200], err[1024];
    snprintf(a, sizeof a, "%s/A", root);
    snprintf(b, sizeof b, "%s/B", root);
    make_campaign(a, "base", 20);
    make_campaign(b, "tuned", 80);
    char *paths[2] = {a, b};
    report_opts o = {0};
    report r;
    CHECK_MSG(report_build(paths, 2, &o, &r, err, sizeof err) == 0, "%s", err);
    CHECK_INT(r.n_runs, 4);
    CHECK_INT(r.n_campaigns, 2);
    double last[2] = {0, 0};
    for (int k = 0; k < r.n_runs; k++) {
        const report_run *rr = &r.runs[k];
        int c = rr->campaign_index;
        CHECK_MSG(c == 0 || c == 1, "%s: campaign %d", rr->name, c);
        CHECK_STR(rr->campaign, c == 0 ? "base" : "tuned");
        CHECK_MSG(!strncmp(rr->name, rr->campaign, strlen(rr->campaign)), "%s", rr->name);
        CHECK_MSG(rr->pooled.offered_rps > last[c], "%s out of load order", rr->name);
        last[c] = rr->pooled.offered_rps;
    }
    report_free(&r);
    /* one campaign: names and labels as they always were */
    CHECK_MSG(report_build(paths, 1, &o, &r, err, sizeof err) == 0, "%s", err);
    CHECK_INT(r.n_campaigns, 1);
    for (int k = 0; k < r.n_runs; k++) {
        CHECK_STR(r.runs[k].campaign, "");
        CHECK_INT(r.runs[k].campaign_index, 0);
        CHECK(!strncmp(r.runs[k].name, "load-", 5));
    }
    report_free(&r);
    free(root);
}

/* Campaigns of one name (two copies of one plan) are called by their
 * folders; folders of one name by the paths above them; a campaign without
 * campaign.json by its folder. */
TEST(report_campaigns_of_one_name_are_told_apart) {
    char *root = temp_dir();
    char d[4][1200], err[1024];
    snprintf(d[0], sizeof d[0], "%s/A", root);
    snprintf(d[1], sizeof d[1], "%s/B", root);
    make_campaign(d[0], "plan", 20);
    make_campaign(d[1], "plan", 20);
    snprintf(d[2], sizeof d[2], "%s/v1", root);
    snprintf(d[3], sizeof d[3], "%s/v2", root);
    CHECK(mkdir(d[2], 0755) == 0 && mkdir(d[3], 0755) == 0);
    strcat(d[2], "/plan");
    strcat(d[3], "/plan/"); /* a trailing slash changes nothing */
    make_campaign(d[2], "plan", 20);
    make_campaign(d[3], NULL, 20);
    const char *want[4] = {"A/", "B/", "v1/plan/", "v2/plan/"};
    char *paths[4] = {d[0], d[1], d[2], d[3]};
    for (int pair = 0; pair < 2; pair++) {
        report_opts o = {0};
        report r;
        CHECK_MSG(report_build(paths + 2 * pair, 2, &o, &r, err, sizeof err) == 0, "%s", err);
        CHECK_INT(r.n_runs, 4);
        for (int k = 0; k < r.n_runs; k++) {
            const char *name = r.runs[k].name;
            int c = r.runs[k].campaign_index;
            const char *w = want[2 * pair + c];
            CHECK_MSG(!strncmp(name, w, strlen(w)), "%s: want %s...", name, w);
        }
        report_free(&r);
    }
    free(root);
}

/* With an SLO, each campaign has its own answer, saying whose: one met by
 * every request at both loads (not reached), one missed at the lowest. */
TEST(report_two_campaigns_each_get_their_answer) {
    char *root = temp_dir();
    char a[1200], b[1200], out[1200], args[4096], p[1400];
    snprintf(a, sizeof a, "%s/A", root);
    snprintf(b, sizeof b, "%s/B", root);
    snprintf(out, sizeof out, "%s/rep", root);
    make_campaign(a, "base", 20);
    make_campaign(b, "tuned", 80);
    snprintf(args, sizeof args, "report %s %s --slo ttft=50ms --out %s", a, b, out);
    servelab_ok(args);
    snprintf(p, sizeof p, "%s/summary.md", out);
    char *md = read_file(p, NULL);
    CHECK(md != NULL);
    char *base = strstr(md, "**base: "), *tuned = strstr(md, "**tuned: ");
    CHECK_MSG(base && tuned && base < tuned, "no answer for each campaign:\n%.1500s", md);
    CHECK_MSG(strstr(base, "not reached") && strstr(base, "not reached") < tuned,
              "base met the SLO at both loads:\n%.800s", base);
    CHECK_MSG(strstr(tuned, "lready missed at the lowest"),
              "tuned missed it at the lowest:\n%.800s", tuned);
    free(md);
    snprintf(p, sizeof p, "%s/summary.json", out);
    json_t *j = json_load_file(p, 0, NULL);
    CHECK(json_array_size(json_object_get(j, "answers_by_campaign")) == 2);
    json_decref(j);
    free(root);
}
