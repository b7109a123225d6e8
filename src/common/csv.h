/* csv: a strict, fast reader for the comma-separated files servelab writes
 * and reads back (requests.csv, chunks.csv, server_metrics.csv, gpu.csv,
 * the simulator's traces). The file is mapped and read in place: a row's
 * fields point into the mapping and nothing is copied, which keeps files of
 * millions of rows quick to read.
 *
 * The format is the one servelab writes, nothing more:
 * - a row is a line ending in LF; a CR just before the LF is dropped, so a
 *   CRLF file reads the same; the last line needs no LF;
 * - fields are split at every comma and never unquoted (servelab writes no
 *   quoted field that a reader splits; server_metrics.csv quotes its label
 *   sets, which may hold commas, and is read around them: its value is the
 *   row's last field);
 * - a row keeps its first CSV_MAX_FIELDS fields but counts them all, so a
 *   row that is too wide is seen as such;
 * - a number is plain decimal ("-12.5"), or anything else strtod reads in
 *   full; an empty field is a missing value (NAN).
 * What makes a row valid (the field count, which columns a file needs) is
 * the caller's to check: csv_column finds a column by its header name, and
 * the reader keeps the line number for error messages. */
#ifndef SERVELAB_CSV_H
#define SERVELAB_CSV_H

#include <stddef.h>

#define CSV_MAX_FIELDS 64

typedef struct csv_file {
    int line; /* the line number of the row last read, from 1; 0 before the first */
    /* private */
    const char *p, *end; /* what is left to read */
    const char *map;
    size_t size;
    int fd;
} csv_file;

typedef struct csv_row {
    int n; /* fields on the line, those beyond CSV_MAX_FIELDS counted too */
    /* field i (i < n and i < CSV_MAX_FIELDS): f[i][0, len[i]), not NUL-terminated */
    const char *f[CSV_MAX_FIELDS];
    size_t len[CSV_MAX_FIELDS];
} csv_row;

/* 0 when open, 1 when the file does not exist, -1 on another error (errno
 * says which); only an open file needs csv_close. An empty file opens and
 * has no rows. */
int csv_open(csv_file *c, const char *path);
/* The next row into *row: 1, or 0 at the end of the file. The fields stay
 * valid until csv_close. */
int csv_next(csv_file *c, csv_row *row);
/* An empty line: one empty field. */
int csv_row_blank(const csv_row *row);
/* The index of the field of `header` that reads `name`, -1 when none does. */
int csv_column(const csv_row *header, const char *name);
/* Field i as a number into *out: 0, with NAN for an empty field, or -1 when
 * it is not a number or the row has no field i. */
int csv_number(const csv_row *row, int i, double *out);
void csv_close(csv_file *c);

#endif
