/* phases: TTFT's phases and the server's own account, from the records
 * (see phases.h). Every figure is a difference within one request, so
 * pooled repetitions need no care: each request's instants share its own
 * run's t=0. */
#include "analysis/phases.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Growable samples of one figure. */
typedef struct samples {
    double *v;
    size_t n;
} samples;

static void put(samples *s, double x) {
    if (!isnan(x))
        s->v[s->n++] = x;
}

/* The samples summarised, then freed. */
static dist settle(samples *s) {
    dist d = dist_of(s->v, s->n);
    free(s->v);
    return d;
}

static int has_phase(const req_rec *r) {
    return !isnan(r->connect_ms) || !isnan(r->written_ms) || !isnan(r->first_byte_ms) ||
           r->first_coalesced >= 0;
}

static int has_server(const req_rec *r) {
    return !isnan(r->server_prompt_ms) || !isnan(r->server_decode_ms) || r->server_decode_n >= 0 ||
           r->cached_tokens >= 0;
}

enum { S_DISPATCH, S_CONNECT, S_WRITE, S_SERVER, S_STREAM, S_NPHASES };

/* One successful request's phases (a difference of unknowns is NAN and
 * is left out by put). */
static void add_phases(samples *s, const req_rec *r, ttft_phases *p) {
    put(&s[S_DISPATCH], r->sent_ms - r->scheduled_ms);
    put(&s[S_CONNECT], r->connect_ms);
    put(&s[S_WRITE], r->written_ms - r->sent_ms - r->connect_ms);
    put(&s[S_SERVER], r->first_byte_ms - r->written_ms);
    put(&s[S_STREAM], r->first_ms - r->first_byte_ms);
    if (r->first_coalesced >= 0 && !isnan(r->first_ms)) {
        p->first_tokens++;
        p->first_coalesced += (size_t)r->first_coalesced;
    }
}

enum { S_TTFT_GAP, S_CLIENT_RATE, S_SERVER_RATE, S_RATIO, S_PREFILL, S_NSERVER };

/* One successful request against the server's account of it. The decode
 * rates are taken only where both sides have one, so that the two
 * distributions are of the same requests. */
static void add_server(samples *s, const req_rec *r, double *share_sum, size_t *share_n) {
    put(&s[S_TTFT_GAP], r->first_ms - r->sent_ms - r->server_prompt_ms);
    double client = r->output_tokens >= 2 && r->last_ms > r->first_ms
                        ? (r->output_tokens - 1) / ((r->last_ms - r->first_ms) / 1000.0)
                        : NAN;
    /* llama.cpp's predicted_ms runs from its first token to its last: n - 1
     * gaps, as the client's rate counts them */
    double server = r->server_decode_n >= 2 && r->server_decode_ms > 0
                        ? (r->server_decode_n - 1) / (r->server_decode_ms / 1000.0)
                        : NAN;
    if (r->server_prompt_n > 0 && r->server_prompt_ms > 0)
        put(&s[S_PREFILL], r->server_prompt_n / (r->server_prompt_ms / 1000.0));
    if (!isnan(client) && !isnan(server)) {
        put(&s[S_CLIENT_RATE], client);
        put(&s[S_SERVER_RATE], server);
        if (server > 0)
            put(&s[S_RATIO], client / server);
    }
    /* the usage's cached tokens; else, from llama.cpp's timings, the prompt
     * tokens it did not compute (its prompt_n counts only those it did) */
    long cached = r->cached_tokens >= 0 ? r->cached_tokens
                  : r->server_prompt_n >= 0 && r->prompt_tokens >= r->server_prompt_n
                      ? r->prompt_tokens - r->server_prompt_n
                      : -1;
    if (cached >= 0 && r->prompt_tokens > 0) {
        *share_sum += (double)cached / r->prompt_tokens;
        (*share_n)++;
    }
}

/* Room for every request's sample of each figure, or none at all when no
 * request has the columns (an older run pays nothing). */
static void make_room(samples *s, int n_figures, size_t rows, int wanted) {
    for (int i = 0; i < n_figures; i++)
        s[i] = (samples){wanted ? xmalloc((rows ? rows : 1) * sizeof(double)) : NULL, 0};
}

void phases_compute(const run_rows *rows, ttft_phases *p, server_reported *s) {
    memset(p, 0, sizeof *p);
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < rows->n; i++) {
        p->present |= has_phase(&rows->r[i]);
        s->present |= has_server(&rows->r[i]);
    }
    samples ph[S_NPHASES], sv[S_NSERVER];
    make_room(ph, S_NPHASES, rows->n, p->present);
    make_room(sv, S_NSERVER, rows->n, s->present);
    double share_sum = 0;
    for (size_t i = 0; i < rows->n && (p->present || s->present); i++) {
        const req_rec *r = &rows->r[i];
        if (r->error != ERR_NONE)
            continue;
        if (p->present)
            add_phases(ph, r, p);
        if (s->present)
            add_server(sv, r, &share_sum, &s->cached_n);
    }
    p->dispatch = settle(&ph[S_DISPATCH]);
    p->connect = settle(&ph[S_CONNECT]);
    p->client_write = settle(&ph[S_WRITE]);
    p->server = settle(&ph[S_SERVER]);
    p->stream = settle(&ph[S_STREAM]);
    s->ttft_minus_prompt = settle(&sv[S_TTFT_GAP]);
    s->client_decode_tok_s = settle(&sv[S_CLIENT_RATE]);
    s->server_decode_tok_s = settle(&sv[S_SERVER_RATE]);
    s->decode_ratio = settle(&sv[S_RATIO]);
    s->server_prefill_tok_s = settle(&sv[S_PREFILL]);
    s->cached_share = s->cached_n ? share_sum / (double)s->cached_n : NAN;
}

json_t *ttft_phases_json(const ttft_phases *p) {
    return json_pack(
        "{s:o,s:o,s:o,s:o,s:o,s:I,s:I}", "dispatch_ms", dist_json(&p->dispatch), "connect_ms",
        dist_json(&p->connect), "client_write_ms", dist_json(&p->client_write), "server_ms",
        dist_json(&p->server), "stream_to_first_token_ms", dist_json(&p->stream), "first_tokens",
        (json_int_t)p->first_tokens, "first_tokens_coalesced", (json_int_t)p->first_coalesced);
}

json_t *server_reported_json(const server_reported *s) {
    return json_pack(
        "{s:o,s:o,s:o,s:o,s:o,s:o,s:I}", "ttft_minus_server_prompt_ms",
        dist_json(&s->ttft_minus_prompt), "client_decode_tok_s", dist_json(&s->client_decode_tok_s),
        "server_decode_tok_s", dist_json(&s->server_decode_tok_s), "client_over_server_decode_rate",
        dist_json(&s->decode_ratio), "server_prefill_tok_s", dist_json(&s->server_prefill_tok_s),
        "cached_prompt_share", isfinite(s->cached_share) ? json_real(s->cached_share) : json_null(),
        "cached_prompt_share_n", (json_int_t)s->cached_n);
}
