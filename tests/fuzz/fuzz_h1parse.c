/* fuzz_h1parse: libFuzzer target for the HTTP/1.1 response parser
 * (protocol/h1parse.h), in process: the input is what a server answers.
 *
 * The answer is parsed the way h1.c drives the parser (the caller keeps a
 * head that is not yet whole and hands it again, whole, after each read),
 * once in one piece and once cut in two at a point the input chooses. Each
 * piece, and each head handed to the parser, lies in an allocation of
 * exactly its size, so a read past what the parser was given is caught by
 * ASan. Checks: every call uses no more than it was given (a head no
 * shorter than what was already seen without its end; a body call at least
 * one byte); each run of body data lies within the bytes that call used;
 * and the two parses agree on everything the client would see (the
 * outcome, the 1xx heads, the final head's status, keep-alive, framing and
 * content type, the body bytes, where the answer ended). Both must also
 * agree with the reference below: the rules h1.c applied before the parser
 * was split out of it (the head gathered byte by byte into a C string and
 * read with strncasecmp and strtoll, the chunked framing decoded with a
 * digit counter), so the split changed no answer's outcome.
 *
 * Input: two bytes choosing the cut (little endian, modulo the answer's
 * length plus one), then the answer. */
#include "protocol/h1parse.h"
#include "fuzz_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { SEEN_OK, SEEN_BROKEN, SEEN_CLOSED, SEEN_SHORT };

/* What the client sees of one answer. */
typedef struct seen {
    int result, interim, heads, status, keep_alive, framing, has_ctype;
    uint64_t ctype_hash, body_hash;
    size_t body_len, used;
} seen;

static void saw_body(seen *s, const char *p, size_t n) {
    s->body_hash = fuzz_hash(s->body_hash, p, n);
    s->body_len += n;
}

static void saw_head(seen *s, int status, int keep_alive, int framing, const char *ct, size_t n) {
    s->heads++;
    s->status = status;
    s->keep_alive = keep_alive;
    s->framing = framing;
    s->has_ctype = ct != NULL;
    s->ctype_hash = ct ? fuzz_hash(0, ct, n) : 0;
}

static void same(const seen *a, const seen *b) {
    FUZZ_CHECK(a->result == b->result && a->interim == b->interim && a->heads == b->heads);
    FUZZ_CHECK(a->body_len == b->body_len && a->body_hash == b->body_hash);
    if (a->heads)
        FUZZ_CHECK(a->status == b->status && a->keep_alive == b->keep_alive &&
                   a->framing == b->framing && a->has_ctype == b->has_ctype &&
                   a->ctype_hash == b->ctype_hash);
    if (a->result == SEEN_OK)
        FUZZ_CHECK(a->used == b->used);
}

/* ---- the parser, as h1.c drives it ---- */

typedef struct driver {
    seen *s;
    char *head; /* exactly head_len bytes */
    size_t head_len;
    int in_body, over;
    h1p_body b;
} driver;

static size_t drive_head(driver *d, const char *p, size_t n) {
    size_t from = d->head_len;
    char *grown = malloc(from + n);
    FUZZ_CHECK(grown != NULL);
    if (from)
        memcpy(grown, d->head, from);
    memcpy(grown + from, p, n);
    free(d->head);
    d->head = grown;
    d->head_len = from + n;
    h1p_head h;
    long len = h1p_parse_head(d->head, d->head_len, from, &h);
    FUZZ_CHECK(len >= H1P_ERROR && len <= (long)d->head_len);
    if (len == H1P_INCOMPLETE)
        return n;
    if (len == H1P_ERROR) {
        d->s->result = SEEN_BROKEN;
        d->over = 1;
        return n;
    }
    FUZZ_CHECK((size_t)len > from);
    if (h.status < 200) {
        FUZZ_CHECK(h.status >= 100 && h.status != 101);
        d->s->interim++;
    } else {
        FUZZ_CHECK(h.status <= 999 && h.length >= 0);
        if (h.content_type)
            FUZZ_CHECK(h.content_type >= d->head &&
                       h.content_type + h.content_type_len < d->head + len);
        if (h.content_encoding)
            FUZZ_CHECK(h.content_encoding >= d->head &&
                       h.content_encoding + h.content_encoding_len < d->head + len);
        saw_head(d->s, h.status, h.keep_alive, (int)h.framing, h.content_type, h.content_type_len);
        h1p_body_start(&d->b, &h);
        d->in_body = 1;
    }
    free(d->head);
    d->head = NULL;
    d->head_len = 0;
    return (size_t)len - from;
}

static size_t drive_body(driver *d, const char *p, size_t n) {
    const char *data;
    size_t len;
    long used = h1p_body_feed(&d->b, p, n, &data, &len);
    if (used == H1P_ERROR) {
        d->s->result = SEEN_BROKEN;
        d->over = 1;
        return n;
    }
    FUZZ_CHECK(used >= 1 && (size_t)used <= n);
    FUZZ_CHECK(data >= p && data + len <= p + used);
    if (len)
        saw_body(d->s, data, len);
    return (size_t)used;
}

/* Parses answer[0..n) in the pieces [0, cut) and [cut, n). */
static void drive(const uint8_t *answer, size_t n, size_t cut, seen *s) {
    memset(s, 0, sizeof *s);
    driver d = {.s = s};
    size_t ends[2] = {cut, n}, start = 0;
    for (int k = 0; k < 2 && !d.over; k++) {
        size_t len = ends[k] - start, i = 0;
        char *piece = malloc(len ? len : 1);
        FUZZ_CHECK(piece != NULL);
        if (len)
            memcpy(piece, answer + start, len);
        while (i < len && !d.over) {
            i +=
                d.in_body ? drive_body(&d, piece + i, len - i) : drive_head(&d, piece + i, len - i);
            if (!d.over && d.in_body && h1p_body_done(&d.b)) {
                s->result = SEEN_OK;
                s->used = start + i;
                d.over = 1;
            }
        }
        free(piece);
        start = ends[k];
    }
    if (!d.over)
        s->result = d.in_body && h1p_body_until_close(&d.b) ? SEEN_CLOSED : SEEN_SHORT;
    free(d.head);
}

/* ---- the reference: h1.c's rules before the split ---- */

enum { REF_HEAD, REF_LENGTH, REF_CHUNKED, REF_CLOSE };
enum { REF_SIZE, REF_EXT, REF_SIZE_LF, REF_DATA, REF_DATA_CR, REF_DATA_LF, REF_TRAILER };

typedef struct ref {
    seen *s;
    int rs, cs, size_digits, status, keep_alive;
    char *rhead;
    size_t rhead_len, rhead_cap, trailer_line;
    long long left;
} ref;

static char *ref_value(char *head, const char *name) {
    size_t n = strlen(name);
    for (char *line = strchr(head, '\n'); line; line = strchr(line, '\n')) {
        line++;
        if (!strncasecmp(line, name, n) && line[n] == ':') {
            char *v = line + n + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            return v;
        }
    }
    return NULL;
}

static int ref_has(const char *v, const char *token) {
    if (!v)
        return 0;
    size_t n = strlen(token), end = strcspn(v, "\r\n");
    for (size_t i = 0; i + n <= end; i++)
        if (!strncasecmp(v + i, token, n))
            return 1;
    return 0;
}

/* 0: the body follows, 1: a 1xx head, -1: not HTTP/1.x. */
static int ref_take_head(ref *x) {
    char *h = x->rhead;
    if (strncmp(h, "HTTP/1.", 7) || !isdigit((unsigned char)h[7]) || h[8] != ' ' ||
        !isdigit((unsigned char)h[9]) || !isdigit((unsigned char)h[10]) ||
        !isdigit((unsigned char)h[11]))
        return -1;
    x->status = (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
    if (x->status < 100)
        return -1;
    if (x->status < 200)
        return x->status == 101 ? -1 : 1;
    int http10 = h[7] == '0';
    const char *conn = ref_value(h, "Connection");
    x->keep_alive = http10 ? ref_has(conn, "keep-alive") : !ref_has(conn, "close");
    const char *te = ref_value(h, "Transfer-Encoding");
    const char *cl = ref_value(h, "Content-Length");
    if (x->status == 204 || x->status == 304) {
        x->rs = REF_LENGTH;
        x->left = 0;
    } else if (te && ref_has(te, "chunked")) {
        x->rs = REF_CHUNKED;
        x->cs = REF_SIZE;
        x->left = 0;
        x->size_digits = 0;
    } else if (cl) {
        char *end;
        errno = 0;
        long long v = strtoll(cl, &end, 10);
        if (errno || v < 0 || end == cl)
            return -1;
        x->rs = REF_LENGTH;
        x->left = v;
    } else {
        x->rs = REF_CLOSE;
        x->keep_alive = 0;
    }
    char *ct = ref_value(h, "Content-Type");
    if (ct)
        ct[strcspn(ct, "\r\n")] = 0;
    static const int framing[] = {0, H1P_LENGTH, H1P_CHUNKED, H1P_CLOSE};
    saw_head(x->s, x->status, x->keep_alive, framing[x->rs], ct, ct ? strlen(ct) : 0);
    return 0;
}

static size_t ref_head_bytes(ref *x, const uint8_t *p, size_t n, int *ready) {
    size_t i = 0;
    *ready = 0;
    while (i < n) {
        if (x->rhead_len + 2 > x->rhead_cap) {
            x->rhead_cap = x->rhead_cap ? x->rhead_cap * 2 : 512;
            x->rhead = realloc(x->rhead, x->rhead_cap);
            FUZZ_CHECK(x->rhead != NULL);
        }
        char ch = (char)p[i++];
        x->rhead[x->rhead_len++] = ch;
        if (ch == '\n') {
            size_t l = x->rhead_len;
            if ((l >= 2 && x->rhead[l - 2] == '\n') ||
                (l >= 3 && x->rhead[l - 2] == '\r' && x->rhead[l - 3] == '\n')) {
                x->rhead[l] = 0;
                *ready = 1;
                return i;
            }
        }
        if (x->rhead_len > H1P_MAX_HEAD)
            return i;
    }
    return i;
}

/* Returns the bytes used; *end 1 at the body's end, -1 on bad framing. */
static size_t ref_chunked(ref *x, const uint8_t *p, size_t n, int *end) {
    size_t i = 0;
    *end = 0;
    while (i < n) {
        char ch = (char)p[i];
        int d = isdigit((unsigned char)ch) ? ch - '0'
                : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
                : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                           : -1;
        switch (x->cs) {
        case REF_SIZE:
            if (d >= 0) {
                if (x->left > (1LL << 40))
                    return *end = -1, i;
                x->left = x->left * 16 + d;
                x->size_digits++;
            } else if (!x->size_digits) {
                return *end = -1, i;
            } else if (ch == ';' || ch == ' ' || ch == '\t') {
                x->cs = REF_EXT;
            } else if (ch == '\r') {
                x->cs = REF_SIZE_LF;
            } else if (ch == '\n') {
                x->cs = x->left ? REF_DATA : REF_TRAILER;
                x->trailer_line = 0;
            } else {
                return *end = -1, i;
            }
            i++;
            break;
        case REF_EXT:
        case REF_SIZE_LF:
            if (ch == '\n') {
                x->cs = x->left ? REF_DATA : REF_TRAILER;
                x->trailer_line = 0;
            } else if (x->cs == REF_SIZE_LF) {
                return *end = -1, i;
            }
            i++;
            break;
        case REF_DATA: {
            size_t k = n - i < (unsigned long long)x->left ? n - i : (size_t)x->left;
            saw_body(x->s, (const char *)p + i, k);
            i += k;
            x->left -= (long long)k;
            if (!x->left)
                x->cs = REF_DATA_CR;
            break;
        }
        case REF_DATA_CR:
        case REF_DATA_LF:
            if (ch == '\n') {
                x->cs = REF_SIZE;
                x->size_digits = 0;
            } else if (ch == '\r' && x->cs == REF_DATA_CR) {
                x->cs = REF_DATA_LF;
            } else {
                return *end = -1, i;
            }
            i++;
            break;
        case REF_TRAILER:
            i++;
            if (ch == '\n') {
                if (x->trailer_line == 0)
                    return *end = 1, i;
                x->trailer_line = 0;
            } else if (ch != '\r') {
                x->trailer_line++;
            }
            break;
        }
    }
    return i;
}

/* One read of n bytes; returns 1 once the answer is over. */
static int ref_take_bytes(ref *x, const uint8_t *p, size_t n, size_t offset) {
    size_t i = 0;
    while (i < n) {
        if (x->rs == REF_HEAD) {
            int ready;
            i += ref_head_bytes(x, p + i, n - i, &ready);
            if (!ready) {
                if (x->rhead_len > H1P_MAX_HEAD)
                    return x->s->result = SEEN_BROKEN, 1;
                continue;
            }
            int r = ref_take_head(x);
            x->rhead_len = 0;
            if (r < 0)
                return x->s->result = SEEN_BROKEN, 1;
            if (r == 1) {
                x->s->interim++;
                continue;
            }
            if (x->rs == REF_LENGTH && x->left == 0)
                return x->s->result = SEEN_OK, x->s->used = offset + i, 1;
        } else if (x->rs == REF_LENGTH) {
            size_t k = n - i < (unsigned long long)x->left ? n - i : (size_t)x->left;
            saw_body(x->s, (const char *)p + i, k);
            i += k;
            x->left -= (long long)k;
            if (!x->left)
                return x->s->result = SEEN_OK, x->s->used = offset + i, 1;
        } else if (x->rs == REF_CHUNKED) {
            int end;
            i += ref_chunked(x, p + i, n - i, &end);
            if (end)
                return x->s->result = end == 1 ? SEEN_OK : SEEN_BROKEN, x->s->used = offset + i, 1;
        } else {
            saw_body(x->s, (const char *)p + i, n - i);
            i = n;
        }
    }
    return 0;
}

static void reference(const uint8_t *answer, size_t n, seen *s) {
    memset(s, 0, sizeof *s);
    ref x = {.s = s, .rs = REF_HEAD};
    if (!ref_take_bytes(&x, answer, n, 0))
        s->result = x.rs == REF_CLOSE ? SEEN_CLOSED : SEEN_SHORT;
    free(x.rhead);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2)
        return 0;
    const uint8_t *answer = data + 2;
    size_t len = size - 2, cut = (size_t)(data[0] | data[1] << 8) % (len + 1);
    seen whole, split, old;
    drive(answer, len, len, &whole);
    drive(answer, len, cut, &split);
    same(&whole, &split);
    reference(answer, len, &old);
    same(&whole, &old);
    return 0;
}
