/* t1070-mapped-files-cut-short: a file truncated while its mapping is read
 * is an error naming the file, not a SIGBUS (round 3's C1: report and
 * merge died with rc 135 when a run was rewritten under them); the CSV
 * reader and the mapper refuse a FIFO, a device or a directory at once
 * rather than wait on it (H2: report of a run whose chunks.csv was a FIFO
 * waited for ever). */
#include "common/csv.h"
#include "common/files.h"
#include "common/mapfile.h"
#include "support.h"
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct pass {
    const char *path;
    long sum;
} pass;

/* Maps the file, cuts it to one page, and reads the mapping to its old
 * end: the touch past the new end is the SIGBUS. */
static int read_after_cut(void *arg) {
    pass *p = arg;
    mapfile f;
    if (mapfile_open(&f, p->path))
        return -2;
    CHECK_INT(truncate(p->path, 4096), 0);
    for (size_t i = 0; i < f.size; i += 512)
        p->sum += f.map[i];
    mapfile_close(&f);
    return 0;
}

/* The same through the CSV reader. */
static int csv_after_cut(void *arg) {
    pass *p = arg;
    csv_file c;
    if (csv_open(&c, p->path))
        return -2;
    CHECK_INT(truncate(p->path, 100), 0);
    csv_row r;
    while (csv_next(&c, &r))
        p->sum += r.n;
    csv_close(&c);
    return 0;
}

static void write_rows(const char *path, int rows) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("a,b,c\n", f);
    for (int i = 0; i < rows; i++)
        fprintf(f, "%d,%d,some text to fill the row\n", i, i * 7);
    fclose(f);
}

TEST(a_mapped_file_cut_short_is_an_error_naming_it) {
    char *dir = temp_dir(), path[4200], err[4600];
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    int (*fn[2])(void *) = {read_after_cut, csv_after_cut};
    for (int k = 0; k < 2; k++) {
        write_rows(path, 100000); /* about 3.5 MB: many pages past the cut */
        pass p = {path, 0};
        err[0] = 0;
        int rc = mapfile_guard(fn[k], &p, err, sizeof err);
        CHECK_MSG(rc == -1 && strstr(err, path) && strstr(err, "changed while it was read"),
                  "pass %d: rc %d, '%s'", k, rc, err);
    }
    /* a pass that ends well returns its own value, and guards nest */
    write_rows(path, 10);
    pass p = {path, 0};
    CHECK_INT(mapfile_guard(csv_after_cut, &p, err, sizeof err), 0);
    free(dir);
}

TEST(csv_and_mapfile_refuse_what_is_not_a_regular_file) {
    char *dir = temp_dir(), fifo[4200];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK_INT(mkfifo(fifo, 0600), 0);
    const char *bad[] = {"/dev/zero", fifo, dir};
    for (int i = 0; i < 3; i++) {
        csv_file c;
        mapfile m;
        errno = 0;
        CHECK_MSG(csv_open(&c, bad[i]) == -1 && (errno == EINVAL || errno == EISDIR), "%s", bad[i]);
        errno = 0;
        CHECK_MSG(mapfile_open(&m, bad[i]) == -1 && (errno == EINVAL || errno == EISDIR), "%s",
                  bad[i]);
    }
    free(dir);
}

TEST(report_of_a_run_whose_chunks_are_a_fifo_exits_2_at_once) {
    char *dir = temp_dir(), cmd[8800], path[4200], *out = NULL;
    snprintf(cmd, sizeof cmd, "predict --requests 5 --chunks --out %s/r --quiet", dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 0);
    snprintf(path, sizeof path, "%s/r/chunks.csv", dir);
    CHECK_INT(unlink(path), 0);
    CHECK_INT(mkfifo(path, 0600), 0);
    snprintf(cmd, sizeof cmd, "report %s/r --out %s/rep", dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "chunks.csv") && strstr(out, "not a regular file"), "%s", out);
    free(out);
    free(dir);
}
