/* request: reading a completion body, checked in the order vLLM checks it
 * (JSON, model, prompt or messages, cache_salt, lengths, n, context window),
 * so the first problem is the one reported, with vLLM's wording where it has
 * one. Each check is a step that returns 0 to go on or -1 once it has
 * written the refusal into the request_error. The prompt is read into its
 * token ids (prompt_ids.c, by model/tokens.h's rule, the same one
 * /tokenize uses); their count is what the request is charged. */
#include "sim/request.h"
#include "sim/structured.h"
#include "common/util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int refuse(request_error *err, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = status;
    return -1;
}

#define FIELD_WRONG_TYPE LONG_MIN
/* An optional integer field: `dflt` when absent, FIELD_WRONG_TYPE when not
 * an integer. */
static long opt_int(json_t *body, const char *key, long dflt) {
    json_t *v = json_object_get(body, key);
    if (!v || json_is_null(v))
        return dflt;
    if (!json_is_integer(v))
        return FIELD_WRONG_TYPE;
    json_int_t x = json_integer_value(v);
    if (x < -1000000000 || x > 1000000000)
        return FIELD_WRONG_TYPE;
    return (long)x;
}

/* max_tokens (or chat's max_completion_tokens): 0 when absent, -1 when not
 * a positive integer. */
static long read_max_tokens(json_t *body, int chat) {
    json_t *v = json_object_get(body, "max_tokens");
    if ((!v || json_is_null(v)) && chat)
        v = json_object_get(body, "max_completion_tokens");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000000)
        return -1;
    return (long)json_integer_value(v);
}

static int opt_bool(json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    return v && json_is_true(v);
}

/* ---- the checks, in order ---- */

static int check_model(json_t *body, const char *served, request_error *err) {
    json_t *model = json_object_get(body, "model");
    if (model && !json_is_string(model))
        return refuse(err, 400, "%s", "model must be a string");
    if (model && strcmp(json_string_value(model), served))
        return refuse(err, 404, "The model `%s` does not exist.", json_string_value(model));
    return 0;
}

static int read_prompt(json_t *body, completion_ask *ask, request_error *err) {
    json_t *src = json_object_get(body, ask->chat ? "messages" : "prompt");
    if (!src)
        return refuse(err, 400, "%s",
                      ask->chat ? "field required: messages" : "field required: prompt");
    const char *why = NULL;
    if (ask->chat ? prompt_ids_of_chat(src, &ask->ids, &why)
                  : prompt_ids_of_completion(src, &ask->ids, &why))
        return refuse(err, 400, "%s", why);
    ask->prompt_tokens = ask->ids.n;
    return 0;
}

/* vLLM's cache_salt: a non-empty string that keeps the request's cached
 * blocks apart from those of requests without the same salt. */
static int read_cache_salt(json_t *body, completion_ask *ask, request_error *err) {
    json_t *salt = json_object_get(body, "cache_salt");
    if (!salt || json_is_null(salt))
        return 0;
    if (!json_is_string(salt) || json_string_length(salt) == 0)
        return refuse(err, 400, "%s",
                      "Parameter 'cache_salt' must be a non-empty string if provided.");
    ask->cache_salt = hash_bytes(json_string_value(salt), json_string_length(salt), 0x5a17ULL);
    return 0;
}

static int read_lengths(json_t *body, completion_ask *ask, request_error *err) {
    ask->max_tokens = read_max_tokens(body, ask->chat);
    ask->min_tokens = opt_int(body, "min_tokens", 0);
    json_t *n = json_object_get(body, "n");
    const char *why = NULL;
    if (ask->max_tokens < 0)
        why = "max_tokens must be a positive integer";
    else if (ask->min_tokens == FIELD_WRONG_TYPE || ask->min_tokens < 0)
        why = "min_tokens must be a non-negative integer";
    else if (ask->max_tokens > 0 && ask->min_tokens > ask->max_tokens)
        why = "min_tokens must not exceed max_tokens";
    else if (n && !(json_is_integer(n) && json_integer_value(n) == 1))
        why = "the simulator supports n=1 only";
    return why ? refuse(err, 400, "%s", why) : 0;
}

static int check_context(const completion_ask *ask, int max_model_len, request_error *err) {
    long completion = ask->max_tokens > 0 ? ask->max_tokens : 1;
    long total = ask->prompt_tokens + completion;
    if (total <= max_model_len)
        return 0;
    return refuse(err, 400,
                  "This model's maximum context length is %d tokens. However, you requested "
                  "%ld tokens (%d in the messages, %ld in the completion). Please reduce the "
                  "length of the messages or completion.",
                  max_model_len, total, ask->prompt_tokens, completion);
}

static void read_stream_options(json_t *body, completion_ask *ask) {
    ask->stream = opt_bool(body, "stream");
    json_t *so = json_object_get(body, "stream_options");
    ask->include_usage = ask->stream && opt_bool(so, "include_usage");
    ask->continuous_usage = ask->stream && opt_bool(so, "continuous_usage_stats");
    ask->ignore_eos = opt_bool(body, "ignore_eos");
}

/* tools, tool_choice and response_format, checked as the answer will be
 * planned from them (sim/structured.h). */
static int read_structured(json_t *body, completion_ask *ask, request_error *err) {
    json_t *tools = json_object_get(body, "tools"), *choice = json_object_get(body, "tool_choice");
    json_t *fmt = json_object_get(body, "response_format");
    if (tools && !json_is_array(tools))
        return refuse(err, 400, "tools must be an array");
    if (tools && !ask->chat)
        return refuse(err, 400, "tools are for /v1/chat/completions");
    if (fmt && !json_is_object(fmt))
        return refuse(err, 400, "response_format must be an object");
    structured_plan p;
    char why[256];
    if (structured_plan_make(tools, choice, fmt, 0, 0, &p, why, sizeof why))
        return refuse(err, 400, "%s", why);
    structured_plan_free(&p);
    ask->tools = json_incref(tools);
    ask->tool_choice = json_incref(choice);
    ask->response_format = json_incref(fmt);
    return 0;
}

int request_parse(const char *text, size_t n, int chat, const char *model, int max_model_len,
                  completion_ask *ask, request_error *err) {
    *ask = (completion_ask){.chat = chat};
    json_error_t jerr;
    json_t *body = json_loadb(text, n, 0, &jerr);
    int rc;
    if (!body || !json_is_object(body))
        rc = refuse(err, 400, "invalid JSON body: %s", body ? "not an object" : jerr.text);
    else
        rc = request_parse_object(body, chat, model, max_model_len, ask, err);
    json_decref(body);
    return rc;
}

int request_parse_object(json_t *body, int chat, const char *model, int max_model_len,
                         completion_ask *ask, request_error *err) {
    *ask = (completion_ask){.chat = chat};
    if (check_model(body, model, err) || read_prompt(body, ask, err) ||
        read_cache_salt(body, ask, err) || read_lengths(body, ask, err) ||
        check_context(ask, max_model_len, err)) {
        request_ask_free(ask);
        return -1;
    }
    read_stream_options(body, ask);
    if (read_structured(body, ask, err)) {
        request_ask_free(ask);
        return -1;
    }
    return 0;
}

void request_ask_free(completion_ask *ask) {
    prompt_ids_free(&ask->ids);
    json_decref(ask->tools);
    json_decref(ask->tool_choice);
    json_decref(ask->response_format);
    ask->tools = ask->tool_choice = ask->response_format = NULL;
}

void request_plan_output(const completion_ask *ask, int max_model_len, int eos_min_frac_pct,
                         uint64_t h, seq *s) {
    long max_tokens = ask->max_tokens;
    long room = max_model_len - ask->prompt_tokens;
    long cap = max_tokens > 0 ? max_tokens : (room < 256 ? room : 256);
    s->prompt_tokens = ask->prompt_tokens;
    if (ask->ignore_eos && max_tokens > 0) {
        s->target_tokens = (int)max_tokens;
        s->at_target = FINISH_LENGTH;
    } else {
        long lo = cap * eos_min_frac_pct / 100;
        if (lo < ask->min_tokens)
            lo = ask->min_tokens;
        if (lo < 1)
            lo = 1;
        rng g;
        rng_seed(&g, mix64(h ^ 0x1e57ULL));
        long len = (long)rng_range(&g, lo, cap);
        s->target_tokens = (int)len;
        s->at_target = (len == cap && max_tokens > 0) ? FINISH_LENGTH : FINISH_STOP;
    }
    if (max_tokens <= 0 && s->target_tokens > room)
        s->target_tokens = (int)room;
}
