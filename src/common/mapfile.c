/* mapfile: mapping a file for one pass and handing back what it passed
 * (see mapfile.h). */
#include "common/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int mapfile_open(mapfile *f, const char *path) {
    *f = (mapfile){0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    struct stat st;
    void *p = MAP_FAILED;
    int rc = fstat(fd, &st);
    if (rc == 0 && st.st_size == 0) {
        close(fd);
        return 1;
    }
    if (rc == 0)
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    errno = e;
    if (p == MAP_FAILED)
        return -1;
    *f = (mapfile){p, (size_t)st.st_size, 0};
    return 0;
}

void mapfile_release(const char *map, size_t *released, size_t upto, size_t step) {
    if (upto < *released || upto - *released < step)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    upto -= upto % page;
    madvise((char *)map + *released, upto - *released, MADV_DONTNEED);
    *released = upto;
}

void mapfile_close(mapfile *f) {
    if (f->map)
        munmap((void *)f->map, f->size);
    *f = (mapfile){0};
}
