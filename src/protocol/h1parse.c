/* h1parse: the HTTP/1.1 response parser (see h1parse.h for what it accepts).
 *
 * The head: its end is found with memchr() per line, from where the last
 * call stopped, so a head handed again after each read is not scanned
 * again; once it is whole, one pass over its lines finds the four fields
 * that matter. A NUL byte ends the head's text: no valid head holds one, and
 * what follows it is ignored rather than read. Names are matched in ASCII
 * case only, and a field's value runs from after the colon and its blanks
 * to the line's CR or LF.
 *
 * The chunked body: the framing bytes go through chunk_byte(), one state
 * transition each; chunk data is handed back in one run, however long. */
#include "protocol/h1parse.h"

#include <string.h>

/* A chunk size past this takes no more hex digits (2^44 at most). */
#define CHUNK_SIZE_CAP (1ULL << 40)

static int lower(int c) {
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int is_digit(int c) {
    return c >= '0' && c <= '9';
}

/* The end of the head in buf[0..len): its length once a line ends with an
 * empty one ("\n\n" or "\n\r\n"), else H1P_INCOMPLETE, or H1P_ERROR once
 * H1P_MAX_HEAD bytes went by without the end. */
static long head_end(const char *buf, size_t len, size_t from) {
    size_t limit = len < H1P_MAX_HEAD + 1 ? len : H1P_MAX_HEAD + 1;
    for (size_t j = from; j < limit; j++) {
        const char *lf = memchr(buf + j, '\n', limit - j);
        if (!lf)
            break;
        j = (size_t)(lf - buf);
        if ((j >= 1 && buf[j - 1] == '\n') || (j >= 2 && buf[j - 1] == '\r' && buf[j - 2] == '\n'))
            return (long)j + 1;
    }
    return len > H1P_MAX_HEAD ? H1P_ERROR : H1P_INCOMPLETE;
}

/* Whether the line at s (n bytes to the text's end) is field `name`. */
static int field_is(const char *s, size_t n, const char *name, size_t name_len) {
    if (n <= name_len || s[name_len] != ':')
        return 0;
    for (size_t i = 0; i < name_len; i++)
        if (lower((unsigned char)s[i]) != name[i])
            return 0;
    return 1;
}

enum {
    F_CONNECTION,
    F_TRANSFER_ENCODING,
    F_CONTENT_LENGTH,
    F_CONTENT_TYPE,
    F_CONTENT_ENCODING,
    N_FIELDS
};

static const struct {
    const char *name; /* lower case */
    size_t len;
} fields[N_FIELDS] = {{"connection", 10},
                      {"transfer-encoding", 17},
                      {"content-length", 14},
                      {"content-type", 12},
                      {"content-encoding", 16}};

/* The value of each field's first line in the head's text t[0..n) (the
 * status line skipped), or NULL where there is none. */
static void find_fields(const char *t, size_t n, const char *value[N_FIELDS]) {
    const char *end = t + n;
    for (int f = 0; f < N_FIELDS; f++)
        value[f] = NULL;
    for (const char *lf = memchr(t, '\n', n); lf;
         lf = memchr(lf + 1, '\n', (size_t)(end - lf - 1))) {
        const char *line = lf + 1;
        for (int f = 0; f < N_FIELDS; f++) {
            if (value[f] || !field_is(line, (size_t)(end - line), fields[f].name, fields[f].len))
                continue;
            const char *v = line + fields[f].len + 1;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            value[f] = v;
            break;
        }
    }
}

/* The length of the value at v: up to CR, LF or the text's end. */
static size_t value_len(const char *v, const char *end) {
    const char *p = v;
    while (p < end && *p != '\r' && *p != '\n')
        p++;
    return (size_t)(p - v);
}

/* Whether the value at v (NULL: no such field) holds `token` anywhere, in
 * any ASCII case (a token list is not split: "chunked" is found in
 * "gzip, chunked"). */
static int value_has(const char *v, const char *end, const char *token) {
    if (!v)
        return 0;
    size_t n = strlen(token), len = value_len(v, end);
    for (size_t i = 0; i + n <= len; i++) {
        size_t k = 0;
        while (k < n && lower((unsigned char)v[i + k]) == token[k])
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

/* A Content-Length value read the way strtoll(v, &e, 10) reads one:
 * leading white space (line ends too), a sign, decimal digits, whatever
 * follows them ignored. Returns 0, or H1P_ERROR when there is no digit,
 * the number is negative or does not fit a long long. */
static int parse_length(const char *v, const char *end, long long *out) {
    while (v < end && (*v == ' ' || (*v >= '\t' && *v <= '\r')))
        v++;
    int negative = v < end && *v == '-';
    if (v < end && (*v == '-' || *v == '+'))
        v++;
    if (v == end || !is_digit(*v))
        return H1P_ERROR;
    unsigned long long n = 0;
    for (; v < end && is_digit(*v); v++) {
        unsigned d = (unsigned)(*v - '0');
        if (n > (0x7fffffffffffffffULL - d) / 10)
            return H1P_ERROR;
        n = n * 10 + d;
    }
    if (negative && n)
        return H1P_ERROR;
    *out = (long long)n;
    return 0;
}

/* "HTTP/1.x NNN": returns the status, or H1P_ERROR. */
static int status_line(const char *t, size_t n) {
    if (n < 12 || memcmp(t, "HTTP/1.", 7) || !is_digit(t[7]) || t[8] != ' ' || !is_digit(t[9]) ||
        !is_digit(t[10]) || !is_digit(t[11]))
        return H1P_ERROR;
    return (t[9] - '0') * 100 + (t[10] - '0') * 10 + (t[11] - '0');
}

/* The framing and connection fields of a final head's text t[0..n). */
static int take_fields(const char *t, size_t n, h1p_head *h) {
    const char *end = t + n, *value[N_FIELDS];
    find_fields(t, n, value);
    int http10 = t[7] == '0';
    h->keep_alive = http10 ? value_has(value[F_CONNECTION], end, "keep-alive")
                           : !value_has(value[F_CONNECTION], end, "close");
    if (h->status == 204 || h->status == 304) {
        h->framing = H1P_LENGTH;
    } else if (value_has(value[F_TRANSFER_ENCODING], end, "chunked")) {
        h->framing = H1P_CHUNKED;
    } else if (value[F_CONTENT_LENGTH]) {
        if (parse_length(value[F_CONTENT_LENGTH], end, &h->length))
            return H1P_ERROR;
        h->framing = H1P_LENGTH;
    } else {
        h->framing = H1P_CLOSE;
        h->keep_alive = 0;
    }
    if (value[F_CONTENT_TYPE]) {
        h->content_type = value[F_CONTENT_TYPE];
        h->content_type_len = value_len(value[F_CONTENT_TYPE], end);
    }
    if (value[F_CONTENT_ENCODING]) {
        h->content_encoding = value[F_CONTENT_ENCODING];
        h->content_encoding_len = value_len(value[F_CONTENT_ENCODING], end);
    }
    return 0;
}

long h1p_parse_head(const char *buf, size_t len, size_t from, h1p_head *h) {
    long hl = head_end(buf, len, from);
    if (hl <= 0)
        return hl;
    memset(h, 0, sizeof *h);
    const char *nul = memchr(buf, '\0', (size_t)hl);
    size_t text = nul ? (size_t)(nul - buf) : (size_t)hl;
    h->status = status_line(buf, text);
    if (h->status < 100) /* no status line, or a code under 100: not HTTP */
        return H1P_ERROR;
    if (h->status < 200) /* interim; 101 would switch to another protocol */
        return h->status == 101 ? H1P_ERROR : hl;
    return take_fields(buf, text, h) ? H1P_ERROR : hl;
}

void h1p_body_start(h1p_body *b, const h1p_head *h) {
    b->framing = h->framing;
    b->state = H1P_CHUNK_SIZE_FIRST;
    b->left = h->framing == H1P_LENGTH ? (uint64_t)h->length : 0;
}

static int hex_digit(int c) {
    return is_digit(c)              ? c - '0'
           : (c >= 'a' && c <= 'f') ? c - 'a' + 10
           : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                    : -1;
}

/* After a size line: its data, or the trailer when the size was 0. */
static h1p_chunk_state after_size_line(const h1p_body *b) {
    return b->left ? H1P_CHUNK_DATA : H1P_CHUNK_TRAILER;
}

/* Takes one framing byte (any state but DATA and DONE): returns 0, or
 * H1P_ERROR when it cannot come there. */
static int chunk_byte(h1p_body *b, char ch) {
    int d;
    switch (b->state) {
    case H1P_CHUNK_SIZE_FIRST:
    case H1P_CHUNK_SIZE:
        if ((d = hex_digit((unsigned char)ch)) >= 0) {
            if (b->left > CHUNK_SIZE_CAP)
                return H1P_ERROR;
            b->left = b->left * 16 + (uint64_t)d;
            b->state = H1P_CHUNK_SIZE;
        } else if (b->state == H1P_CHUNK_SIZE_FIRST) {
            return H1P_ERROR;
        } else if (ch == ';' || ch == ' ' || ch == '\t') {
            b->state = H1P_CHUNK_EXT;
        } else if (ch == '\r') {
            b->state = H1P_CHUNK_SIZE_LF;
        } else if (ch == '\n') {
            b->state = after_size_line(b);
        } else {
            return H1P_ERROR;
        }
        return 0;
    case H1P_CHUNK_EXT:
        if (ch == '\n')
            b->state = after_size_line(b);
        return 0;
    case H1P_CHUNK_SIZE_LF:
        if (ch != '\n')
            return H1P_ERROR;
        b->state = after_size_line(b);
        return 0;
    case H1P_CHUNK_DATA_CR:
        if (ch != '\r' && ch != '\n')
            return H1P_ERROR;
        b->state = ch == '\r' ? H1P_CHUNK_DATA_LF : H1P_CHUNK_SIZE_FIRST;
        return 0;
    case H1P_CHUNK_DATA_LF:
        if (ch != '\n')
            return H1P_ERROR;
        b->state = H1P_CHUNK_SIZE_FIRST;
        return 0;
    case H1P_CHUNK_TRAILER:
        if (ch == '\n')
            b->state = H1P_CHUNK_DONE;
        else if (ch != '\r')
            b->state = H1P_CHUNK_TRAILER_LINE;
        return 0;
    case H1P_CHUNK_TRAILER_LINE:
        if (ch == '\n')
            b->state = H1P_CHUNK_TRAILER;
        return 0;
    case H1P_CHUNK_DATA:
    case H1P_CHUNK_DONE: break;
    }
    return H1P_ERROR;
}

static long chunked_feed(h1p_body *b, const char *p, size_t n, const char **data,
                         size_t *data_len) {
    size_t i = 0;
    while (i < n && b->state != H1P_CHUNK_DONE) {
        if (b->state == H1P_CHUNK_DATA) {
            size_t k = n - i < b->left ? n - i : (size_t)b->left;
            *data = p + i;
            *data_len = k;
            b->left -= k;
            if (!b->left)
                b->state = H1P_CHUNK_DATA_CR;
            return (long)(i + k);
        }
        if (chunk_byte(b, p[i]))
            return H1P_ERROR;
        i++;
    }
    return (long)i;
}

long h1p_body_feed(h1p_body *b, const char *p, size_t n, const char **data, size_t *data_len) {
    *data = p;
    *data_len = 0;
    switch (b->framing) {
    case H1P_CHUNKED: return chunked_feed(b, p, n, data, data_len);
    case H1P_LENGTH: {
        size_t k = n < b->left ? n : (size_t)b->left;
        *data_len = k;
        b->left -= k;
        return (long)k;
    }
    case H1P_CLOSE: break;
    }
    *data_len = n;
    return (long)n;
}

int h1p_body_done(const h1p_body *b) {
    return b->framing == H1P_CHUNKED ? b->state == H1P_CHUNK_DONE
                                     : b->framing == H1P_LENGTH && !b->left;
}

int h1p_body_until_close(const h1p_body *b) {
    return b->framing == H1P_CLOSE;
}
