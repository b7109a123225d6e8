/* replay_read: the trace formats of replay.h read into a replay_trace,
 * each record checked as it is read, so that a bad file is one line
 * naming the file, the line and what is wrong there, found before any
 * request is sent. JSONL is read a line at a time with jansson; the CSVs
 * through servelab's own strict reader (common/csv.h), their columns found
 * by their header names (so a file with more columns, such as BurstGPT's
 * later releases with a session column, reads the same). */
#ifndef SERVELAB_REPLAY_READ_H
#define SERVELAB_REPLAY_READ_H

#include "workload/replay.h"

#include <stddef.h>
#include <stdint.h>

/* Appends every record of `path` to t, in the file's order, reading the
 * file once (a pipe or a FIFO loses nothing): as `format`, or, for AUTO,
 * as its first line that is not blank says (a JSON object with
 * input_length is Mooncake, one with timestamp_ms plain JSONL; a CSV
 * header naming Request tokens BurstGPT, one naming ContextTokens
 * Azure); t->format says which. 0 (an empty JSONL file: no records), or
 * -1 with "path:line: ..." in err: a bad record, a line longer than 64
 * MiB, a read error, or a CSV that is not a regular file. */
int replay_read(replay_trace *t, const char *path, replay_format format, char *err, int errlen);
/* "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (a 'T' may stand for
 * the space; no zone is UTC) as microseconds since 1970 (UTC): 0, or -1
 * when s[0, n) is not one. A leap second (:60) is the next minute's :00. */
int replay_parse_datetime(const char *s, size_t n, int64_t *us);

#endif
