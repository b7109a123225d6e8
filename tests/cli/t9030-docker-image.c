/* The Docker image: scripts/docker_image.sh makes the debian:12 base images
 * with debootstrap when they are missing (no registry is needed), builds
 * the Dockerfile's image, checks that it answers --version and help and
 * holds no C compiler, and runs `servelab demo` in it with a folder of this
 * test mounted on /out. This test then reads what the container left there
 * with the servelab under test: every planned run of the demo is in it and
 * ended ok, its report regenerates from its rows, and its meta.json names
 * the commit this tree is at (passed in as the GIT_COMMIT build argument).
 * Where docker, a running daemon or debootstrap is missing, the test says
 * so in one line and passes only when SERVELAB_REQUIRE_DOCKER is unset:
 * .ci/run installs docker.io and debootstrap, starts dockerd
 * (scripts/dockerd_start.sh) and sets it, so there the image must build.
 * Under `make asan` it does not run: the image compiles its own servelab,
 * so a sanitized one here would only repeat the same minutes. */
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number in "N planned runs" of the demo's --dry-run plan. */
static int planned_demo_runs(void) {
    char *plan;
    int code = servelab_cmd("demo --dry-run", &plan);
    CHECK_MSG(code == 0, "demo --dry-run: %s", plan);
    const char *at = strstr(plan, " planned runs");
    CHECK_MSG(at, "no planned runs in: %s", plan);
    while (at > plan && at[-1] >= '0' && at[-1] <= '9')
        at--;
    int n = atoi(at);
    free(plan);
    return n;
}

/* The short commit `git` says this tree is at, as the Makefile takes it. */
static char *tree_commit(void) {
    int code;
    char *c = run_capture("git rev-parse --short HEAD 2>/dev/null || echo unknown", &code);
    CHECK(c && *c);
    c[strcspn(c, "\n")] = 0;
    return c;
}

/* The campaign the container wrote in out: the demo, complete, every
 * planned run ok with no failed request; each run's meta.json records
 * `commit` as the tool's git_commit. */
static void demo_output_is_whole(const char *out, const char *commit) {
    char path[1200];
    snprintf(path, sizeof path, "%s/campaign.json", out);
    json_error_t jerr;
    json_t *c = json_load_file(path, 0, &jerr);
    CHECK_MSG(c, "%s: %s", path, jerr.text);
    CHECK_STR(json_string_value(json_object_get(c, "name")), "demo");
    CHECK_MSG(!json_is_true(json_object_get(c, "interrupted")), "the demo was interrupted");
    json_t *runs = json_object_get(c, "status"); /* one entry per repetition of a run */
    CHECK_INT(json_array_size(runs), planned_demo_runs());
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        const char *dir = json_string_value(json_object_get(r, "dir"));
        CHECK_MSG(dir, "run %zu has no dir", i);
        CHECK_STR(json_string_value(json_object_get(r, "status")), "ok");
        CHECK_INT(json_integer_value(json_object_get(r, "failed")), 0);
        CHECK_INT(json_integer_value(json_object_get(r, "completed")),
                  json_integer_value(json_object_get(r, "requests")));
        snprintf(path, sizeof path, "%s/%s/meta.json", out, dir);
        json_t *meta = json_load_file(path, 0, &jerr);
        CHECK_MSG(meta, "%s: %s", path, jerr.text);
        json_t *tool = json_object_get(meta, "tool");
        CHECK_STR(json_string_value(json_object_get(tool, "git_commit")), commit);
        json_decref(meta);
    }
    json_decref(c);
}

TEST_SLOW(docker_image_builds_and_runs_the_demo) {
    if (servelab_is_sanitized()) {
        printf("  not run: the image builds its own servelab; `make test` runs this test\n");
        return;
    }
    char *dir = temp_dir(), cmd[1200];
    int code;
    snprintf(cmd, sizeof cmd, "sh scripts/docker_image.sh %s/mounted servelab:test 2>&1", dir);
    char *log = run_capture(cmd, &code);
    if (code == 3) { /* docker, its daemon or debootstrap is missing here */
        CHECK_MSG(!getenv("SERVELAB_REQUIRE_DOCKER"), "SERVELAB_REQUIRE_DOCKER is set: %s", log);
        printf("  not run: %s", log);
        free(log);
        return;
    }
    printf("%s", log); /* the build's and the demo's output, shown if a check fails */
    CHECK_MSG(code == 0, "scripts/docker_image.sh exited %d (its output is above)", code);
    free(log);
    char out[1100];
    snprintf(out, sizeof out, "%s/mounted/demo-out", dir);
    char *commit = tree_commit();
    demo_output_is_whole(out, commit);
    free(commit);
    snprintf(cmd, sizeof cmd, "report %s --check", out);
    char *check;
    code = servelab_cmd(cmd, &check);
    CHECK_MSG(code == 0, "the container's report does not match its rows: %s", check);
    free(check);
}
