/* t7230-twin-study: the twin study of results/twin/ is what its committed rows
 * give now. scripts/twin_predict.sh fits the simulator to the fitting runs,
 * predicts every other measured run (the same requests at the same
 * instants) and compares them; run into a scratch folder, its profile and
 * its comparison table must be the committed ones, byte for byte, and the
 * README's table must be that table. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void same_file(const char *dir, const char *name) {
    char fresh[1200], kept[1200];
    snprintf(fresh, sizeof fresh, "%s/%s", dir, name);
    snprintf(kept, sizeof kept, "results/twin/%s", name);
    char *a = read_file(fresh, NULL), *b = read_file(kept, NULL);
    CHECK_MSG(a && b, "%s or %s is missing", fresh, kept);
    CHECK_MSG(!strcmp(a, b), "%s is not what the committed rows give now:\n%s", kept, a);
    free(a);
    free(b);
}

TEST_SLOW(twin_refit_and_predictions_are_the_committed_ones) {
    char *dir = temp_dir();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "SERVELAB=%s sh scripts/twin_predict.sh %s 2>&1", servelab_bin(),
             dir);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "%s", out);
    free(out);
    same_file(dir, "profiles/tiny-4slots.yaml");
    same_file(dir, "comparison.md");
    /* the README shows the committed table */
    char *readme = read_file("README.md", NULL),
         *table = read_file("results/twin/comparison.md", NULL);
    CHECK(readme && table);
    const char *sum = strstr(table, "#### Summary");
    CHECK(sum != NULL);
    char line[512];
    const char *nl = strchr(sum + 14, '\n');
    /* every row of the summary appears in the README as it is */
    for (const char *p = sum; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len == 0 || p[0] != '|' || len >= sizeof line)
            continue;
        memcpy(line, p, len);
        line[len] = 0;
        CHECK_MSG(strstr(readme, line) != NULL, "README.md lacks: %s", line);
    }
    free(readme);
    free(table);
}
