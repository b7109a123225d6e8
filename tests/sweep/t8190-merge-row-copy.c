/* merge_rows: how `servelab merge` copies rows. A moved time is written as
 * printf's "%.3f" would write it, for times as runs write them, random
 * shifts, halves that round either way, negatives and the huge; real shards
 * started apart (so every time is moved) merge into rows that are the
 * shards' own, each moved by its shift, each request's chunk rows together
 * and in the order written; a row that the report's reader refuses is named
 * by the shard's own file and line, and a shard with other columns is
 * refused, with --out left as it was. */
#include "csv_util.h"
#include "support.h"
#include "sweep/merge_rows.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void same_as_printf(double x) {
    char fast[MERGE_MS_ROOM + 1], slow[MERGE_MS_ROOM + 1];
    size_t n = merge_put_ms(fast, x);
    fast[n] = 0;
    snprintf(slow, sizeof slow, "%.3f", x);
    CHECK_MSG(!strcmp(fast, slow), "%.17g: '%s', printf '%s'", x, fast, slow);
}

TEST(merge_put_ms_writes_what_printf_writes) {
    uint64_t s = 12345;
    for (int i = 0; i < 300000; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
        char t[40];
        snprintf(t, sizeof t, "%.3f", u * 1e7);    /* a time as written, up to ~3 hours */
        double shift = floor(u * 1e9) / 1e3 - 5e5; /* a shard's offset in whole us */
        same_as_printf(strtod(t, NULL) + shift);
        same_as_printf((u - 0.5) * pow(10, (double)(i % 19)));
    }
    for (int k = -4000; k <= 4000; k++)
        same_as_printf(k / 2000.0); /* exact and near halves of a thousandth */
    static const double edge[] = {0.0,   -0.0,  0.0625, -0.0625, 0.0005, -0.0005, 1e14,   1e15,
                                  -1e16, 1e300, 5e-324, -5e-324, 2.5e-4, 1.0005,  0.9995, 123.4565};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        same_as_printf(edge[i]);
}

static void sh(const char *cmd) {
    int code;
    free(run_capture(cmd, &code));
    CHECK_MSG(code == 0, "%s: exit %d", cmd, code);
}

/* A field of a row of a csv_table as a number (NAN when empty). */
static double num(const char *f) {
    return f && *f ? strtod(f, NULL) : NAN;
}

/* shift_ms of shard INDEX in DIR/merged/meta.json. */
static double shift_of(const char *dir, int index) {
    char p[1200];
    snprintf(p, sizeof p, "%s/merged/meta.json", dir);
    json_t *m = json_load_file(p, 0, NULL),
           *from = json_object_get(json_object_get(m, "merged"), "from");
    double v = NAN;
    size_t i;
    json_t *e;
    json_array_foreach(from, i, e) if (json_integer_value(json_object_get(e, "index")) == index) v =
        json_real_value(json_object_get(e, "shift_ms"));
    json_decref(m);
    return v;
}

/* Every chunk row of the merged run is a shard's, its time moved by the
 * shard's shift, and the rows of a request are together, in the order the
 * shard wrote them, requests in index order. */
static void check_chunks(const char *dir) {
    char p[1200];
    snprintf(p, sizeof p, "%s/merged/chunks.csv", dir);
    csv_table *m = csv_read(p);
    CHECK(m != NULL && m->n_rows > 0);
    csv_table *sh_[2];
    double shift[2];
    int at[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/s%d/chunks.csv", dir, k);
        sh_[k] = csv_read(p);
        CHECK(sh_[k] != NULL);
        shift[k] = shift_of(dir, k);
        CHECK(isfinite(shift[k]));
    }
    CHECK(shift[0] != 0 || shift[1] != 0);
    long prev = -1;
    for (int i = 0; i < m->n_rows; i++) {
        long id = strtol(m->rows[i][0] + 4, NULL, 10);
        CHECK_MSG(id >= prev, "row %d: req-%ld after req-%ld", i + 2, id, prev);
        prev = id;
    }
    /* each shard's rows, in its order, are the merged rows of its ids, in theirs */
    for (int i = 0; i < m->n_rows; i++) {
        int k = (int)(strtol(m->rows[i][0] + 4, NULL, 10) % 2);
        csv_table *s = sh_[k];
        /* the shard's next row of this request: its rows were written together */
        int j = at[k];
        while (j < s->n_rows && strcmp(s->rows[j][0], m->rows[i][0]))
            j++;
        if (j == s->n_rows)
            for (j = 0; j < s->n_rows && strcmp(s->rows[j][0], m->rows[i][0]); j++)
                ;
        CHECK_MSG(j < s->n_rows, "merged row %d (%s) is no shard's", i + 2, m->rows[i][0]);
        char want[40];
        snprintf(want, sizeof want, "%.3f", num(s->rows[j][2]) + shift[k]);
        CHECK_MSG(!strcmp(m->rows[i][1], s->rows[j][1]) && !strcmp(m->rows[i][2], want),
                  "merged row %d: %s,%s,%s; the shard's moved: %s,%s,%s", i + 2, m->rows[i][0],
                  m->rows[i][1], m->rows[i][2], s->rows[j][0], s->rows[j][1], want);
        s->rows[j][0][0] = 'x'; /* taken */
        at[k] = j + 1;
    }
    CHECK_INT(m->n_rows, sh_[0]->n_rows + sh_[1]->n_rows);
    csv_free(m);
    csv_free(sh_[0]);
    csv_free(sh_[1]);
}

/* `servelab merge ARGS` exits 2 with one line holding WANT, and makes no --out. */
static void refused(const char *dir, const char *args, const char *want) {
    char cmd[4096], *out;
    snprintf(cmd, sizeof cmd, "merge %s --out %s/bad", args, dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2 && count_of(out, "\n") == 1 && strstr(out, want),
              "merge %s: exit %d, '%s' (wanted '%s')", args, code, out, want);
    char p[1200];
    snprintf(p, sizeof p, "%s/bad", dir);
    CHECK_MSG(access(p, F_OK) != 0, "%s was left behind", p);
    free(out);
}

TEST(merge_rows_moved_in_order_and_bad_rows_named_by_the_shard) {
    sim_proc sim = sim_start("--profile tiny --max-num-seqs 64");
    char *dir = temp_dir(), cmd[4096];
    for (int k = 0; k < 2; k++) { /* started apart: every time is moved */
        snprintf(cmd, sizeof cmd,
                 "run --url http://127.0.0.1:%d --prompts random:16:6 --max-tokens 6 --ignore-eos "
                 "--rate 200 --arrival poisson --requests 40 --seed 9 --quiet --no-sampling "
                 "--shard %d/2 --out %s/s%d",
                 sim.port, k, dir, k);
        servelab_ok(cmd);
    }
    sim_stop(&sim);
    snprintf(cmd, sizeof cmd, "merge %s/s1 %s/s0 --out %s/merged", dir, dir, dir);
    servelab_ok(cmd);
    check_chunks(dir);
    snprintf(cmd, sizeof cmd, "report %s/merged", dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "report %s/merged --check", dir);
    servelab_ok(cmd);

    /* Rows quoted where they need not be, and a CRLF line, read as the same
     * rows: the merge writes them as it writes any row (the careful path,
     * beside the fast one for rows with no quote or CR), and the merged
     * files and the summary made from them are byte for byte the first
     * merge's. */
    snprintf(cmd, sizeof cmd,
             "cp -r %s/s1 %s/q1 && awk -F, -v OFS=, 'NR == 3 || NR == 7 { $1 = \"\\\"\" $1 "
             "\"\\\"\" } { print }' %s/s1/requests.csv > %s/q1/requests.csv && "
             "awk -F, -v OFS=, 'NR == 4 { printf \"%%s\\r\\n\", $0; next } NR == 9 { $2 = "
             "\"\\\"\" $2 \"\\\"\" } { print }' %s/s1/chunks.csv > %s/q1/chunks.csv",
             dir, dir, dir, dir, dir, dir);
    sh(cmd);
    snprintf(cmd, sizeof cmd, "grep -c '\"' %s/q1/requests.csv %s/q1/chunks.csv", dir, dir);
    char *quotes = run_capture(cmd, NULL);
    CHECK_MSG(quotes && strstr(quotes, "requests.csv:2") && strstr(quotes, "chunks.csv:1"), "%s",
              quotes);
    free(quotes);
    snprintf(cmd, sizeof cmd, "merge %s/s0 %s/q1 --out %s/merged-q", dir, dir, dir);
    servelab_ok(cmd);
    static const char *const same[] = {"requests.csv", "chunks.csv", "summary.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "cmp %s/merged/%s %s/merged-q/%s", dir, same[i], dir, same[i]);
        sh(cmd);
    }

    /* a value the report's reader refuses, on line 5 of shard 1's file */
    snprintf(cmd, sizeof cmd,
             "cp -r %s/s1 %s/v1 && awk -F, -v OFS=, 'NR == 5 { $8 = \"many\" } { print }' "
             "%s/s1/requests.csv > %s/v1/requests.csv",
             dir, dir, dir, dir);
    sh(cmd);
    char args[2400], want[1300];
    snprintf(args, sizeof args, "%s/s0 %s/v1", dir, dir);
    snprintf(want, sizeof want, "%s/v1/requests.csv:5:", dir);
    refused(dir, args, want);
    /* another column set */
    snprintf(cmd, sizeof cmd,
             "cp -r %s/s1 %s/h1 && sed '1s/lag_ms/lag_us/' %s/s1/requests.csv > "
             "%s/h1/requests.csv",
             dir, dir, dir, dir);
    sh(cmd);
    snprintf(args, sizeof args, "%s/s0 %s/h1", dir, dir);
    refused(dir, args, "its columns are not those of the first shard's requests.csv");
    free(dir);
}
