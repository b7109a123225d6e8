/* Tests of the HTTP/1.1 response parser (src/protocol/h1parse.c), in process:
 * every framing (Content-Length, chunked with extensions and trailers,
 * close-delimited, 1xx heads, 204) cut at every byte boundary and fed byte
 * by byte gives the same result as fed whole; the rules it inherited from
 * h1.c, the lenient ones included, hold exactly (status codes under 100
 * and 101, the head limit, the chunk-size limit, Content-Length as strtoll
 * reads it, a NUL in the head); garbage and truncated answers are rejected
 * or left incomplete as before; the chunk states follow the grammar; and
 * every llama.cpp exchange in tests/data/transcripts parses byte by byte.
 *
 * The driver feeds the parser the way h1.c does, each piece in its own
 * allocation of exactly its size (so a read past it shows under ASan): a
 * head is kept by the caller and handed again, whole, after each piece. */
#include "protocol/h1parse.h"
#include "support.h"
#include "test.h"
#include "transcripts.h"

#include <string.h>
#include <strings.h>

/* ---- the driver ---- */

typedef enum {
    P_OK,     /* the body ended */
    P_BROKEN, /* H1P_ERROR */
    P_CLOSED, /* the input ended a close-delimited body: a clean end */
    P_SHORT   /* the input ended before the response (h1.c: broken) */
} p_result;

typedef struct parsed {
    p_result result;
    int interim; /* 1xx heads skipped */
    int status, keep_alive;
    h1p_framing framing;
    int has_ctype;
    char ctype[128];
    char body[16384];
    size_t body_len;
    size_t used; /* P_OK: where in the input the response ended */
} parsed;

typedef struct feeder {
    parsed *r;
    char *head; /* the head so far, in an allocation of exactly head_len */
    size_t head_len, offset;
    int in_body, over;
    h1p_body b;
} feeder;

static void take_head(feeder *f, const h1p_head *h, const char *head) {
    parsed *r = f->r;
    if (h->status < 200) {
        r->interim++;
        return;
    }
    r->status = h->status;
    r->keep_alive = h->keep_alive;
    r->framing = h->framing;
    r->has_ctype = h->content_type != NULL;
    if (h->content_type) {
        CHECK(h->content_type >= head);
        CHECK(h->content_type_len < sizeof r->ctype);
        memcpy(r->ctype, h->content_type, h->content_type_len);
        r->ctype[h->content_type_len] = 0;
    }
    f->in_body = 1;
    h1p_body_start(&f->b, h);
}

/* Head bytes from p[0..n): returns how many the head took. */
static size_t feed_head(feeder *f, const char *p, size_t n) {
    size_t from = f->head_len;
    char *grown = malloc(from + n);
    CHECK(grown != NULL);
    if (from)
        memcpy(grown, f->head, from);
    memcpy(grown + from, p, n);
    free(f->head);
    f->head = grown;
    f->head_len = from + n;
    h1p_head h;
    long len = h1p_parse_head(f->head, f->head_len, from, &h);
    CHECK_MSG(len <= (long)f->head_len && len >= -1, "head: %ld of %zu", len, f->head_len);
    if (len == H1P_ERROR) {
        f->r->result = P_BROKEN;
        f->over = 1;
        return n;
    }
    if (len == H1P_INCOMPLETE)
        return n;
    CHECK_MSG((size_t)len > from, "the head ended at %ld, before the %zu bytes seen", len, from);
    take_head(f, &h, f->head);
    free(f->head);
    f->head = NULL;
    f->head_len = 0;
    return (size_t)len - from;
}

/* Body bytes from p[0..n): returns how many were used. */
static size_t feed_body(feeder *f, const char *p, size_t n) {
    const char *data;
    size_t len;
    long used = h1p_body_feed(&f->b, p, n, &data, &len);
    if (used == H1P_ERROR) {
        f->r->result = P_BROKEN;
        f->over = 1;
        return n;
    }
    CHECK_MSG(used > 0 && (size_t)used <= n, "body: %ld of %zu", used, n);
    CHECK(data >= p && data + len <= p + used);
    CHECK(f->r->body_len + len <= sizeof f->r->body);
    memcpy(f->r->body + f->r->body_len, data, len);
    f->r->body_len += len;
    return (size_t)used;
}

/* Parses s[0..n) cut at cuts[0..ncuts) (ascending offsets within s). */
static void parse_cut(const char *s, size_t n, const size_t *cuts, int ncuts, parsed *r) {
    memset(r, 0, sizeof *r);
    feeder f = {.r = r};
    size_t start = 0;
    for (int k = 0; k <= ncuts && !f.over; k++) {
        size_t end = k < ncuts ? cuts[k] : n, len = end - start, i = 0;
        char *piece = malloc(len ? len : 1);
        CHECK(piece != NULL);
        memcpy(piece, s + start, len);
        while (i < len && !f.over) {
            i += f.in_body ? feed_body(&f, piece + i, len - i) : feed_head(&f, piece + i, len - i);
            if (!f.over && f.in_body && h1p_body_done(&f.b)) {
                r->result = P_OK;
                r->used = start + i;
                f.over = 1;
            }
        }
        free(piece);
        start = end;
    }
    if (!f.over)
        r->result = f.in_body && h1p_body_until_close(&f.b) ? P_CLOSED : P_SHORT;
    free(f.head);
}

static void parse_whole(const char *s, size_t n, parsed *r) {
    parse_cut(s, n, NULL, 0, r);
}

static void parse_bytewise(const char *s, size_t n, parsed *r) {
    size_t *cuts = malloc((n ? n : 1) * sizeof *cuts);
    for (size_t i = 0; i + 1 < n; i++)
        cuts[i] = i + 1;
    parse_cut(s, n, cuts, n > 1 ? (int)n - 1 : 0, r);
    free(cuts);
}

/* The first way in which two results differ, or NULL. */
static const char *differs(const parsed *a, const parsed *b) {
    if (a->result != b->result)
        return "result";
    if (a->result == P_BROKEN || a->result == P_SHORT)
        return NULL;
    if (a->interim != b->interim || a->status != b->status)
        return "status";
    if (a->keep_alive != b->keep_alive || a->framing != b->framing)
        return "framing";
    if (a->has_ctype != b->has_ctype || strcmp(a->ctype, b->ctype))
        return "content type";
    if (a->body_len != b->body_len || memcmp(a->body, b->body, a->body_len))
        return "body";
    return a->result == P_OK && a->used != b->used ? "end" : NULL;
}

/* Parsed whole, cut once at every byte boundary, and byte by byte: the
 * same result every time; `deep` adds every cut in three. */
static void check_every_split(const char *name, const char *s, size_t n, int deep) {
    parsed *whole = malloc(sizeof *whole), *cut = malloc(sizeof *cut);
    parse_whole(s, n, whole);
    for (size_t i = 1; i < n; i++) {
        parse_cut(s, n, &i, 1, cut);
        const char *d = differs(whole, cut);
        CHECK_MSG(!d, "%s: cut at %zu: the %s differs", name, i, d);
        for (size_t j = i + 1; deep && j < n; j++) {
            size_t cuts[2] = {i, j};
            parse_cut(s, n, cuts, 2, cut);
            d = differs(whole, cut);
            CHECK_MSG(!d, "%s: cut at %zu and %zu: the %s differs", name, i, j, d);
        }
    }
    parse_bytewise(s, n, cut);
    const char *d = differs(whole, cut);
    CHECK_MSG(!d, "%s: byte by byte: the %s differs", name, d);
    free(whole);
    free(cut);
}

/* ---- what is expected ---- */

#define S(lit) lit, sizeof lit - 1

typedef struct want {
    const char *in;
    size_t n;
    p_result result;
    int status, keep_alive;
    h1p_framing framing;
    const char *ctype; /* NULL: none */
    const char *body;
    size_t left_over; /* P_OK: input bytes after the response */
    int interim;
} want;

static void check_want(int line, const want *w, int deep) {
    char name[32];
    snprintf(name, sizeof name, "case of line %d", line);
    parsed *r = malloc(sizeof *r);
    parse_whole(w->in, w->n, r);
    CHECK_MSG(r->result == w->result, "%s: result %d, want %d", name, r->result, w->result);
    if (w->result == P_OK || w->result == P_CLOSED) {
        CHECK_MSG(r->status == w->status, "%s: status %d", name, r->status);
        CHECK_MSG(r->keep_alive == w->keep_alive, "%s: keep-alive %d", name, r->keep_alive);
        CHECK_MSG(r->framing == w->framing, "%s: framing %d", name, (int)r->framing);
        CHECK_MSG(r->interim == w->interim, "%s: %d interim heads", name, r->interim);
        CHECK_MSG(w->ctype ? r->has_ctype && !strcmp(r->ctype, w->ctype) : !r->has_ctype,
                  "%s: content type '%s'", name, r->ctype);
        CHECK_MSG(r->body_len == strlen(w->body) && !memcmp(r->body, w->body, r->body_len),
                  "%s: body '%.*s'", name, (int)r->body_len, r->body);
    }
    if (w->result == P_OK)
        CHECK_MSG(r->used == w->n - w->left_over, "%s: ended at %zu", name, r->used);
    free(r);
    check_every_split(name, w->in, w->n, deep);
}

/* WANT(input, length, result, status, keep_alive, framing, content type,
 * body[, left_over[, interim]]) */
#define WANT_(deep, in, n, result, status, keep, framing, ctype, body, left_over, interim, ...)    \
    check_want(__LINE__,                                                                           \
               &(want){in, n, result, status, keep, framing, ctype, body, left_over, interim},     \
               deep)
#define WANT(...) WANT_(0, __VA_ARGS__, 0, 0, 0)
#define WANT_DEEP(...) WANT_(1, __VA_ARGS__, 0, 0, 0)
#define REJECTED(lit) WANT(S(lit), P_BROKEN, 0, 0, H1P_LENGTH, NULL, "")
#define UNFINISHED(lit) WANT(S(lit), P_SHORT, 0, 0, H1P_LENGTH, NULL, "")

static const char sse[] = "data: {\"choices\":[{\"text\":\" a\"}]}\n\n"
                          "data: {\"choices\":[{\"text\":\" b\"}]}\n\ndata: [DONE]\n\n";

/* ---- framing ---- */

TEST(h1parse_every_framing_split_at_every_byte) {
    char cl[512], chunked[768], closed[512], interim[768];
    int n = snprintf(cl, sizeof cl,
                     "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     "Content-Length: %zu\r\n\r\n%sHTTP/1.1 200 OK\r\n",
                     strlen(sse), sse);
    WANT_DEEP(cl, (size_t)n, P_OK, 200, 1, H1P_LENGTH, "text/event-stream", sse,
              strlen("HTTP/1.1 200 OK\r\n")); /* what follows is not this answer's */
    /* sizes in both cases, an extension, bare LFs, a trailer */
    n = snprintf(chunked, sizeof chunked,
                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
                 "%zx;ext=\"a;b\"\r\n%.*s\r\n%zX\n%s\n0\r\nX-Trailer: t\r\nY: u\r\n\r\n",
                 (size_t)37, 37, sse, strlen(sse) - 37, sse + 37);
    WANT_DEEP(chunked, (size_t)n, P_OK, 200, 1, H1P_CHUNKED, "text/plain", sse);
    n = snprintf(closed, sizeof closed, "HTTP/1.0 200 OK\r\nContent-Type: a/b\r\n\r\n%s", sse);
    WANT_DEEP(closed, (size_t)n, P_CLOSED, 200, 0, H1P_CLOSE, "a/b", sse);
    n = snprintf(interim, sizeof interim,
                 "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                 "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "5\r\nhello\r\n0\r\n\r\n");
    WANT_DEEP(interim, (size_t)n, P_OK, 201, 1, H1P_CHUNKED, NULL, "hello", 0, 2);
    WANT_DEEP(S("HTTP/1.1 204 No Content\r\nContent-Type: x\r\n\r\nleft"), P_OK, 204, 1, H1P_LENGTH,
              "x", "", 4);
    WANT_DEEP(S("HTTP/1.1 200 OK\nContent-Length: 3\n\nabc"), P_OK, 200, 1, H1P_LENGTH, NULL,
              "abc");
    WANT_DEEP(S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\n"), P_OK, 200, 1, H1P_LENGTH, NULL, "");
}

TEST(h1parse_chunk_extensions_and_trailers) {
    WANT(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           "3;name=\"q;x\"\r\nabc\r\n2 \r\nde\r\n1\t;x\nf\r\n1;a\rb\r\ng\r\n0;last\r\n\r\n"),
         P_OK, 200, 1, H1P_CHUNKED, NULL, "abcdefg");
    /* trailer lines of any content; "\r\r\n" is still an empty line */
    WANT(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           "2\r\nab\r\n0\r\nA: 1\r\n\x01\x7f\xff\r\nB\r\n\r\r\nafter"),
         P_OK, 200, 1, H1P_CHUNKED, NULL, "ab", 5);
    /* leading zeros, and the largest size that may take one more digit */
    WANT(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           "000000000000000000000000001\r\nx\r\n00\r\n\r\n"),
         P_OK, 200, 1, H1P_CHUNKED, NULL, "x");
    UNFINISHED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000000000\r\nabc");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000\r\nabc");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000000010\r\nabc");
    /* "chunked" anywhere in the field wins over Content-Length */
    WANT(S("HTTP/1.1 200 OK\r\nContent-Length: 999\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n"
           "1\r\nz\r\n0\r\n\r\n"),
         P_OK, 200, 1, H1P_CHUNKED, NULL, "z");
}

TEST(h1parse_chunk_states_follow_the_grammar) {
    static const char in[] = "5;x\r\nhello\r\n0\r\nT: v\r\n\r\n";
    static const char want[] = "SEEED"
                               "DDDDC"
                               "MF"
                               "SLT"
                               "UUUUUT"
                               "TZ";
    static const char names[] = "FSELDCMTUZ"; /* in h1p_chunk_state's order */
    h1p_head h = {.status = 200, .framing = H1P_CHUNKED};
    h1p_body b;
    h1p_body_start(&b, &h);
    CHECK_INT(b.state, H1P_CHUNK_SIZE_FIRST);
    char got[sizeof in] = "";
    for (size_t i = 0; i + 1 < sizeof in; i++) {
        const char *data;
        size_t len;
        int was_data = b.state == H1P_CHUNK_DATA;
        CHECK_INT(h1p_body_feed(&b, in + i, 1, &data, &len), 1);
        CHECK_INT(len, was_data);
        got[i] = names[b.state];
    }
    CHECK_STR(got, want);
    CHECK(h1p_body_done(&b));
    const char *data;
    size_t len;
    CHECK_INT(h1p_body_feed(&b, "x", 1, &data, &len), 0); /* nothing more is taken */
    CHECK_INT(len, 0);
}

TEST(h1parse_content_length_as_before) {
    WANT(S("HTTP/1.1 200 OK\r\ncontent-length: 3\r\nContent-Length: 1\r\n\r\nabc"), P_OK, 200, 1,
         H1P_LENGTH, NULL, "abc"); /* the first of two counts */
    WANT(S("HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nab"), P_OK, 200, 1, H1P_LENGTH, NULL,
         "ab");
    WANT(S("HTTP/1.1 200 OK\r\nContent-Length: -0\r\n\r\n"), P_OK, 200, 1, H1P_LENGTH, NULL, "");
    WANT(S("HTTP/1.1 200 OK\r\nContent-Length:\t 2 bytes\r\n\r\nab"), P_OK, 200, 1, H1P_LENGTH,
         NULL, "ab");
    /* as strtoll does, the number may follow on the next (folded) line */
    WANT(S("HTTP/1.1 200 OK\r\nContent-Length:\r\n 2\r\n\r\nab"), P_OK, 200, 1, H1P_LENGTH, NULL,
         "ab");
    UNFINISHED("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\nab");
    REJECTED("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\nab");
    REJECTED("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nContent-Length:\r\nX-A: 1\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n");
    /* not looked at for 204 and 304, nor when the body is chunked */
    WANT(S("HTTP/1.1 304 Not Modified\r\nContent-Length: abc\r\n\r\n"), P_OK, 304, 1, H1P_LENGTH,
         NULL, "");
    WANT(S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n0\r\n\r\n"),
         P_OK, 200, 1, H1P_CHUNKED, NULL, "");
    /* a name followed by blanks before its colon is another field */
    WANT(S("HTTP/1.1 200 OK\r\nContent-Length : 2\r\n\r\nabc"), P_CLOSED, 200, 0, H1P_CLOSE, NULL,
         "abc");
}

TEST(h1parse_keep_alive_and_content_type) {
    WANT(S("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), P_OK, 200, 0, H1P_LENGTH, NULL, "");
    WANT(S("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"), P_OK, 200, 1,
         H1P_LENGTH, NULL, "");
    WANT(S("HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE\r\nContent-Length: 0\r\n\r\n"), P_OK, 200,
         0, H1P_LENGTH, NULL, "");
    WANT(S("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\nx"), P_CLOSED, 200, 0, H1P_CLOSE, NULL,
         "x");
    /* any HTTP/1.x but 1.0 is read as 1.1 */
    WANT(S("HTTP/1.7 200 OK\r\nContent-Length: 0\r\n\r\n"), P_OK, 200, 1, H1P_LENGTH, NULL, "");
    WANT(S("HTTP/1.1 200 OK\r\nCONTENT-TYPE:  \t text/plain; charset=utf-8 \r\nContent-Length: "
           "0\r\n\r\n"),
         P_OK, 200, 1, H1P_LENGTH, "text/plain; charset=utf-8 ", "");
    WANT(S("HTTP/1.1 200 OK\r\nContent-Type:\r\nContent-Length: 0\r\n\r\n"), P_OK, 200, 1,
         H1P_LENGTH, "", "");
    /* a NUL ends the head's text: the fields after it are not read */
    WANT(S("HTTP/1.1 200 OK\r\nContent-Type: a\0b\r\nContent-Length: 3\r\n\r\nabcd"), P_CLOSED, 200,
         0, H1P_CLOSE, "a", "abcd");
    /* what follows the three digits is not looked at */
    WANT(S("HTTP/1.1 2000 Whatever\r\nContent-Length: 0\r\n\r\n"), P_OK, 200, 1, H1P_LENGTH, NULL,
         "");
}

/* Content-Encoding is reported as it stands (the first such line, from
 * after its blanks to the line end), and changes nothing of the framing. */
TEST(h1parse_content_encoding_is_reported_not_decoded) {
    static const struct {
        const char *head, *want; /* want NULL: no such field */
    } cases[] = {
        {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\n", "gzip"},
        {"HTTP/1.1 200 OK\r\ncontent-encoding:\tbr\r\nContent-Encoding: zstd\r\n\r\n", "br"},
        {"HTTP/1.1 200 OK\nCONTENT-ENCODING: identity\nContent-Length: 0\n\n", "identity"},
        {"HTTP/1.1 200 OK\r\nContent-Encodings: gzip\r\nContent-Length: 0\r\n\r\n", NULL},
        {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        h1p_head h;
        long len = h1p_parse_head(cases[i].head, strlen(cases[i].head), 0, &h);
        CHECK_MSG(len == (long)strlen(cases[i].head), "case %zu: %ld", i, len);
        if (!cases[i].want) {
            CHECK_MSG(h.content_encoding == NULL, "case %zu", i);
            continue;
        }
        CHECK_MSG(h.content_encoding != NULL, "case %zu", i);
        CHECK_MSG(h.content_encoding_len == strlen(cases[i].want) &&
                      !memcmp(h.content_encoding, cases[i].want, h.content_encoding_len),
                  "case %zu: '%.*s'", i, (int)h.content_encoding_len, h.content_encoding);
    }
    h1p_head h;
    const char *gz = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\n";
    h1p_parse_head(gz, strlen(gz), 0, &h);
    CHECK_INT(h.framing, H1P_LENGTH);
    CHECK_INT(h.length, 3);
}

/* ---- rejected and unfinished answers ---- */

TEST(h1parse_garbage_and_truncated_answers_as_before) {
    REJECTED("SSH-2.0-OpenSSH_9.2\r\n\r\n");
    REJECTED("\n\n");
    REJECTED("HTTP/1.1 099 Low\r\n\r\n");
    REJECTED("HTTP/1.1 000 Zero\r\n\r\n");
    REJECTED("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n");
    REJECTED("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\n\r\n");
    REJECTED("HTTP/2 200\r\n\r\n");
    REJECTED("HTTP/1.x 200 OK\r\n\r\n");
    REJECTED("http/1.1 200 OK\r\n\r\n");
    REJECTED("HTTP/1.1  200 OK\r\n\r\n");
    REJECTED("HTTP/1.1 2x0 OK\r\n\r\n");
    REJECTED("HTTP/1.1 20\r\n\r\n");
    REJECTED("HTTP/1.1 2\0000 OK\r\n\r\n");
    /* bad chunk framing */
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXY0\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\r\n0\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\rX\nhello\r\n0\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    REJECTED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5x\r\nhello\r\n0\r\n\r\n");
    /* the input ends first: h1.c then reports the connection broken */
    UNFINISHED("");
    UNFINISHED("HTTP/1.1 200 OK\r\nContent-Length: 5");
    UNFINISHED("HTTP/1.1 200 OK\r\n\r");
    UNFINISHED("HTTP/1.1 100 Continue\r\n\r\n");
    UNFINISHED("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");
    UNFINISHED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    UNFINISHED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b");
    UNFINISHED("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nTrailer: x\r\n");
}

/* A head of `len` bytes, "\r\n\r\n" at its end when `ended`. */
static char *long_head(size_t len, int ended) {
    static const char start[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Big: ";
    char *h = malloc(len);
    memcpy(h, start, sizeof start - 1);
    memset(h + sizeof start - 1, 'x', len - (sizeof start - 1));
    if (ended)
        memcpy(h + len - 4, "\r\n\r\n", 4);
    return h;
}

TEST(h1parse_head_limit_as_before) {
    struct {
        size_t len;
        int ended;
        p_result want;
    } cases[] = {
        {H1P_MAX_HEAD + 1, 1, P_OK},     /* the byte past the limit may end it */
        {H1P_MAX_HEAD + 2, 1, P_BROKEN}, /* no further */
        {H1P_MAX_HEAD, 0, P_SHORT},      /* may still end */
        {H1P_MAX_HEAD + 1, 0, P_BROKEN}, /* cannot */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t len = cases[k].len;
        char *h = long_head(len, cases[k].ended);
        size_t cuts[][3] = {{1, 2, 3}, {100, 1000, len - 3}, {len - 3, len - 2, len - 1}};
        parsed *r = malloc(sizeof *r);
        parse_whole(h, len, r);
        CHECK_MSG(r->result == cases[k].want, "%zu bytes: result %d", len, r->result);
        for (int c = 0; c < 3; c++) {
            parse_cut(h, len, cuts[c], 3, r);
            CHECK_MSG(r->result == cases[k].want, "%zu bytes, cut %d: result %d", len, c,
                      r->result);
        }
        free(r);
        free(h);
    }
    /* the limit is per head: a long 1xx head, then a long final one */
    size_t each = H1P_MAX_HEAD - 100;
    char *two = malloc(2 * each), *one = long_head(each, 1);
    memcpy(two, one, each);
    memcpy(two, "HTTP/1.1 103", 12);
    memcpy(two + each, one, each);
    parsed *r = malloc(sizeof *r);
    parse_whole(two, 2 * each, r);
    CHECK_INT(r->result, P_OK);
    CHECK_INT(r->interim, 1);
    free(r);
    free(one);
    free(two);
}

TEST(h1parse_head_returns_its_length_incomplete_or_error) {
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nab";
    h1p_head h;
    CHECK_INT(h1p_parse_head(head, 10, 0, &h), H1P_INCOMPLETE);
    CHECK_INT(h1p_parse_head(head, 37, 10, &h), H1P_INCOMPLETE); /* up to the blank line's CR */
    CHECK_INT(h1p_parse_head(head, 38, 37, &h), 38);
    CHECK_INT(h1p_parse_head(head, sizeof head - 1, 0, &h), 38);
    CHECK_INT(h.status, 200);
    CHECK_INT(h.framing, H1P_LENGTH);
    CHECK_INT(h.length, 2);
    CHECK(h.content_type == NULL);
    CHECK_INT(h1p_parse_head("HTTP/1.1 099 x\n\n", 16, 0, &h), H1P_ERROR);
    CHECK_INT(h1p_parse_head("HTTP/1.1 100 x\n\nHTTP", 20, 0, &h), 16);
    CHECK_INT(h.status, 100);
}

/* ---- the llama.cpp transcripts ---- */

typedef struct parse_count {
    int parsed, chunked;
    parsed *whole, *bytes;
} parse_count;

static void parse_transcript(const transcript *t, void *arg) {
    parse_count *c = arg;
    parse_whole(t->answer, t->answer_len, c->whole);
    parse_bytewise(t->answer, t->answer_len, c->bytes);
    const parsed *whole = c->whole;
    CHECK_MSG(whole->result == P_OK && whole->used == t->answer_len, "%s: result %d, %zu of %zu",
              t->stem, whole->result, whole->used, t->answer_len);
    CHECK_MSG(whole->status == t->status, "%s: status %d, want %d", t->stem, whole->status,
              t->status);
    CHECK_INT(whole->framing, t->chunked ? H1P_CHUNKED : H1P_LENGTH);
    CHECK_MSG(whole->body_len == t->body_len && !memcmp(whole->body, t->body, t->body_len),
              "%s: body differs", t->stem);
    const char *diff = differs(whole, c->bytes);
    CHECK_MSG(!diff, "%s: byte by byte, the %s differs", t->stem, diff);
    c->parsed++;
    c->chunked += t->chunked;
}

/* Every llama.cpp exchange as the server sent it (tests/lib/transcripts.h), whole
 * and byte by byte. */
TEST(h1parse_every_llamacpp_transcript_byte_by_byte) {
    parse_count c = {0, 0, malloc(sizeof(parsed)), malloc(sizeof(parsed))};
    transcripts_each(parse_transcript, &c);
    int parsed_n = c.parsed, chunked_n = c.chunked;
    free(c.whole);
    free(c.bytes);
    printf("    %d exchanges parsed byte by byte, %d of them chunked\n", parsed_n, chunked_n);
    CHECK(parsed_n >= 40 && chunked_n >= 5);
}
