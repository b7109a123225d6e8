/* errorlog: how a run's failed requests failed, in the server's own words.
 * For each error class and HTTP status the run counts its requests and
 * keeps the first one's words (at most ERRLOG_BODY_MAX bytes): the start
 * of an error body ("The model `gpt-4` does not exist."), the data of an
 * error event, or of an event that could not be read; where the server
 * said nothing but the system did (connection refused, reset, too many
 * open files), the system's message. The run writes it as errors.csv and
 * prints a line per entry under its summary.
 *
 * Fixed size, no allocation: a log is a plain value inside the client's
 * result, copied and merged freely. Past ERRLOG_ENTRIES distinct pairs,
 * further pairs are counted in one entry per class with http_status -1
 * ("other" in the file), so the counts still add up to the rows'. */
#ifndef SERVELAB_ERRORLOG_H
#define SERVELAB_ERRORLOG_H

#include "model/record.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ERRLOG_BODY_MAX 4096
#define ERRLOG_ENTRIES 32

typedef struct error_entry {
    int error;       /* ERR_* */
    int http_status; /* 0: no response; -1: the overflow entry of its class */
    size_t count;    /* requests that ended so */
    uint32_t first;  /* the request index whose words are kept */
    size_t body_len; /* bytes of body */
    char body[ERRLOG_BODY_MAX];
} error_entry;

typedef struct error_log {
    error_entry e[ERRLOG_ENTRIES + ERR_COUNT]; /* the last ERR_COUNT: overflow, one per class */
    int n;
} error_log;

/* Whether (error, status) already has its words: a request need not keep
 * its own then. */
int errorlog_has(const error_log *log, int error, int http_status);
/* Request `index` ended in (error, status) with these words (may be NULL). */
void errorlog_note(error_log *log, int error, int http_status, uint32_t index, const char *body,
                   size_t len);
/* Adds `from` to `into` (client threads): counts add up; for each pair the
 * words of the lower request index are kept. */
void errorlog_merge(error_log *into, const error_log *from);
/* DIR/errors.csv, through a temporary name: "error,http_status,count,
 * first_request_id,body", one row per pair in class then status order,
 * the body quoted as RFC 4180 says (a field holding a comma, quote, CR or
 * LF in quotes, its quotes doubled). 0, or -1 with errno. */
int errorlog_write(const char *dir, const error_log *log);
/* A line per pair for the run's summary: its class, status, count, first
 * request and the message (a JSON body's error.message, message or
 * detail, else its first line), cut to one screen line. */
void errorlog_print(FILE *f, const error_log *log);

#endif
