/* csv: the mapped reader and the field quoting of the writers. A row is
 * split in place, at commas up to its LF, as long as no field starts with a
 * quote; the first field that does hands the rest of the row to the quoted
 * reader, which finds the row's end itself (a quoted field may hold LF) and
 * unquotes into blocks that do not move while the row is read (the next
 * row reuses them, so they hold one row, never the file). Numbers have a
 * fast path for the fixed decimals servelab writes (most fields of a row
 * file), read straight from the mapping; only other forms are copied out,
 * NUL-terminated, for strtod. */
#include "common/csv.h"
#include "common/files.h"
#include "common/mapfile.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Memory for unquoted fields: blocks of at least BLOCK_BYTES, chained. */
#define BLOCK_BYTES (64 * 1024)

struct csv_block {
    csv_block *next;
    size_t used, cap;
    char data[];
};

/* n bytes that stay put until the next row is read. */
static char *block_take(csv_file *c, size_t n) {
    csv_block *b = c->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
        b = xmalloc(sizeof *b + cap);
        b->next = c->blocks;
        b->used = 0;
        b->cap = cap;
        c->blocks = b;
    }
    char *p = b->data + b->used;
    b->used += n;
    return p;
}

int csv_open(csv_file *c, const char *path) {
    memset(c, 0, sizeof *c);
    c->next_line = 1;
    struct stat st;
    c->fd = open_regular(path, &st);
    if (c->fd < 0)
        return errno == ENOENT ? 1 : -1;
    c->size = (size_t)st.st_size;
    c->map = "";
    if (c->size > 0) {
        void *p = mmap(NULL, c->size, PROT_READ, MAP_PRIVATE, c->fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(c->fd);
            errno = e;
            return -1;
        }
        madvise(p, c->size, MADV_SEQUENTIAL);
        c->map = p;
        mapfile_note(p, c->size, path);
    }
    c->p = c->map;
    c->end = c->map + c->size;
    bytescan_init(&c->scan, c->end, c->end, 1);
    return 0;
}

size_t csv_offset(const csv_file *c) {
    return (size_t)(c->p - c->map);
}

void csv_view(csv_file *c, const char *p, size_t n) {
    csv_block *keep = c->blocks;
    memset(c, 0, sizeof *c);
    c->blocks = keep;
    c->fd = -1;
    c->next_line = 1;
    c->map = c->p = p;
    c->end = p + n; /* size stays 0: nothing to unmap or release */
    bytescan_init(&c->scan, c->end, c->end, 1);
}

void csv_close(csv_file *c) {
    if (c->size) {
        mapfile_forget(c->map);
        munmap((void *)c->map, c->size);
    }
    if (c->fd >= 0)
        close(c->fd);
    while (c->blocks) {
        csv_block *next = c->blocks->next;
        free(c->blocks);
        c->blocks = next;
    }
}

static void keep_field(csv_row *row, int n, const char *f, size_t len) {
    if (n < CSV_MAX_FIELDS) {
        row->f[n] = f;
        row->len[n] = len;
    }
}

static int count_lf(const char *s, const char *e) {
    int k = 0;
    while (s < e && (s = memchr(s, '\n', (size_t)(e - s)))) {
        k++;
        s++;
    }
    return k;
}

/* The quoted field at p (field n of the row): kept unquoted, and the
 * position after its closing quote returned; NULL when it is never closed. */
static const char *quoted_field(csv_file *c, csv_row *row, int n, const char *p, int *lines) {
    const char *q = p + 1, *close = NULL;
    while (!close) {
        const char *x = memchr(q, '"', (size_t)(c->end - q));
        if (!x)
            break;
        if (x + 1 < c->end && x[1] == '"')
            q = x + 2;
        else
            close = x;
    }
    *lines += count_lf(p, close ? close : c->end);
    if (!close)
        return NULL;
    if (n < CSV_MAX_FIELDS) {
        char *d = block_take(c, (size_t)(close - p)); /* the text, at most, and a NUL */
        size_t m = 0;
        for (const char *r = p + 1; r < close; r++) {
            d[m++] = *r;
            r += *r == '"'; /* a doubled quote is one */
        }
        d[m] = 0;
        keep_field(row, n, d, m);
    }
    return close + 1;
}

/* The rest of a row from field n at p, which starts with a quote, to the
 * row's end, whatever line that is on. Returns where the next row starts. */
static const char *quoted_row(csv_file *c, csv_row *row, int n, const char *p, int *lines) {
    const char *e = c->end;
    for (;; n++) {
        if (p < e && *p == '"') {
            const char *after = quoted_field(c, row, n, p, lines);
            if (!after) {
                keep_field(row, n, p, (size_t)(e - p)); /* as it is: every field is set */
                row->error = "a quoted field is not closed";
                row->n = n + 1;
                return e;
            }
            p = after;
            if (p < e && *p == ',') {
                p++;
                continue;
            }
            row->n = n + 1;
            if (p == e)
                return e;
            if (*p == '\n' || (*p == '\r' && p + 1 < e && p[1] == '\n'))
                return p + (*p == '\r' ? 2 : 1);
            row->error = "text after a closing quote";
            const char *nl = memchr(p, '\n', (size_t)(e - p));
            return nl ? nl + 1 : e;
        }
        const char *x = p;
        while (x < e && *x != ',' && *x != '\n')
            x++;
        const char *fe = x < e && *x == '\n' && x > p && x[-1] == '\r' ? x - 1 : x;
        keep_field(row, n, p, (size_t)(fe - p));
        if (x < e && *x == ',') {
            p = x + 1;
            continue;
        }
        row->n = n + 1;
        return x < e ? x + 1 : e;
    }
}

/* The last row's unquoted fields are done with: keep one block for the
 * next, so that the memory held is that of the largest row, not the file. */
static void blocks_reset(csv_file *c) {
    csv_block *b = c->blocks;
    if (!b)
        return;
    while (b->next) {
        csv_block *rest = b->next->next;
        free(b->next);
        b->next = rest;
    }
    b->used = 0;
}

/* The pages wholly before the reading position handed back, in steps of
 * RELEASE_STEP (common/mapfile.h): a later touch (a field of an early row
 * kept by the caller) reads them back, so this changes no content, only
 * what is resident. */
#define RELEASE_STEP (32u << 20)
static void release_read(csv_file *c) {
    mapfile_release(c->map, &c->released, (size_t)(c->p - c->map), RELEASE_STEP);
}

/* A row read in one pass over its bytes (bytescan finds each comma or
 * LF); a field that starts with a quote hands the rest of the row to
 * quoted_row. A quote inside a field, or a CR not before the LF, is part
 * of the field. */
int csv_next(csv_file *c, csv_row *row) {
    blocks_reset(c);
    if (c->p >= c->end)
        return 0;
    if (c->size)
        release_read(c);
    c->line = c->next_line;
    row->error = NULL;
    row->known = 0;
    const char *e = c->end, *start = c->p;
    int n = 0;
    if (*start != '"')
        for (const char *x = start;;) {
            x = x < e ? bytescan_next(&c->scan, x) : e;
            if (x < e && (*x == '"' || *x == '\r')) {
                x++;
                continue;
            }
            if (x < e && *x == ',') {
                keep_field(row, n++, start, (size_t)(x - start));
                x = start = x + 1;
                if (start < e && *start == '"')
                    break;
                continue;
            }
            const char *fe = x > start && x[-1] == '\r' ? x - 1 : x; /* CRLF reads as LF */
            keep_field(row, n++, start, (size_t)(fe - start));
            row->n = n;
            c->p = x < e ? x + 1 : e;
            c->next_line++;
            return 1;
        }
    row->n = n; /* the fields before the quoted one */
    int lines = 0;
    c->p = quoted_row(c, row, n, start, &lines);
    c->next_line += 1 + lines; /* the LFs inside quotes, and the row's own */
    return 1;
}

int csv_row_blank(const csv_row *row) {
    return row->n == 1 && row->len[0] == 0;
}

int csv_column(const csv_row *header, const char *name) {
    for (int i = 0; i < header->n && i < CSV_MAX_FIELDS; i++)
        if (header->len[i] == strlen(name) && !memcmp(header->f[i], name, header->len[i]))
            return i;
    return -1;
}

/* Plain decimal "123", "123.456", "-1.5"; NAN when empty; -1 status when
 * not a number. Falls back to strtod for exponents. */
static int number(const char *s, size_t n, double *out) {
    if (n == 0) {
        *out = NAN;
        return 0;
    }
    const char *p = s, *e = s + n;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    /* The whole part in integers while it has at most 15 digits: each step
     * of v * 10 + d is then exact in a double too, so this is the double
     * the loop below makes, without its chain of float operations. */
    uint64_t whole = 0;
    int digits = 0;
    while (p < e && digits < 15 && *p >= '0' && *p <= '9') {
        whole = whole * 10 + (uint64_t)(*p++ - '0');
        digits++;
    }
    double v = (double)whole;
    while (p < e && *p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (p < e && *p == '.') {
        p++;
        double scale = 0.1;
        while (p < e && *p >= '0' && *p <= '9') {
            v += (*p++ - '0') * scale;
            scale *= 0.1;
            digits++;
        }
    }
    if (p != e) {
        char buf[64];
        if (n >= sizeof buf)
            return -1;
        memcpy(buf, s, n);
        buf[n] = 0;
        char *end;
        v = strtod(buf, &end);
        if (*end || end == buf)
            return -1;
        *out = v;
        return 0;
    }
    if (!digits)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

int csv_number(const csv_row *row, int i, double *out) {
    if (i < 0 || i >= row->n || i >= CSV_MAX_FIELDS)
        return -1;
    if (row->known >> i & 1) {
        *out = row->value[i];
        return 0;
    }
    return number(row->f[i], row->len[i], out);
}

/* number()'s steps for "W.FFF", taken on the digits themselves: the whole
 * part exact (it has at most 12 digits here), then each thousandth's digit
 * added at number()'s scale, then the sign. The two must change together
 * (tests/common/t1030-csv-reader.c checks them against each other). */
double csv_thousandths(long long thousandths) {
    int neg = thousandths < 0;
    unsigned long long u =
        neg ? 0ULL - (unsigned long long)thousandths : (unsigned long long)thousandths;
    unsigned f = (unsigned)(u % 1000);
    double v = (double)(u / 1000), scale = 0.1;
    v += (int)(f / 100) * scale;
    scale *= 0.1;
    v += (int)(f / 10 % 10) * scale;
    scale *= 0.1;
    v += (int)(f % 10) * scale;
    return neg ? -v : v;
}

int csv_needs_quotes(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
            return 1;
    return 0;
}

size_t csv_field_bytes(const char *s, size_t n) {
    if (!csv_needs_quotes(s, n))
        return n;
    size_t k = n + 2;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '"';
    return k;
}

char *csv_put_field(char *dst, const char *s, size_t n) {
    if (!csv_needs_quotes(s, n)) {
        if (n)
            memcpy(dst, s, n);
        return dst + n;
    }
    *dst++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            *dst++ = '"';
        *dst++ = s[i];
    }
    *dst++ = '"';
    return dst;
}
