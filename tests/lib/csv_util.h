/* csv_util: a tiny CSV reader for tests (no quoting: the tests that use it
 * write no field that needs quotes; t1040-csv-quoting.c reads those with
 * common/csv.h). */
#ifndef SERVELAB_TEST_CSV_UTIL_H
#define SERVELAB_TEST_CSV_UTIL_H

typedef struct csv_table {
    int n_cols, n_rows;
    char **header;
    char ***rows; /* rows[i][j] */
} csv_table;

/* NULL when the file is missing. A row with the wrong field count fails the
 * test. */
csv_table *csv_read(const char *path);
int csv_col(const csv_table *t, const char *name);
const char *csv_get(const csv_table *t, int row, const char *col);
/* The field as a number; NAN when the column is missing or the field empty. */
double csv_num(const csv_table *t, int row, const char *col);
void csv_free(csv_table *t);

#endif
