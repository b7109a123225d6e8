/* summary_files: summary.csv and summary.json. The CSV columns are one
 * list of names with the values in the same order, the decimals chosen by
 * what a column's name says it holds, so a new column needs a name and a
 * value in the same place of the two lists (and a decimals rule only when
 * its name matches none). */
#include "report/summary_files.h"
#include "analysis/spec_decode.h"
#include "common/csv.h"
#include "common/util.h"
#include "report/pool.h"
#include "report/stages_section.h"
#include "report/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *csv_cols[] = {"run",
                                 "offered_rps",
                                 "requests",
                                 "ttft_p50_ms",
                                 "ttft_p95_ms",
                                 "tpot_p50_ms",
                                 "tpot_p95_ms",
                                 "output_tokens_per_s",
                                 "goodput_rps",
                                 "goodput_fraction",
                                 "cost_per_million_output_tokens",
                                 "repetitions",
                                 "completed",
                                 "failed",
                                 "duration_s",
                                 "realized_offered_rps",
                                 "achieved_rps",
                                 "achieved_rps_arrival_window",
                                 "output_tokens_per_s_arrival_window",
                                 "total_tokens_per_s",
                                 "ttft_mean_ms",
                                 "ttft_p90_ms",
                                 "ttft_p99_ms",
                                 "ttft_p99_9_ms",
                                 "ttft_sched_p50_ms",
                                 "ttft_sched_p95_ms",
                                 "ttft_sched_p99_ms",
                                 "tpot_p99_ms",
                                 "itl_p50_ms",
                                 "itl_p95_ms",
                                 "itl_p99_ms",
                                 "e2e_p50_ms",
                                 "e2e_p95_ms",
                                 "e2e_p99_ms",
                                 "e2e_sched_p50_ms",
                                 "e2e_sched_p99_ms",
                                 "ttft_p50_ci_lo_ms",
                                 "ttft_p50_ci_hi_ms",
                                 "ttft_p95_ci_lo_ms",
                                 "ttft_p95_ci_hi_ms",
                                 "tpot_p50_ci_lo_ms",
                                 "tpot_p50_ci_hi_ms",
                                 "tpot_p95_ci_lo_ms",
                                 "tpot_p95_ci_hi_ms",
                                 "ttft_p50_rep_min_ms",
                                 "ttft_p50_rep_max_ms",
                                 "ttft_p95_rep_min_ms",
                                 "ttft_p95_rep_max_ms",
                                 "errors_connect",
                                 "errors_timeout",
                                 "errors_http",
                                 "errors_disconnect",
                                 "errors_malformed",
                                 "errors_cancelled",
                                 "errors_client",
                                 "server_preemptions",
                                 "server_peak_running",
                                 "server_peak_waiting",
                                 "server_peak_kv_usage",
                                 "server_queue_share_of_ttft",
                                 "gpu_energy_j_per_output_token"};
#define N_CSV_COLS ((int)(sizeof csv_cols / sizeof *csv_cols))

/* Decimals by what the column holds: rates, fractions and shares 4, token
 * rates 2, costs 6, counts 0, milliseconds and seconds 3. */
static int column_decimals(const char *name) {
    int dec = 3;
    if (strstr(name, "rps") || strstr(name, "fraction"))
        dec = 4;
    else if (strstr(name, "tokens_per_s"))
        dec = 2;
    else if (strstr(name, "cost"))
        dec = 6;
    else if (!strcmp(name, "requests") || !strcmp(name, "repetitions") ||
             !strcmp(name, "completed") || !strcmp(name, "failed") ||
             !strncmp(name, "errors_", 7) || !strcmp(name, "server_preemptions") ||
             !strncmp(name, "server_peak_r", 13) || !strncmp(name, "server_peak_w", 13))
        dec = 0;
    else if (!strcmp(name, "server_peak_kv_usage") || strstr(name, "share"))
        dec = 4;
    return dec;
}

static void csv_values(const report_run *rr, char v[][32]) {
    const run_summary *s = &rr->pooled;
    double lo50, hi50, lo95, hi95;
    pool_rep_range(rr, 0, &lo50, &hi50);
    pool_rep_range(rr, 1, &lo95, &hi95);
    double vals[] = {s->offered_rps,
                     (double)s->requests,
                     s->ttft.p50,
                     s->ttft.p95,
                     s->tpot.p50,
                     s->tpot.p95,
                     s->output_tokens_per_s,
                     s->goodput_rps,
                     s->goodput_fraction,
                     s->cost_per_million_output_tokens,
                     rr->n_reps,
                     (double)s->completed,
                     (double)s->failed,
                     s->duration_s,
                     s->realized_offered_rps,
                     s->achieved_rps,
                     s->achieved_rps_window,
                     s->output_tokens_per_s_window,
                     s->total_tokens_per_s,
                     s->ttft.mean,
                     s->ttft.p90,
                     s->ttft.p99,
                     s->ttft.p999,
                     s->ttft_sched.p50,
                     s->ttft_sched.p95,
                     s->ttft_sched.p99,
                     s->tpot.p99,
                     s->itl.p50,
                     s->itl.p95,
                     s->itl.p99,
                     s->e2e.p50,
                     s->e2e.p95,
                     s->e2e.p99,
                     s->e2e_sched.p50,
                     s->e2e_sched.p99,
                     rr->ci[0][0],
                     rr->ci[0][1],
                     rr->ci[1][0],
                     rr->ci[1][1],
                     rr->ci[2][0],
                     rr->ci[2][1],
                     rr->ci[3][0],
                     rr->ci[3][1],
                     lo50,
                     hi50,
                     lo95,
                     hi95,
                     (double)s->errors[ERR_CONNECT],
                     (double)s->errors[ERR_TIMEOUT],
                     (double)s->errors[ERR_HTTP],
                     (double)s->errors[ERR_DISCONNECT],
                     (double)s->errors[ERR_MALFORMED],
                     (double)s->errors[ERR_CANCELLED],
                     (double)s->errors[ERR_CLIENT],
                     rr->server.preemptions,
                     rr->server.peak_running,
                     rr->server.peak_waiting,
                     rr->server.peak_kv_usage,
                     rr->server.queue_share_of_ttft,
                     s->output_tokens > 0 ? rr->server.gpu_energy_j / s->output_tokens : NAN};
    for (int c = 1; c < N_CSV_COLS; c++)
        format_number(v[c], vals[c - 1], column_decimals(csv_cols[c]));
}

/* A run's name as one CSV field: quoted when it holds a comma, a quote, CR
 * or LF (a directory may be called anything). */
static void put_csv_field(strbuf *o, const char *s) {
    size_t n = strlen(s), k = csv_field_bytes(s, n);
    char *buf = xmalloc(k + 1);
    sb_putn(o, buf, (size_t)(csv_put_field(buf, s, n) - buf));
    free(buf);
}

void render_summary_csv(const report *r, strbuf *o) {
    for (int c = 0; c < N_CSV_COLS; c++)
        sb_printf(o, "%s%s", c ? "," : "", csv_cols[c]);
    sb_puts(o, ",incomplete\n"); /* the one text column besides run: what a run lacks */
    char v[N_CSV_COLS][32];
    for (int k = 0; k < r->n_runs; k++) {
        csv_values(&r->runs[k], v);
        put_csv_field(o, r->runs[k].name);
        for (int c = 1; c < N_CSV_COLS; c++)
            sb_printf(o, ",%s", v[c]);
        sb_puts(o, ",");
        put_csv_field(o, r->runs[k].incomplete);
        sb_puts(o, "\n");
    }
}

void render_summary_json(const report *r, strbuf *o) {
    json_t *runs = json_array();
    for (int k = 0; k < r->n_runs; k++) {
        const report_run *rr = &r->runs[k];
        json_t *j = json_object();
        json_object_set_new(j, "run", json_string(rr->name));
        json_object_set_new(j, "repetitions", json_integer(rr->n_reps));
        json_object_set_new(j, "fixture",
                            rr->fixture < 0 ? json_null() : json_boolean(rr->fixture));
        json_object_set_new(j, "incomplete",
                            rr->incomplete[0] ? json_string(rr->incomplete) : json_null());
        json_object_set_new(j, "pooled", summary_json(&rr->pooled));
        json_object_set_new(j, "server", server_stats_json(&rr->server, rr->pooled.output_tokens));
        json_t *metas[64];
        int n_metas = 0;
        for (int k = 0; k < rr->n_reps && n_metas < 64; k++)
            if (rr->files[k].meta)
                metas[n_metas++] = rr->files[k].meta;
        json_t *spec = spec_decode_of_metas(metas, n_metas);
        if (spec)
            json_object_set_new(j, "spec_decode", spec);
        json_t *reps = json_array();
        for (int i = 0; i < rr->n_reps; i++) {
            json_t *rep = summary_json(&rr->per_rep[i]);
            json_object_set_new(rep, "directory", json_string(rr->rep_dirs[i] + rr->root_len));
            json_array_append_new(reps, rep);
        }
        json_object_set_new(j, "per_repetition", reps);
        json_t *cls = json_object();
        for (int c = 0; c < rr->rows.n_classes; c++)
            json_object_set_new(cls, rr->rows.classes[c], summary_json(&rr->per_class[c]));
        json_object_set_new(j, "by_class", cls);
        json_t *turns = json_object();
        for (int t = 1; t <= rr->n_turns; t++) {
            char key[16];
            snprintf(key, sizeof key, "%d", t);
            json_object_set_new(turns, key, summary_json(&rr->per_turn[t - 1]));
        }
        if (rr->n_turns) /* multi-turn runs only */
            json_object_set_new(j, "by_turn", turns);
        else
            json_decref(turns);
        json_t *stages = stage_summaries_json(rr);
        if (stages) /* rate plans only */
            json_object_set_new(j, "stages", stages);
        const char *ci_names[] = {"ttft_p50_ms", "ttft_p95_ms", "tpot_p50_ms", "tpot_p95_ms"};
        json_t *ci = json_object();
        for (int m = 0; m < 4; m++)
            json_object_set_new(
                ci, ci_names[m],
                isnan(rr->ci[m][0]) ? json_null() : json_pack("[f,f]", rr->ci[m][0], rr->ci[m][1]));
        json_object_set_new(j, "bootstrap_ci95", ci);
        json_array_append_new(runs, j);
    }
    json_t *root =
        json_pack("{s:o,s:o,s:{s:i,s:i}}", "answer", answer_summary_json(&r->answer), "runs", runs,
                  "bootstrap", "replicates", BOOTSTRAP_REPS, "seed", BOOTSTRAP_SEED);
    if (r->campaign_answers) { /* several campaigns: each one's, in input order */
        json_t *each = json_array();
        for (int c = 0; c < r->n_campaigns; c++)
            json_array_append_new(each, answer_summary_json(&r->campaign_answers[c]));
        json_object_set_new(root, "answers_by_campaign", each);
    }
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    sb_puts(o, s);
    sb_puts(o, "\n");
    free(s);
    json_decref(root);
}
