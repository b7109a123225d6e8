/* write: a rendered report put on disk. Each file is written under a
 * temporary name and renamed over the old one, so a reader (or a --check
 * run) never sees half a file, and an interrupted write leaves the previous
 * report whole.
 *
 * Figures an earlier report in the same folder drew and this one does not
 * (a run renamed, a campaign added) are removed once the new files are
 * in, so that figures/ never shows a figure the report does not link. Only
 * files that earlier report named are touched: the figures its summary.md
 * links to ("](figures/NAME.svg)"), each a plain file under figures/ with
 * a name of the characters figure names are made of; nothing else in the
 * folder is ever removed. */
#include "report/report.h"
#include "common/files.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int write_file(const char *dir, const out_file *f) {
    char path[4400], tmp[4500];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *o = fopen(tmp, "wb");
    if (!o)
        return -1;
    size_t ok = fwrite(f->body.s ? f->body.s : "", 1, f->body.n, o);
    if (fclose(o) != 0 || ok != f->body.n) {
        remove(tmp);
        return -1;
    }
    return rename(tmp, path);
}

/* A figure's name as a report writes it: NAME.svg, NAME of the bytes a
 * figure file name is made of, never "." or ".." or a path. */
static int figure_name_ok(const char *s, size_t n) {
    if (n <= 4 || n > 250 || strncmp(s + n - 4, ".svg", 4) || s[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._~-", s[i]))
            return 0;
    return 1;
}

/* A whole text file, NUL-ended; NULL when it cannot be read. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t len = 0, cap = 1 << 16, k;
    char *b = xmalloc(cap);
    while ((k = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += k;
        if (len + 1 == cap)
            b = xrealloc(b, cap *= 2);
    }
    fclose(f);
    b[len] = 0;
    return b;
}

/* The figures the summary.md in `out` links to, "figures/NAME.svg" each,
 * into *names (*n of them); none when there is no summary.md. */
static void earlier_figures(const char *out, char ***names, int *n) {
    char path[4400];
    snprintf(path, sizeof path, "%s/summary.md", out);
    *names = NULL;
    *n = 0;
    char *md = read_text(path);
    if (!md)
        return;
    static const char link[] = "](figures/";
    for (const char *p = md; (p = strstr(p, link)); p++) {
        const char *name = p + sizeof link - 1, *end = strchr(name, ')');
        if (!end || !figure_name_ok(name, (size_t)(end - name)))
            continue;
        *names = xrealloc(*names, (size_t)(*n + 1) * sizeof **names);
        (*names)[*n] = xmalloc((size_t)(end - p));
        snprintf((*names)[*n], (size_t)(end - p), "%.*s", (int)(end - p - 2), p + 2);
        (*n)++;
    }
    free(md);
}

/* Remove those of `names` the new report did not write (when `written`:
 * after a failed write nothing is), each only when it is a plain file
 * (never a link or a folder); the names are freed. */
static void remove_stale(const char *out, char **names, int n, const out_file *files, int n_files,
                         int written) {
    for (int i = 0; i < n; i++) {
        int kept = 0;
        for (int j = 0; j < n_files && !kept; j++)
            kept = !strcmp(files[j].name, names[i]);
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", out, names[i]);
        if (written && !kept && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            remove(path);
        free(names[i]);
    }
    free(names);
}

int report_write(const char *out, const out_file *files, int n_files, char *err, int errlen) {
    char **earlier;
    int n_earlier;
    earlier_figures(out, &earlier, &n_earlier);
    char figs[4200];
    snprintf(figs, sizeof figs, "%s/figures", out);
    if (mkdir_p(figs)) {
        snprintf(err, errlen, "--out %s: cannot create: %s", out, strerror(errno));
        remove_stale(out, earlier, n_earlier, files, n_files, 0);
        return -1;
    }
    for (int i = 0; i < n_files; i++)
        if (write_file(out, &files[i])) {
            snprintf(err, errlen, "cannot write %s/%s: %s", out, files[i].name, strerror(errno));
            remove_stale(out, earlier, n_earlier, files, n_files, 0);
            return -1;
        }
    remove_stale(out, earlier, n_earlier, files, n_files, 1);
    return 0;
}
