/* errorlog: the per-class, per-status error counts with the first words of
 * each (see errorlog.h). Entries are found by a linear scan: there are a
 * handful, and a request looks only when it fails. */
#include "client/errorlog.h"
#include "client/rowwriter.h"
#include "common/strbuf.h"
#include "rundir/columns.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define CAPACITY ((int)(sizeof((error_log *)0)->e / sizeof((error_log *)0)->e[0]))

static error_entry *find(const error_log *log, int error, int http_status) {
    for (int i = 0; i < log->n; i++)
        if (log->e[i].error == error && log->e[i].http_status == http_status)
            return (error_entry *)&log->e[i];
    return NULL;
}

int errorlog_has(const error_log *log, int error, int http_status) {
    const error_entry *e = find(log, error, http_status);
    return e && e->body_len > 0;
}

static void keep_words(error_entry *e, uint32_t index, const char *body, size_t len) {
    e->first = index;
    e->body_len = len < ERRLOG_BODY_MAX ? len : ERRLOG_BODY_MAX;
    if (e->body_len)
        memcpy(e->body, body, e->body_len);
}

/* The entry of (error, status), made when new; past ERRLOG_ENTRIES pairs,
 * the class's overflow entry (status -1), for which room is kept. */
static error_entry *entry_for(error_log *log, int error, int http_status, int *made) {
    error_entry *e = find(log, error, http_status);
    *made = 0;
    if (e)
        return e;
    if (log->n >= ERRLOG_ENTRIES && http_status != -1)
        return entry_for(log, error, -1, made);
    if (log->n >= CAPACITY)
        return NULL; /* cannot happen: one overflow entry per class fits */
    e = &log->e[log->n++];
    e->error = error;
    e->http_status = http_status;
    e->count = 0;
    e->body_len = 0;
    *made = 1;
    return e;
}

void errorlog_note(error_log *log, int error, int http_status, uint32_t index, const char *body,
                   size_t len) {
    int made;
    error_entry *e = entry_for(log, error, http_status, &made);
    if (!e)
        return;
    e->count++;
    if (made || (!e->body_len && len))
        keep_words(e, index, body, body ? len : 0);
}

void errorlog_merge(error_log *into, const error_log *from) {
    for (int i = 0; i < from->n; i++) {
        const error_entry *s = &from->e[i];
        int made;
        error_entry *d = entry_for(into, s->error, s->http_status, &made);
        if (!d)
            continue;
        d->count += s->count;
        if (made || (s->body_len && (!d->body_len || s->first < d->first)))
            keep_words(d, s->first, s->body, s->body_len);
    }
}

static int by_class_then_status(const void *a, const void *b) {
    const error_entry *x = *(error_entry *const *)a, *y = *(error_entry *const *)b;
    if (x->error != y->error)
        return x->error - y->error;
    unsigned sx = (unsigned)x->http_status, sy = (unsigned)y->http_status; /* -1 last */
    return (sx > sy) - (sx < sy);
}

/* The entries in the order the file and the summary show them. */
static int sorted(const error_log *log, const error_entry **out) {
    for (int i = 0; i < log->n; i++)
        out[i] = &log->e[i];
    qsort(out, (size_t)log->n, sizeof *out, by_class_then_status);
    return log->n;
}

/* One CSV field as RFC 4180 has it; a NUL byte (no text holds one) is
 * written as a space so that a reader of lines is not cut short. */
static void csv_field(strbuf *b, const char *s, size_t n) {
    int quote = 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (quote)
        sb_putn(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            sb_putn(b, "\"\"", 2);
        else
            sb_putn(b, s[i] ? &s[i] : " ", 1);
    }
    if (quote)
        sb_putn(b, "\"", 1);
}

static void status_text(char *buf, size_t n, int http_status) {
    if (http_status > 0)
        snprintf(buf, n, "%d", http_status);
    else
        snprintf(buf, n, "%s", http_status < 0 ? "other" : "");
}

int errorlog_write(const char *dir, const error_log *log) {
    const error_entry *e[CAPACITY];
    int n = sorted(log, e);
    strbuf b = {0};
    char header[128];
    rundir_header(&rundir_errors, header, sizeof header); /* rundir/columns.h's */
    sb_puts(&b, header);
    for (int i = 0; i < n; i++) {
        char status[16], id[32];
        status_text(status, sizeof status, e[i]->http_status);
        request_id_format(id, sizeof id, e[i]->first);
        sb_printf(&b, "%s,%s,%zu,%s,", err_class_name(e[i]->error), status, e[i]->count, id);
        csv_field(&b, e[i]->body, e[i]->body_len);
        sb_puts(&b, "\n");
    }
    char tmp[4200], path[4200];
    snprintf(path, sizeof path, "%s/errors.csv", dir);
    snprintf(tmp, sizeof tmp, "%s/.errors.csv.tmp", dir);
    FILE *f = fopen(tmp, "w");
    int rc = -1;
    if (f) {
        size_t wrote = fwrite(b.s, 1, b.n, f);
        int closed = fclose(f);
        if (wrote == b.n && closed == 0)
            rc = rename(tmp, path);
        else if (!errno)
            errno = EIO;
        if (rc)
            remove(tmp);
    }
    sb_free(&b);
    return rc;
}

/* What a body says, for one screen line: a JSON error's message when it
 * has one (OpenAI's error.message, others' message or detail), else the
 * body's first line; control bytes become spaces. */
static void message_of(const error_entry *e, char *out, size_t cap) {
    json_t *j = json_loadb(e->body, e->body_len, 0, NULL);
    json_t *err = json_object_get(j, "error");
    const char *keys[] = {"message", "detail", "error"};
    const char *m = json_string_value(json_object_get(err, "message"));
    for (int k = 0; k < 3 && !m; k++)
        m = json_string_value(json_object_get(j, keys[k]));
    size_t n = m ? strlen(m) : e->body_len;
    const char *s = m ? m : e->body;
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        if (!m && (s[i] == '\n' || s[i] == '\r') && k > 0)
            break;
        out[k++] = (unsigned char)s[i] < ' ' ? ' ' : s[i];
    }
    out[k] = 0;
    json_decref(j);
}

void errorlog_print(FILE *f, const error_log *log) {
    const error_entry *e[CAPACITY];
    int n = sorted(log, e);
    for (int i = 0; i < n; i++) {
        char status[16], id[32], msg[96];
        status_text(status, sizeof status, e[i]->http_status);
        request_id_format(id, sizeof id, e[i]->first);
        message_of(e[i], msg, sizeof msg);
        fprintf(f, "error           %s%s%s: %zu, first %s%s%s\n", err_class_name(e[i]->error),
                *status ? " " : "", status, e[i]->count, id, *msg ? ": " : "", msg);
    }
}
