/* table: a grid of text cells, built once and rendered both as Markdown
 * (summary.md) and as HTML (report.html), so that the two documents can
 * never disagree about a figure. Also the one number format every table
 * and summary.csv use. */
#ifndef SERVELAB_REPORT_TABLE_H
#define SERVELAB_REPORT_TABLE_H

#include "common/strbuf.h"

typedef struct table table;

/* A table with `cols` columns named by header[0..cols); the cells are copied. */
table *table_new(int cols, const char *const *header);
/* Appends a row of the table's column count; the cells are copied. */
void table_add_row(table *t, const char *const *cells);
void table_free(table *t);
/* Markdown: the first column left-aligned, the others right-aligned. */
void table_markdown(strbuf *o, const table *t);
/* HTML: cells escaped, the numeric columns (all but the first) of class "n". */
void table_html(strbuf *o, const table *t);

/* v with `dec` decimals into buf (at least 32 bytes), returned: "" when
 * unknown (NAN), "inf" or "-inf" when infinite, and never "-0.000". */
const char *format_number(char *buf, double v, int dec);

#endif
