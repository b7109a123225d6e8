/* report_check: the --check comparison on its own, with hand-made files:
 * a match, a missing file, one changed line (shown as on disk and as
 * rendered), a longer file, and the cap of 10 lines shown per file. */
#include "common/strbuf.h"
#include "report/report.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void put(const char *dir, const char *name, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* report_check's verdict on one rendered file named a.txt against `dir`,
 * and what it printed (malloc'd, into *printed). */
static int check_one(const char *dir, const char *rendered, char **printed) {
    out_file f = {.name = "a.txt"};
    sb_puts(&f.body, rendered);
    char path[1024];
    snprintf(path, sizeof path, "%s/printed", dir);
    FILE *to = fopen(path, "w");
    CHECK(to != NULL);
    int drift = report_check(dir, &f, 1, to);
    fclose(to);
    sb_free(&f.body);
    *printed = read_file(path, NULL);
    return drift;
}

TEST(report_check_compares_files_and_shows_lines) {
    char *dir = temp_dir();
    char *printed, want[2048];
    CHECK_INT(check_one(dir, "x\n", &printed), 1);
    snprintf(want, sizeof want, "%s/a.txt: missing\n", dir);
    CHECK_STR(printed, want);

    put(dir, "a.txt", "one\ntwo\nthree\n");
    CHECK_INT(check_one(dir, "one\ntwo\nthree\n", &printed), 0);
    CHECK_STR(printed, "");

    CHECK_INT(check_one(dir, "one\nTWO\nthree\n", &printed), 1);
    snprintf(want, sizeof want, "%s/a.txt:2: on disk:     two\n%s/a.txt:2: from the rows: TWO\n",
             dir, dir);
    CHECK_STR(printed, want);

    CHECK_INT(check_one(dir, "one\ntwo\nthree\nfour\n", &printed), 1);
    snprintf(want, sizeof want, "%s/a.txt:4: on disk:     \n%s/a.txt:4: from the rows: four\n", dir,
             dir);
    CHECK_STR(printed, want);

    put(dir, "a.txt", "");
    CHECK_INT(check_one(dir, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", &printed), 1);
    int shown = 0;
    for (const char *p = printed; (p = strstr(p, "from the rows")); p++)
        shown++;
    CHECK_INT(shown, 10);
    CHECK(strstr(printed, "a.txt:10: from the rows: 10\n") && !strstr(printed, "a.txt:11:"));
}
