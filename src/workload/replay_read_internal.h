/* replay_read_internal: what the trace readers share; nothing outside
 * them includes it (replay_read.h is their interface). replay_read.c opens
 * the file, tells its format and appends the records; replay_lines.c reads
 * its lines with a bound; replay_jsonl.c reads Mooncake and plain JSONL,
 * replay_csv.c BurstGPT and Azure. */
#ifndef SERVELAB_REPLAY_READ_INTERNAL_H
#define SERVELAB_REPLAY_READ_INTERNAL_H

#include "workload/replay.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The latest timestamp a trace may hold, in microseconds (about 317
 * years): far past any trace, and far from int64_t's end when scaled. */
#define MAX_TIME_US 1e16
/* A UTF-8 byte order mark, which a file's first line may begin with. */
#define BOM "\xEF\xBB\xBF"

/* replay_read.c */

/* A new record of line `line` appended to t, its blocks to follow. */
replay_record *replay_read_new_record(replay_trace *t, int line);
/* A shared block of key `key` appended to r (t's last record). */
void replay_read_add_block(replay_trace *t, replay_record *r, uint64_t key);

/* replay_lines.c */

/* A trace's lines, read from one open stream (see replay_lines.c),
 * a block at a time: each line's end found with memchr, as getline does. */
typedef struct replay_lines {
    FILE *f;
    const char *path;
    char *buf; /* the line last read, NUL-terminated, without its end */
    size_t len, cap;
    char *io; /* read ahead: io[at, n) is still to be looked at */
    size_t at, n;
    int lineno;   /* the line last read, from 1 */
    int after_cr; /* that line ended at a CR: an LF first now ends it too */
    int bare_cr;  /* a line so far ended at a CR alone */
} replay_lines;

/* The next line that is not blank, without a leading BOM on line 1, into
 * r->buf: 1, 0 at the end of the file, or -1 with a message. */
int replay_lines_next(replay_lines *r, char *err, int errlen);
/* Whether the line last read ended at a CR with no LF after it. */
int replay_lines_bare_cr(replay_lines *r, char *err, int errlen);

/* replay_jsonl.c */

/* Every record of a JSONL trace (Mooncake's when `mooncake`, else plain
 * JSONL), from the line `r` holds on: 0, or -1 with "path:line: ...". */
int replay_jsonl_read(replay_trace *t, replay_lines *r, int mooncake, char *err, int errlen);

/* replay_csv.c */

/* The header of format f's source (BurstGPT's or Azure's), for messages. */
const char *replay_csv_header(replay_format f);
/* A CSV trace whose first line `r` has read (t->format says which): 0, or
 * -1 with a message; `regular`: the file is a regular file. */
int replay_csv_read(replay_trace *t, replay_lines *r, int regular, char *err, int errlen);

#endif
