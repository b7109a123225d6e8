/* t1060-whole-files-are-regular-files: a profile file or a campaign file
 * that is /dev/zero, a FIFO or a directory is refused at once with a
 * one-line reason and exit 2, nothing written (round 3's C4: /dev/zero was
 * read until memory ran out and the process aborted; H2: a FIFO with no
 * writer blocked predict --profile-file for ever); read_whole_file itself
 * says which. */
#include "common/files.h"
#include "support.h"
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(read_whole_file_reads_regular_files_only) {
    char *dir = temp_dir(), path[4200];
    size_t len = 7;
    errno = 0;
    CHECK(read_whole_file("/dev/zero", &len) == NULL && errno == EINVAL);
    CHECK_STR(file_why(EINVAL), "not a regular file");
    CHECK(read_whole_file(dir, &len) == NULL && errno == EISDIR);
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK_INT(mkfifo(path, 0600), 0);
    CHECK(read_whole_file(path, &len) == NULL && errno == EINVAL); /* and it did not wait */
    snprintf(path, sizeof path, "%s/f", dir);
    FILE *f = fopen(path, "w");
    fputs("abc", f);
    fclose(f);
    char *text = read_whole_file(path, &len);
    CHECK(text && len == 3 && !strcmp(text, "abc"));
    free(text);
    free(dir);
}

TEST(profile_and_campaign_files_that_are_not_files_exit_2) {
    char *dir = temp_dir(), fifo[4200], cmd[8800], *out = NULL;
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK_INT(mkfifo(fifo, 0600), 0);
    const char *bad[] = {"/dev/zero", fifo, dir};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "predict --profile-file %s --requests 5 --out %s/p%d --quiet",
                 bad[i], dir, i);
        CHECK_INT(servelab_cmd(cmd, &out), 2);
        CHECK_MSG(strstr(out, "cannot read: ") && strchr(out, '\n') == strrchr(out, '\n'), "%s",
                  out);
        free(out);
        snprintf(cmd, sizeof cmd, "sweep %s --out %s/s%d", bad[i], dir, i);
        CHECK_INT(servelab_cmd(cmd, &out), 2);
        CHECK_MSG(strstr(out, "cannot read: "), "%s", out);
        free(out);
        snprintf(cmd, sizeof cmd, "%s/p%d", dir, i);
        CHECK(access(cmd, F_OK) != 0); /* nothing written */
    }
    free(dir);
}
