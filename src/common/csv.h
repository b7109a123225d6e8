/* csv: a strict, fast reader for the comma-separated files servelab writes
 * and reads back (requests.csv, chunks.csv, server_metrics.csv, gpu.csv,
 * the simulator's traces), and the quoting its writers use. The file is
 * mapped and read in place: an unquoted field points into the mapping and
 * nothing is copied, which keeps files of millions of rows quick to read.
 * What has been read is handed back every 32 MiB (madvise DONTNEED: the
 * pages stay in the page cache and read back on a touch, so a field kept
 * from an early row still reads): a reader of a 2 GB chunks.csv does not
 * hold 2 GB of it resident.
 *
 * The format is RFC 4180, as servelab writes it:
 * - a row is a line ending in LF; a CR just before the LF is dropped, so a
 *   CRLF file reads the same; the last line needs no LF;
 * - fields are split at commas; a field that starts with a double quote is
 *   quoted: it ends at the quote that is not doubled, may hold commas, CR
 *   and LF (so a row may span lines), and reads without its quotes, with
 *   each doubled quote read as one. Anything but a comma or the end of the
 *   row after the closing quote, or a quote that is never closed, makes the
 *   row bad (row->error says which). A quote inside a field that does not
 *   start with one is just a character;
 * - unquoted fields are read in place (the fast path, and most fields)
 *   and stay valid until csv_close; a quoted field is unquoted into memory
 *   the reader reuses for the next row (NUL-terminated there), so it stays
 *   valid only until the next csv_next: copy what must outlive the row;
 * - a row keeps its first CSV_MAX_FIELDS fields but counts them all, so a
 *   row that is too wide is seen as such;
 * - a number is plain decimal ("-12.5"), or anything else strtod reads in
 *   full; an empty field is a missing value (NAN).
 * What makes a row valid (the field count, which columns a file needs) is
 * the caller's to check: csv_column finds a column by its header name, and
 * the reader keeps the line number for error messages. */
#ifndef SERVELAB_CSV_H
#define SERVELAB_CSV_H

#include "common/bytescan.h"

#include <stddef.h>

#define CSV_MAX_FIELDS 64

typedef struct csv_block csv_block;

typedef struct csv_file {
    int line; /* the line the row last read starts on, from 1; 0 before the first */
    /* private */
    int next_line;       /* the line the next row starts on */
    const char *p, *end; /* what is left to read */
    const char *map;
    size_t size;
    size_t released; /* the mapping's first bytes handed back to the page cache */
    int fd;
    csv_block *blocks; /* where quoted fields are unquoted */
    bytescan scan;     /* the stops among the next bytes */
} csv_file;

typedef struct csv_row {
    int n; /* fields on the row, those beyond CSV_MAX_FIELDS counted too */
    /* field i (i < n and i < CSV_MAX_FIELDS): f[i][0, len[i]), not NUL-terminated */
    const char *f[CSV_MAX_FIELDS];
    size_t len[CSV_MAX_FIELDS];
    const char *error; /* NULL, or why the row's quoting is bad (its fields are then partial) */
    /* Bit i set: value[i] is what csv_number reads from field i, given by
     * the writer that made the field's text from it (merge hands its rows
     * on so; csv_next sets none). A row built by hand starts with 0. */
    unsigned long long known;
    double value[CSV_MAX_FIELDS];
} csv_row;

/* 0 when open, 1 when the file does not exist, -1 on another error (errno
 * says which, common/files.h's file_why in words: a FIFO, a device or a
 * directory is refused, never waited on); only an open file needs
 * csv_close. An empty file opens and has no rows. Read it under a
 * mapfile_guard (common/mapfile.h): a file truncated while it is read is
 * then an error, not a SIGBUS. */
int csv_open(csv_file *c, const char *path);
/* The next row into *row: 1, or 0 at the end of the file. Its unquoted
 * fields stay valid until csv_close, its quoted ones until the next call. */
int csv_next(csv_file *c, csv_row *row);
/* An empty line: one empty field. */
int csv_row_blank(const csv_row *row);
/* The index of the field of `header` that reads `name`, -1 when none does. */
int csv_column(const csv_row *header, const char *name);
/* Field i as a number into *out: 0, with NAN for an empty field, or -1 when
 * it is not a number or the row has no field i. */
int csv_number(const csv_row *row, int i, double *out);
/* What csv_number reads from the text printf's "%.3f" writes for
 * thousandths / 1000 (|thousandths| below 10^15; not negative zero): the
 * same double, bit for bit, without the text. */
double csv_thousandths(long long thousandths);
void csv_close(csv_file *c);
/* Where the next row starts, in bytes from the start of the file. */
size_t csv_offset(const csv_file *c);
/* A reader of the n bytes at p, which the caller keeps readable (rows of a
 * file it mapped itself): rows are read as from a file of those bytes, line
 * numbers from 1. c is zeroed memory or an earlier view, whose memory for
 * quoted fields is kept; csv_close frees that and touches nothing else. */
void csv_view(csv_file *c, const char *p, size_t n);

/* Writing. A field holding a comma, a double quote, CR or LF is written
 * quoted, with each inner quote doubled; any other field as it is. */
int csv_needs_quotes(const char *s, size_t n);
/* The bytes csv_put_field writes for s[0, n). */
size_t csv_field_bytes(const char *s, size_t n);
/* s[0, n) as one field at dst, which has room for csv_field_bytes(s, n)
 * bytes; returns the byte after it. Not NUL-terminated. */
char *csv_put_field(char *dst, const char *s, size_t n);

#endif
