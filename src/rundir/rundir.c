/* rundir: which of a run's files a directory holds (see rundir.h), looked
 * at with fstatat(AT_SYMLINK_NOFOLLOW) under the directory's descriptor, so
 * a link is seen as a link and never followed. */
#include "rundir/rundir.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const rundir_file_names[] = {"requests.csv", "chunks.csv",         "meta.json",
                                         "summary.json", "server_metrics.csv", "gpu.csv",
                                         "errors.csv",   "server_proc.csv",    NULL};

const char *const rundir_sweep_files[] = {"trace.csv", "server.log", NULL};

static int has(int dfd, const char *name) {
    struct stat st;
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

unsigned rundir_holds_at(int dfd) {
    unsigned m = 0;
    for (int k = 0; rundir_file_names[k]; k++)
        if (has(dfd, rundir_file_names[k]))
            m |= 1u << k;
    for (const char *const *f = rundir_sweep_files; *f; f++)
        if (has(dfd, *f))
            m |= RUNDIR_SWEEP;
    return m;
}

unsigned rundir_holds(const char *dir, char *names, size_t n) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    unsigned m = fd >= 0 ? rundir_holds_at(fd) : 0;
    if (fd >= 0)
        close(fd);
    size_t used = 0;
    if (names && n)
        names[0] = 0;
    for (int k = 0, count = 0; names && rundir_file_names[k]; k++)
        if (m & (1u << k) && used < n)
            used += (size_t)snprintf(names + used, n - used, "%s%s", count++ ? ", " : "",
                                     rundir_file_names[k]);
    return m;
}
