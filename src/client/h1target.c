/* h1target: where our HTTP/1.1 client posts (h1.h): the URL split into
 * host, port and path and resolved once, and the fixed part of every
 * request's head built once, so that a request only appends its own lines.
 * Apart from h1.c, which is about connections and transfers. */
#include "client/h1.h"
#include "client/h1target.h"
#include "common/strbuf.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- URL and environment ---- */

int h1_usable(const char *url) {
    if (strncasecmp(url, "http://", 7))
        return 0;
    const char *auth = url + 7, *end = auth + strcspn(auth, "/?#");
    if (memchr(auth, '@', (size_t)(end - auth)))
        return 0;
    const char *const proxies[] = {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++) {
        const char *v = getenv(proxies[i]);
        if (v && *v)
            return 0;
    }
    return 1;
}

/* Splits http://host[:port][/path] (host may be [v6]); returns -1 when the
 * URL is not of that form. */
static int split_url(const char *url, char *host, size_t hostlen, char *port, size_t portlen,
                     const char **path) {
    const char *p = url + 7, *end = p + strcspn(p, "/?#");
    const char *hs = p, *he, *colon = NULL;
    if (*p == '[') {
        hs = p + 1;
        he = memchr(hs, ']', (size_t)(end - hs));
        if (!he)
            return -1;
        if (he + 1 < end && he[1] == ':')
            colon = he + 1;
    } else {
        colon = memchr(p, ':', (size_t)(end - p));
        he = colon ? colon : end;
    }
    if (he == hs || (size_t)(he - hs) >= hostlen)
        return -1;
    memcpy(host, hs, (size_t)(he - hs));
    host[he - hs] = 0;
    if (colon && colon + 1 < end) {
        if ((size_t)(end - colon - 1) >= portlen)
            return -1;
        memcpy(port, colon + 1, (size_t)(end - colon - 1));
        port[end - colon - 1] = 0;
    } else {
        snprintf(port, portlen, "80");
    }
    *path = *end ? end : "/";
    return 0;
}

static int header_is(const char *line, const char *name) {
    size_t n = strlen(name);
    return !strncasecmp(line, name, n) && line[n] == ':';
}

void h1_target_init(h1_target *t, const char *url, const char *const *headers) {
    memset(t, 0, sizeof *t);
    char host[256] = "", port[16] = "80"; /* as they stay when the URL does not split */
    const char *path = "/";
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    if (split_url(url, host, sizeof host, port, sizeof port, &path) == 0 &&
        getaddrinfo(host, port, &hints, &t->addrs) == 0) {
        for (struct addrinfo *a = t->addrs; a; a = a->ai_next)
            t->n_addrs++;
    } else {
        t->addrs = NULL;
    }
    /* The fixed part of every request's head. A user header replaces ours
     * of the same name; "Name:" with nothing after it removes it. */
    static const struct {
        const char *name, *value;
    } ours[] = {{"Content-Type", "application/json"}, {"Accept", "text/event-stream"}};
    int user_host = 0;
    for (const char *const *u = headers; u && *u; u++)
        user_host |= header_is(*u, "Host");
    strbuf b = {0};
    sb_printf(&b, "POST %s HTTP/1.1\r\n", path);
    if (!user_host) {
        int v6 = strchr(host, ':') != NULL;
        sb_printf(&b, "Host: %s%s%s%s%s\r\n", v6 ? "[" : "", host, v6 ? "]" : "",
                  strcmp(port, "80") ? ":" : "", strcmp(port, "80") ? port : "");
    }
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++) {
        int replaced = 0;
        for (const char *const *u = headers; u && *u; u++)
            replaced |= header_is(*u, ours[i].name);
        if (!replaced)
            sb_printf(&b, "%s: %s\r\n", ours[i].name, ours[i].value);
    }
    for (const char *const *u = headers; u && *u; u++) {
        const char *colon = strchr(*u, ':');
        if (!colon || header_is(*u, "Content-Length") || header_is(*u, "Transfer-Encoding"))
            continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (!*v)
            continue; /* removes the header */
        sb_printf(&b, "%s\r\n", *u);
    }
    t->head_start = b.s;
    t->head_start_len = b.n;
}

void h1_target_free(h1_target *t) {
    if (t->addrs)
        freeaddrinfo(t->addrs);
    free(t->head_start);
    memset(t, 0, sizeof *t);
}
