/* fit: the estimate behind `servelab fit` (fit.h says the method): the
 * servers checked alike, the prefill (fit_prefill.c), the decode steps
 * (fit_decode.c), the limits, the output length, the record of it all, and
 * the table it prints. */
#include "fit/fit.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "fit/fit_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The most common nonzero value of field `off` over the runs (the larger
 * on a tie), with how many runs gave it and the first one's source. */
static int common_limit(const fit_run *runs, int n, size_t off, size_t from_off, int *agree,
                        int *given, const char **from) {
    int best = 0, best_n = 0;
    *given = 0;
    *from = NULL;
    for (int i = 0; i < n; i++) {
        int v = *(const int *)((const char *)&runs[i] + off);
        if (v <= 0)
            continue;
        (*given)++;
        int c = 0;
        for (int k = 0; k < n; k++)
            c += *(const int *)((const char *)&runs[k] + off) == v;
        if (c > best_n || (c == best_n && v > best)) {
            best = v;
            best_n = c;
            *from = from_off ? (const char *)&runs[i] + from_off : NULL;
        }
    }
    *agree = best_n;
    return best;
}

/* "the 3 runs under results/x" or "results/x/a, results/x/b": where the
 * figures came from, short. */
static void runs_phrase(const fit_run *runs, int n, char *buf, size_t cap) {
    if (n == 1) {
        snprintf(buf, cap, "%s", runs[0].dir);
        return;
    }
    size_t common = strlen(runs[0].dir);
    for (int i = 1; i < n; i++) {
        size_t k = 0;
        while (k < common && runs[i].dir[k] == runs[0].dir[k])
            k++;
        common = k;
    }
    while (common > 0 && runs[0].dir[common - 1] != '/')
        common--;
    if (common > 1)
        snprintf(buf, cap, "%d runs under %.*s", n, (int)common - 1, runs[0].dir);
    else
        snprintf(buf, cap, "%d runs", n);
}

/* The limits the runs reported into e, with their provenance. */
static void set_limits(const fit_run *runs, int n, const acc *ac, engine_params *e, json_t *pv) {
    const acc *a = ac;
    /* limits */
    int agree, given;
    const char *from;
    e->max_num_seqs = common_limit(runs, n, offsetof(fit_run, slots), offsetof(fit_run, slots_from),
                                   &agree, &given, &from);
    if (e->max_num_seqs > 0)
        fit_prov(pv, "max_num_seqs", "%s, in %d of %d runs%s", from, agree, n,
                 agree < given ? " (the others differ: give --max-num-seqs to choose)" : "");
    else if (a->max_decoding > 0 && a->held_b == a->max_decoding && a->held_n >= FIT_HELD_GAPS) {
        e->max_num_seqs = a->max_decoding;
        fit_prov(pv, "max_num_seqs",
                 "no run reported it: the most streams seen decoding at once, while other "
                 "requests were held back (in %zu clean gaps)",
                 a->held_n);
    } else {
        e->max_num_seqs = a->max_decoding > FIT_UNREPORTED_MAX_NUM_SEQS
                              ? a->max_decoding
                              : FIT_UNREPORTED_MAX_NUM_SEQS;
        fit_prov(pv, "max_num_seqs",
                 "not reported, and no request was seen held back at the most streams decoding "
                 "at once (%d): vLLM's default, not a limit the runs showed",
                 a->max_decoding);
    }
    int bs = common_limit(runs, n, offsetof(fit_run, block_size), 0, &agree, &given, &from);
    e->block_size = bs > 0 ? bs : 16;
    e->max_model_len = common_limit(runs, n, offsetof(fit_run, max_model_len),
                                    offsetof(fit_run, len_from), &agree, &given, &from);
    const char *len_from = from;
    int len_agree = agree, len_given = given;
    e->kv_blocks = common_limit(runs, n, offsetof(fit_run, kv_blocks), offsetof(fit_run, kv_from),
                                &agree, &given, &from);
    if (e->kv_blocks > 0)
        fit_prov(pv, "kv_blocks", "%s, in %d of %d runs", from, agree, n);
    int longest = 0;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < runs[i].n_req; k++)
            if (runs[i].req[k].prompt + runs[i].req[k].output > longest)
                longest = runs[i].req[k].prompt + runs[i].req[k].output;
    if (e->max_model_len > 0)
        fit_prov(pv, "max_model_len", "%s, in %d of %d runs", len_from, len_agree, n);
    else {
        /* a limit is never taken from what the runs did not meet: the
         * longest request seen says nothing of the longest the server
         * takes, and a twin that refused the next longer prompt would be
         * wrong where the server is not */
        e->max_model_len =
            longest > FIT_UNREPORTED_MAX_MODEL_LEN ? longest : FIT_UNREPORTED_MAX_MODEL_LEN;
        fit_prov(pv, "max_model_len",
                 "not reported by any run: %d, so that the twin refuses nothing the server was "
                 "not seen to refuse (the longest request seen: %d tokens)",
                 e->max_model_len, longest);
    }
    (void)len_given;
    if (e->kv_blocks <= 0) {
        e->kv_blocks = (e->max_model_len * e->max_num_seqs + e->block_size - 1) / e->block_size;
        fit_prov(pv, "kv_blocks", "no run reported it: room for max_model_len x max_num_seqs");
    }
    if ((long long)e->kv_blocks * e->block_size < e->max_model_len)
        e->max_model_len = e->kv_blocks * e->block_size;
    fit_prov(pv, "block_size",
             bs > 0 ? "with kv_blocks" : "vLLM's and llama.cpp's 16 (not reported)");
    e->max_batched_tokens = common_limit(runs, n, offsetof(fit_run, batch_tokens),
                                         offsetof(fit_run, batch_from), &agree, &given, &from);
    if (e->max_batched_tokens > 0)
        fit_prov(pv, "max_num_batched_tokens", "%s, in %d of %d runs", from, agree, n);
    else {
        e->max_batched_tokens = e->max_model_len > 2048 ? e->max_model_len : 2048;
        fit_prov(pv, "max_num_batched_tokens",
                 "not reported: %d, so that every prompt seen is one step", e->max_batched_tokens);
    }
}

/* The share of max_tokens answers reach without --ignore-eos. */
static void set_eos(const fit_run *runs, int n, profile_doc *d, json_t *pv) {
    /* output length without --ignore-eos */
    double sum = 0;
    size_t cnt = 0;
    for (int i = 0; i < n; i++) {
        if (runs[i].ignore_eos || runs[i].max_tokens <= 0)
            continue;
        for (size_t k = 0; k < runs[i].n_req; k++)
            if (runs[i].req[k].ok && runs[i].req[k].output > 0) {
                sum += (double)runs[i].req[k].output / runs[i].max_tokens;
                cnt++;
            }
    }
    if (cnt >= 10) {
        double p = 2 * sum / (double)cnt - 1;
        d->eos_min_frac_pct = (int)lround(100 * (p < 0 ? 0 : p > 1 ? 1 : p));
        fit_prov(pv, "eos_min_frac_pct",
                 "2 x the mean of output / max_tokens - 1, over %zu requests", cnt);
    } else {
        d->eos_min_frac_pct = 50;
        fit_prov(pv, "eos_min_frac_pct",
                 "50, the simulator's: no run let the server end its answers");
    }
}

/* What the fit saw, as the file's `fit` record. */
static json_t *record(const fit_run *runs, int n, const acc *ac, const fit_result *r) {
    const acc *a = ac;
    /* the record */
    json_t *rec = json_object();
    json_t *rl = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(rl, json_string(runs[i].dir));
    json_object_set_new(rec, "runs", rl);
    json_object_set_new(rec, "requests", json_integer((json_int_t)r->requests));
    json_object_set_new(rec, "gaps", json_integer((json_int_t)a->all_gaps));
    json_object_set_new(rec, "clean_gaps", json_integer((json_int_t)a->clean));
    json_t *pts = json_array();
    for (int i = 0; i < r->n_points; i++)
        json_array_append_new(pts,
                              json_pack("{s:i,s:I,s:f,s:f,s:f,s:f}", "batch", r->points[i].batch,
                                        "gaps", (json_int_t)r->points[i].gaps, "mean_ms",
                                        r->points[i].mean, "median_ms", r->points[i].median,
                                        "p10_ms", r->points[i].p10, "p90_ms", r->points[i].p90));
    json_object_set_new(rec, "decode", pts);
    json_t *pre = json_pack("{s:I,s:s,s:f,s:f}", "requests", (json_int_t)a->n_pre, "from", "ttft",
                            "abs_err_p50", r->resid_p50, "abs_err_p90", r->resid_p90);
    json_t *bl = json_array();
    for (int b = 0; b < r->n_bins; b++)
        json_array_append_new(bl, json_pack("{s:i,s:i,s:I,s:f}", "tokens_from", r->bin_lo[b],
                                            "tokens_to", r->bin_hi[b], "requests",
                                            (json_int_t)r->bin_n[b], "median_err", r->bin_err[b]));
    json_object_set_new(pre, "by_length", bl);
    if (r->prefill_from_server)
        json_object_set_new(pre, "ttft_less_prompt_ms_p50", json_real(r->overhead_ms));
    json_object_set_new(rec, "prefill", pre);
    if (r->mixed_kept > 0)
        json_object_set_new(rec, "mixed",
                            json_pack("{s:I,s:I,s:f,s:f,s:f,s:s}", "gaps",
                                      (json_int_t)r->mixed_gaps, "kept", (json_int_t)r->mixed_kept,
                                      "per_seq_ms", r->mixed_per_seq, "rms_ms", r->mixed_rms,
                                      "rms_table_ms", r->mixed_rms_table, "taken",
                                      r->doc.engine.mixed_per_seq_ms > 0 ? "mixed" : "table"));
    return rec;
}

/* One line when the runs are not of one server and one model. */
static int check_alike(const fit_run *runs, int n, char *err, size_t errlen) {
    for (int i = 1; i < n; i++) {
        if (strcmp(runs[i].server, runs[0].server)) {
            snprintf(err, errlen, "runs of different servers: %s (%s) and %s (%s)", runs[0].server,
                     runs[0].dir, runs[i].server, runs[i].dir);
            return -1;
        }
        if (strcmp(runs[i].model, runs[0].model)) {
            snprintf(err, errlen, "runs of different models: %s (%s) and %s (%s)", runs[0].model,
                     runs[0].dir, runs[i].model, runs[i].dir);
            return -1;
        }
    }
    return 0;
}

static void acc_free(acc *a) {
    free(a->pre);
    a->pre = NULL;
    free(a->mixed);
    a->mixed = NULL;
}

int fit_estimate(const fit_run *runs, int n, const fit_opts *o, fit_result *r, char *err,
                 size_t errlen) {
    memset(r, 0, sizeof *r);
    r->overhead_ms = NAN;
    if (check_alike(runs, n, err, errlen))
        return -1;
    int min_gaps = o->min_gaps > 0 ? o->min_gaps : 30;
    acc a = {.max_batch = 0};
    a.gaps = xcalloc(1, sizeof *a.gaps);
    a.n_gaps = xcalloc(1, sizeof *a.n_gaps);
    a.cap_gaps = xcalloc(1, sizeof *a.cap_gaps);
    for (int i = 0; i < n; i++) {
        fit_lone_requests(&runs[i], &a);
        r->requests += runs[i].n_req;
    }
    r->runs = (size_t)n;
    char where[600];
    runs_phrase(runs, n, where, sizeof where);
    if (a.n_pre < 3) {
        snprintf(err, errlen,
                 "%zu requests had the server to themselves (3 are needed to fit the prefill); "
                 "add a run at a low rate or --concurrency 1",
                 a.n_pre);
        acc_free(&a);
        free(a.gaps);
        free(a.n_gaps);
        free(a.cap_gaps);
        return -1;
    }
    json_t *pv = json_object(); /* the provenance, figure by figure */
    engine_params *e = &r->doc.engine;
    fit_prefill(&a, r, pv);
    for (int i = 0; i < n; i++)
        fit_decode_gaps(&runs[i], e, &a);
    r->gaps = a.all_gaps;
    r->clean_gaps = a.clean;
    if (fit_decode(&a, r, min_gaps, where, pv) == 0) {
        snprintf(err, errlen,
                 "no batch had %d clean gaps between tokens (%zu gaps, %zu clean); give runs with "
                 "chunks.csv and longer answers, or a lower --min-gaps",
                 min_gaps, a.all_gaps, a.clean);
        acc_free(&a);
        json_decref(pv);
        r->doc.engine = (engine_params){0};
        return -1;
    }
    fit_split_one_length(&a, r, pv);
    fit_mixed(&a, r, pv);
    profile_doc *d = &r->doc;
    d->provenance = pv;
    d->name = xstrdup(o->name ? o->name : "fitted");
    d->server = xstrdup(runs[0].server);
    d->model = xstrdup(runs[0].model);
    char about[1024];
    snprintf(about, sizeof about, "fitted by servelab fit from %s", where);
    d->about = xstrdup(about);
    set_limits(runs, n, &a, e, pv);
    e->enable_prefix_caching = 1;
    fit_prov(pv, "no_prefix_caching", "false: vLLM's default (llama.cpp's prompt cache stands in)");
    set_eos(runs, n, d, pv);
    d->fit = record(runs, n, &a, r);
    acc_free(&a);
    return 0;
}

void fit_print(FILE *f, const fit_result *r) {
    const engine_params *e = &r->doc.engine;
    fprintf(f, "fit: %zu runs, %zu requests; %zu gaps between tokens, %zu with no prompt in them\n",
            r->runs, r->requests, r->gaps, r->clean_gaps);
    fprintf(f, "server: %s; model: %s\n\n", r->doc.server, r->doc.model);
    fprintf(f, "decode step by batch (ms; the table is the mean)\n"
               "  batch      gaps      mean    median       p10       p90\n");
    for (int i = 0; i < r->n_points; i++)
        fprintf(f, "  %5d  %8zu  %8.3f  %8.3f  %8.3f  %8.3f\n", r->points[i].batch,
                r->points[i].gaps, r->points[i].mean, r->points[i].median, r->points[i].p10,
                r->points[i].p90);
    fprintf(f,
            "\nprefill from %zu requests alone (%s): first token = %.3f ms + %.5f ms a prompt "
            "token + %.5f ms a token per 1000 before it (the fitted line)\n",
            r->lone, "their TTFT", e->decode_base_ms, e->prefill_per_token_ms,
            e->prefill_ctx_per_1k_ms);
    if (e->n_prefill_points > 0) {
        fprintf(f, "  as measured, the twin's (the cost of a prompt's first N tokens, ms):");
        for (int i = 0; i < e->n_prefill_points; i++)
            fprintf(f, "%s %d: %.2f", i ? "," : "", e->prefill_tokens[i], e->prefill_ms[i]);
        fprintf(f, "\n");
    }
    if (r->mixed_kept > 0)
        fprintf(f,
                "  a step with a prompt and b streams decoding (%zu gaps): %.3f ms + %.3f ms a "
                "stream + the prefill, rms %.2f ms; the table's decode(b) + prefill, rms %.2f ms: "
                "%s\n",
                r->mixed_kept, e->decode_base_ms, r->mixed_per_seq, r->mixed_rms,
                r->mixed_rms_table, e->mixed_per_seq_ms > 0 ? "the first taken" : "the table kept");
    if (e->idle_wake_ms > 0)
        fprintf(f, "  after %.0f ms idle or more the next step takes %.2f ms more (%zu requests)\n",
                e->idle_after_ms, e->idle_wake_ms, r->cold);
    else
        fprintf(f, "  no cost of waking an idle server seen\n");
    if (r->prefill_from_server)
        fprintf(f, "  of which outside the server's own prompt_ms: %.3f ms at the median\n",
                r->overhead_ms);
    fprintf(f, "  residuals |fitted - measured| / measured TTFT: p50 %.1f%%, p90 %.1f%%\n",
            100 * r->resid_p50, 100 * r->resid_p90);
    fprintf(f, "  by prompt tokens:");
    for (int b = 0; b < r->n_bins; b++)
        fprintf(f, "%s %d-%d (%zu) %+.1f%%", b ? "," : "", r->bin_lo[b], r->bin_hi[b], r->bin_n[b],
                100 * r->bin_err[b]);
    fprintf(f,
            "\n\nlimits: max_num_seqs %d, kv_blocks %d x %d tokens, max_model_len %d, "
            "max_num_batched_tokens %d; jitter %.3f; eos_min_frac_pct %d\n",
            e->max_num_seqs, e->kv_blocks, e->block_size, e->max_model_len, e->max_batched_tokens,
            e->jitter, r->doc.eos_min_frac_pct);
}

void fit_result_free(fit_result *r) {
    profile_doc_free(&r->doc);
}
