/* csv: the mapped reader. Numbers have a fast path for the fixed decimals
 * servelab writes (most fields of a row file), read straight from the
 * mapping; only other forms are copied out, NUL-terminated, for strtod. */
#include "common/csv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int csv_open(csv_file *c, const char *path) {
    memset(c, 0, sizeof *c);
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0)
        return errno == ENOENT ? 1 : -1;
    struct stat st;
    fstat(c->fd, &st);
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
    }
    c->p = c->map;
    c->end = c->map + c->size;
    return 0;
}

void csv_close(csv_file *c) {
    if (c->size)
        munmap((void *)c->map, c->size);
    if (c->fd >= 0)
        close(c->fd);
}

/* Split one line [s, e) into fields; returns the count. */
static int split(const char *s, const char *e, csv_row *row) {
    int n = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (p == e || *p == ',') {
            if (n < CSV_MAX_FIELDS) {
                row->f[n] = start;
                row->len[n] = (size_t)(p - start);
            }
            n++;
            if (p == e)
                break;
            start = p + 1;
        }
    }
    return n;
}

int csv_next(csv_file *c, csv_row *row) {
    if (c->p >= c->end)
        return 0;
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    const char *le = nl ? nl : c->end;
    if (le > c->p && le[-1] == '\r')
        le--;
    row->n = split(c->p, le, row);
    c->p = nl ? nl + 1 : c->end;
    c->line++;
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
    double v = 0;
    int digits = 0;
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
    return number(row->f[i], row->len[i], out);
}
