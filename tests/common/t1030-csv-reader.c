/* report_csv: the strict CSV reader the report loads runs with
 * (common/csv.h), on its own: line endings, blank and over-wide rows,
 * header lookup, numbers, and missing or empty files. */
#include "common/csv.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *write_temp(const char *name, const char *text, size_t n) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, n, f) == n);
    fclose(f);
    return path;
}

static int field_is(const csv_row *row, int i, const char *want) {
    return row->len[i] == strlen(want) && !memcmp(row->f[i], want, row->len[i]);
}

TEST(report_csv_rows_line_endings_and_widths) {
    static const char text[] = "a,b,c\r\n1,,3\n\n x ,y\r\nlast,no,newline";
    csv_file c;
    CHECK_INT(csv_open(&c, write_temp("t.csv", text, sizeof text - 1)), 0);
    csv_row row;
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(c.line, 1);
    CHECK_INT(row.n, 3);
    CHECK(field_is(&row, 2, "c")); /* the CR before the LF is dropped */
    CHECK_INT(csv_column(&row, "b"), 1);
    CHECK_INT(csv_column(&row, "B"), -1);
    CHECK_INT(csv_column(&row, "a,b"), -1);
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(row.n, 3);
    CHECK(field_is(&row, 1, "") && !csv_row_blank(&row));
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(c.line, 3);
    CHECK(csv_row_blank(&row));
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK(field_is(&row, 0, " x ") && field_is(&row, 1, "y")); /* nothing trimmed */
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(row.n, 3);
    CHECK(field_is(&row, 2, "newline"));
    CHECK_INT(csv_next(&c, &row), 0);
    CHECK_INT(c.line, 5);
    csv_close(&c);

    /* a quoted field is unquoted, its comma kept (RFC 4180; more in t1040-csv-quoting.c) */
    static const char quoted[] = "1,\"a,b\",2\n";
    CHECK_INT(csv_open(&c, write_temp("q.csv", quoted, sizeof quoted - 1)), 0);
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(row.n, 3);
    CHECK(field_is(&row, 1, "a,b"));
    csv_close(&c);

    /* a row wider than CSV_MAX_FIELDS keeps the first ones and counts all */
    char wide[512] = "";
    for (int i = 0; i < CSV_MAX_FIELDS + 6; i++)
        snprintf(wide + strlen(wide), sizeof wide - strlen(wide), "%s%d", i ? "," : "", i);
    CHECK_INT(csv_open(&c, write_temp("w.csv", wide, strlen(wide))), 0);
    CHECK_INT(csv_next(&c, &row), 1);
    CHECK_INT(row.n, CSV_MAX_FIELDS + 6);
    CHECK(field_is(&row, CSV_MAX_FIELDS - 1, "63"));
    double v;
    CHECK_INT(csv_number(&row, CSV_MAX_FIELDS, &v), -1);
    csv_close(&c);
}

TEST(report_csv_numbers) {
    static const char text[] = "12.500,-1.5,,1e3,-0.25e-2,abc,-,1.2.3,.5,7.,0x10, 1\n";
    csv_file c;
    CHECK_INT(csv_open(&c, write_temp("n.csv", text, sizeof text - 1)), 0);
    csv_row row;
    CHECK_INT(csv_next(&c, &row), 1);
    double v;
    CHECK_INT(csv_number(&row, 0, &v), 0);
    CHECK_NEAR(v, 12.5, 1e-12);
    CHECK_INT(csv_number(&row, 1, &v), 0);
    CHECK_NEAR(v, -1.5, 1e-12);
    CHECK_INT(csv_number(&row, 2, &v), 0);
    CHECK(isnan(v)); /* empty: a missing value */
    CHECK_INT(csv_number(&row, 3, &v), 0);
    CHECK_NEAR(v, 1000, 0);
    CHECK_INT(csv_number(&row, 4, &v), 0);
    CHECK_NEAR(v, -0.0025, 1e-15);
    CHECK_INT(csv_number(&row, 5, &v), -1);
    CHECK_INT(csv_number(&row, 6, &v), -1);
    CHECK_INT(csv_number(&row, 7, &v), -1);
    CHECK_INT(csv_number(&row, 8, &v), 0);
    CHECK_NEAR(v, 0.5, 1e-12);
    CHECK_INT(csv_number(&row, 9, &v), 0);
    CHECK_NEAR(v, 7, 0);
    CHECK_INT(csv_number(&row, 10, &v), 0); /* strtod reads hexadecimal */
    CHECK_NEAR(v, 16, 0);
    CHECK_INT(csv_number(&row, 11, &v), 0); /* and leading space */
    CHECK_NEAR(v, 1, 0);
    CHECK_INT(csv_number(&row, 12, &v), -1); /* no such field */
    CHECK_INT(csv_number(&row, -1, &v), -1);
    csv_close(&c);
}

TEST(report_csv_missing_and_empty_files) {
    csv_file c;
    char path[1024];
    snprintf(path, sizeof path, "%s/none.csv", temp_dir());
    CHECK_INT(csv_open(&c, path), 1);
    csv_row row;
    CHECK_INT(csv_open(&c, write_temp("e.csv", "", 0)), 0);
    CHECK_INT(csv_next(&c, &row), 0);
    CHECK_INT(c.line, 0);
    csv_close(&c);
}

/* csv_thousandths is the reader's own arithmetic done on digits (merge
 * hands the moved times' values on with it instead of their text): the
 * same double as csv_number reads from the text, bit for bit, over every
 * magnitude a time takes, negatives and the values around each power of
 * ten included; and a row that carries a value hands it back. */
TEST(report_csv_thousandths_read_as_the_text_reads) {
    uint64_t x = 88172645463325252ULL;
    int bad = 0;
    for (int i = 0; i < 2000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        long long q = (long long)(x % 1000000000000000ULL) >> (x >> 58); /* every size */
        if (i % 7 == 0)
            q = -q;
        if (i < 40) /* 10^k - 1, 10^k, 10^k + 1 */
            q = (long long)pow(10, i / 3 % 15) + i % 3 - 1;
        char text[40];
        unsigned long long u = q < 0 ? 0ULL - (unsigned long long)q : (unsigned long long)q;
        int len =
            snprintf(text, sizeof text, "%s%llu.%03llu", q < 0 ? "-" : "", u / 1000, u % 1000);
        csv_row row = {.n = 1, .f = {text}, .len = {(size_t)len}};
        double read, made = csv_thousandths(q);
        CHECK(csv_number(&row, 0, &read) == 0);
        if (memcmp(&read, &made, sizeof read) && bad++ < 5)
            CHECK_MSG(0, "%s: read %.17g, made %.17g", text, read, made);
    }
    CHECK_INT(bad, 0);
    csv_row given = {.n = 2, .f = {"1.5", "2.5"}, .len = {3, 3}, .known = 2, .value = {0, 7.25}};
    double v;
    CHECK(csv_number(&given, 1, &v) == 0 && v == 7.25);
    CHECK(csv_number(&given, 0, &v) == 0 && v == 1.5);
}
