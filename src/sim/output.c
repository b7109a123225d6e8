/* output: the bytes a completion request gets back.
 *
 * The wire format follows vLLM's OpenAI server: `text_completion` chunks,
 * `chat.completion.chunk` with a role-only first delta, the finish reason on
 * the last token's chunk, an optional usage-only chunk with empty `choices`,
 * per-chunk usage with `continuous_usage_stats`, then `data: [DONE]`. A
 * request that does not stream gets one JSON object at the end instead.
 * The final usage (the usage-only chunk, or the whole answer's) carries
 * prompt_tokens_details.cached_tokens, the prompt tokens the prefix cache
 * served, as vLLM writes it with --enable-prompt-tokens-details.
 * Chunks are formatted with printf into one buffer per emission and sent
 * with a single write, so the time taken just after it is when the tokens
 * left. With speculative decoding one emission is several tokens: one
 * chunk carries their text and (continuous usage) their count. A chat
 * answer that thinks first (--reasoning-tokens) streams its first tokens
 * in delta.reasoning (or the older delta.reasoning_content), as vLLM's
 * reasoning parsers do; a chunk that crosses into the answer carries both
 * fields.
 *
 * Two faults act here: `malformed` puts one chunk of broken JSON before the
 * middle token (or cuts the whole answer in half), and `disconnect` drops
 * the connection at the middle token, on the engine thread, so the
 * sequence is aborted right where it stands. */
#include "sim/output.h"
#include "common/util.h"
#include "sim/completion.h"
#include "sim/outbox.h"
#include "sim/trace.h"

#include <stdlib.h>
#include <string.h>

/* The simulator's output vocabulary: common English word pieces, so the
 * streamed text looks like text and never needs JSON escaping. */
static const char *const vocab[] = {
    " the",   " of",    " and",    " to",    " in",    " a",      " is",      " that",
    " for",   " it",    " as",     " was",   " with",  " be",     " by",      " on",
    " not",   " he",    " this",   " are",   " or",    " his",    " from",    " at",
    " which", " but",   " have",   " an",    " had",   " they",   " you",     " were",
    " their", " one",   " all",    " we",    " can",   " her",    " has",     " there",
    " been",  " if",    " more",   " when",  " will",  " would",  " who",     " so",
    " no",    " model", " server", " token", " cache", " batch",  " request", " latency",
    ".",      ",",      " time",   " first", " queue", " memory", " load",    " user"};
#define VOCAB_SIZE (sizeof vocab / sizeof *vocab)

static const char *token_text(const sim_request *r, int index) {
    return vocab[mix64(r->token_seed + (uint64_t)index) % VOCAB_SIZE];
}

/* How many of a request's first output tokens are reasoning: chat only,
 * and not for a tool call or a JSON answer. */
static int reasoning_of(const sim_request *r) {
    return r->chat && !r->plan.text ? r->srv->cfg.reasoning_tokens : 0;
}

static int is_tool_call(const sim_request *r) {
    return r->plan.text && r->plan.tool_name[0];
}

/* Bytes as a JSON string's inside: a structured answer's quotes and
 * backslashes (the vocabulary needs none of it). */
static void add_escaped(struct evbuffer *b, const char *s, int n) {
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            evbuffer_add_printf(b, "\\%c", c);
        else if (c < 0x20)
            evbuffer_add_printf(b, "\\u%04x", c);
        else
            evbuffer_add(b, s + i, 1);
    }
}

/* The text of tokens [from, to) into b, escaped for a JSON string when
 * `escape`: the vocabulary's words, or a structured answer's pieces (a
 * tool call's first token is its name, which carries no arguments). */
static void add_text_as(struct evbuffer *b, const sim_request *r, int from, int to, int escape) {
    for (int i = from; i < to; i++) {
        if (r->plan.text) {
            int piece = is_tool_call(r) ? i - 1 : i, n;
            if (piece < 0)
                continue;
            const char *t = structured_piece(&r->plan, piece, &n);
            if (escape)
                add_escaped(b, t, n);
            else
                evbuffer_add(b, t, (size_t)n);
            continue;
        }
        const char *t = token_text(r, i);
        evbuffer_add(b, t, strlen(t));
    }
}

static void add_text(struct evbuffer *b, const sim_request *r, int from, int to) {
    add_text_as(b, r, from, to, 1);
}

/* ---- whole replies ---- */

static const char *error_type(int status) {
    switch (status) {
    case 404: return "NotFoundError";
    case 429: return "RateLimitError";
    case 500: return "InternalServerError";
    default: return "BadRequestError";
    }
}

void reply_error(http_conn *c, int status, const char *message) {
    json_t *err = json_pack("{s:{s:s,s:s,s:n,s:i}}", "error", "message", message, "type",
                            error_type(status), "param", "code", status);
    char *body = json_dumps(err, JSON_COMPACT);
    http_reply(c, status, "application/json", body, strlen(body), NULL);
    free(body);
    json_decref(err);
}

void reply_json(http_conn *c, json_t *obj) {
    char *body = json_dumps(obj, JSON_COMPACT);
    http_reply(c, 200, "application/json", body, strlen(body), NULL);
    free(body);
    json_decref(obj);
}

void output_injected_error(sim_request *r) {
    r->status = r->fault == FAULT_HTTP429 ? 429 : 500;
    reply_error(r->conn, r->status,
                r->status == 429 ? "rate limit exceeded (servelab sim injected fault)"
                                 : "internal server error (servelab sim injected fault)");
}

void output_begin(sim_request *r) {
    if (r->stream)
        http_stream_start(r->conn, 200, "text/event-stream; charset=utf-8", NULL);
    else
        r->text = evbuffer_new();
}

/* The answer of a request that does not stream, all its tokens in. */
static void finish_whole(sim_request *r) {
    const char *text = (const char *)evbuffer_pullup(r->text, -1);
    json_t *usage =
        json_pack("{s:i,s:i,s:i,s:{s:i}}", "prompt_tokens", r->s.prompt_tokens, "total_tokens",
                  r->s.prompt_tokens + r->s.generated, "completion_tokens", r->s.generated,
                  "prompt_tokens_details", "cached_tokens", r->s.cached_tokens);
    const char *fin = r->s.finish != FINISH_STOP ? "length"
                      : is_tool_call(r)          ? "tool_calls"
                                                 : "stop";
    int think = reasoning_of(r) < r->s.generated ? reasoning_of(r) : r->s.generated;
    if (think > 0 && r->srv->cfg.reasoning_usage)
        json_object_set_new(usage, "completion_tokens_details",
                            json_pack("{s:i}", "reasoning_tokens", think));
    json_t *choice = r->chat
                         ? json_pack("{s:i,s:{s:s,s:s%},s:n,s:s}", "index", 0, "message", "role",
                                     "assistant", "content", text, evbuffer_get_length(r->text),
                                     "logprobs", "finish_reason", fin)
                         : json_pack("{s:i,s:s%,s:n,s:s,s:n}", "index", 0, "text", text,
                                     evbuffer_get_length(r->text), "logprobs", "finish_reason", fin,
                                     "stop_reason");
    if (is_tool_call(r)) {
        json_t *m = json_object_get(choice, "message");
        json_object_set_new(m, "content", json_null());
        json_object_set_new(m, "tool_calls",
                            json_pack("[{s:s+,s:s,s:{s:s,s:s%}}]", "id", "call_", r->id + 9, "type",
                                      "function", "function", "name", r->plan.tool_name,
                                      "arguments", text, evbuffer_get_length(r->text)));
    }
    if (r->chat && think > 0) {
        struct evbuffer *rb = evbuffer_new();
        add_text(rb, r, 0, think);
        json_object_set_new(
            json_object_get(choice, "message"), r->srv->cfg.reasoning_field,
            json_stringn((const char *)evbuffer_pullup(rb, -1), evbuffer_get_length(rb)));
        evbuffer_free(rb);
    }
    json_t *obj = json_pack(
        "{s:s,s:s,s:i,s:o,s:[o],s:o}", "id", r->id, "object",
        r->chat ? "chat.completion" : "text_completion", "created", (json_int_t)r->created, "model",
        json_loads(r->srv->model_json, JSON_DECODE_ANY, NULL), "choices", choice, "usage", usage);
    if (r->fault == FAULT_MALFORMED) {
        char *body = json_dumps(obj, JSON_COMPACT);
        size_t n = strlen(body) / 2; /* truncated JSON */
        http_reply(r->conn, 200, "application/json", body, n, NULL);
        free(body);
        json_decref(obj);
    } else {
        reply_json(r->conn, obj);
    }
}

/* ---- SSE chunks ---- */

/* The usage object; the final one also says how much of the prompt was
 * cached. */
static void add_usage(struct evbuffer *b, const sim_request *r, const seq *sq, int final) {
    evbuffer_add_printf(b,
                        "\"usage\":{\"prompt_tokens\":%d,\"total_tokens\":%d,"
                        "\"completion_tokens\":%d",
                        sq->prompt_tokens, sq->prompt_tokens + sq->generated, sq->generated);
    if (final)
        evbuffer_add_printf(b, ",\"prompt_tokens_details\":{\"cached_tokens\":%d}",
                            sq->cached_tokens);
    if (final && reasoning_of(r) > 0 && r->srv->cfg.reasoning_usage)
        evbuffer_add_printf(b, ",\"completion_tokens_details\":{\"reasoning_tokens\":%d}",
                            reasoning_of(r) < sq->generated ? reasoning_of(r) : sq->generated);
    evbuffer_add(b, "}", 1);
}

static void add_chunk_head(struct evbuffer *b, const sim_request *r) {
    evbuffer_add_printf(b, "data: {\"id\":\"%s\",\"object\":\"%s\",\"created\":%ld,\"model\":%s,",
                        r->id, r->chat ? "chat.completion.chunk" : "text_completion", r->created,
                        r->srv->model_json);
}

static const char *finish_json(const sim_request *r, const seq *sq) {
    if (sq->state != SEQ_FINISHED)
        return "null";
    if (sq->finish != FINISH_STOP)
        return "\"length\"";
    return is_tool_call(r) ? "\"tool_calls\"" : "\"stop\"";
}

/* A tool call's delta for tokens [from, to): the call's head (its id,
 * type and name) with the first token, then the arguments' pieces. */
static void add_tool_delta(struct evbuffer *b, const sim_request *r, int from, int to) {
    evbuffer_add_printf(b, "\"tool_calls\":[{\"index\":0,");
    if (from == 0)
        evbuffer_add_printf(b, "\"id\":\"call_%s\",\"type\":\"function\",", r->id + 9);
    evbuffer_add_printf(b, "\"function\":{");
    if (from == 0)
        evbuffer_add_printf(b, "\"name\":\"%s\",", r->plan.tool_name);
    evbuffer_add_printf(b, "\"arguments\":\"");
    add_text(b, r, from, to);
    evbuffer_add_printf(b, "\"}}]");
}

/* One SSE event for tokens [from, to) (plus the role event before the
 * first chat token). */
static void add_token_event(struct evbuffer *b, sim_request *r, const seq *sq, int from, int to) {
    if (r->chat && from == 0) {
        add_chunk_head(b, r);
        evbuffer_add_printf(b, "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                               "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
    }
    add_chunk_head(b, r);
    if (r->chat) {
        int think = reasoning_of(r), mid = to < think ? to : from > think ? from : think;
        evbuffer_add_printf(b, "\"choices\":[{\"index\":0,\"delta\":{");
        if (mid > from) { /* reasoning */
            evbuffer_add_printf(b, "\"%s\":\"", r->srv->cfg.reasoning_field);
            add_text(b, r, from, mid);
            evbuffer_add(b, "\"", 1);
        }
        if (to > mid && is_tool_call(r)) {
            add_tool_delta(b, r, mid, to);
        } else if (to > mid) { /* the answer */
            evbuffer_add_printf(b, "%s\"content\":\"", mid > from ? "," : "");
            add_text(b, r, mid, to);
            evbuffer_add(b, "\"", 1);
        }
        evbuffer_add_printf(b, "},\"logprobs\":null,\"finish_reason\":%s}]", finish_json(r, sq));
    } else {
        evbuffer_add_printf(b, "\"choices\":[{\"index\":0,\"text\":\"");
        add_text(b, r, from, to);
        evbuffer_add_printf(b, "\",\"logprobs\":null,\"finish_reason\":%s,\"stop_reason\":null}]",
                            finish_json(r, sq));
    }
    if (r->continuous_usage) {
        evbuffer_add(b, ",", 1);
        add_usage(b, r, sq, 0);
    }
    evbuffer_add(b, "}\n\n", 3);
}

static void add_stream_tail(struct evbuffer *b, sim_request *r, const seq *sq) {
    if (r->include_usage) {
        add_chunk_head(b, r);
        evbuffer_add(b, "\"choices\":[],", 13);
        add_usage(b, r, sq, 1);
        evbuffer_add(b, "}\n\n", 3);
    }
    evbuffer_add(b, "data: [DONE]\n\n", 14);
}

static int send_buffer(sim_request *r, struct evbuffer *b) {
    size_t n = evbuffer_get_length(b);
    int rc = http_stream_send(r->conn, (const char *)evbuffer_pullup(b, -1), n);
    evbuffer_drain(b, n);
    return rc;
}

/* ---- tokens ---- */

/* Streaming: the token's chunk (and after the last, the tail) in one write,
 * and the time it left, for the trace. */
static void stream_token(sim_request *r, const seq *sq, int from, int index, int finished) {
    sim_server *s = r->srv;
    struct evbuffer *b = evbuffer_new();
    if (r->fault == FAULT_MALFORMED && from <= r->fault_at && r->fault_at <= index)
        evbuffer_add_printf(b, "data: {\"id\":\"%s\",\"choices\":[{\"text\":\" broken\n\n", r->id);
    add_token_event(b, r, sq, from, index + 1);
    if (finished)
        add_stream_tail(b, r, sq);
    send_buffer(r, b);
    evbuffer_free(b);
    int64_t wrote = now_rel(s);
    if (r->first_write_us < 0)
        r->first_write_us = wrote;
    r->last_write_us = wrote;
    for (int i = from; i <= index; i++) /* the tokens of one chunk left together */
        trace_token(s, r, i, sq->emitted_us, wrote);
}

void deliver_token(sim_request *r, const seq *sq) {
    int index = sq->generated - 1, n = sq->step_tokens > 0 ? sq->step_tokens : 1;
    int from = index + 1 - n;
    int finished = sq->state == SEQ_FINISHED;
    if (r->abandoned) { /* --keep-abandoned: no one to send it to */
        if (finished)
            request_end(r);
        return;
    }
    if (!r->stream) {
        int think = reasoning_of(r);
        add_text_as(r->text, r, from > think ? from : think, index + 1 > think ? index + 1 : think,
                    0);
        if (finished) {
            finish_whole(r);
            request_end(r);
        }
        return;
    }
    stream_token(r, sq, from, index, finished);
    if (finished) {
        http_stream_finish(r->conn);
        request_end(r);
    }
}

void output_on_emit(seq *sq, int64_t now_us, void *ud) {
    (void)now_us;
    sim_server *s = ud;
    sim_request *r = sq->user;
    int index = sq->generated - 1, n = sq->step_tokens > 0 ? sq->step_tokens : 1;

    if (r->fault == FAULT_DISCONNECT && index + 1 - n <= r->fault_at && r->fault_at <= index) {
        engine_abort(s->eng, sq, now_rel(s));
        sq->state = SEQ_ABORTED;
        sq->finish = FINISH_ABORT;
        if (s->threaded) {
            outbox_post_drop(r->front, r, sq);
            return;
        }
        if (r->conn) /* NULL: abandoned already */
            http_conn_drop(r->conn);
        request_end(r);
        return;
    }
    if (s->threaded)
        outbox_post_token(r->front, r, sq);
    else
        deliver_token(r, sq);
}
