/* response: one request's answer as it arrives, whichever HTTP client
 * carries it: the head (status, and whether a 200 is a whole JSON answer
 * rather than an event stream), the body fed through the SSE parser into
 * chunk times and token counts, and at the end the error class the answer
 * earns. Kept apart from the transports so that both clients read an
 * answer the same way, and from the loop so that this file is only about
 * what a server said. */
#include "protocol/chunk.h"
#include "client/loadgen_ctx.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Chunk times are kept until the row is written; token counts only once a
 * chunk carries other than one token (tok stays NULL while all are 1, which
 * is a third of the memory of a long stream). */
static void add_chunk(inflight *f, int64_t t, int32_t tokens) {
    if (f->n_chunks == f->cap_chunks) {
        f->cap_chunks = f->cap_chunks ? f->cap_chunks * 2 : 32;
        f->t_us = xrealloc(f->t_us, (size_t)f->cap_chunks * sizeof *f->t_us);
        if (f->tok)
            f->tok = xrealloc(f->tok, (size_t)f->cap_chunks * sizeof *f->tok);
        if (f->coal)
            f->coal = xrealloc(f->coal, (size_t)f->cap_chunks);
    }
    if (tokens != 1 && !f->tok) {
        f->tok = xmalloc((size_t)f->cap_chunks * sizeof *f->tok);
        for (int i = 0; i < f->n_chunks; i++)
            f->tok[i] = 1;
    }
    f->t_us[f->n_chunks] = t;
    if (f->tok)
        f->tok[f->n_chunks] = tokens;
    if (f->coal)
        f->coal[f->n_chunks] = 0;
    f->n_chunks++;
}

/* A chunk from the same read as the one before it (the very same arrival
 * time, as the client handed it over): the earlier one did not arrive when
 * its stamp says, only no later; it is flagged, and its time is an upper
 * bound. A server that writes two chunks in one segment has them flagged
 * too, although their stamp is right: the client cannot tell the two apart. */
static void note_same_read(inflight *f, int64_t raw) {
    if (f->n_chunks > 0 && raw == f->last_raw) {
        if (!f->coal)
            f->coal = xcalloc((size_t)f->cap_chunks, 1);
        f->coal[f->n_chunks - 1] = 1;
    }
    f->last_raw = raw;
}

int32_t response_chunk_tokens(const inflight *f, int i) {
    return f->tok ? f->tok[i] : 1;
}

/* Keeps the start of what the server said when it failed (an error body,
 * an error event, an event that could not be read), for errors.csv: only
 * while the run has no words yet for the class it will likely end in, so
 * a storm of the same error keeps one copy, not one per request. */
static void keep_words(inflight *f, int likely_error, const char *p, size_t n) {
    if (!f->words) {
        if (errorlog_has(&f->g->res->errors, likely_error, f->row.http_status))
            return;
        f->words = xmalloc(ERRLOG_BODY_MAX);
    }
    size_t room = ERRLOG_BODY_MAX - f->words_len, k = n < room ? n : room;
    memcpy(f->words + f->words_len, p, k);
    f->words_len += k;
}

/* The server's own account of the request, when it gives one: llama.cpp's
 * `timings` (its final chunk) and usage.prompt_tokens_details.cached_tokens
 * (vLLM, OpenAI, llama.cpp). Kept as the server said, for the report to set
 * beside what the client measured. */
static void take_server_account(inflight *f, const chunk_info *ci) {
    request_row *r = &f->row;
    if (ci->has_timings) {
        if (ci->timings_prompt_ms >= 0)
            r->server_prompt_ms = ci->timings_prompt_ms;
        if (ci->timings_predicted_ms >= 0)
            r->server_decode_ms = ci->timings_predicted_ms;
        if (ci->timings_prompt_n >= 0)
            r->server_prompt_n = ci->timings_prompt_n;
        if (ci->timings_predicted_n >= 0)
            r->server_decode_n = ci->timings_predicted_n;
        if (ci->timings_cache_n >= 0)
            r->server_cache_n = ci->timings_cache_n;
        if (ci->timings_draft_n >= 0)
            r->server_draft_n = ci->timings_draft_n;
        if (ci->timings_draft_accepted >= 0)
            r->server_draft_accepted = ci->timings_draft_accepted;
    }
    if (ci->cached_tokens >= 0)
        r->cached_tokens = ci->cached_tokens;
    /* reasoning is part of the completion: a count above it cannot be
     * true, and the tokens counted in the stream stand instead */
    if (ci->reasoning_tokens >= 0 &&
        (!ci->has_usage || ci->reasoning_tokens <= ci->completion_tokens))
        r->reasoning_server = ci->reasoning_tokens;
}

/* A chunk of output: a reasoning model's answer begins at the first that
 * carries other than reasoning; the chunks before it are its thinking (a
 * chunk that carries both is the answer's: its tokens are not counted as
 * reasoning, which the server's own count, where it gives one, settles). */
static void note_answer(inflight *f, const chunk_info *ci, int64_t t, int32_t k) {
    if (ci->has_answer) {
        if (f->row.first_answer_us < 0)
            f->row.first_answer_us = t;
    } else if (f->row.first_answer_us < 0) {
        f->row.reasoning_counted += k;
    }
}

/* The server's own token counts, when it sends them. */
static void take_usage(inflight *f, const chunk_info *ci) {
    take_server_account(f, ci);
    if (!ci->has_usage)
        return;
    f->saw_usage = 1;
    f->usage_completion = ci->completion_tokens;
    if (ci->prompt_tokens > 0)
        f->usage_prompt = ci->prompt_tokens;
}

/* The most tokens a request's chunks may count for the bytes its events
 * carried: a token is at least a byte of text, and an event's JSON around
 * it makes the bound loose; the constant leaves room for a server that
 * hides a little reasoning. A usage count that jumps past it (2^31-1 in one
 * chunk, a counter kept across requests) is a lie, and each counted token
 * becomes a gap in memory: such an answer is malformed. */
#define TOKENS_A_BYTE 8
#define TOKENS_SLACK 4096

static void on_event(void *ud, const char *type, const char *data, size_t len) {
    inflight *f = ud;
    f->event_bytes += (long long)len;
    chunk_info ci;
    chunk_parse(data, len, &ci);
    if (ci.done) {
        f->saw_done = 1;
        return;
    }
    if (ci.malformed) {
        if (!f->failed_parse)
            keep_words(f, ERR_MALFORMED, data, len);
        f->failed_parse = 1;
        return;
    }
    if (ci.error || !strcmp(type, "error")) {
        if (!f->error_event)
            keep_words(f, ERR_HTTP, data, len);
        f->error_event = 1;
        return;
    }
    int64_t t = f->row.last_us; /* set by response_body to this read's time */
    take_usage(f, &ci);
    if (ci.has_output) {
        int32_t k = 1;
        if (ci.output_tokens > 0)
            k = ci.output_tokens;
        else if (ci.has_usage && ci.completion_tokens > f->last_completion)
            k = (int32_t)(ci.completion_tokens - f->last_completion);
        if (f->n_chunks >= f->g->cfg->max_chunks && f->g->cfg->max_chunks > 0) {
            f->failed_parse = 1; /* no answer is that long: memory stays bounded */
            return;
        }
        if (f->chunk_tokens + k > TOKENS_A_BYTE * f->event_bytes + TOKENS_SLACK) {
            if (!f->failed_parse)
                keep_words(f, ERR_MALFORMED, data, len);
            f->failed_parse = 1;
            return;
        }
        f->chunk_tokens += k;
        if (f->row.first_us < 0)
            f->row.first_us = t;
        note_answer(f, &ci, t, k);
        if (ci.has_tool_call && f->row.first_tool_us < 0)
            f->row.first_tool_us = t;
        if (f->ans)
            answer_take(f->ans, data, len);
        note_same_read(f, f->read_raw);
        add_chunk(f, t, k);
    }
    if (ci.has_usage)
        f->last_completion = ci.completion_tokens;
    if (ci.finish_reason[0]) {
        f->saw_finish = 1;
        snprintf(f->finish, sizeof f->finish, "%s", ci.finish_reason);
    }
}

void response_begin(inflight *f) {
    sse_init(&f->sse, f->g->cfg->max_event_bytes, on_event, f);
    const answer_ask *ask = &f->g->cfg->answers;
    if ((ask->tools || ask->schema) && !f->ans)
        f->ans = xcalloc(1, sizeof *f->ans);
}

/* Whether a Content-Encoding leaves the body as it is. */
static int identity(const char *coding) {
    return !coding || !*coding || !strcasecmp(coding, "identity");
}

void response_head(inflight *f, int status, const char *content_type,
                   const char *content_encoding) {
    f->row.http_status = status;
    f->status_known = 1;
    /* Neither client asks for an encoding or decodes one: a compressed
     * stream is bytes no parser can read, and reading them as events would
     * make up an answer or a disconnect. */
    f->encoded = status == 200 && !identity(content_encoding);
    f->whole_json = status == 200 && content_type && strstr(content_type, "json") &&
                    !strstr(content_type, "event-stream");
}

size_t response_body(inflight *f, const char *p, size_t n, int64_t t) {
    if (f->encoded)
        return 0; /* abort the transfer: the row is decided */
    f->read_raw = t;
    /* times of one stream never go back, nor before the request left */
    if (t < f->row.last_us)
        t = f->row.last_us;
    if (t < f->row.sent_us)
        t = f->row.sent_us;
    if (f->whole_json) { /* kept whole, read when the transfer ends */
        if (f->json_len + n > f->g->cfg->max_event_bytes) {
            f->failed_parse = 1;
            return 0;
        }
        if (f->json_len == 0)
            f->json_first_us = t;
        if (f->json_len + n + 1 > f->json_cap) {
            f->json_cap = (f->json_len + n + 1) * 2;
            f->json = xrealloc(f->json, f->json_cap);
        }
        memcpy(f->json + f->json_len, p, n);
        f->json_len += n;
        return n;
    }
    if (f->row.http_status != 200) { /* an error body: its start is kept */
        keep_words(f, ERR_HTTP, p, n);
        return n;
    }
    int64_t prev_last = f->row.last_us;
    f->row.last_us = t; /* on_event reads the arrival time from here */
    int before = f->n_chunks;
    if (sse_feed(&f->sse, p, n) < 0)
        f->failed_parse = 1;
    if (f->n_chunks == before)
        f->row.last_us = prev_last;
    if (f->failed_parse || f->error_event)
        return 0; /* abort the transfer: the row is decided */
    return n;
}

/* A whole (non-streamed) completion: its output all arrives at once, so its
 * one "chunk" is timed at the body's first byte and carries every token. */
static void take_whole_json(inflight *f) {
    chunk_info ci;
    chunk_parse(f->json ? f->json : "", f->json_len, &ci);
    if (ci.malformed || ci.error) {
        keep_words(f, ci.malformed ? ERR_MALFORMED : ERR_HTTP, f->json, f->json_len);
        f->failed_parse |= ci.malformed;
        f->error_event |= !ci.malformed;
        return;
    }
    take_usage(f, &ci);
    if (ci.has_output) {
        int32_t k = ci.has_usage && ci.completion_tokens > 0 ? (int32_t)ci.completion_tokens : 1;
        if (k > TOKENS_A_BYTE * (long long)f->json_len + TOKENS_SLACK) {
            keep_words(f, ERR_MALFORMED, f->json, f->json_len);
            f->failed_parse = 1;
            return;
        }
        f->row.first_us = f->row.last_us = f->json_first_us;
        if (ci.has_answer)
            f->row.first_answer_us = f->json_first_us;
        if (ci.has_tool_call)
            f->row.first_tool_us = f->json_first_us;
        if (f->ans)
            answer_take(f->ans, f->json, f->json_len);
        add_chunk(f, f->json_first_us, k);
    }
    f->saw_finish = 1; /* the body is complete: nothing more is coming */
    if (ci.finish_reason[0])
        snprintf(f->finish, sizeof f->finish, "%s", ci.finish_reason);
}

/* A usage completion_tokens below the tokens already streamed (each chunk
 * of output one token at least, or what the server's own counts made it)
 * cannot be true: the answer is malformed, as a count out of range is. */
static int usage_below_streamed(const inflight *f) {
    if (!f->saw_usage)
        return 0;
    long streamed = 0;
    for (int i = 0; i < f->n_chunks && streamed <= f->usage_completion; i++)
        streamed += response_chunk_tokens(f, i);
    return f->usage_completion < streamed;
}

static int classify(inflight *f, xfer_end end) {
    if (f->failed_parse || f->unasked || f->encoded || usage_below_streamed(f))
        return ERR_MALFORMED;
    if (f->error_event)
        return ERR_HTTP;
    switch (end) {
    case XFER_OK: break;
    case XFER_CONNECT: return ERR_CONNECT;
    case XFER_CLIENT: return ERR_CLIENT;
    case XFER_TIMEOUT: return ERR_TIMEOUT;
    default: return f->row.http_status >= 400 ? ERR_HTTP : ERR_DISCONNECT;
    }
    if (f->row.http_status != 200)
        return ERR_HTTP;
    if (!f->saw_done && !f->saw_finish)
        return ERR_DISCONNECT; /* the stream ended before the answer did */
    return ERR_NONE;
}

int response_end(inflight *f, xfer_end end) {
    /* An unterminated last event is the server's own ending only when the
     * transfer ended cleanly; after a broken connection it is just a
     * cut-off fragment (the row says disconnect, not malformed). */
    if (end == XFER_OK && f->whole_json)
        take_whole_json(f);
    else if (end == XFER_OK)
        sse_finish(&f->sse);
    return classify(f, end);
}
