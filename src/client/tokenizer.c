/* tokenizer: POST /tokenize through libcurl's easy interface (see
 * tokenizer.h). It runs before t=0, once, so a blocking request is right;
 * the load loop never calls it. */
#include "client/tokenizer.h"
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

int tokenizer_count(const server_tokenizer *t, const char *text, int *count) {
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
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (t->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    long status = 0;
    int rc = -1;
    if (curl_easy_perform(e) == CURLE_OK)
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
    return rc;
}

static int count_on_server(void *arg, const char *text, int *count) {
    return tokenizer_count(arg, text, count);
}

int tokenizer_keep_words(const server_tokenizer *t, const char *const *words, int n,
                         const char **kept) {
    return tokenizer_keep_words_by(count_on_server, (void *)t, words, n, kept);
}

int tokenizer_keep_words_by(tokenizer_count_fn count, void *arg, const char *const *words, int n,
                            const char **kept) {
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
    int whole, base;
    int rc = count(arg, all, &whole);
    free(all);
    if (rc || count(arg, "the", &base))
        return -1;
    int k = 0;
    if (whole - base == n) { /* every word one token */
        for (int i = 0; i < n; i++)
            kept[k++] = words[i];
        return k;
    }
    for (int i = 0; i < n; i++) {
        char one[64];
        int c;
        snprintf(one, sizeof one, "the %s", words[i]);
        if (!count(arg, one, &c) && c - base == 1)
            kept[k++] = words[i];
    }
    return k;
}
