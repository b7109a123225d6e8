/* check: a rendered report compared with the one on disk (report --check).
 * The comparison is byte for byte; the lines shown are only there to say
 * where the files part, so each is cut at 300 characters and at most 10 are
 * shown per file. */
#include "report/report.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define LINES_SHOWN 10
#define LINE_CUT 300

/* The whole file, NUL-terminated, its length in *n; NULL when it cannot be
 * opened. */
static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *b = xmalloc(cap);
    size_t k;
    while ((k = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += k;
        if (len + 1 >= cap)
            b = xrealloc(b, cap *= 2);
    }
    fclose(f);
    b[len] = 0;
    *n = len;
    return b;
}

/* Print up to `max` differing lines to `to`; returns 1 when the texts differ. */
static int diff_lines(FILE *to, const char *name, const char *want, size_t wn, const char *have,
                      size_t hn, int max) {
    if (wn == hn && !memcmp(want, have, wn))
        return 0;
    const char *a = want, *b = have, *ae = want + wn, *be = have + hn;
    int line = 0, shown = 0;
    while ((a < ae || b < be) && shown < max) {
        line++;
        const char *an = a < ae ? memchr(a, '\n', (size_t)(ae - a)) : NULL;
        const char *bn = b < be ? memchr(b, '\n', (size_t)(be - b)) : NULL;
        size_t al = a < ae ? (size_t)((an ? an : ae) - a) : 0;
        size_t bl = b < be ? (size_t)((bn ? bn : be) - b) : 0;
        if (al != bl || memcmp(a, b, al)) {
            fprintf(to, "%s:%d: on disk:     %.*s\n", name, line,
                    (int)(bl > LINE_CUT ? LINE_CUT : bl), b);
            fprintf(to, "%s:%d: from the rows: %.*s\n", name, line,
                    (int)(al > LINE_CUT ? LINE_CUT : al), a);
            shown++;
        }
        a = an ? an + 1 : ae;
        b = bn ? bn + 1 : be;
    }
    return 1;
}

int report_check(const char *out, const out_file *files, int n_files, FILE *to) {
    int drift = 0;
    for (int i = 0; i < n_files; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", out, files[i].name);
        size_t hn;
        char *have = slurp(path, &hn);
        if (!have) {
            fprintf(to, "%s: missing\n", path);
            drift = 1;
            continue;
        }
        drift |= diff_lines(to, path, files[i].body.s, files[i].body.n, have, hn, LINES_SHOWN);
        free(have);
    }
    return drift;
}
