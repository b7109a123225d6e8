/* run_target: what a run knows of the server before any traffic: the API
 * key and the user's headers, the bodies' extra fields (--extra-body,
 * --tools, --response-format), what the server says about itself (its
 * models, vLLM or not), the endpoints, the GPUs, which HTTP client, and
 * the words the server's tokenizer counts one token each (--tokenize). A
 * prediction's target is the simulator's engine: nothing to ask. */
#include "client/h1.h"
#include "client/tokenizer.h"
#include "common/notice.h"
#include "model/tokens.h"
#include "common/util.h"
#include "run/run_ctx.h"
#include "run/virtual_client.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Base URL without a trailing slash or /v1. */
static char *base_url(const char *url) {
    char *b = xstrdup(url);
    size_t n = strlen(b);
    while (n && b[n - 1] == '/')
        b[--n] = 0;
    if (n >= 3 && !strcmp(b + n - 3, "/v1"))
        b[n - 3] = 0;
    return b;
}

void run_base_url(const char *url, char *out, size_t n) {
    char *b = base_url(url);
    snprintf(out, n, "%s", b);
    free(b);
}

void run_metrics_url(const char *url, char *out, size_t n) {
    char *b = base_url(url);
    snprintf(out, n, "%s/metrics", b);
    free(b);
}

void run_endpoint_url(const char *url, const char *api, char *out, size_t n) {
    char *b = base_url(url);
    snprintf(out, n, "%s/v1/%s", b, !strcmp(api, "chat") ? "chat/completions" : "completions");
    free(b);
}

int run_headers(const run_opts *o, struct curl_slist **headers, const char **key_env, char *err,
                int errlen) {
    *key_env = o->key_env ? o->key_env : getenv("OPENAI_API_KEY") ? "OPENAI_API_KEY" : NULL;
    if (*key_env) {
        const char *key = getenv(*key_env);
        if (!key || !*key) {
            snprintf(err, errlen, "--api-key-env %s: the variable is not set", *key_env);
            return -1;
        }
        size_t n_auth = strlen(key) + 32;
        char *auth = xmalloc(n_auth);
        snprintf(auth, n_auth, "Authorization: Bearer %s", key);
        *headers = curl_slist_append(*headers, auth);
        memset(auth, 0, n_auth);
        free(auth);
    }
    for (int i = 0; i < o->headers.n; i++)
        *headers = curl_slist_append(*headers, o->headers.v[i]);
    return 0;
}

/* The API key from the environment, and the user's headers. */
int run_target_headers(run_ctx *x, run_result *rr) {
    const run_opts *o = &x->o;
    char why[256];
    if (run_headers(o, &x->headers, &x->key_env, why, sizeof why))
        return run_fail(rr, "%s", why);
    if (o->extra_body) {
        char why[256];
        if (!(x->extra_body = workload_extra_body(o->extra_body, why, sizeof why)))
            return run_fail(rr, "--extra-body: %s", why);
    }
    if (o->tools || o->response_format) {
        char why[512];
        if (answer_spec_load(o->tools, o->response_format, &x->answers, why, sizeof why))
            return run_fail(rr, "%s", why);
        if (x->extra_body && (json_object_get(x->extra_body, "tools") ||
                              json_object_get(x->extra_body, "response_format")))
            return run_fail(rr,
                            "--extra-body sets tools or response_format: give them with --tools "
                            "and --response-format only");
        if (!x->extra_body)
            x->extra_body = json_object();
        answer_spec_apply(&x->answers, x->extra_body);
    }
    return 0;
}

/* How many connections to open before t=0: what --preconnect says, or
 * for auto as many as can be in flight at once at the start, when that is
 * known: the --concurrency cap, or every request of an unpaced burst. */
static int preconnect_count(const run_opts *o, size_t n) {
    if (!strcmp(o->preconnect, "off"))
        return 0;
    long want = strcmp(o->preconnect, "auto") ? atol(o->preconnect)
                : o->concurrency > 0          ? (long)o->concurrency
                : isinf(o->rate)              ? (long)n
                                              : 0;
    return (int)(want < (long)n ? want : (long)n);
}

/* The client's settings every target shares: the bodies, the cap, the
 * timeout, the limits on an answer. */
static loadgen_config client_config(const run_ctx *x) {
    const run_opts *o = &x->o;
    return (loadgen_config){
        .w = &x->w,
        .body = {.chat = !strcmp(o->api, "chat"),
                 .model = x->model,
                 .include_usage = 1,
                 .continuous_usage = x->cusage,
                 .ignore_eos = o->ignore_eos,
                 .max_tokens = (int)o->max_tokens,
                 .extra = x->extra_body},
        .concurrency = (int)o->concurrency,
        .preconnect = preconnect_count(o, x->n),
        .timeout_s = o->timeout_s,
        .max_event_bytes = (size_t)o->max_event_bytes,
        .max_chunks = (int)o->max_chunks,
        .answers = {x->answers.tools, x->answers.schema, x->answers.tool_choice}};
}

/* `servelab predict`: no server to ask, nothing to sample; the model is
 * the simulator's. */
static void prepare_virtual_target(run_ctx *x) {
    x->base = xstrdup("");
    x->model = x->o.model ? x->o.model : x->o.predict->model;
    x->cusage = !strcmp(x->o.cusage, "on") || !strcmp(x->o.cusage, "auto");
    snprintf(x->gpu_why, sizeof x->gpu_why, "a prediction: no GPU");
    x->lc = client_config(x);
}

/* What the server says about itself, the endpoints, the GPUs and the HTTP
 * client (client/h1.h says why there are two). */
void run_target_prepare(run_ctx *x) {
    const run_opts *o = &x->o;
    if (o->predict) {
        prepare_virtual_target(x);
        return;
    }
    x->base = base_url(o->url);
    probe_server(x->base, x->headers, o->insecure, &x->probe);
    x->probed = 1;
    char why[1024];
    if (probe_warning(&x->probe, o->model, why, sizeof why))
        notice_warn("%s", why);
    x->model = o->model ? o->model : (x->probe.first_model[0] ? x->probe.first_model : NULL);
    x->cusage = !strcmp(o->cusage, "on") || (!strcmp(o->cusage, "auto") && x->probe.vllm_like);
    snprintf(x->endpoint, sizeof x->endpoint, "%s/v1/%s", x->base,
             !strcmp(o->api, "chat") ? "chat/completions" : "completions");
    snprintf(x->metrics_url, sizeof x->metrics_url, "%s/metrics", x->base);
    x->gpu = o->no_sampling ? NULL : gpu_open(x->gpu_why, sizeof x->gpu_why);
    if (!x->gpu && !o->no_sampling && !o->quiet)
        notice(notice_default(), NOTICE_INFO, "note: no GPU sampled (%s)", x->gpu_why);
    x->client = strcmp(o->http_client, "libcurl") && h1_usable(x->endpoint) ? HTTP_CLIENT_BUILTIN
                                                                            : HTTP_CLIENT_LIBCURL;
    x->lc = client_config(x);
    x->lc.endpoint = x->endpoint;
    x->lc.headers = x->headers;
    x->lc.insecure = o->insecure;
    x->lc.client = x->client;
    x->lc.metrics_url = o->no_sampling ? NULL : x->metrics_url;
    x->lc.metrics_headers = x->headers;
    x->lc.sample_interval_s = o->metrics_interval_s;
    if (!o->metrics_interval || !strcmp(o->metrics_interval, "auto")) { /* run.h: METRICS_AUTO_* */
        x->lc.sample_interval_max_s = METRICS_AUTO_MAX_S;
        x->lc.sample_per_elapsed = METRICS_AUTO_SAMPLES;
    }
    x->lc.gpu = x->gpu;
    x->lc.server_pid = o->no_sampling ? 0 : o->server_pid;
}

/* Whether servelab builds text of its own words for this run (words.h). */
static int builds_words(const run_ctx *x) {
    const run_opts *o = &x->o;
    return ((x->w.random_in || x->w.replay) && !strcmp(o->api, "chat")) || o->prefix_tokens > 0 ||
           (workload_multi_turn(&x->w) && !x->w.conv.all_turns);
}

/* The simulator's /tokenize, for a prediction: model/tokens.h's rule. */
static int count_by_rule(void *arg, const char *text, int *count) {
    (void)arg;
    size_t n = count_text_tokens(text, strlen(text));
    *count = n ? (int)n : 1; /* an empty text is its BOS token */
    return 0;
}

/* --tokenize auto: the words the server counts one token each, when the
 * run builds text of its own and the server can tokenize; what came of it
 * goes to meta.json. */
void run_target_words(run_ctx *x) {
    if (strcmp(x->o.tokenize, "auto") || !builds_words(x))
        return;
    server_tokenizer t = {x->base, x->headers, x->o.insecure, x->model};
    x->kept_words = xmalloc((size_t)n_common_words * sizeof *x->kept_words);
    int k =
        x->o.predict
            ? tokenizer_keep_words_by(count_by_rule, NULL, common_words, n_common_words,
                                      x->kept_words)
            : tokenizer_keep_words_within(&t, &(tokenizer_limits){TOKENIZER_BUDGET_S, x->o.quiet},
                                          common_words, n_common_words, x->kept_words);
    const char *why = k == TOKENIZER_TOO_SLOW ? "the server's /tokenize was too slow (over 15 s in "
                                                "all)"
                      : k == TOKENIZER_STOPPED ? "stopped before it was done"
                      : k < 0                  ? "the server has no /tokenize that answers"
                      : k < TOKENIZER_WORDS    ? "too few common words are one token on the server"
                                               : NULL;
    x->tokenizer = json_pack("{s:b,s:i,s:i,s:s?}", "used", why == NULL, "words_tried",
                             n_common_words, "words_kept", k < 0 ? 0 : k, "why", why);
    if (why) {
        if (!x->o.quiet)
            notice_warn("note: prompt lengths are by servelab's token rule, not the server's "
                        "tokenizer (%s)",
                        why);
        return;
    }
    x->w.words = (word_source){x->kept_words, k};
}
