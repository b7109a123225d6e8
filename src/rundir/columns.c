/* columns: the tables of rundir/columns.h made from its rows, and the few
 * things every writer and reader asks of a table (its header line, its
 * columns of one type). */
#include "rundir/columns.h"
#include "common/csv.h"

#include <stdio.h>

#include <string.h>

#define RUNDIR_ROW(name, type, unit, contract, meaning) {#name, type, unit, contract, meaning},

static const rundir_column requests_cols[] = {RUNDIR_REQUESTS_COLUMNS(RUNDIR_ROW)};
static const rundir_column chunks_cols[] = {RUNDIR_CHUNKS_COLUMNS(RUNDIR_ROW)};
static const rundir_column errors_cols[] = {RUNDIR_ERRORS_COLUMNS(RUNDIR_ROW)};

_Static_assert(sizeof requests_cols / sizeof *requests_cols == RQ_N, "one row a column");
_Static_assert(sizeof chunks_cols / sizeof *chunks_cols == CH_N, "one row a column");
_Static_assert(sizeof errors_cols / sizeof *errors_cols == ER_N, "one row a column");

const rundir_table rundir_requests = {"requests.csv", requests_cols, RQ_N};
const rundir_table rundir_chunks = {"chunks.csv", chunks_cols, CH_N};
const rundir_table rundir_errors = {"errors.csv", errors_cols, ER_N};

size_t rundir_header(const rundir_table *t, char *buf, size_t cap) {
    size_t n = 0;
    for (int i = 0; i < t->n; i++) {
        size_t k = strlen(t->col[i].name);
        if (n + k + 2 > cap)
            return 0;
        memcpy(buf + n, t->col[i].name, k);
        n += k;
        buf[n++] = i + 1 < t->n ? ',' : '\n';
    }
    buf[n] = 0;
    return n;
}

int rundir_names_of_type(const rundir_table *t, rundir_type type, const char **names, int cap) {
    int k = 0;
    for (int i = 0; i < t->n && k + 1 < cap; i++)
        if (t->col[i].type == type)
            names[k++] = t->col[i].name;
    names[k] = NULL;
    return k;
}

int rundir_columns_find(const rundir_table *t, const csv_row *header, int *col, const char *path,
                        char *err, int errlen) {
    for (int k = 0; k < t->n; k++) {
        col[k] = csv_column(header, t->col[k].name);
        if (col[k] < 0 && t->col[k].contract) {
            snprintf(err, errlen, "%s:1: missing column %s", path, t->col[k].name);
            return -1;
        }
    }
    return 0;
}

const char *rundir_type_name(rundir_type type) {
    static const char *const words[] = {"text", "time", "duration", "count", "0/1"};
    return type <= RUNDIR_FLAG ? words[type] : "?";
}
