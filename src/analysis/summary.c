/* summary: from per-request records to the run's figures. The
 * distributions are sorted on the process's CPUs at once (a merge of 16
 * million requests spent 9 s on one core sorting them, the other idle). */
#include "analysis/summary.h"
#include "common/jobs.h"
#include "common/util.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

double request_answer_ms(const req_rec *r) {
    if (!isnan(r->first_answer_ms))
        return r->first_answer_ms;
    return r->reasoning_tokens < 0 ? r->first_ms : NAN;
}

int request_slo_misses(const req_rec *r, const slo_spec *slo) {
    if (r->error != ERR_NONE)
        return SLO_MISSED_FAILED;
    int m = 0;
    if (slo->ttft_ms > 0 && !(r->first_ms - r->sent_ms <= slo->ttft_ms))
        m |= 1 << 0;
    if (slo->tpot_ms > 0 && r->output_tokens >= 2 &&
        !((r->last_ms - r->first_ms) / (r->output_tokens - 1) <= slo->tpot_ms))
        m |= 1 << 1;
    if (slo->e2e_ms > 0 && !(r->end_ms - r->sent_ms <= slo->e2e_ms))
        m |= 1 << 2;
    if (slo->ttfa_ms > 0 && !(request_answer_ms(r) - r->sent_ms <= slo->ttfa_ms))
        m |= 1 << 3;
    return m;
}

int request_meets_slo(const req_rec *r, const slo_spec *slo) {
    return request_slo_misses(r, slo) == 0;
}

/* A checked answer (--tools, --response-format) and its tool calls. */
static void count_tools(run_summary *s, const req_rec *r, double *ttool, size_t *n) {
    if (r->answer_valid >= 0) {
        s->answers_checked++;
        s->answers_valid += r->answer_valid == 1;
    }
    if (r->tool_calls > 0) {
        s->tool_calls += (size_t)r->tool_calls;
        s->with_tool_call++;
    }
    if (!isnan(r->first_tool_ms) && !isnan(r->sent_ms))
        ttool[(*n)++] = r->first_tool_ms - r->sent_ms;
}

/* The server's account of a request's drafts. */
static void count_drafts(run_summary *s, const req_rec *r) {
    if (r->server_draft_n < 0)
        return;
    s->draft_requests++;
    s->draft_tokens += r->server_draft_n;
    s->draft_accepted += r->server_draft_accepted > 0 ? r->server_draft_accepted : 0;
}

/* A completed request's first answer token and reasoning tokens. */
static void count_reasoning(run_summary *s, const req_rec *r, double *ttfa, size_t *n) {
    double answer = request_answer_ms(r);
    if (!isnan(answer))
        ttfa[(*n)++] = answer - r->sent_ms;
    else if (!isnan(r->first_ms))
        s->no_answer++;
    if (r->reasoning_tokens > 0) {
        s->reasoning_tokens += r->reasoning_tokens;
        s->reasoning_requests++;
        s->reasoning_from_server += r->reasoning_server;
    }
}

/* One distribution to make: of n doubles at d, or of n floats at f. */
typedef struct dist_task {
    double *d;
    float *f;
    size_t n;
    dist *out;
} dist_task;

typedef struct dist_pool {
    dist_task *t;
    int n, next;
} dist_pool;

/* Tasks taken in turn, largest first, each sorted with the one scratch
 * this thread keeps (as large as its first task's): one allocation of
 * fresh pages a thread instead of one a task. */
static void *dist_worker(void *arg) {
    dist_pool *p = arg;
    void *scratch = NULL;
    size_t have = 0;
    for (int i; (i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n;) {
        const dist_task *t = &p->t[i];
        size_t need = t->n * (t->f ? sizeof *t->f : sizeof *t->d);
        if (need > have) {
            free(scratch);
            scratch = xmalloc(have = need);
        }
        *t->out =
            t->f ? dist_of_floats_with(t->f, t->n, scratch) : dist_of_with(t->d, t->n, scratch);
    }
    free(scratch);
    return NULL;
}

/* Below this many values in all, one thread sorts them: a thread costs
 * more than it saves. */
#define DIST_THREADS_FROM 200000

/* Every task's distribution, the largest first, on as many threads as the
 * process may run on (at most one a task). The same figures whatever the
 * order: each sort is of its own array. */
static void dists_all(dist_task *t, int n) {
    for (int i = 1; i < n; i++) /* largest first: n is a handful */
        for (int j = i; j > 0 && t[j].n > t[j - 1].n; j--) {
            dist_task x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += t[i].n;
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    int threads = total < DIST_THREADS_FROM ? 1 : cpus < n ? cpus : n;
    if (threads > 8)
        threads = 8;
    if (n == 1 && t[0].f && total >= DIST_THREADS_FROM && cpus > 1) {
        /* one array (the chunks' half of a merge): its sort on every CPU */
        *t[0].out = dist_of_floats_threads(t[0].f, t[0].n, cpus < 8 ? cpus : 8);
        return;
    }
    dist_pool pool = {t, n, 0};
    jobs_run(dist_worker, &pool, 0, threads); /* the threads share the pool's queue */
}

/* The request rows' figures, their distributions' arrays filled and
 * handed back as tasks (into t, *n of them) for the caller to sort. */
typedef struct request_part {
    double *v[9];
    size_t k[9];
} request_part;

static void request_counts(const run_rows *rows, const summary_params *p, run_summary *s,
                           request_part *rp) {
    memset(s, 0, sizeof *s);
    size_t n = rows->n;
    for (int i = 0; i < 9; i++) {
        rp->v[i] = xmalloc((n ? n : 1) * sizeof(double));
        rp->k[i] = 0;
    }
    double **v = rp->v;
    size_t *k = rp->k;
    s->requests = n;
    for (size_t i = 0; i < n; i++) {
        const req_rec *r = &rows->r[i];
        if (r->part + 1 > s->parts)
            s->parts = r->part + 1;
        if (!isnan(r->lag_ms))
            v[6][k[6]++] = r->lag_ms;
        count_tools(s, r, v[8], &k[8]);
        count_drafts(s, r);
        s->errors[r->error < ERR_COUNT ? r->error : ERR_HTTP]++;
        if (r->error != ERR_NONE) {
            s->failed++;
            continue;
        }
        s->completed++;
        if (r->output_tokens > 0)
            s->output_tokens += r->output_tokens;
        if (r->prompt_tokens > 0)
            s->prompt_tokens += r->prompt_tokens;
        if (!isnan(r->first_ms)) {
            v[0][k[0]++] = r->first_ms - r->sent_ms;
            v[1][k[1]++] = r->first_ms - r->scheduled_ms;
        }
        if (r->output_tokens >= 2 && !isnan(r->first_ms))
            v[2][k[2]++] = (r->last_ms - r->first_ms) / (r->output_tokens - 1);
        v[3][k[3]++] = r->end_ms - r->sent_ms;
        v[4][k[4]++] = r->end_ms - r->scheduled_ms;
        count_reasoning(s, r, v[7], &k[7]);
        if (request_meets_slo(r, &p->slo))
            s->meeting_slo++;
    }
    s->has_reasoning = s->reasoning_requests > 0;
}

static int request_tasks(request_part *rp, run_summary *s, dist_task *t) {
    double **v = rp->v;
    size_t *k = rp->k;
    dist_task mine[] = {
        {v[0], NULL, k[0], &s->ttft},      {v[1], NULL, k[1], &s->ttft_sched},
        {v[2], NULL, k[2], &s->tpot},      {v[3], NULL, k[3], &s->e2e},
        {v[4], NULL, k[4], &s->e2e_sched}, {v[6], NULL, k[6], &s->lag},
        {v[7], NULL, k[7], &s->ttfa},      {v[8], NULL, k[8], &s->ttf_tool},
    };
    memcpy(t, mine, sizeof mine);
    return (int)(sizeof mine / sizeof *mine);
}

/* What needs the requests' distributions no more: their arrays freed, and
 * the durations, rates, goodput and cost. */
static void request_rest(const run_rows *rows, const summary_params *p, run_summary *s,
                         request_part *rp) {
    for (int i = 0; i < 9; i++)
        free(rp->v[i]);
    size_t n = rows->n;
    int parts = s->parts;
    double *part_sched = xcalloc((size_t)parts + 1, sizeof *part_sched);
    double *part_end = xcalloc((size_t)parts + 1, sizeof *part_end);
    for (size_t i = 0; i < n; i++) {
        const req_rec *r = &rows->r[i];
        if (r->scheduled_ms > part_sched[r->part])
            part_sched[r->part] = r->scheduled_ms;
        if (r->end_ms > part_end[r->part])
            part_end[r->part] = r->end_ms;
    }
    double sum_end = 0, sum_sched = 0, sum_span = 0;
    for (int j = 0; j < parts; j++) {
        sum_span += part_sched[j]; /* the schedule's own span */
        /* a run stopped before its last arrival offered only until then */
        if (part_end[j] < part_sched[j])
            part_sched[j] = part_end[j];
        sum_end += part_end[j];
        sum_sched += part_sched[j];
    }
    s->duration_s = sum_end / 1000.0;
    s->arrival_window_s = sum_sched / 1000.0;
    s->offered_rps = p->offered_rps;
    s->realized_offered_rps =
        sum_span > 0 ? (double)(n - (size_t)parts) / (sum_span / 1000.0) : INFINITY;
    double d = s->duration_s > 0 ? s->duration_s : NAN;
    s->achieved_rps = s->completed / d;
    s->output_tokens_per_s = s->output_tokens / d;
    s->total_tokens_per_s = (s->output_tokens + s->prompt_tokens) / d;
    size_t done_in_window = 0;
    for (size_t i = 0; i < n; i++)
        if (rows->r[i].error == ERR_NONE && rows->r[i].end_ms <= part_sched[rows->r[i].part])
            done_in_window++;
    free(part_sched);
    free(part_end);
    double w = s->arrival_window_s > 0 ? s->arrival_window_s : NAN;
    s->achieved_rps_window = done_in_window / w;
    s->slo = p->slo;
    s->has_slo = slo_has_bound(&p->slo);
    s->goodput_rps = s->meeting_slo / d;
    s->goodput_fraction = n ? (double)s->meeting_slo / (double)n : NAN;
    s->cost_per_hour = p->cost_per_hour;
    s->cost_per_million_output_tokens =
        p->cost_per_hour > 0 && s->output_tokens > 0
            ? p->cost_per_hour * (s->duration_s / 3600.0) / s->output_tokens * 1e6
            : NAN;
    s->client_cpu_s = p->client_cpu_s;
    phases_compute(rows, &s->phases, &s->server_rep);
}

static int chunk_tasks(const run_rows *rows, run_summary *s, dist_task *t) {
    int n = 0;
    t[n++] = (dist_task){NULL, rows->itl_ms, rows->n_itl, &s->itl}; /* one float a token: no copy */
    s->multi_token = rows->icl_ms != NULL;
    if (s->multi_token) {
        t[n++] = (dist_task){NULL, rows->icl_ms, rows->n_icl, &s->icl};
        s->tokens_per_chunk = rows->n_icl ? (double)rows->n_itl / (double)rows->n_icl : NAN;
    }
    return n;
}

static void chunk_rest(const run_rows *rows, run_summary *s) {
    double w = s->arrival_window_s > 0 ? s->arrival_window_s : NAN;
    s->output_tokens_per_s_window = rows->window_output_tokens / w;
}

void summarize(const run_rows *rows, const summary_params *p, run_summary *s) {
    request_part rp;
    dist_task t[12];
    request_counts(rows, p, s, &rp);
    int n = request_tasks(&rp, s, t);
    n += chunk_tasks(rows, s, t + n);
    dists_all(t, n);
    request_rest(rows, p, s, &rp);
    chunk_rest(rows, s);
}

void summarize_requests(const run_rows *rows, const summary_params *p, run_summary *s) {
    request_part rp;
    dist_task t[12];
    request_counts(rows, p, s, &rp);
    dists_all(t, request_tasks(&rp, s, t));
    request_rest(rows, p, s, &rp);
}

void summarize_chunks(const run_rows *rows, run_summary *s) {
    dist_task t[2];
    dists_all(t, chunk_tasks(rows, s, t));
    chunk_rest(rows, s);
}

static json_t *num(double x) {
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *summary_json(const run_summary *s) {
    json_t *errors = json_object();
    for (int i = 1; i < ERR_COUNT; i++)
        json_object_set_new(errors, err_class_name(i), json_integer((json_int_t)s->errors[i]));
    json_t *slo = slo_json(&s->slo, SLO_JSON_STATED);
    json_t *o = json_object();
    json_object_set_new(o, "requests", json_integer((json_int_t)s->requests));
    json_object_set_new(o, "completed", json_integer((json_int_t)s->completed));
    json_object_set_new(o, "failed", json_integer((json_int_t)s->failed));
    json_object_set_new(o, "errors", errors);
    json_object_set_new(o, "duration_s", num(s->duration_s));
    json_object_set_new(o, "arrival_window_s", num(s->arrival_window_s));
    json_object_set_new(o, "offered_rps",
                        isinf(s->offered_rps) ? json_string("inf") : num(s->offered_rps));
    json_object_set_new(o, "realized_offered_rps", num(s->realized_offered_rps));
    json_object_set_new(o, "achieved_rps", num(s->achieved_rps));
    json_object_set_new(o, "achieved_rps_arrival_window", num(s->achieved_rps_window));
    json_object_set_new(o, "output_tokens", num(s->output_tokens));
    json_object_set_new(o, "prompt_tokens", num(s->prompt_tokens));
    json_object_set_new(o, "output_tokens_per_s", num(s->output_tokens_per_s));
    json_object_set_new(o, "output_tokens_per_s_arrival_window",
                        num(s->output_tokens_per_s_window));
    json_object_set_new(o, "total_tokens_per_s", num(s->total_tokens_per_s));
    json_object_set_new(o, "ttft_ms", dist_json(&s->ttft));
    json_object_set_new(o, "ttft_from_scheduled_ms", dist_json(&s->ttft_sched));
    json_object_set_new(o, "tpot_ms", dist_json(&s->tpot));
    json_object_set_new(o, "itl_ms", dist_json(&s->itl));
    json_object_set_new(o, "e2e_ms", dist_json(&s->e2e));
    json_object_set_new(o, "e2e_from_scheduled_ms", dist_json(&s->e2e_sched));
    json_object_set_new(o, "slo", slo);
    json_object_set_new(o, "meeting_slo", json_integer((json_int_t)s->meeting_slo));
    json_object_set_new(o, "goodput_rps", num(s->goodput_rps));
    json_object_set_new(o, "goodput_fraction", num(s->goodput_fraction));
    json_object_set_new(o, "cost_per_hour",
                        s->cost_per_hour > 0 ? json_real(s->cost_per_hour) : json_null());
    json_object_set_new(o, "cost_per_million_output_tokens",
                        num(s->cost_per_million_output_tokens));
    json_t *client = json_object();
    json_object_set_new(client, "schedule_lag_ms", dist_json(&s->lag));
    json_object_set_new(client, "cpu_s",
                        s->client_cpu_s >= 0 ? json_real(s->client_cpu_s) : json_null());
    json_object_set_new(o, "client", client);
    if (s->has_reasoning) {
        json_object_set_new(o, "ttfa_ms", dist_json(&s->ttfa));
        json_object_set_new(o, "reasoning",
                            json_pack("{s:f,s:I,s:f,s:I,s:s}", "tokens", s->reasoning_tokens,
                                      "requests", (json_int_t)s->reasoning_requests, "mean_tokens",
                                      s->reasoning_tokens / (double)s->reasoning_requests,
                                      "no_answer", (json_int_t)s->no_answer, "counted_by",
                                      s->reasoning_from_server == s->reasoning_requests ? "server"
                                      : s->reasoning_from_server == 0                   ? "client"
                                                                                        : "both"));
    }
    if (s->answers_checked) {
        json_t *a = json_pack("{s:I,s:I,s:f,s:I,s:I}", "checked", (json_int_t)s->answers_checked,
                              "valid", (json_int_t)s->answers_valid, "valid_share",
                              (double)s->answers_valid / (double)s->answers_checked, "tool_calls",
                              (json_int_t)s->tool_calls, "requests_with_tool_calls",
                              (json_int_t)s->with_tool_call);
        if (s->ttf_tool.n)
            json_object_set_new(a, "time_to_first_tool_call_ms", dist_json(&s->ttf_tool));
        json_object_set_new(o, "answers", a);
    }
    if (s->draft_requests)
        json_object_set_new(
            o, "spec_decode_per_request",
            json_pack("{s:I,s:f,s:f,s:o}", "requests", (json_int_t)s->draft_requests,
                      "draft_tokens", s->draft_tokens, "accepted_tokens", s->draft_accepted,
                      "acceptance_rate",
                      s->draft_tokens > 0 ? json_real(s->draft_accepted / s->draft_tokens)
                                          : json_null()));
    if (s->multi_token) {
        json_object_set_new(o, "inter_chunk_ms", dist_json(&s->icl));
        json_object_set_new(o, "tokens_per_chunk", num(s->tokens_per_chunk));
    }
    if (s->phases.present)
        json_object_set_new(o, "ttft_phases", ttft_phases_json(&s->phases));
    if (s->server_rep.present)
        json_object_set_new(o, "server_reported", server_reported_json(&s->server_rep));
    return o;
}

/* A rate of a run that took no time is 0, not nan. */
static double finite_or_0(double v) {
    return isfinite(v) ? v : 0;
}

static void dist_line(FILE *f, const char *name, const dist *d) {
    if (d->n == 0) {
        fprintf(f, "  %-22s %10s\n", name, "-");
        return;
    }
    fprintf(f, "  %-22s %10.2f %10.2f %10.2f %10.2f %10.2f\n", name, d->mean, d->p50, d->p90,
            d->p95, d->p99);
}

/* One figure's median for the run's table: "-" when no request has it. */
static void p50_of(FILE *f, const char *sep, const char *name, const dist *d, const char *unit) {
    if (d->n)
        fprintf(f, "%s%s %.3f%s", sep, name, d->p50, unit);
    else
        fprintf(f, "%s%s -", sep, name);
}

/* Where TTFT went, and the server's own account, a line each when the
 * rows have them. */
static void phases_print(FILE *f, const ttft_phases *p, const server_reported *sr) {
    if (p->present) {
        fputs("TTFT phases     p50 ms:", f);
        p50_of(f, " ", "dispatch", &p->dispatch, "");
        p50_of(f, ", ", "connect", &p->connect, "");
        p50_of(f, ", ", "write", &p->client_write, "");
        p50_of(f, ", ", "server", &p->server, "");
        p50_of(f, ", ", "first byte to token", &p->stream, "");
        fprintf(f, "; %zu of %zu first tokens coalesced\n", p->first_coalesced, p->first_tokens);
    }
    if (sr->present) {
        fputs("server's own   ", f);
        p50_of(f, " ", "TTFT - prompt_ms p50", &sr->ttft_minus_prompt, " ms");
        p50_of(f, "; ", "decode p50 client", &sr->client_decode_tok_s, " tok/s");
        p50_of(f, ", ", "server", &sr->server_decode_tok_s, " tok/s");
        if (sr->cached_n)
            fprintf(f, "; %.1f%% of prompt tokens cached", 100 * sr->cached_share);
        fputc('\n', f);
    }
}

void summary_print(FILE *f, const run_summary *s) {
    fprintf(f, "requests        %zu scheduled, %zu completed, %zu failed", s->requests,
            s->completed, s->failed);
    if (s->failed) {
        fputs(" (", f);
        int first = 1;
        for (int i = 1; i < ERR_COUNT; i++)
            if (s->errors[i]) {
                fprintf(f, "%s%s %zu", first ? "" : ", ", err_class_name(i), s->errors[i]);
                first = 0;
            }
        fputc(')', f);
    }
    fprintf(f, "\nduration        %.2f s (arrivals over the first %.2f s)\n", s->duration_s,
            s->arrival_window_s);
    if (isinf(s->offered_rps))
        fprintf(f, "offered rate    inf (all at t=0)\n");
    else
        fprintf(f, "offered rate    %.2f req/s asked, %.2f req/s realized by the schedule\n",
                s->offered_rps, s->realized_offered_rps);
    /* Rates over a window of no length (every arrival at t=0, or a run
     * that took no time) are not numbers: they are left out, never "nan". */
    int window = s->arrival_window_s > 0 && isfinite(s->achieved_rps_window);
    fprintf(f, "achieved rate   %.2f req/s over the run", finite_or_0(s->achieved_rps));
    if (window)
        fprintf(f, ", %.2f req/s in the arrival window", s->achieved_rps_window);
    fprintf(f, "\nthroughput      %.1f output tok/s", finite_or_0(s->output_tokens_per_s));
    if (window && isfinite(s->output_tokens_per_s_window))
        fprintf(f, " (%.1f in the arrival window)", s->output_tokens_per_s_window);
    fprintf(f, ", %.1f total tok/s\n", finite_or_0(s->total_tokens_per_s));
    fprintf(f, "\n  %-22s %10s %10s %10s %10s %10s\n", "latency (ms)", "mean ms", "p50 ms",
            "p90 ms", "p95 ms", "p99 ms");
    dist_line(f, "TTFT", &s->ttft);
    dist_line(f, "TTFT from scheduled", &s->ttft_sched);
    dist_line(f, "TPOT", &s->tpot);
    if (s->has_reasoning)
        dist_line(f, "TTFA (first answer)", &s->ttfa);
    dist_line(f, "ITL (per token)", &s->itl);
    if (s->multi_token)
        dist_line(f, "between chunks", &s->icl);
    dist_line(f, "E2E", &s->e2e);
    dist_line(f, "E2E from scheduled", &s->e2e_sched);
    fputc('\n', f);
    if (s->has_slo) {
        char slo[128] = "";
        if (s->slo.ttft_ms > 0)
            snprintf(slo + strlen(slo), sizeof slo - strlen(slo), " ttft<=%gms", s->slo.ttft_ms);
        if (s->slo.tpot_ms > 0)
            snprintf(slo + strlen(slo), sizeof slo - strlen(slo), " tpot<=%gms", s->slo.tpot_ms);
        if (s->slo.e2e_ms > 0)
            snprintf(slo + strlen(slo), sizeof slo - strlen(slo), " e2e<=%gms", s->slo.e2e_ms);
        if (s->slo.ttfa_ms > 0)
            snprintf(slo + strlen(slo), sizeof slo - strlen(slo), " ttfa<=%gms", s->slo.ttfa_ms);
        fprintf(f, "goodput         %.2f req/s, %.1f%% of requests met the SLO (%s )\n",
                s->goodput_rps, 100 * s->goodput_fraction, slo);
    }
    if (isfinite(s->cost_per_million_output_tokens))
        fprintf(f, "cost            $%.4f per million output tokens at $%.2f/hour\n",
                s->cost_per_million_output_tokens, s->cost_per_hour);
    if (s->answers_checked) {
        fprintf(f, "answers         %zu of %zu as asked (%.1f%%)", s->answers_valid,
                s->answers_checked, 100.0 * (double)s->answers_valid / (double)s->answers_checked);
        if (s->tool_calls)
            fprintf(f, "; %zu tool calls, first after %.2f ms at p50", s->tool_calls,
                    s->ttf_tool.p50);
        fputc('\n', f);
    }
    if (s->has_reasoning)
        fprintf(f, "reasoning       %.1f tokens a request that reasoned (%zu), counted by %s%s\n",
                s->reasoning_tokens / (double)s->reasoning_requests, s->reasoning_requests,
                s->reasoning_from_server == s->reasoning_requests ? "the server" : "the client",
                s->no_answer ? "; some answers never began" : "");
    phases_print(f, &s->phases, &s->server_rep);
    if (s->lag.n)
        fprintf(f, "client          schedule lag p50 %.3f ms, p99 %.3f ms, max %.3f ms", s->lag.p50,
                s->lag.p99, s->lag.max);
    else /* nothing was sent: there is no lag to give */
        fprintf(f, "client          schedule lag -");
    if (s->client_cpu_s >= 0)
        fprintf(f, "; CPU %.2f s", s->client_cpu_s);
    fputc('\n', f);
}

int client_cpu_saturated(double duration_s, double cpu_s, int threads) {
    if (!(duration_s >= 1.0))
        return 0;
    return 100 * cpu_s / duration_s > 90.0 * (threads > 0 ? threads : 1);
}
