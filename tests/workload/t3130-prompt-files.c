/* prompts: what a JSONL prompt file may hold, as workload_load reads it: a
 * class is a name of at most WORKLOAD_MAX_CLASS_BYTES bytes (a longer one is
 * refused at its line, before any request is sent), and a UTF-8 byte order
 * mark at the start of the file is skipped. */
#include "support.h"
#include "test.h"
#include "workload/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *prompt_file(const char *dir, const char *name, const char *text, size_t n) {
    char *path = malloc(1200);
    snprintf(path, 1200, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, n, f) == n);
    CHECK(fclose(f) == 0);
    return path;
}

/* A JSONL line {"prompt":"hi","class":"xxx..."} with a class of n bytes. */
static char *line_with_class(size_t n) {
    char *s = malloc(n + 64);
    size_t k = (size_t)sprintf(s, "{\"prompt\":\"hi\",\"class\":\"");
    memset(s + k, 'x', n);
    k += n;
    k += (size_t)sprintf(s + k, "\"}\n");
    s[k] = 0;
    return s;
}

TEST(prompts_class_longer_than_the_limit_is_refused_with_its_line) {
    char *dir = temp_dir();
    size_t sizes[] = {WORKLOAD_MAX_CLASS_BYTES + 1, 3000, 200000};
    for (int i = 0; i < 3; i++) {
        char *bad = line_with_class(sizes[i]);
        size_t n = strlen(bad) + 32;
        char *text = malloc(n);
        snprintf(text, n, "{\"prompt\":\"ok\"}\n%s", bad);
        char *path = prompt_file(dir, "long.jsonl", text, strlen(text));
        workload w;
        char err[512] = "", want[1300];
        CHECK_INT(workload_load(&w, path, NULL, err, sizeof err), -1);
        snprintf(want, sizeof want, "%s:2: ", path);
        CHECK_MSG(strstr(err, want) && strstr(err, "class") && strstr(err, "64 bytes"), "err: %s",
                  err);
        CHECK(strchr(err, '\n') == NULL);
        free(bad);
        free(text);
        free(path);
    }
    /* exactly the limit is a name like any other */
    char *ok = line_with_class(WORKLOAD_MAX_CLASS_BYTES);
    char *path = prompt_file(dir, "max.jsonl", ok, strlen(ok));
    workload w;
    char err[512] = "";
    CHECK_MSG(workload_load(&w, path, NULL, err, sizeof err) == 0, "err: %s", err);
    CHECK_INT(w.n_classes, 1);
    CHECK_INT(strlen(w.class_names[0]), WORKLOAD_MAX_CLASS_BYTES);
    workload_free(&w);
    free(ok);
    free(path);
    free(dir);
}

/* The run refuses the file before it starts: exit 2 and the file's line,
 * not a crash (a 200,000-byte class was a SIGSEGV in the row writer). */
TEST(prompts_run_with_a_long_class_stops_before_sending) {
    char *dir = temp_dir();
    char *bad = line_with_class(200000);
    char *path = prompt_file(dir, "huge.jsonl", bad, strlen(bad));
    char args[2600];
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:1 --model m --requests 3 --prompts %s "
             "--out %s/run",
             path, dir);
    char *out = NULL;
    int code = servelab_cmd(args, &out);
    CHECK_MSG(code == 2, "exit %d: %.300s", code, out ? out : "");
    CHECK_MSG(strstr(out, "huge.jsonl:1:") != NULL, "out: %.300s", out);
    free(out);
    free(bad);
    free(path);
    free(dir);
}

/* A UTF-8 byte order mark before the first line (some editors write one)
 * is skipped; anywhere else it is the bad JSON it always was. */
TEST(prompts_utf8_bom_at_the_start_is_accepted) {
    char *dir = temp_dir();
    static const char bom[] =
        "\xEF\xBB\xBF{\"prompt\":\"hi\",\"class\":\"a\"}\n{\"prompt\":\"yo\"}\n";
    char *path = prompt_file(dir, "bom.jsonl", bom, sizeof bom - 1);
    workload w;
    char err[512] = "";
    CHECK_MSG(workload_load(&w, path, NULL, err, sizeof err) == 0, "err: %s", err);
    CHECK_INT(w.n_items, 2);
    CHECK_STR(w.class_names[0], "a");
    CHECK_STR(w.items[0].text, "hi");
    workload_free(&w);
    free(path);

    static const char bom_crlf[] = "\xEF\xBB\xBF{\"prompt\":\"hi\"}\r\n";
    path = prompt_file(dir, "bom_crlf.jsonl", bom_crlf, sizeof bom_crlf - 1);
    CHECK_MSG(workload_load(&w, path, NULL, err, sizeof err) == 0, "err: %s", err);
    CHECK_INT(w.n_items, 1);
    workload_free(&w);
    free(path);

    static const char only_bom[] = "\xEF\xBB\xBF\n";
    path = prompt_file(dir, "only.jsonl", only_bom, sizeof only_bom - 1);
    CHECK_INT(workload_load(&w, path, NULL, err, sizeof err), -1);
    CHECK_MSG(strstr(err, "no prompts") != NULL, "err: %s", err);
    workload_free(&w);
    free(path);

    static const char late[] = "{\"prompt\":\"hi\"}\n\xEF\xBB\xBF{\"prompt\":\"yo\"}\n";
    path = prompt_file(dir, "late.jsonl", late, sizeof late - 1);
    CHECK_INT(workload_load(&w, path, NULL, err, sizeof err), -1);
    CHECK_MSG(strstr(err, "late.jsonl:2:") != NULL, "err: %s", err);
    workload_free(&w);
    free(path);
    free(dir);
}
