/* replay_read: a trace file into records (see replay_read.h), opened once
 * and read as the format its first line says, by that format's reader:
 * replay_jsonl.c for Mooncake and plain JSONL, replay_csv.c for BurstGPT
 * and Azure, both over the bounded line reader of replay_lines.c
 * (replay_read_internal.h is what they share). Every value is checked
 * where it is read, and the first bad one ends the reading with its file
 * and line. This file holds what is not one format's: the opening, the
 * telling of the format and the records every reader appends.
 *
 * The file is opened once: the format is told from the first line the
 * reader already holds, and a JSONL trace goes on from there, so a pipe
 * or a FIFO (`--replay <(zcat trace.jsonl.gz)`) loses nothing. */
#include "workload/replay_read.h"
#include "workload/replay_read_internal.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* The records every format's reader appends (replay_read_internal.h). */

replay_record *replay_read_new_record(replay_trace *t, int line) {
    if (t->n == t->cap)
        t->rec = xrealloc(t->rec, (t->cap = t->cap ? t->cap * 2 : 256) * sizeof *t->rec);
    replay_record *r = &t->rec[t->n++];
    memset(r, 0, sizeof *r);
    r->line = (uint32_t)line;
    r->given = REPLAY_NONE;
    r->first_block = (uint32_t)t->n_keys;
    return r;
}

void replay_read_add_block(replay_trace *t, replay_record *r, uint64_t key) {
    if (t->n_keys == t->cap_keys)
        t->block_keys =
            xrealloc(t->block_keys,
                     (t->cap_keys = t->cap_keys ? t->cap_keys * 2 : 1024) * sizeof *t->block_keys);
    t->block_keys[t->n_keys++] = key;
    r->n_blocks++;
}

/* A CSV header line holding `name` as one of its fields. */
static int header_has(const char *line, const char *name) {
    size_t n = strlen(name);
    for (const char *p = line; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        while (*p == ' ' || *p == '"')
            p++;
        if (!strncasecmp(p, name, n) && strchr(",\" \r", p[n] ? p[n] : ','))
            return 1;
    }
    return 0;
}

/* The format a trace's first line that is not blank says: REPLAY_AUTO
 * when it says none. */
static replay_format detect(const char *line, size_t len) {
    const char *s = line + strspn(line, " \t");
    replay_format found = REPLAY_AUTO;
    if (*s == '{') {
        json_t *o = json_loadb(s, len - (size_t)(s - line), 0, NULL);
        found = json_object_get(o, "input_length")   ? REPLAY_MOONCAKE
                : json_object_get(o, "timestamp_ms") ? REPLAY_JSONL
                                                     : REPLAY_AUTO;
        json_decref(o);
    } else {
        found = header_has(s, "Request tokens")  ? REPLAY_BURSTGPT
                : header_has(s, "ContextTokens") ? REPLAY_AZURE
                                                 : REPLAY_AUTO;
    }
    return found;
}

int replay_read(replay_trace *t, const char *path, replay_format format, char *err, int errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--replay %s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int regular = !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
    replay_lines r = {.f = f, .path = path};
    int got = replay_lines_next(&r, err, errlen), rc = got < 0 ? -1 : 0;
    int csv = format == REPLAY_BURSTGPT || format == REPLAY_AZURE;
    if (got == 0 && csv) {
        snprintf(err, errlen, "%s:1: an empty file (the header is %s)", path,
                 replay_csv_header(format));
        rc = -1;
    } else if (got == 1 && format == REPLAY_AUTO &&
               (format = detect(r.buf, r.len)) == REPLAY_AUTO) {
        snprintf(err, errlen,
                 "%s:%d: cannot tell the trace's format from this line (a Mooncake record has "
                 "input_length, a JSONL one timestamp_ms; a BurstGPT header names Request tokens, "
                 "an Azure one ContextTokens): give --replay-format",
                 path, r.lineno);
        rc = -1;
    } else if (got == 1) {
        t->format = format;
        rc = format == REPLAY_MOONCAKE || format == REPLAY_JSONL
                 ? replay_jsonl_read(t, &r, format == REPLAY_MOONCAKE, err, errlen)
                 : replay_csv_read(t, &r, regular, err, errlen);
    }
    free(r.buf);
    free(r.io);
    fclose(f);
    return rc;
}
