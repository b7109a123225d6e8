/* t5020-client-errors: failures the client must not blame on the server, and
 * what the client says about the failures it records.
 *
 * A client short of file descriptors (a child whose RLIMIT_NOFILE is
 * lowered with `ulimit -n`) records its own failures as `client`, never as
 * `connect`, through both HTTP clients; and a run whose peak of connections
 * cannot fit within the limit is refused before any traffic, with one line
 * and exit 2. */
#include "csv_util.h"
#include "hostile_server.h"
#include "support.h"
#include "test.h"

#include <string.h>

/* `servelab run --quiet --no-sampling ARGS` with its open-file limit
 * lowered to `nofile` (soft and hard: raise_fd_limit cannot undo it);
 * returns the exit code, and the output (stdout and stderr) in *out. */
static int run_limited(int nofile, const char *args, char **out) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ulimit -n %d && exec %s run --quiet --no-sampling %s 2>&1", nofile,
             servelab_bin(), args);
    int code;
    char *o = run_capture(cmd, &code);
    if (out)
        *out = o;
    else
        free(o);
    return code;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

static csv_table *rows_in(const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK_MSG(t != NULL, "no %s", path);
    return t;
}

/* A cap the limit cannot hold, and an uncapped burst (--rate inf) that it
 * cannot hold: each refused before any connection, with one line, exit 2. */
TEST(client_fd_limit_refuses_a_peak_it_cannot_hold) {
    hostile_script s = {.modes = {HOSTILE_GOOD}, .n_modes = 1};
    hostile_server h = hostile_start(&s);
    char *dir = temp_dir(), args[1024], *out;
    const char *cases[][2] = {{"--rate 100 --requests 300 --concurrency 200", "--concurrency 200"},
                              {"--rate inf --requests 300", "all 300 requests"},
                              {"--rate 1000 --requests 300 --timeout 5", "all 300 requests"}};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "--url http://127.0.0.1:%d --model m %s --out %s/r%d", h.port,
                 cases[i][0], dir, i);
        int code = run_limited(64, args, &out);
        CHECK_MSG(code == 2, "%s: exit %d: %s", cases[i][0], code, out);
        CHECK_MSG(strstr(out, cases[i][1]) && strstr(out, "ulimit -n 64"), "%s: %s", cases[i][0],
                  out);
        CHECK_MSG(count_lines(out) == 1, "%s: more than one line: %s", cases[i][0], out);
        free(out);
    }
    CHECK_INT(hostile_count(&h.stats->connections), 0); /* not even the probe */
    /* a limit that holds them: the same burst runs */
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --model m --rate inf --requests 300 "
             "--out %s/ok",
             h.port, dir);
    int code = run_limited(1024, args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    free(out);
    hostile_stop(&h);
}

/* An uncapped schedule longer than --timeout is not refused (its peak is
 * the server's doing), so against a silent server it runs out of
 * descriptors halfway: those requests are the client's failures. */
static void runs_out_of_descriptors(const char *client) {
    hostile_script s = {.modes = {HOSTILE_SILENT}, .n_modes = 1};
    hostile_server h = hostile_start(&s);
    char *dir = temp_dir(), args[1024], *out, path[1100];
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --model m --http-client %s --prompts random:8:4 "
             "--rate 200 --arrival constant --requests 300 --timeout 1 --out %s/run",
             h.port, client, dir);
    int code = run_limited(64, args, &out);
    CHECK_MSG(code == 1, "exit %d (every request failed: 1): %s", code, out);
    snprintf(path, sizeof path, "%s/run", dir);
    csv_table *t = rows_in(path);
    CHECK_INT(t->n_rows, 300);
    int by_client = 0, timed_out = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const char *e = csv_get(t, i, "error");
        CHECK_MSG(!strcmp(e, "client") || !strcmp(e, "timeout"), "%s: row %d error '%s'", client, i,
                  e);
        by_client += !strcmp(e, "client");
        timed_out += !strcmp(e, "timeout");
    }
    printf("    %s: %d client, %d timeout\n", client, by_client, timed_out);
    CHECK_MSG(by_client >= 50 && timed_out >= 10, "%d client, %d timeout", by_client, timed_out);
    /* the summary counts the class by name */
    CHECK_MSG(strstr(out, "client ") != NULL, "summary table: %s", out);
    snprintf(path, sizeof path, "%s/run/summary.json", dir);
    char *sj = read_file(path, NULL), want[64];
    snprintf(want, sizeof want, "\"client\": %d", by_client);
    CHECK_MSG(sj && strstr(sj, want), "summary.json lacks %s", want);
    free(sj);
    free(out);
    csv_free(t);
    hostile_stop(&h);
}

TEST(client_out_of_descriptors_is_client_not_connect_builtin) {
    runs_out_of_descriptors("builtin");
}

TEST(client_out_of_descriptors_is_client_not_connect_libcurl) {
    runs_out_of_descriptors("libcurl");
}

/* ---- errors.csv ---- */

/* A whole RFC 4180 file: rows of fields, quotes undone. */
typedef struct rfc_csv {
    int n_rows;
    char *f[64][8]; /* at most 64 rows of 8 fields */
    int n_fields[64];
} rfc_csv;

static rfc_csv *rfc_read(const char *path) {
    char *s = read_file(path, NULL);
    CHECK_MSG(s != NULL, "no %s", path);
    rfc_csv *t = calloc(1, sizeof *t);
    const char *p = s;
    while (*p) {
        CHECK_MSG(t->n_rows < 64, "%s: too many rows", path);
        int r = t->n_rows++;
        for (;;) {
            CHECK_MSG(t->n_fields[r] < 8, "%s: row %d too wide", path, r);
            char *out = malloc(strlen(p) + 1);
            size_t k = 0;
            if (*p == '"') {
                for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                    if (*p == '"')
                        p++; /* a doubled quote */
                    out[k++] = *p;
                }
                CHECK_MSG(*p == '"', "%s: unterminated quote", path);
                p++;
            } else {
                while (*p && *p != ',' && *p != '\n')
                    out[k++] = *p++;
            }
            out[k] = 0;
            t->f[r][t->n_fields[r]++] = out;
            if (*p == ',') {
                p++;
                continue;
            }
            CHECK_MSG(*p == '\n', "%s: row %d: '%c' after a field", path, r, *p);
            p++;
            break;
        }
    }
    free(s);
    return t;
}

/* errors.csv against requests.csv: the header; one row per (error,
 * http_status) of the failed rows, with their count; each first request
 * one of them. Returns the table for more checks. */
static rfc_csv *check_errors_csv(const char *run_dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/errors.csv", run_dir);
    rfc_csv *e = rfc_read(path);
    CHECK(e->n_rows >= 1 && e->n_fields[0] == 5);
    const char *cols[] = {"error", "http_status", "count", "first_request_id", "body"};
    for (int j = 0; j < 5; j++)
        CHECK_STR(e->f[0][j], cols[j]);
    csv_table *t = rows_in(run_dir);
    int failed = 0, listed = 0;
    for (int i = 0; i < t->n_rows; i++)
        failed += *csv_get(t, i, "error") != 0;
    for (int r = 1; r < e->n_rows; r++) {
        CHECK_INT(e->n_fields[r], 5);
        int n = 0, first_found = 0;
        for (int i = 0; i < t->n_rows; i++) {
            if (strcmp(csv_get(t, i, "error"), e->f[r][0]) ||
                strcmp(csv_get(t, i, "http_status"), e->f[r][1]))
                continue;
            n++;
            first_found |= !strcmp(csv_get(t, i, "request_id"), e->f[r][3]);
        }
        CHECK_MSG(n == atoi(e->f[r][2]), "%s %s: errors.csv counts %s, requests.csv %d", e->f[r][0],
                  e->f[r][1], e->f[r][2], n);
        CHECK_MSG(first_found, "%s %s: first request %s is not one of them", e->f[r][0], e->f[r][1],
                  e->f[r][3]);
        listed += n;
    }
    CHECK_INT(listed, failed);
    csv_free(t);
    return e;
}

/* The row of errors.csv for (error, status), or -1. */
static int error_row(const rfc_csv *e, const char *error, const char *status) {
    for (int r = 1; r < e->n_rows; r++)
        if (!strcmp(e->f[r][0], error) && !strcmp(e->f[r][1], status))
            return r;
    return -1;
}

/* Against the simulator: injected faults of four classes, then a model it
 * does not serve. Every failed row is counted under its class and status,
 * and the first body of each says what the server said. */
TEST(client_errors_csv_counts_and_quotes_the_servers_words) {
    char *dir = temp_dir(), args[1024], path[1100], *out;
    sim_proc p = sim_start("--fault http429=0.15,http500=0.1,malformed=0.1,disconnect=0.1");
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 400 --requests 200 --prompts random:8:6 "
             "--out %s/faults",
             p.port, dir);
    int code = run_limited(4096, args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    free(out);
    snprintf(path, sizeof path, "%s/faults", dir);
    rfc_csv *e = check_errors_csv(path);
    int r429 = error_row(e, "http", "429"), r500 = error_row(e, "http", "500");
    CHECK_MSG(r429 > 0 && r500 > 0, "errors.csv has %d rows", e->n_rows);
    CHECK_MSG(strstr(e->f[r429][4], "\"message\":\"rate limit exceeded"), "429: %s", e->f[r429][4]);
    CHECK_MSG(error_row(e, "malformed", "200") > 0 && error_row(e, "disconnect", "200") > 0,
              "malformed and disconnect rows missing");
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --model gpt-4 --rate 400 --requests 20 "
             "--prompts random:8:6 --out %s/model",
             p.port, dir);
    code = run_limited(4096, args, &out);
    CHECK_MSG(code == 1, "exit %d (every request failed: 1): %s", code, out);
    free(out);
    snprintf(path, sizeof path, "%s/model", dir);
    e = check_errors_csv(path);
    CHECK_INT(e->n_rows, 2);
    CHECK_STR(e->f[1][0], "http");
    CHECK_STR(e->f[1][1], "404");
    CHECK_STR(e->f[1][2], "20");
    CHECK_MSG(strstr(e->f[1][4], "The model `gpt-4` does not exist."), "404: %s", e->f[1][4]);
    /* the file itself: a body with quotes and commas is quoted, quotes doubled */
    snprintf(path, sizeof path, "%s/model/errors.csv", dir);
    char *raw = read_file(path, NULL);
    CHECK_MSG(raw && strstr(raw, ",\"{\"\"error\"\":{\"\"message\"\":\"\"The model"), "%s", raw);
    free(raw);
    sim_stop(&p);
}

/* With --threads the threads' logs are merged into one errors.csv. */
TEST(client_errors_csv_with_threads) {
    char *dir = temp_dir(), args[1024], path[1100], *out;
    sim_proc p = sim_start("--fault http429=0.2");
    snprintf(args, sizeof args,
             "--url http://127.0.0.1:%d --rate 400 --requests 200 --prompts random:8:6 "
             "--threads 2 --out %s/threads",
             p.port, dir);
    int code = run_limited(4096, args, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    free(out);
    snprintf(path, sizeof path, "%s/threads", dir);
    rfc_csv *e = check_errors_csv(path);
    CHECK_MSG(error_row(e, "http", "429") > 0, "errors.csv has %d rows", e->n_rows);
    sim_stop(&p);
}

/* A 404 whose JSON body runs over several lines, through both clients:
 * the same one row, the body whole, its line ends kept inside quotes. */
TEST(client_errors_csv_keeps_a_multiline_404_body_through_both_clients) {
    hostile_script s = {.modes = {HOSTILE_NOT_FOUND, HOSTILE_GOOD}, .n_modes = 2};
    hostile_server h = hostile_start(&s);
    const char *clients[] = {"builtin", "libcurl"};
    for (int c = 0; c < 2; c++) {
        char *dir = temp_dir(), args[1024], path[1100], *out;
        snprintf(args, sizeof args,
                 "--url http://127.0.0.1:%d --model m --http-client %s --prompts random:8:4 "
                 "--rate 50 --requests 6 --out %s/run",
                 h.port, clients[c], dir);
        int code = run_limited(4096, args, &out);
        CHECK_MSG(code == 0, "exit %d: %s", code, out);
        free(out);
        snprintf(path, sizeof path, "%s/run", dir);
        rfc_csv *e = check_errors_csv(path);
        CHECK_MSG(e->n_rows == 2, "%s: %d rows", clients[c], e->n_rows);
        CHECK_STR(e->f[1][0], "http");
        CHECK_STR(e->f[1][1], "404");
        CHECK_STR(e->f[1][2], "3");
        CHECK_STR(e->f[1][3], "req-0");
        CHECK_STR(e->f[1][4], HOSTILE_NOT_FOUND_BODY);
    }
    hostile_stop(&h);
}

/* ---- the probe's warning ---- */

/* `servelab run` of two requests against h with `args`; its output. */
static char *probe_run(const hostile_server *h, const char *args) {
    char *dir = temp_dir(), cmd[1024], *out;
    snprintf(cmd, sizeof cmd,
             "--url http://127.0.0.1:%d --prompts random:8:4 --requests 2 --timeout 5 %s "
             "--out %s/run",
             h->port, args, dir);
    int code = run_limited(4096, cmd, &out);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    return out;
}

/* "cannot reach the server" only when no connection can be made; a model
 * list that did not come, or a --model it lacks, is said as such. */
TEST(client_probe_says_what_failed) {
    hostile_script s = {.modes = {HOSTILE_GOOD}, .n_modes = 1, .models_status = 404};
    hostile_server h = hostile_start(&s);
    char *out = probe_run(&h, "");
    CHECK_MSG(strstr(out, "the server did not list its models (HTTP 404); --model is needed") &&
                  !strstr(out, "cannot reach"),
              "%s", out);
    free(out);
    out = probe_run(&h, "--model m");
    CHECK_MSG(strstr(out, "did not list its models (HTTP 404), so --model m is not checked") &&
                  !strstr(out, "cannot reach"),
              "%s", out);
    free(out);
    hostile_stop(&h);
    s.models_status = 0;
    h = hostile_start(&s);
    out = probe_run(&h, "--model gpt-4");
    CHECK_MSG(strstr(out, "warning: --model gpt-4 is not among the models the server lists (m)"),
              "%s", out);
    free(out);
    out = probe_run(&h, "--model m");
    CHECK_MSG(!strstr(out, "models") && !strstr(out, "cannot reach"), "%s", out);
    free(out);
    int port = h.port;
    hostile_stop(&h);
    char args[512];
    snprintf(args, sizeof args, "--url http://127.0.0.1:%d --model m --requests 2 --out %s/refused",
             port, temp_dir());
    CHECK_INT(run_limited(4096, args, &out), 1); /* every request failed */
    CHECK_MSG(strstr(out, "cannot reach the server ("), "%s", out);
    free(out);
}

/* /v1/models accepted and never answered: the probe times out (10 s), and
 * that is what the warning says, not that the server is unreachable. */
TEST_SLOW(client_probe_timeout_is_not_unreachable) {
    hostile_script s = {.modes = {HOSTILE_GOOD}, .n_modes = 1, .models_status = -1};
    hostile_server h = hostile_start(&s);
    char *out = probe_run(&h, "");
    CHECK_MSG(strstr(out, "the server did not list its models (") &&
                  strstr(out, "; --model is needed") && !strstr(out, "cannot reach"),
              "%s", out);
    free(out);
    hostile_stop(&h);
}
