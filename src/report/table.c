/* table: the cell grid and its two renderings. */
#include "report/table.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct table {
    int cols, rows;
    char **cell; /* rows+1 (header) x cols */
};

table *table_new(int cols, const char *const *header) {
    table *t = xcalloc(1, sizeof *t);
    t->cols = cols;
    t->cell = xcalloc((size_t)cols, sizeof *t->cell);
    for (int c = 0; c < cols; c++)
        t->cell[c] = xstrdup(header[c]);
    return t;
}

void table_add_row(table *t, const char *const *cells) {
    t->rows++;
    t->cell = xrealloc(t->cell, (size_t)(t->rows + 1) * (size_t)t->cols * sizeof *t->cell);
    for (int c = 0; c < t->cols; c++)
        t->cell[t->rows * t->cols + c] = xstrdup(cells[c]);
}

void table_free(table *t) {
    for (int i = 0; i < (t->rows + 1) * t->cols; i++)
        free(t->cell[i]);
    free(t->cell);
    free(t);
}

/* A cell's text in a Markdown row: a '|' would end the cell and a line
 * break the row (a metadata value, a run folder's name), so '|' is
 * written \| and a CR or LF a space. */
static void md_cell(strbuf *o, const char *s) {
    for (; *s; s++) {
        size_t n = strcspn(s, "|\r\n");
        sb_putn(o, s, n);
        s += n;
        if (!*s)
            break;
        sb_puts(o, *s == '|' ? "\\|" : " ");
    }
}

void table_markdown(strbuf *o, const table *t) {
    for (int r = 0; r <= t->rows; r++) {
        sb_puts(o, "|");
        for (int c = 0; c < t->cols; c++) {
            sb_puts(o, " ");
            md_cell(o, t->cell[r * t->cols + c]);
            sb_puts(o, " |");
        }
        sb_puts(o, "\n");
        if (r == 0) {
            sb_puts(o, "|");
            for (int c = 0; c < t->cols; c++)
                sb_puts(o, c ? " ---: |" : " --- |");
            sb_puts(o, "\n");
        }
    }
    sb_puts(o, "\n");
}

void table_html(strbuf *o, const table *t) {
    sb_puts(o, "<table>\n<tr>");
    for (int c = 0; c < t->cols; c++) {
        sb_puts(o, "<th>");
        sb_escape(o, t->cell[c]);
        sb_puts(o, "</th>");
    }
    sb_puts(o, "</tr>\n");
    for (int r = 1; r <= t->rows; r++) {
        sb_puts(o, "<tr>");
        for (int c = 0; c < t->cols; c++) {
            sb_puts(o, c ? "<td class=\"n\">" : "<td>");
            sb_escape(o, t->cell[r * t->cols + c]);
            sb_puts(o, "</td>");
        }
        sb_puts(o, "</tr>\n");
    }
    sb_puts(o, "</table>\n");
}

/* A number with fixed decimals; "" when unknown, "inf" when infinite. */
const char *format_number(char *buf, double v, int dec) {
    if (isnan(v))
        buf[0] = 0;
    else if (isinf(v))
        snprintf(buf, 32, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, 32, "%.*f", dec, fabs(v) < 0.5 * pow(10, -dec) ? 0.0 : v);
    return buf;
}
