/* probe: small blocking GETs with a short timeout (/v1/models, then
 * /version when the first was answered), and the warning their outcome
 * calls for. */
#include "client/probe.h"
#include "monitor/spec_counters.h"
#include "common/clock.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct buf {
    char data[1 << 20]; /* room for a /metrics page of many series */
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

/* Whether a failed transfer never had a connection: refused, unresolved,
 * TLS failed, or timed out before the TCP (and for https the TLS)
 * handshake was done. */
static int never_connected(CURL *e, CURLcode rc) {
    switch (rc) {
    case CURLE_OK: return 0;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION: return 1;
    case CURLE_OPERATION_TIMEDOUT: {
        curl_off_t tcp = 0, tls = 0;
        char *scheme = NULL;
        curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &tcp);
        curl_easy_getinfo(e, CURLINFO_APPCONNECT_TIME_T, &tls);
        curl_easy_getinfo(e, CURLINFO_SCHEME, &scheme);
        return tcp == 0 || (scheme && !strcasecmp(scheme, "https") && tls == 0);
    }
    default: return 0;
    }
}

/* A transfer to url with the run's headers, at most timeout_ms; NULL when
 * curl cannot make one. */
static CURL *easy_to(const char *url, struct curl_slist *headers, int insecure, long timeout_ms) {
    CURL *e = curl_easy_init();
    if (!e)
        return NULL;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    return e;
}

/* GET url: the HTTP status, or -1 with curl's words in err (when given)
 * and *unreached set when no connection was made. */
static long get(const char *url, struct curl_slist *headers, int insecure, buf *b, server_probe *pr,
                char *err, size_t errcap, int *unreached) {
    b->n = 0;
    b->data[0] = 0;
    CURL *e = easy_to(url, headers, insecure, 10000L);
    if (!e)
        return -1;
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, pr);
    CURLcode rc = curl_easy_perform(e);
    long code = 0;
    if (unreached)
        *unreached = never_connected(e, rc);
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

/* What a run keeps of llama.cpp's /props: what build served it, which
 * model file, how many slots and how much context a slot has. NULL when
 * the body has no build_info. */
static json_t *llamacpp_props(const char *body) {
    json_t *all = json_loads(body, 0, NULL);
    json_t *build = json_object_get(all, "build_info");
    json_t *out = NULL;
    if (json_is_string(build)) {
        out = json_object();
        json_object_set(out, "build_info", build);
        static const char *const keys[] = {"model_path", "total_slots", NULL};
        for (int i = 0; keys[i]; i++)
            if (json_object_get(all, keys[i]))
                json_object_set(out, keys[i], json_object_get(all, keys[i]));
        json_t *n_ctx =
            json_object_get(json_object_get(all, "default_generation_settings"), "n_ctx");
        if (n_ctx)
            json_object_set(out, "n_ctx", n_ctx);
    }
    json_decref(all);
    return out;
}

/* The labels of vLLM's cache_config_info gauge in a /metrics body, as
 * strings: the KV cache's blocks and block size a fit takes as the server's
 * limits. NULL when the body has no such line. */
static json_t *vllm_cache_config(const char *body) {
    const char *name = "vllm:cache_config_info{";
    const char *p = body;
    while ((p = strstr(p, name)) && p != body && p[-1] != '\n')
        p += strlen(name);
    if (!p)
        return NULL;
    p += strlen(name);
    json_t *out = json_object();
    while (*p && *p != '}' && *p != '\n') {
        const char *eq = strchr(p, '=');
        if (!eq || eq[1] != '"' || eq - p >= 64)
            break;
        char key[64], val[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
        const char *v = eq + 2, *end = strchr(v, '"');
        if (!end)
            break;
        snprintf(val, sizeof val, "%.*s", (int)(end - v), v);
        json_object_set_new(out, key, json_string(val));
        p = end + 1;
        if (*p == ',')
            p++;
    }
    return out;
}

void probe_server(const char *base, struct curl_slist *headers, int insecure, server_probe *p) {
    memset(p, 0, sizeof *p);
    buf *b = malloc(sizeof *b);
    char url[2048];
    snprintf(url, sizeof url, "%s/v1/models", base);
    int unreached = 0;
    long code = get(url, headers, insecure, b, p, p->error, sizeof p->error, &unreached);
    p->reachable = !unreached;
    p->models_status = code > 0 ? (int)code : 0;
    if (code == 200) {
        p->models = json_loads(b->data, 0, NULL);
        p->models_listed = json_is_array(json_object_get(p->models, "data"));
        json_t *first = json_array_get(json_object_get(p->models, "data"), 0);
        json_t *id = json_object_get(first, "id");
        if (json_is_string(id))
            snprintf(p->first_model, sizeof p->first_model, "%s", json_string_value(id));
        json_t *owner = json_object_get(first, "owned_by");
        if (json_is_string(owner) && !strcmp(json_string_value(owner), "vllm"))
            p->vllm_like = 1;
    }
    if (code >= 0) { /* answered: /version will not wait out a timeout either */
        snprintf(url, sizeof url, "%s/version", base);
        if (get(url, headers, insecure, b, p, NULL, 0, NULL) == 200) {
            p->version = json_loads(b->data, 0, NULL);
            json_t *v = json_object_get(p->version, "version");
            if (json_is_string(v) && strstr(json_string_value(v), "servelab-sim"))
                p->is_sim = 1;
        }
    }
    if (code >= 0 && !p->version) { /* llama.cpp's server has /props instead */
        snprintf(url, sizeof url, "%s/props", base);
        if (get(url, headers, insecure, b, p, NULL, 0, NULL) == 200)
            p->props = llamacpp_props(b->data);
    }
    if (strstr(p->server_header, "servelab-sim"))
        p->is_sim = 1;
    if (p->is_sim)
        p->vllm_like = 1;
    if (p->vllm_like) {
        snprintf(url, sizeof url, "%s/metrics", base);
        if (get(url, headers, insecure, b, p, NULL, 0, NULL) == 200)
            p->cache_config = vllm_cache_config(b->data);
    }
    free(b);
}

/* Whether the list holds `model`; its ids into names (", "-separated, cut
 * to fit) either way. */
static int lists_model(const server_probe *p, const char *model, char *names, size_t n) {
    json_t *data = json_object_get(p->models, "data"), *m;
    size_t i, k = 0;
    int found = 0;
    names[0] = 0;
    json_array_foreach(data, i, m) {
        const char *id = json_string_value(json_object_get(m, "id"));
        if (!id)
            continue;
        found |= !strcmp(id, model);
        if (k + strlen(id) + 8 < n)
            k += (size_t)snprintf(names + k, n - k, "%s%s", k ? ", " : "", id);
        else if (k + 5 < n && !strstr(names, "..."))
            k += (size_t)snprintf(names + k, n - k, "%s...", k ? ", " : "");
    }
    return found;
}

int probe_warning(const server_probe *p, const char *model, char *msg, size_t n) {
    if (!p->reachable) {
        snprintf(msg, n, "cannot reach the server (%s); every request will be recorded as it fails",
                 p->error);
        return 1;
    }
    if (!p->models_listed) {
        char why[300];
        if (p->models_status == 200)
            snprintf(why, sizeof why, "its /v1/models answer is not a model list");
        else if (p->models_status)
            snprintf(why, sizeof why, "HTTP %d", p->models_status);
        else
            snprintf(why, sizeof why, "%s", p->error);
        if (model)
            snprintf(msg, n,
                     "the server did not list its models (%s), so --model %s is not checked", why,
                     model);
        else
            snprintf(msg, n, "the server did not list its models (%s); --model is needed", why);
        return 1;
    }
    char names[400];
    if (!model && !p->first_model[0]) {
        snprintf(msg, n, "the server lists no models; --model is needed");
        return 1;
    }
    if (model && !lists_model(p, model, names, sizeof names)) {
        snprintf(msg, n, "--model %s is not among the models the server lists (%s)", model,
                 names[0] ? names : "none");
        return 1;
    }
    return 0;
}

json_t *probe_json(const server_probe *p) {
    json_t *o = json_object();
    json_object_set_new(o, "reachable", json_boolean(p->reachable));
    json_object_set(o, "version", p->version ? p->version : json_null());
    json_object_set(o, "models", p->models ? p->models : json_null());
    if (p->props)
        json_object_set(o, "llamacpp_props", p->props);
    if (p->cache_config)
        json_object_set(o, "vllm_cache_config", p->cache_config);
    json_object_set_new(o, "server_header",
                        p->server_header[0] ? json_string(p->server_header) : json_null());
    if (p->error[0])
        json_object_set_new(o, "probe_error", json_string(p->error));
    return o;
}

json_t *probe_spec_counters(const char *metrics_url, struct curl_slist *headers, int insecure) {
    buf *b = xmalloc(sizeof *b);
    server_probe scratch; /* the header callback's; nothing of it is kept */
    memset(&scratch, 0, sizeof scratch);
    json_t *out = NULL;
    if (get(metrics_url, headers, insecure, b, &scratch, NULL, 0, NULL) == 200) {
        spec_counters c;
        spec_counters_read(b->data, b->n, &c);
        out = spec_counters_json(&c);
    }
    free(b);
    return out;
}

int probe_busy(const char *metrics_url, struct curl_slist *headers, int insecure, busy_gauges *b) {
    buf *page = xmalloc(sizeof *page);
    server_probe scratch;
    memset(&scratch, 0, sizeof scratch);
    int rc = -1;
    if (get(metrics_url, headers, insecure, page, &scratch, NULL, 0, NULL) == 200) {
        busy_read(page->data, page->n, b);
        rc = 0;
    }
    free(page);
    return rc;
}

static size_t discard(char *p, size_t size, size_t n, void *ud) {
    (void)p;
    (void)ud;
    return size * n;
}

double probe_post_ms(const char *url, const char *body, struct curl_slist *headers, int insecure,
                     double max_s, int *timed_out) {
    *timed_out = 0;
    CURL *e = easy_to(url, headers, insecure, (long)((max_s > 1 ? max_s : 1) * 1000));
    if (!e)
        return NAN;
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    double t0 = mono_us() / 1e3;
    CURLcode rc = curl_easy_perform(e);
    double ms = mono_us() / 1e3 - t0;
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(e);
    *timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    return *timed_out || (rc == CURLE_OK && status >= 200 && status < 300) ? ms : NAN;
}

void probe_free(server_probe *p) {
    json_decref(p->version);
    json_decref(p->models);
    json_decref(p->props);
    json_decref(p->cache_config);
    p->version = p->models = p->props = p->cache_config = NULL;
}
