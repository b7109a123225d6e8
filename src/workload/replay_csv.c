/* replay_csv: the CSV traces into records (see replay_read.h): BurstGPT's
 * (Timestamp in seconds, Request tokens, Response tokens) and Azure's
 * (TIMESTAMP as a date-time, ContextTokens, GeneratedTokens). Read through
 * servelab's own strict reader (common/csv.h), their columns found by
 * their header names, so a file with more columns, such as BurstGPT's
 * later releases with a session column, reads the same. common/csv maps
 * the file, which needs a regular file: one from a pipe is refused, saying
 * so. Azure's date-times are read by replay_parse_datetime (declared in
 * replay_read.h), here with the one format that needs it. */
#include "workload/replay_read.h"
#include "workload/replay_read_internal.h"
#include "common/files.h"
#include "common/csv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Header field i, without a leading BOM and the spaces around it. */
static const char *header_field(const csv_row *h, int i, size_t *len) {
    const char *f = h->f[i];
    *len = h->len[i];
    if (i == 0 && *len >= 3 && !memcmp(f, BOM, 3))
        f += 3, *len -= 3;
    while (*len && isspace((unsigned char)*f))
        f++, (*len)--;
    while (*len && isspace((unsigned char)f[*len - 1]))
        (*len)--;
    return f;
}

/* The header's column named `name` (any case, spaces around it and a
 * leading BOM ignored): its index, -1 when none is, or -2 when two are
 * (their numbers from 1 in dup[0], dup[1]: which one is meant?). */
static int column(const csv_row *h, const char *name, int dup[2]) {
    int found = -1;
    for (int i = 0; i < h->n && i < CSV_MAX_FIELDS; i++) {
        size_t len;
        const char *f = header_field(h, i, &len);
        if (len != strlen(name) || strncasecmp(f, name, len))
            continue;
        if (found >= 0) {
            dup[0] = found + 1;
            dup[1] = i + 1;
            return -2;
        }
        found = i;
    }
    return found;
}

/* A CSV token count (see json_count). */
static const char *csv_count(const csv_row *row, int col, const char *name, int32_t *out, char *why,
                             size_t n) {
    double v;
    if (csv_number(row, col, &v) || isnan(v) || v < 0 || v > REPLAY_MAX_TOKENS || v != floor(v)) {
        snprintf(why, n, "%s must be a whole number of tokens from 0 to %d", name,
                 REPLAY_MAX_TOKENS);
        return why;
    }
    *out = (int32_t)(v < 1 ? 1 : v);
    return NULL;
}

/* The three columns each CSV format reads: a time, the input, the output. */
typedef struct csv_shape {
    const char *cols[3];
    const char *header; /* the source's header, for messages */
} csv_shape;

static const csv_shape burstgpt_shape = {
    {"Timestamp", "Request tokens", "Response tokens"},
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"};
static const csv_shape azure_shape = {{"TIMESTAMP", "ContextTokens", "GeneratedTokens"},
                                      "TIMESTAMP,ContextTokens,GeneratedTokens"};

static const char *csv_record(replay_trace *t, const csv_row *row, int line, const int *col,
                              const csv_shape *s, char *why, size_t n) {
    if (row->error) {
        snprintf(why, n, "%s", row->error);
        return why;
    }
    replay_record *r = replay_read_new_record(t, line);
    double sec;
    if (col[0] >= row->n || col[1] >= row->n || col[2] >= row->n) {
        snprintf(why, n, "%d fields, fewer than the header's columns", row->n);
        return why;
    }
    if (s == &azure_shape) {
        if (replay_parse_datetime(row->f[col[0]], row->len[col[0]], &r->t_us)) {
            snprintf(why, n, "TIMESTAMP '%.*s' is not a date-time (2023-11-16 18:17:03.97996)",
                     (int)(row->len[col[0]] < 40 ? row->len[col[0]] : 40), row->f[col[0]]);
            return why;
        }
    } else if (csv_number(row, col[0], &sec) || !isfinite(sec) || sec < 0 ||
               sec * 1e6 > MAX_TIME_US) {
        snprintf(why, n, "Timestamp must be a number of seconds >= 0");
        return why;
    } else {
        r->t_us = llround(sec * 1e6);
    }
    const char *bad = csv_count(row, col[1], s->cols[1], &r->input_tokens, why, n);
    return bad ? bad : csv_count(row, col[2], s->cols[2], &r->output_tokens, why, n);
}

/* The header's columns of the three that `s` reads into col: 0, or -1
 * with a message. */
static int csv_columns(const csv_row *h, const csv_shape *s, const char *path, int line, int *col,
                       char *err, int errlen) {
    for (int k = 0; k < 3; k++) {
        int dup[2];
        col[k] = column(h, s->cols[k], dup);
        if (col[k] == -1)
            snprintf(err, errlen, "%s:%d: no column '%s' (the header is %s)", path, line,
                     s->cols[k], s->header);
        else if (col[k] == -2)
            snprintf(err, errlen, "%s:%d: two columns named '%s' (columns %d and %d)", path, line,
                     s->cols[k], dup[0], dup[1]);
        if (col[k] < 0)
            return -1;
    }
    return 0;
}

static int read_csv(replay_trace *t, const char *path, const csv_shape *s, char *err, int errlen) {
    csv_file c;
    int rc = csv_open(&c, path);
    if (rc) {
        snprintf(err, errlen, "--replay %s: cannot open: %s", path,
                 rc > 0 ? "no such file" : file_why(errno));
        return -1;
    }
    csv_row row;
    int col[3], ok = csv_next(&c, &row);
    if (!ok)
        snprintf(err, errlen, "%s:1: an empty file (the header is %s)", path, s->header);
    rc = ok ? csv_columns(&row, s, path, c.line, col, err, errlen) : -1;
    char why[256];
    while (!rc && csv_next(&c, &row)) {
        if (csv_row_blank(&row))
            continue;
        const char *bad = csv_record(t, &row, c.line, col, s, why, sizeof why);
        if (bad) {
            snprintf(err, errlen, "%s:%d: %s", path, c.line, bad);
            rc = -1;
        }
    }
    csv_close(&c);
    return rc;
}

const char *replay_csv_header(replay_format f) {
    return f == REPLAY_AZURE ? azure_shape.header : burstgpt_shape.header;
}

/* A CSV trace whose first line `r` has read: mapped from its path, which
 * a regular file allows and a pipe does not; a file of CR line ends is
 * named as such (common/csv ends rows at LF). */
int replay_csv_read(replay_trace *t, replay_lines *r, int regular, char *err, int errlen) {
    const csv_shape *s = t->format == REPLAY_AZURE ? &azure_shape : &burstgpt_shape;
    if (!regular) {
        snprintf(err, errlen,
                 "--replay %s: a %s trace (CSV) is read from a regular file, not a pipe or a "
                 "FIFO: save it to a file first",
                 r->path, replay_format_name(t->format));
        return -1;
    }
    if (replay_lines_bare_cr(r, err, errlen)) {
        snprintf(err, errlen,
                 "%s:%d: the file ends its lines with CR alone (old Mac line ends): convert "
                 "them to LF (tr '\\r' '\\n')",
                 r->path, r->lineno);
        return -1;
    }
    return read_csv(t, r->path, s, err, errlen);
}

/* ---- Azure's date-times (replay_parse_datetime) ---- */

/* n digits at s[*i] into *v. */
static int digits(const char *s, size_t len, size_t *i, int n, int *v) {
    *v = 0;
    for (int k = 0; k < n; k++, (*i)++) {
        if (*i >= len || !isdigit((unsigned char)s[*i]))
            return -1;
        *v = *v * 10 + (s[*i] - '0');
    }
    return 0;
}

/* The zone after the time: none or Z (UTC), or +HH:MM / -HH:MM / +HHMM,
 * as seconds east of UTC. */
static int zone_seconds(const char *s, size_t n, size_t *i, long *east) {
    *east = 0;
    if (*i < n && (s[*i] == 'Z' || s[*i] == 'z')) {
        (*i)++;
        return 0;
    }
    if (*i >= n || (s[*i] != '+' && s[*i] != '-'))
        return 0;
    int sign = s[(*i)++] == '-' ? -1 : 1, hh, mm;
    if (digits(s, n, i, 2, &hh))
        return -1;
    if (*i < n && s[*i] == ':')
        (*i)++;
    if (digits(s, n, i, 2, &mm) || hh > 23 || mm > 59)
        return -1;
    *east = sign * (hh * 3600L + mm * 60L);
    return 0;
}

int replay_parse_datetime(const char *s, size_t n, int64_t *us) {
    size_t i = 0;
    int y, mo, d, h, mi, se;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (digits(s, n, &i, 4, &y) || i >= n || s[i++] != '-' || digits(s, n, &i, 2, &mo) || i >= n ||
        s[i++] != '-' || digits(s, n, &i, 2, &d) || i >= n || (s[i] != ' ' && s[i] != 'T') ||
        (++i, digits(s, n, &i, 2, &h)) || i >= n || s[i++] != ':' || digits(s, n, &i, 2, &mi) ||
        i >= n || s[i++] != ':' || digits(s, n, &i, 2, &se))
        return -1;
    long frac_us = 0, scale = 100000;
    if (i < n && s[i] == '.') {
        size_t start = ++i;
        for (; i < n && isdigit((unsigned char)s[i]); i++, scale /= 10)
            frac_us += scale * (s[i] - '0'); /* past the sixth digit scale is 0 */
        if (i == start)
            return -1;
    }
    long east;
    if (zone_seconds(s, n, &i, &east) || i != n)
        return -1;
    /* A leap second (23:59:60, or :60 of any minute in a zone's own time)
     * is read as the second after :59, the next minute's :00: time stays
     * in order, and the day it ends is not taken for a day too many. */
    int leap = se == 60;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = se - leap};
    time_t when = timegm(&tm);
    /* timegm moves a day past the month's end into the next: refuse it */
    if (tm.tm_mday != d || tm.tm_mon != mo - 1 || h > 23 || mi > 59 || se > 60 || when < 0)
        return -1;
    *us = ((int64_t)when + leap - east) * 1000000 + frac_us;
    return 0;
}
