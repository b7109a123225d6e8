/* csv_util: split lines on commas. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char **split(char *line, int *n) {
    int cap = 8;
    char **f = malloc(sizeof *f * (size_t)cap);
    *n = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (*n == cap)
            f = realloc(f, sizeof *f * (size_t)(cap *= 2));
        f[(*n)++] = p;
        if (!c)
            break;
        *c = 0;
        p = c + 1;
    }
    return f;
}

csv_table *csv_read(const char *path) {
    char *text = read_file(path, NULL);
    if (!text)
        return NULL;
    csv_table *t = calloc(1, sizeof *t);
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    CHECK_MSG(line != NULL, "%s: empty", path);
    t->header = split(line, &t->n_cols);
    int cap = 1024;
    t->rows = malloc(sizeof *t->rows * (size_t)cap);
    int lineno = 1;
    while ((line = strtok_r(NULL, "\n", &save))) {
        lineno++;
        int n;
        char **f = split(line, &n);
        CHECK_MSG(n == t->n_cols, "%s:%d: %d fields, header has %d", path, lineno, n, t->n_cols);
        if (t->n_rows == cap)
            t->rows = realloc(t->rows, sizeof *t->rows * (size_t)(cap *= 2));
        t->rows[t->n_rows++] = f;
    }
    return t;
}

int csv_col(const csv_table *t, const char *name) {
    for (int i = 0; i < t->n_cols; i++)
        if (!strcmp(t->header[i], name))
            return i;
    test_fail(__FILE__, __LINE__, "no column %s", name);
}

const char *csv_get(const csv_table *t, int row, const char *col) {
    return t->rows[row][csv_col(t, col)];
}

void csv_free(csv_table *t) {
    if (!t)
        return;
    for (int i = 0; i < t->n_rows; i++)
        free(t->rows[i]);
    free(t->rows);
    free(t->header);
    free(t);
}

double csv_num(const csv_table *t, int row, const char *col) {
    const char *v = csv_get(t, row, col);
    return v && *v ? atof(v) : NAN;
}
