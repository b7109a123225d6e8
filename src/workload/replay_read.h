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

/* The format of `path` told from its first line that is not blank:
 * REPLAY_AUTO with a message in err when it matches none. */
replay_format replay_read_detect(const char *path, char *err, int errlen);
/* Appends every record of `path`, read as `format` (not AUTO), to t, in
 * the file's order: 0, or -1 with "path:line: ..." in err. */
int replay_read(replay_trace *t, const char *path, replay_format format, char *err, int errlen);
/* "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (a 'T' may stand for
 * the space; no zone is UTC) as microseconds since 1970 (UTC): 0, or -1
 * when s[0, n) is not one. */
int replay_parse_datetime(const char *s, size_t n, int64_t *us);

#endif
