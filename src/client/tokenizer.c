/* tokenizer: POST /tokenize through libcurl's easy interface (see
 * tokenizer.h). It runs before t=0, once, so a blocking request is right;
 * the load loop never calls it. A probe word by word is up to ~250
 * requests in a row, so it has one deadline for all of them (each
 * request's timeout is what is left of it), and a stop signal ends it at
 * once: libcurl's progress callback, which it calls at least once a second
 * while it waits, looks at the flag and abandons the request. */
#include "client/tokenizer.h"
#include "common/notice.h"
#include "common/clock.h"
#include "common/stop.h"
#include "common/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reply {
    char *data;
    size_t n;
} reply;

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud) {
    reply *r = ud;
    size_t n = size * nmemb;
    if (r->n + n > (1u << 24)) /* 16 MiB: no token list of ours is near it */
        return 0;
    r->data = xrealloc(r->data, r->n + n + 1);
    memcpy(r->data + r->n, p, n);
    r->n += n;
    r->data[r->n] = 0;
    return n;
}

/* libcurl's progress callback: nonzero abandons the transfer. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    (void)ud;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return stop_signal() != 0;
}

/* tokenizer_count within timeout_ms: 0, -1, or TOKENIZER_STOPPED. */
static int count_within(const server_tokenizer *t, const char *text, int *count, long timeout_ms) {
    json_t *body = json_pack("{s:s,s:s,s:b,s:b}", "prompt", text, "content", text,
                             "add_special_tokens", 0, "add_special", 0);
    if (t->model)
        json_object_set_new(body, "model", json_string(t->model));
    char *json = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    char url[2200];
    snprintf(url, sizeof url, "%s/tokenize", t->base);
    struct curl_slist *h = NULL;
    for (struct curl_slist *k = t->headers; k; k = k->next)
        h = curl_slist_append(h, k->data);
    h = curl_slist_append(h, "Content-Type: application/json");
    reply r = {0};
    CURL *e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    if (t->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    long status = 0;
    int rc = -1;
    CURLcode done = curl_easy_perform(e);
    if (done == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    json_t *answer = status == 200 && r.data ? json_loads(r.data, 0, NULL) : NULL;
    json_t *n = json_object_get(answer, "count"), *tokens = json_object_get(answer, "tokens");
    if (json_is_integer(n) && json_integer_value(n) >= 0) {
        *count = (int)json_integer_value(n);
        rc = 0;
    } else if (json_is_array(tokens)) {
        *count = (int)json_array_size(tokens);
        rc = 0;
    }
    json_decref(answer);
    curl_easy_cleanup(e);
    curl_slist_free_all(h);
    free(r.data);
    free(json);
    return done == CURLE_ABORTED_BY_CALLBACK ? TOKENIZER_STOPPED : rc;
}

int tokenizer_count(const server_tokenizer *t, const char *text, int *count) {
    int rc = count_within(t, text, count, (long)(TOKENIZER_CALL_S * 1000));
    return rc == TOKENIZER_STOPPED ? -1 : rc;
}

/* A probe against the server: its deadline, and how far it got. */
typedef struct server_probe_state {
    const server_tokenizer *t;
    int64_t deadline_us;
    int asked;
} server_probe_state;

/* One count within what is left of the probe's time (TOKENIZER_CALL_S at
 * most): TOKENIZER_TOO_SLOW once it is spent, even by this request. */
static int count_on_server(void *arg, const char *text, int *count) {
    server_probe_state *p = arg;
    long left_ms = (long)((p->deadline_us - mono_us()) / 1000);
    if (left_ms <= 0)
        return TOKENIZER_TOO_SLOW;
    long call_ms = (long)(TOKENIZER_CALL_S * 1000);
    int rc = count_within(p->t, text, count, left_ms < call_ms ? left_ms : call_ms);
    p->asked++;
    if (rc == -1 && mono_us() >= p->deadline_us)
        return TOKENIZER_TOO_SLOW;
    return rc;
}

static int keep_words(tokenizer_count_fn count, void *arg, const char *const *words, int n,
                      const char **kept, int say);

int tokenizer_keep_words_within(const server_tokenizer *t, const tokenizer_limits *lim,
                                const char *const *words, int n, const char **kept) {
    server_probe_state p = {t, mono_us() + (int64_t)(lim->budget_s * 1e6), 0};
    int k = keep_words(count_on_server, &p, words, n, kept, !lim->quiet);
    if (k == TOKENIZER_TOO_SLOW && !lim->quiet)
        notice(notice_default(), NOTICE_INFO,
               "--tokenize auto: the server's /tokenize took more than %g s for %d "
               "requests: too slow, giving up",
               lim->budget_s, p.asked);
    return k;
}

int tokenizer_keep_words(const server_tokenizer *t, const char *const *words, int n,
                         const char **kept) {
    tokenizer_limits lim = {TOKENIZER_BUDGET_S, 0};
    return tokenizer_keep_words_within(t, &lim, words, n, kept);
}

int tokenizer_keep_words_by(tokenizer_count_fn count, void *arg, const char *const *words, int n,
                            const char **kept) {
    return keep_words(count, arg, words, n, kept, 0);
}

/* A count's code that ends the probe (too slow, stopped), else 0; a stop
 * signal between two counts ends it too. */
static int ends_probe(int rc) {
    if (rc == TOKENIZER_TOO_SLOW || rc == TOKENIZER_STOPPED)
        return rc;
    return stop_signal() ? TOKENIZER_STOPPED : 0;
}

/* say: tell the user (common/notice.h) before asking word by word. */
static int keep_words(tokenizer_count_fn count, void *arg, const char *const *words, int n,
                      const char **kept, int say) {
    if (stop_signal())
        return TOKENIZER_STOPPED;
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += strlen(words[i]) + 1;
    char *all = xmalloc(len + 16);
    size_t at = 3;
    memcpy(all, "the", 4); /* every word after a word and a space, as text has them */
    for (int i = 0; i < n; i++) {
        size_t k = strlen(words[i]);
        all[at++] = ' ';
        memcpy(all + at, words[i], k + 1);
        at += k;
    }
    int whole, base, end;
    int rc = count(arg, all, &whole);
    free(all);
    if ((end = ends_probe(rc)))
        return end;
    if (rc == 0) {
        rc = count(arg, "the", &base);
        if ((end = ends_probe(rc)))
            return end;
    }
    if (rc)
        return TOKENIZER_CANNOT;
    int k = 0;
    if (whole - base == n) { /* every word one token */
        for (int i = 0; i < n; i++)
            kept[k++] = words[i];
        return k;
    }
    if (say)
        notice(notice_default(), NOTICE_INFO,
               "--tokenize auto: asking the server about %d words one at a time", n);
    for (int i = 0; i < n; i++) {
        char one[64];
        int c;
        snprintf(one, sizeof one, "the %s", words[i]);
        rc = count(arg, one, &c);
        if ((end = ends_probe(rc)))
            return end;
        if (!rc && c - base == 1)
            kept[k++] = words[i];
    }
    return k;
}
