/* files: mkdir -p, atomic JSON files, rm -r. */
#include "common/files.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int mkdir_p(const char *path) {
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0755);
            *s = '/';
        }
    }
    int rc = mkdir(p, 0755);
    free(p);
    return rc == 0 || errno == EEXIST ? 0 : -1;
}

int write_json_atomic(const char *dir, const char *name, json_t *obj) {
    char tmp[4200], path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    if (json_dump_file(obj, tmp, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12)) != 0) {
        if (!errno)
            errno = EIO;
        remove(tmp);
        return -1;
    }
    return rename(tmp, path);
}

int write_bytes_atomic(const char *path, const char *data, size_t n) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t done = 0;
    int why = 0;
    while (done < n) {
        ssize_t w = write(fd, data + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            why = w < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)w;
    }
    if (!why && fsync(fd))
        why = errno;
    if (close(fd) && !why)
        why = errno;
    if (!why && rename(tmp, path))
        why = errno;
    if (why) {
        unlink(tmp);
        errno = why;
        return -1;
    }
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int remove_tree(const char *path) {
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int dir_lock(const char *dir, int *fd, char *err, size_t errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/" DIR_LOCK_FILE, dir);
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0) {
        snprintf(err, errlen, "%s: cannot create its lock file: %s", dir, strerror(errno));
        return -1;
    }
    if (flock(f, LOCK_EX | LOCK_NB)) {
        char pid[32] = "";
        ssize_t n = pread(f, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        snprintf(err, errlen, "%s is in use by servelab pid %s", dir, *pid ? pid : "(unknown)");
        close(f);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(f, 0) || pwrite(f, pid, (size_t)n, 0) != n) {
        snprintf(err, errlen, "%s: cannot write its lock file: %s", dir, strerror(errno));
        close(f);
        return -1;
    }
    *fd = f;
    return 0;
}

void dir_unlock(int fd) {
    if (fd >= 0)
        close(fd);
}

int open_regular(const char *path, struct stat *st) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int bad = fstat(fd, st) != 0      ? errno
              : S_ISDIR(st->st_mode)  ? EISDIR
              : !S_ISREG(st->st_mode) ? EINVAL
                                      : 0;
    if (bad) {
        close(fd);
        errno = bad;
        return -1;
    }
    return fd; /* O_NONBLOCK changes nothing in reading a regular file */
}

/* Read only when it is a regular file (open_regular), and refused when it
 * grows past READ_WHOLE_FILE_MAX while it is read. */
char *read_whole_file(const char *path, size_t *len) {
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return NULL;
    if (st.st_size > READ_WHOLE_FILE_MAX) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    strbuf b = {0};
    char chunk[8192];
    size_t n;
    int e = 0;
    while (!e && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        sb_putn(&b, chunk, n);
        if (b.n > READ_WHOLE_FILE_MAX)
            e = EFBIG;
    }
    if (!e && ferror(f))
        e = errno ? errno : EIO;
    fclose(f);
    if (e) {
        sb_free(&b);
        errno = e;
        return NULL;
    }
    *len = b.n;
    return b.s ? b.s : xstrdup("");
}

const char *file_why(int e) {
    return e == EINVAL  ? "not a regular file"
           : e == EFBIG ? "larger than " READ_WHOLE_FILE_MAX_TEXT
                        : strerror(e);
}
