/* write: a rendered report put on disk. Each file is written under a
 * temporary name and renamed over the old one, so a reader (or a --check
 * run) never sees half a file, and an interrupted write leaves the previous
 * report whole. */
#include "report/report.h"
#include "common/files.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int report_write(const char *out, const out_file *files, int n_files, char *err, int errlen) {
    char figs[4200];
    snprintf(figs, sizeof figs, "%s/figures", out);
    if (mkdir_p(figs)) {
        snprintf(err, errlen, "--out %s: cannot create: %s", out, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n_files; i++)
        if (write_file(out, &files[i])) {
            snprintf(err, errlen, "cannot write %s/%s: %s", out, files[i].name, strerror(errno));
            return -1;
        }
    return 0;
}
