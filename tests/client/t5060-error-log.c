/* Tests of the error log (src/client/errorlog.c) in process: counts and
 * first words per class and status, the overflow entry that keeps the
 * counts whole, merging client threads' logs, the summary line's message
 * and the file's quoting. */
#include "client/errorlog.h"
#include "support.h"
#include "test.h"

#include <string.h>

static const char not_found[] = "{\"error\":{\"message\":\"The model `gpt-4` does not exist.\"}}";

TEST(errorlog_counts_each_pair_and_keeps_the_first_words) {
    error_log *log = calloc(1, sizeof *log);
    errorlog_note(log, ERR_CONNECT, 0, 0, NULL, 0);
    CHECK(!errorlog_has(log, ERR_CONNECT, 0)); /* no words yet: a later one may give some */
    errorlog_note(log, ERR_CONNECT, 0, 1, "Connection refused", 18);
    CHECK(errorlog_has(log, ERR_CONNECT, 0));
    errorlog_note(log, ERR_HTTP, 404, 7, not_found, strlen(not_found));
    errorlog_note(log, ERR_HTTP, 404, 3, "later words", 11);
    CHECK_INT(log->n, 2);
    CHECK_INT(log->e[0].count, 2);
    CHECK_INT(log->e[0].first, 1);
    CHECK_INT(log->e[1].count, 2);
    CHECK_INT(log->e[1].first, 7);
    CHECK_INT(log->e[1].body_len, strlen(not_found));
    /* words are cut at ERRLOG_BODY_MAX */
    static char big[ERRLOG_BODY_MAX + 100];
    memset(big, 'x', sizeof big);
    errorlog_note(log, ERR_HTTP, 500, 9, big, sizeof big);
    CHECK_INT(log->e[2].body_len, ERRLOG_BODY_MAX);
    free(log);
}

TEST(errorlog_past_its_entries_counts_the_rest_per_class) {
    error_log *log = calloc(1, sizeof *log);
    for (int s = 0; s < ERRLOG_ENTRIES + 10; s++)
        errorlog_note(log, ERR_HTTP, 400 + s, (uint32_t)s, "w", 1);
    errorlog_note(log, ERR_TIMEOUT, 200, 99, NULL, 0);
    size_t http = 0, other = 0;
    for (int i = 0; i < log->n; i++) {
        if (log->e[i].error == ERR_HTTP)
            http += log->e[i].count;
        if (log->e[i].http_status == -1)
            other += log->e[i].count;
    }
    CHECK_INT(http, ERRLOG_ENTRIES + 10);
    CHECK_INT(other, 11); /* ten http, one timeout */
    char *dir = temp_dir(), path[1100];
    CHECK_INT(errorlog_write(dir, log), 0);
    snprintf(path, sizeof path, "%s/errors.csv", dir);
    char *s = read_file(path, NULL);
    CHECK_MSG(s && strstr(s, "\nhttp,other,10,req-32,w\n") &&
                  strstr(s, "\ntimeout,other,1,req-99,\n"),
              "%s", s);
    free(s);
    free(log);
}

TEST(errorlog_merge_adds_counts_and_keeps_the_lowest_request) {
    error_log *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    errorlog_note(a, ERR_HTTP, 429, 10, "from a", 6);
    errorlog_note(b, ERR_HTTP, 429, 4, "from b", 6);
    errorlog_note(b, ERR_HTTP, 429, 12, "b again", 7);
    errorlog_note(b, ERR_CLIENT, 0, 5, "Too many open files", 19);
    errorlog_merge(a, b);
    CHECK_INT(a->n, 2);
    CHECK_INT(a->e[0].count, 3);
    CHECK_INT(a->e[0].first, 4);
    CHECK(!memcmp(a->e[0].body, "from b", 6));
    CHECK_INT(a->e[1].error, ERR_CLIENT);
    free(a);
    free(b);
}

TEST(errorlog_file_quotes_as_rfc4180_and_summary_lines_say_the_message) {
    error_log *log = calloc(1, sizeof *log);
    const char html[] = "<html>\r\n<body>Bad, \"gateway\"</body></html>";
    errorlog_note(log, ERR_HTTP, 502, 2, html, strlen(html));
    errorlog_note(log, ERR_HTTP, 404, 1, not_found, strlen(not_found));
    errorlog_note(log, ERR_DISCONNECT, 200, 3, "a\0b", 3);
    char *dir = temp_dir(), path[1100];
    CHECK_INT(errorlog_write(dir, log), 0);
    snprintf(path, sizeof path, "%s/errors.csv", dir);
    char *s = read_file(path, NULL);
    const char want[] =
        "error,http_status,count,first_request_id,body\n"
        "http,404,1,req-1,\"{\"\"error\"\":{\"\"message\"\":\"\"The model `gpt-4` does not "
        "exist.\"\"}}\"\n"
        "http,502,1,req-2,\"<html>\r\n<body>Bad, \"\"gateway\"\"</body></html>\"\n"
        "disconnect,200,1,req-3,a b\n";
    CHECK_STR(s, want);
    free(s);
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    FILE *f = fopen(path, "w");
    errorlog_print(f, log);
    fclose(f);
    s = read_file(path, NULL);
    CHECK_MSG(strstr(s, "error           http 404: 1, first req-1: The model `gpt-4` does not "
                        "exist.\n") &&
                  strstr(s, "error           http 502: 1, first req-2: <html>\n"),
              "%s", s);
    free(s);
    free(log);
}
