/* load: mapped CSV parsing of a run directory. */
#include "report/load.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct mapped {
    const char *p;
    size_t n;
    int fd;
} mapped;

/* 0 ok, 1 missing, -1 error */
static int map_file(const char *path, mapped *m) {
    memset(m, 0, sizeof *m);
    m->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (m->fd < 0)
        return errno == ENOENT ? 1 : -1;
    struct stat st;
    fstat(m->fd, &st);
    m->n = (size_t)st.st_size;
    if (m->n == 0) {
        m->p = "";
        return 0;
    }
    void *p = mmap(NULL, m->n, PROT_READ, MAP_PRIVATE, m->fd, 0);
    if (p == MAP_FAILED) {
        close(m->fd);
        return -1;
    }
    madvise(p, m->n, MADV_SEQUENTIAL);
    m->p = p;
    return 0;
}

static void unmap_file(mapped *m) {
    if (m->n)
        munmap((void *)m->p, m->n);
    if (m->fd >= 0)
        close(m->fd);
}

#define MAX_FIELDS 64

/* Split one line [s, e) into fields; returns the count. */
static int split(const char *s, const char *e, const char **f, size_t *len) {
    int n = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (p == e || *p == ',') {
            if (n < MAX_FIELDS) {
                f[n] = start;
                len[n] = (size_t)(p - start);
            }
            n++;
            if (p == e)
                break;
            start = p + 1;
        }
    }
    return n;
}

/* The next line at *p (a CR before its LF dropped) split into fields;
 * *p moves past it. Returns the field count. */
static int next_row(const char **p, const char *end, const char **f, size_t *len) {
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    const char *le = nl ? nl : end;
    if (le > *p && le[-1] == '\r')
        le--;
    int n = split(*p, le, f, len);
    *p = nl ? nl + 1 : end;
    return n;
}

/* Plain decimal "123", "123.456", "-1.5"; NAN when empty; -1 status when
 * not a number. Falls back to strtod for exponents. */
static int num(const char *s, size_t n, double *out) {
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

/* A token count as servelab writes it: empty (NAN) or a whole number that
 * fits the record's int32_t. */
static int count_ok(double v) {
    return isnan(v) || (v >= 0 && v <= INT32_MAX);
}

static int class_id(run_rows *rows, const char *s, size_t n) {
    for (int i = 0; i < rows->n_classes; i++)
        if (strlen(rows->classes[i]) == n && !memcmp(rows->classes[i], s, n))
            return i;
    if (rows->n_classes == 32)
        return 31;
    char *c = xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    rows->classes[rows->n_classes] = c;
    return rows->n_classes++;
}

static int col_of(const char **f, const size_t *len, int n, const char *name) {
    for (int i = 0; i < n && i < MAX_FIELDS; i++)
        if (len[i] == strlen(name) && !memcmp(f[i], name, len[i]))
            return i;
    return -1;
}

static const char *requests_cols[] = {
    "request_id", "class",         "scheduled_ms",  "sent_ms", "first_token_ms", "last_token_ms",
    "end_ms",     "prompt_tokens", "output_tokens", "error",   "lag_ms"};
enum { C_ID, C_CLASS, C_SCHED, C_SENT, C_FIRST, C_LAST, C_END, C_PTOK, C_OTOK, C_ERR, C_LAG, C_N };

static int load_requests(const char *path, int part, run_rows *rows, double *last_sched, char *err,
                         int errlen) {
    mapped m;
    int rc = map_file(path, &m);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, rc > 0 ? "missing" : strerror(errno));
        return -1;
    }
    const char *p = m.p, *end = m.p + m.n;
    const char *f[MAX_FIELDS];
    size_t len[MAX_FIELDS];
    int line = 0, ncols = 0, col[C_N];
    *last_sched = 0;
    rc = 0;
    while (p < end) {
        int n = next_row(&p, end, f, len);
        line++;
        if (line == 1) {
            ncols = n;
            for (int k = 0; k < C_N; k++) {
                col[k] = col_of(f, len, n, requests_cols[k]);
                if (col[k] < 0 && k != C_LAG) {
                    snprintf(err, errlen, "%s:1: missing column %s", path, requests_cols[k]);
                    rc = -1;
                    break;
                }
            }
            if (rc)
                break;
            continue;
        }
        if (n == 1 && len[0] == 0)
            continue; /* blank line */
        if (n != ncols) {
            snprintf(err, errlen, "%s:%d: %d fields, the header has %d", path, line, n, ncols);
            rc = -1;
            break;
        }
        req_rec r;
        double ptok, otok;
        const char *bad = NULL;
        if (num(f[col[C_SCHED]], len[col[C_SCHED]], &r.scheduled_ms) || isnan(r.scheduled_ms))
            bad = "scheduled_ms";
        else if (num(f[col[C_SENT]], len[col[C_SENT]], &r.sent_ms))
            bad = "sent_ms";
        else if (num(f[col[C_FIRST]], len[col[C_FIRST]], &r.first_ms))
            bad = "first_token_ms";
        else if (num(f[col[C_LAST]], len[col[C_LAST]], &r.last_ms))
            bad = "last_token_ms";
        else if (num(f[col[C_END]], len[col[C_END]], &r.end_ms))
            bad = "end_ms";
        else if (num(f[col[C_PTOK]], len[col[C_PTOK]], &ptok) || !count_ok(ptok))
            bad = "prompt_tokens";
        else if (num(f[col[C_OTOK]], len[col[C_OTOK]], &otok) || !count_ok(otok))
            bad = "output_tokens";
        r.lag_ms = NAN;
        if (!bad && col[C_LAG] >= 0 && num(f[col[C_LAG]], len[col[C_LAG]], &r.lag_ms))
            bad = "lag_ms";
        char ebuf[32];
        size_t el = len[col[C_ERR]] < sizeof ebuf - 1 ? len[col[C_ERR]] : sizeof ebuf - 1;
        memcpy(ebuf, f[col[C_ERR]], el);
        ebuf[el] = 0;
        int e = err_class_parse(ebuf);
        if (!bad && e < 0)
            bad = "error";
        if (bad) {
            snprintf(err, errlen, "%s:%d: bad value in column %s", path, line, bad);
            rc = -1;
            break;
        }
        r.prompt_tokens = isnan(ptok) ? -1 : (int32_t)ptok;
        r.output_tokens = isnan(otok) ? -1 : (int32_t)otok;
        r.error = (uint8_t)e;
        r.part = (uint16_t)part;
        r.cls = (int16_t)class_id(rows, f[col[C_CLASS]], len[col[C_CLASS]]);
        if (r.scheduled_ms > *last_sched)
            *last_sched = r.scheduled_ms;
        rows_add(rows, &r);
    }
    if (!rc && line == 0) {
        snprintf(err, errlen, "%s:1: empty file (no header)", path);
        rc = -1;
    }
    unmap_file(&m);
    return rc;
}

/* A chunk's token count: not negative and at most a million (no server
 * streams more in one event), because each token becomes one inter-token gap
 * in memory. */
static int chunk_tokens_ok(double v) {
    return v >= 0 && v <= 1e6;
}

/* A double as a float without the undefined behaviour of an out-of-range
 * conversion: too large becomes infinite. */
static float to_float(double v) {
    if (v > FLT_MAX)
        return INFINITY;
    if (v < -FLT_MAX)
        return -INFINITY;
    return (float)v;
}

/* chunks.csv: per-token inter-chunk gaps and tokens inside the window.
 * Rows of one request are contiguous (servelab writes them together). */
static int load_chunks(const char *path, run_rows *rows, double last_sched, int *present, char *err,
                       int errlen) {
    mapped m;
    int rc = map_file(path, &m);
    *present = rc == 0;
    if (rc > 0)
        return 0;
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    const char *p = m.p, *end = m.p + m.n;
    const char *f[MAX_FIELDS];
    size_t len[MAX_FIELDS];
    const char *prev_id = NULL;
    size_t prev_len = 0;
    double prev_t = 0;
    int line = 0;
    rc = 0;
    while (p < end) {
        int n = next_row(&p, end, f, len);
        line++;
        if (line == 1)
            continue;
        if (n == 1 && len[0] == 0)
            continue;
        double t, tok;
        if (n != 4 || num(f[2], len[2], &t) || !isfinite(t) || num(f[3], len[3], &tok) ||
            !chunk_tokens_ok(tok)) {
            snprintf(err, errlen, "%s:%d: expected request_id,index,t_ms,tokens", path, line);
            rc = -1;
            break;
        }
        if (t <= last_sched)
            rows->window_output_tokens += tok;
        int same = prev_id && prev_len == len[0] && !memcmp(prev_id, f[0], len[0]);
        if (same && tok >= 1) {
            float gap = to_float((t - prev_t) / tok);
            for (int k = 0; k < (int)tok; k++)
                rows_add_itl(rows, gap);
        }
        prev_id = f[0];
        prev_len = len[0];
        prev_t = t;
    }
    unmap_file(&m);
    return rc;
}

/* server_metrics.csv: t_ms,name,labels,value. Only the gauges and counters
 * the report draws are kept (labels ignored: one model per server). */
static void load_metrics(const char *path, run_files *rf) {
    mapped m;
    if (map_file(path, &m))
        return;
    const char *p = m.p, *end = m.p + m.n;
    const char *f[MAX_FIELDS];
    size_t len[MAX_FIELDS];
    int line = 0;
    while (p < end) {
        int n = next_row(&p, end, f, len);
        /* The value is the last field (the labels may hold commas); a line
         * with more fields than split() keeps has no last field to read. */
        if (line++ == 0 || n < 4 || n > MAX_FIELDS)
            continue;
        double t, v;
        if (num(f[0], len[0], &t) || num(f[n - 1], len[n - 1], &v) || isnan(t))
            continue;
        char name[64];
        if (len[1] >= sizeof name)
            continue;
        memcpy(name, f[1], len[1]);
        name[len[1]] = 0;
        if (server_metric_wanted(name))
            series_add(&rf->metrics, name, t, v);
    }
    unmap_file(&m);
}

/* gpu.csv: t_ms,gpu,util_pct,mem_used_mib,power_w,sm_clock_mhz,temp_c */
static void load_gpu(const char *path, run_files *rf) {
    mapped m;
    if (map_file(path, &m))
        return;
    const char *p = m.p, *end = m.p + m.n;
    const char *f[MAX_FIELDS];
    size_t len[MAX_FIELDS];
    int line = 0;
    while (p < end) {
        int n = next_row(&p, end, f, len);
        if (line++ == 0 || n < 5)
            continue;
        double t, util, power;
        if (num(f[0], len[0], &t) || num(f[2], len[2], &util) || num(f[4], len[4], &power))
            continue;
        char name[48];
        snprintf(name, sizeof name, "gpu%.*s util_pct", (int)len[1], f[1]);
        series_add(&rf->gpu, name, t, util);
        snprintf(name, sizeof name, "gpu%.*s power_w", (int)len[1], f[1]);
        series_add(&rf->gpu, name, t, power);
    }
    unmap_file(&m);
}

int load_run(const char *dir, int part, run_rows *rows, run_files *files, char *err, int errlen) {
    char path[4096];
    memset(files, 0, sizeof *files);
    snprintf(path, sizeof path, "%s/meta.json", dir);
    files->meta = json_load_file(path, 0, NULL);
    double last_sched;
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    if (load_requests(path, part, rows, &last_sched, err, errlen))
        return -1;
    snprintf(path, sizeof path, "%s/chunks.csv", dir);
    if (load_chunks(path, rows, last_sched, &files->has_chunks, err, errlen))
        return -1;
    snprintf(path, sizeof path, "%s/server_metrics.csv", dir);
    load_metrics(path, files);
    snprintf(path, sizeof path, "%s/gpu.csv", dir);
    load_gpu(path, files);
    server_stats_compute(&files->metrics, &files->gpu, &files->server);
    return 0;
}

void run_files_free(run_files *f) {
    json_decref(f->meta);
    series_set_free(&f->metrics);
    series_set_free(&f->gpu);
    memset(f, 0, sizeof *f);
}
