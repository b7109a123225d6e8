/* t7130-markdown-cells-hold-any-text: a metadata value (or a run folder's
 * name) with '|' or a line break stays one cell of summary.md's table
 * (round 3's M4: `y=a|b<LF>c` split the row and started a new one);
 * report.html and summary.csv already escaped them. */
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(markdown_cells_hold_pipes_and_line_breaks) {
    char *dir = temp_dir(), cmd[4096], path[4200];
    snprintf(cmd, sizeof cmd, "predict --requests 3 --out %s/r --quiet --metadata 'y=a|b\nc'", dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "report %s/r --out %s/rep", dir, dir);
    CHECK_INT(servelab_cmd(cmd, NULL), 0);
    snprintf(path, sizeof path, "%s/rep/summary.md", dir);
    char *md = read_file(path, NULL);
    CHECK(md != NULL);
    const char *row = md ? strstr(md, "| metadata |") : NULL;
    CHECK_MSG(row != NULL, "no metadata row in %s", path);
    if (row) {
        const char *end = strchr(row, '\n');
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(end - row), row);
        CHECK_MSG(strstr(line, "y=a\\|b c |") != NULL, "the row: %s", line);
        int bars = 0;
        for (const char *p = line; *p; p++)
            bars += *p == '|' && (p == line || p[-1] != '\\');
        CHECK_MSG(bars == 3, "%d cell walls in: %s", bars, line);
    }
    free(md);
    free(dir);
}
