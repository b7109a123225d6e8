/* probe: three small blocking GETs with a short timeout. */
#include "client/probe.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct buf {
    char data[1 << 16];
    size_t n;
} buf;

static size_t on_body(char *p, size_t sz, size_t nm, void *ud) {
    buf *b = ud;
    size_t n = sz * nm, room = sizeof b->data - 1 - b->n;
    size_t k = n < room ? n : room;
    memcpy(b->data + b->n, p, k);
    b->n += k;
    b->data[b->n] = 0;
    return n;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *ud) {
    server_probe *pr = ud;
    size_t n = sz * nm;
    if (n > 7 && !strncasecmp(p, "Server:", 7)) {
        const char *v = p + 7;
        while (*v == ' ')
            v++;
        size_t len = n - (size_t)(v - p);
        while (len && (v[len - 1] == '\r' || v[len - 1] == '\n'))
            len--;
        if (len >= sizeof pr->server_header)
            len = sizeof pr->server_header - 1;
        memcpy(pr->server_header, v, len);
        pr->server_header[len] = 0;
    }
    return n;
}

static long get(const char *url, struct curl_slist *headers, int insecure, buf *b, server_probe *pr,
                char *err, size_t errcap) {
    CURL *e = curl_easy_init();
    b->n = 0;
    b->data[0] = 0;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, pr);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode rc = curl_easy_perform(e);
    long code = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    else if (err) {
        char *shown = redact_url(url);
        snprintf(err, errcap, "%s: %s", shown, curl_easy_strerror(rc));
        free(shown);
    }
    curl_easy_cleanup(e);
    return rc == CURLE_OK ? code : -1;
}

void probe_server(const char *base, struct curl_slist *headers, int insecure, server_probe *p) {
    memset(p, 0, sizeof *p);
    buf *b = malloc(sizeof *b);
    char url[2048];
    snprintf(url, sizeof url, "%s/v1/models", base);
    long code = get(url, headers, insecure, b, p, p->error, sizeof p->error);
    if (code >= 0)
        p->reachable = 1;
    if (code == 200) {
        p->models = json_loads(b->data, 0, NULL);
        json_t *first = json_array_get(json_object_get(p->models, "data"), 0);
        json_t *id = json_object_get(first, "id");
        if (json_is_string(id))
            snprintf(p->first_model, sizeof p->first_model, "%s", json_string_value(id));
        json_t *owner = json_object_get(first, "owned_by");
        if (json_is_string(owner) && !strcmp(json_string_value(owner), "vllm"))
            p->vllm_like = 1;
    }
    if (p->reachable) {
        snprintf(url, sizeof url, "%s/version", base);
        if (get(url, headers, insecure, b, p, NULL, 0) == 200) {
            p->version = json_loads(b->data, 0, NULL);
            json_t *v = json_object_get(p->version, "version");
            if (json_is_string(v) && strstr(json_string_value(v), "servelab-sim"))
                p->is_sim = 1;
        }
    }
    if (strstr(p->server_header, "servelab-sim"))
        p->is_sim = 1;
    if (p->is_sim)
        p->vllm_like = 1;
    free(b);
}

json_t *probe_json(const server_probe *p) {
    json_t *o = json_object();
    json_object_set_new(o, "reachable", json_boolean(p->reachable));
    json_object_set(o, "version", p->version ? p->version : json_null());
    json_object_set(o, "models", p->models ? p->models : json_null());
    json_object_set_new(o, "server_header",
                        p->server_header[0] ? json_string(p->server_header) : json_null());
    if (p->error[0])
        json_object_set_new(o, "probe_error", json_string(p->error));
    return o;
}

void probe_free(server_probe *p) {
    json_decref(p->version);
    json_decref(p->models);
    p->version = p->models = NULL;
}
