/* defects_replay: the trace readers' fixed defects (round 2), each a case
 * that failed before its fix:
 *   D5  a trace from a pipe or a FIFO reads every record (the format is
 *       told from the line already read, the file opened once); a CSV
 *       from a pipe is refused as such, not read as "an empty file";
 *   D6  a line the reader cannot hold is an error naming its line, not the
 *       end of the file: a cap of 64 MiB a line, /dev/zero refused at
 *       once, a read error (a directory) said as one;
 *   L3  a --time-scale that makes the schedule longer than 7 days refused;
 *   L4  a --replay-start past the trace's end refused with the span, a
 *       --replay-duration past it read as "to the end";
 *   M4  what the readers took silently or refused wrongly: messages that
 *       are not chat messages, a prefix longer than its prompt or of two
 *       lengths, 10.0 as a count, CR line ends, a leap second, two CSV
 *       columns of one name;
 *   and the run's salt: a replayed record's tokens are drawn from its
 *       block's key (or its line) and the run's salt, so two traces
 *       replayed one after the other against one server each get exactly
 *       the prefix-cache hits they get alone, and the same salt gives the
 *       same tokens. */
#include "csv_util.h"
#include "support.h"
#include "test.h"
#include "workload/replay.h"
#include "workload/replay_read.h"

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *write_file(const char *name, const char *text) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* 0 and the trace in t, or -1 and the message in err. */
static int load(replay_trace *t, const char *path, replay_format f, char *err, size_t errlen) {
    return replay_load(t, path, f, 512, err, (int)errlen);
}

/* The message replay_load gives for `text` read as `f`, after the path. */
static const char *refusal(const char *text, replay_format f) {
    static char err[1024];
    replay_trace t;
    const char *path = write_file("bad.trace", text);
    CHECK_MSG(load(&t, path, f, err, sizeof err) == -1, "loaded: %s", text);
    CHECK_MSG(!strncmp(err, path, strlen(path)), "error without the file: %s", err);
    return err + strlen(path);
}

static void load_text_ok(replay_trace *t, const char *text, replay_format f) {
    char err[1024];
    CHECK_MSG(load(t, write_file("ok.trace", text), f, err, sizeof err) == 0, "%s", err);
}

/* 500 Mooncake records of exactly 64 bytes each: a 4 KiB buffer ends
 * exactly between two of them. */
static char *records_64_bytes(int n) {
    char *text = malloc((size_t)n * 64 + 1), *p = text;
    for (int i = 0; i < n; i++) {
        int len =
            sprintf(p, "{\"timestamp\": %d, \"input_length\": 20, \"output_length\": 2", i * 2);
        memset(p + len, ' ', (size_t)(62 - len));
        p[62] = '}';
        p[63] = '\n';
        p += 64;
    }
    *p = 0;
    return text;
}

/* A child that writes `text` to fd and exits. */
static pid_t writer(int fd, const char *text) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        size_t n = strlen(text), at = 0;
        while (at < n) {
            ssize_t w = write(fd, text + at, n - at);
            if (w <= 0)
                _exit(1);
            at += (size_t)w;
        }
        _exit(0);
    }
    return pid;
}

/* `text` read through a pipe as `f`: replay_load's return, the trace or
 * the message. */
static int load_from_pipe(replay_trace *t, const char *text, replay_format f, char *err,
                          size_t errlen) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = writer(fds[1], text);
    close(fds[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    int rc = load(t, path, f, err, errlen);
    close(fds[0]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return rc;
}

TEST(defects_replay_d5_a_trace_from_a_pipe_reads_every_record) {
    char *text = records_64_bytes(500), err[1024];
    replay_trace t;
    alarm(20);
    CHECK_MSG(load_from_pipe(&t, text, REPLAY_AUTO, err, sizeof err) == 0, "%s", err);
    CHECK_INT(t.format, REPLAY_MOONCAKE);
    CHECK_INT(t.n_in_file, 500);
    CHECK_INT(t.rec[0].line, 1);
    CHECK_INT(t.rec[499].line, 500);
    CHECK_INT(t.rec[499].t_us, 998000);
    replay_free(&t);
    free(text);
    alarm(0);
}

TEST(defects_replay_d5_a_trace_from_a_fifo_reads_every_record) {
    char *text = records_64_bytes(500), err[1024];
    replay_trace t;
    alarm(20); /* the earlier reader opened a FIFO twice and waited for a writer forever */
    char fifo[1024];
    snprintf(fifo, sizeof fifo, "%s/trace.fifo", temp_dir());
    CHECK(mkfifo(fifo, 0600) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int fd = open(fifo, O_WRONLY);
        _exit(fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text));
    }
    CHECK_MSG(load(&t, fifo, REPLAY_AUTO, err, sizeof err) == 0, "%s", err);
    CHECK_INT(t.n_in_file, 500);
    replay_free(&t);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    free(text);
    alarm(0);
}

/* A CSV is mapped: from a pipe it is refused, saying so, in one line,
 * not read as "an empty file". */
TEST(defects_replay_d5_a_csv_from_a_pipe_is_refused_as_such) {
    char err[1024];
    replay_trace t;
    const char *csv = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                      "5,ChatGPT,472,18,490,Conversation log\n";
    CHECK(load_from_pipe(&t, csv, REPLAY_AUTO, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "regular file") && strstr(err, "pipe") && !strstr(err, "empty") &&
                  !strchr(err, '\n'),
              "%s", err);
    CHECK(load_from_pipe(&t, csv, REPLAY_BURSTGPT, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "regular file"), "%s", err);
}

/* A sparse file: 10 records, a line of `hole` NULs, 10 more records. */
static const char *records_around_a_long_line(const char *name, long long hole) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", temp_dir(), name);
    FILE *f = fopen(path, "w");
    CHECK(f);
    for (int i = 0; i < 20; i++) {
        if (i == 10) {
            CHECK(fseeko(f, (off_t)hole, SEEK_CUR) == 0);
            fputc('\n', f);
        }
        fprintf(f, "{\"timestamp\": %d, \"input_length\": 20, \"output_length\": 2}\n", i * 10);
    }
    fclose(f);
    return path;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TEST(defects_replay_d6_a_line_too_long_to_hold_is_an_error_not_the_end) {
    char err[1024];
    replay_trace t;
    /* just over the cap: refused at its line, with the cap */
    const char *path = records_around_a_long_line("long.jsonl", (64LL << 20) + 1);
    CHECK(load(&t, path, REPLAY_AUTO, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "long.jsonl:11: a line longer than 64 MiB"), "%s", err);
    /* just under: read (and refused as the JSON it is not, at its line) */
    path = records_around_a_long_line("under.jsonl", (64LL << 20) - 2);
    CHECK(load(&t, path, REPLAY_AUTO, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "under.jsonl:11: ") && !strstr(err, "64 MiB"), "%s", err);
}

/* /dev/zero: refused at once, not read until memory runs out (held to
 * 2 GiB here, so that a reader without a cap fails instead of swapping
 * the machine). */
TEST(defects_replay_d6_dev_zero_is_refused_at_once) {
    char err[1024];
    replay_trace t;
#ifndef __SANITIZE_ADDRESS__
    struct rlimit lim = {2LL << 30, 2LL << 30};
    CHECK(setrlimit(RLIMIT_AS, &lim) == 0);
#endif
    double t0 = now_s();
    CHECK(load(&t, "/dev/zero", REPLAY_AUTO, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "/dev/zero:1: a line longer than 64 MiB"), "%s", err);
    CHECK_MSG(now_s() - t0 < 10, "/dev/zero took %.1f s to refuse", now_s() - t0);
}

/* A read error is said as one, not taken for an empty file. */
TEST(defects_replay_d6_a_read_error_is_not_the_end_of_the_file) {
    char err[1024];
    replay_trace t;
    CHECK(load(&t, temp_dir(), REPLAY_AUTO, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, ":1: cannot read: Is a directory"), "%s", err);
    CHECK(load(&t, temp_dir(), REPLAY_MOONCAKE, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "cannot read"), "%s", err);
}

/* The run, under a memory limit getline's buffer for a 1 GiB line does
 * not fit in: before, getline's ENOMEM ended the trace at line 10 and the
 * run replayed 10 of its 20 records (here to a closed port; to a server,
 * with exit 0). */
TEST(defects_replay_d6_a_run_refuses_the_line_it_cannot_hold) {
    if (servelab_is_sanitized())
        return; /* AddressSanitizer's shadow memory does not fit under ulimit -v */
    const char *path = records_around_a_long_line("huge.jsonl", 1LL << 30);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "ulimit -v 1000000; exec %s run --quiet --url http://127.0.0.1:9 --replay %s "
             "--out %s/run 2>&1",
             servelab_bin(), path, temp_dir());
    int code;
    double t0 = now_s();
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 2 && strstr(out, "huge.jsonl:11: a line longer than 64 MiB"), "exit %d: %s",
              code, out);
    CHECK_INT(count_of(out, "\n"), 1);
    CHECK_MSG(now_s() - t0 < 20, "took %.1f s", now_s() - t0);
    free(out);
}

/* Ten records 100 ms apart: a trace of 0.9 s. */
static void ten_records(replay_trace *t) {
    char text[2048] = "";
    for (int i = 0; i < 10; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "{\"timestamp_ms\": %d, \"input_tokens\": 50, \"output_tokens\": 2}\n", i * 100);
    load_text_ok(t, text, REPLAY_JSONL);
}

TEST(defects_replay_l3_a_time_scale_past_the_7_day_cap_is_refused) {
    replay_trace t;
    char err[1024];
    ten_records(&t);
    replay_window w = {.time_scale = 1e-300};
    CHECK(replay_select(&t, &w, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "--time-scale 1e-300") && strstr(err, "7 days") && !strchr(err, '\n'),
              "%s", err);
    replay_free(&t);
    /* 0.9 s at 1.4e-6 is 7.4 days: refused; at 1.6e-6, 6.5 days: kept */
    ten_records(&t);
    w.time_scale = 1.4e-6;
    CHECK(replay_select(&t, &w, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "at least 1.49e-06"), "%s", err);
    replay_free(&t);
    ten_records(&t);
    w.time_scale = 1.6e-6;
    CHECK_MSG(replay_select(&t, &w, err, sizeof err) == 0, "%s", err);
    int64_t *due;
    CHECK_INT(replay_due_times(&t, &due), 10);
    CHECK_INT(due[9], 562500000000LL); /* 0.9 s / 1.6e-6, in microseconds: no overflow */
    free(due);
    replay_free(&t);
}

TEST(defects_replay_l4_a_window_past_the_trace_is_refused_or_reaches_its_end) {
    replay_trace t;
    char err[1024];
    const double starts[] = {1e300, 9.3e12, 1e20, 0.95};
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
        ten_records(&t);
        replay_window w = {.start_s = starts[i], .time_scale = 1};
        CHECK_MSG(replay_select(&t, &w, err, sizeof err) == -1, "start %g kept %zu records",
                  starts[i], t.n);
        CHECK_MSG(strstr(err, "past the trace's last record") && strstr(err, "spans 0.900 s"), "%s",
                  err);
        replay_free(&t);
    }
    /* a start at the last record keeps it */
    ten_records(&t);
    replay_window w = {.start_s = 0.9, .time_scale = 1};
    CHECK_MSG(replay_select(&t, &w, err, sizeof err) == 0, "%s", err);
    CHECK_INT(t.n, 1);
    replay_free(&t);
    /* a duration past the end: to the end, all of it */
    const double durations[] = {1e300, 9.3e12, 1e20};
    for (size_t i = 0; i < sizeof durations / sizeof *durations; i++) {
        ten_records(&t);
        w = (replay_window){.start_s = 0.25, .duration_s = durations[i], .time_scale = 1};
        CHECK_MSG(replay_select(&t, &w, err, sizeof err) == 0, "duration %g: %s", durations[i],
                  err);
        CHECK_INT(t.n, 7);
        CHECK_INT(replay_trace_line(&t, 0), 4);
        json_t *j = replay_json(&t); /* meta.json: the window came to the trace's end */
        CHECK(json_is_null(json_object_get(j, "window_duration_s")));
        json_decref(j);
        replay_free(&t);
    }
}

TEST(defects_replay_m4_messages_must_be_chat_messages) {
    const char *bad[] = {"[1, 2, 3]", "[{\"role\": 5}]", "[{\"role\": \"user\"}]",
                         "[{\"role\": \"user\", \"content\": 7}]",
                         "[{\"role\": \"user\", \"content\": \"hi\"}, \"x\"]"};
    const int item[] = {1, 1, 1, 1, 2};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[256], want[128];
        snprintf(text, sizeof text,
                 "{\"timestamp_ms\": 0, \"output_tokens\": 1, \"messages\": [{\"role\": "
                 "\"user\", \"content\": \"ok\"}]}\n"
                 "{\"timestamp_ms\": 1, \"output_tokens\": 1, \"messages\": %s}\n",
                 bad[i]);
        snprintf(want, sizeof want,
                 ":2: \"messages\" item %d must be an object with a string \"role\" and a string "
                 "\"content\"",
                 item[i]);
        const char *err = refusal(text, REPLAY_JSONL);
        CHECK_MSG(strstr(err, want), "%s: %s", bad[i], err);
    }
}

TEST(defects_replay_m4_a_prefix_fits_its_prompt_and_has_one_length) {
    CHECK(strstr(refusal("{\"timestamp_ms\": 0, \"input_tokens\": 10, \"output_tokens\": 1, "
                         "\"prefix_id\": \"sys\", \"prefix_tokens\": 100}\n",
                         REPLAY_JSONL),
                 ":1: \"prefix_tokens\" 100 is more than \"input_tokens\" 10"));
    const char *err = refusal("{\"timestamp_ms\": 0, \"input_tokens\": 90, \"output_tokens\": 1, "
                              "\"prefix_id\": \"sys\", \"prefix_tokens\": 32}\n"
                              "{\"timestamp_ms\": 1, \"input_tokens\": 90, \"output_tokens\": 1, "
                              "\"prefix_id\": 7, \"prefix_tokens\": 40}\n"
                              "{\"timestamp_ms\": 2, \"input_tokens\": 90, \"output_tokens\": 1, "
                              "\"prefix_id\": \"sys\", \"prefix_tokens\": 64}\n",
                              REPLAY_JSONL);
    CHECK_MSG(strstr(err, ":3: prefix_id \"sys\" is 64 tokens long here and 32 on line 1"), "%s",
              err);
    /* no prefix_tokens is --replay-block-tokens (512 here) */
    err = refusal("{\"timestamp_ms\": 0, \"input_tokens\": 900, \"output_tokens\": 1, "
                  "\"prefix_id\": 7}\n"
                  "{\"timestamp_ms\": 1, \"input_tokens\": 90, \"output_tokens\": 1, "
                  "\"prefix_id\": \"7\", \"prefix_tokens\": 40}\n",
                  REPLAY_JSONL);
    CHECK_MSG(strstr(err, ":2: prefix_id \"7\" is 40 tokens long here and 512 on line 1"), "%s",
              err);
    /* one id, one length, many records: read */
    replay_trace t;
    static char text[32768];
    text[0] = 0;
    for (int i = 0; i < 200; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "{\"timestamp_ms\": %d, \"input_tokens\": 50, \"output_tokens\": 1, "
                 "\"prefix_id\": %d, \"prefix_tokens\": %d}\n",
                 i, i % 5, 10 + i % 5);
    load_text_ok(&t, text, REPLAY_JSONL);
    CHECK_INT(t.n, 200);
    replay_free(&t);
}

TEST(defects_replay_m4_a_whole_number_written_as_a_float_is_a_count) {
    replay_trace t;
    load_text_ok(&t,
                 "{\"timestamp\": 0, \"input_length\": 10.0, \"output_length\": 1e1}\n"
                 "{\"timestamp\": 1, \"input_length\": 0.0, \"output_length\": 3.0, "
                 "\"hash_ids\": [1]}\n",
                 REPLAY_MOONCAKE);
    CHECK_INT(t.rec[0].input_tokens, 10);
    CHECK_INT(t.rec[0].output_tokens, 10);
    CHECK_INT(t.rec[1].input_tokens, 1);
    replay_free(&t);
    load_text_ok(&t,
                 "{\"timestamp_ms\": 0, \"input_tokens\": 40.0, \"output_tokens\": 2.0, "
                 "\"prefix_id\": \"a\", \"prefix_tokens\": 32.0}\n",
                 REPLAY_JSONL);
    CHECK_INT(t.rec[0].prefix_tokens, 32);
    replay_free(&t);
    CHECK(strstr(refusal("{\"timestamp\": 0, \"input_length\": 10.5, \"output_length\": 1}\n",
                         REPLAY_MOONCAKE),
                 ":1: \"input_length\" must be a whole number"));
    CHECK(strstr(refusal("{\"timestamp\": 0, \"input_length\": 1e300, \"output_length\": 1}\n",
                         REPLAY_MOONCAKE),
                 ":1: \"input_length\" must be a whole number"));
    /* a time past 317 years is said as such, not as "must be >= 0" */
    CHECK(strstr(refusal("{\"timestamp\": 1e20, \"input_length\": 1, \"output_length\": 1}\n",
                         REPLAY_MOONCAKE),
                 ":1: \"timestamp\" 1e+20 is past the latest time a trace may hold"));
}

TEST(defects_replay_m4_cr_line_ends_read_as_lines_or_are_named) {
    replay_trace t;
    load_text_ok(&t,
                 "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\r"
                 "{\"timestamp\": 5, \"input_length\": 20, \"output_length\": 1}\r\r"
                 "{\"timestamp\": 9, \"input_length\": 30, \"output_length\": 1}\r",
                 REPLAY_AUTO);
    CHECK_INT(t.format, REPLAY_MOONCAKE);
    CHECK_INT(t.n, 3);
    CHECK_INT(t.rec[2].line, 4); /* the empty line between the CRs is line 3 */
    CHECK_INT(t.rec[2].input_tokens, 30);
    replay_free(&t);
    /* CRLF, and a CR at the very end, as before */
    load_text_ok(&t,
                 "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\r\n"
                 "{\"timestamp\": 5, \"input_length\": 20, \"output_length\": 1}\r",
                 REPLAY_AUTO);
    CHECK_INT(t.n, 2);
    CHECK_INT(t.rec[1].line, 2);
    replay_free(&t);
    /* a CRLF whose CR is the last byte of one read and its LF the first
     * of the next (reads are 64 KiB) is one line end */
    static char big[70000];
    int len =
        snprintf(big, sizeof big, "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}");
    memset(big + len, ' ', (size_t)(65535 - len));
    strcpy(big + 65535, "\r\n{\"timestamp\": 5, \"input_length\": 20, \"output_length\": 1}\n");
    load_text_ok(&t, big, REPLAY_AUTO);
    CHECK_INT(t.n, 2);
    CHECK_INT(t.rec[1].line, 2);
    replay_free(&t);
    /* a CSV: named, since its rows end at LF */
    const char *err = refusal("TIMESTAMP,ContextTokens,GeneratedTokens\r"
                              "2023-11-16 18:17:03.97,10,5\r",
                              REPLAY_AUTO);
    CHECK_MSG(strstr(err, ":1: the file ends its lines with CR alone"), "%s", err);
}

TEST(defects_replay_m4_a_leap_second_is_the_next_minutes_first) {
    int64_t leap, next;
    const char *s = "2016-12-31 23:59:60.25", *n = "2017-01-01 00:00:00.25";
    CHECK(replay_parse_datetime(s, strlen(s), &leap) == 0);
    CHECK(replay_parse_datetime(n, strlen(n), &next) == 0);
    CHECK_INT(leap, next);
    s = "2015-06-30T23:59:60Z";
    n = "2015-07-01 00:00:00";
    CHECK(replay_parse_datetime(s, strlen(s), &leap) == 0);
    CHECK(replay_parse_datetime(n, strlen(n), &next) == 0);
    CHECK_INT(leap, next);
    s = "2016-12-31 23:59:61";
    CHECK(replay_parse_datetime(s, strlen(s), &leap) == -1);
    replay_trace t;
    load_text_ok(&t,
                 "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                 "2016-12-31 23:59:59.5,10,5\n"
                 "2016-12-31 23:59:60.5,10,5\n"
                 "2017-01-01 00:00:00.75,10,5\n",
                 REPLAY_AUTO);
    CHECK_INT(t.n, 3);
    CHECK_INT(t.rec[1].t_us - t.rec[0].t_us, 1000000);
    CHECK_INT(t.rec[2].t_us - t.rec[1].t_us, 250000);
    replay_free(&t);
}

TEST(defects_replay_m4_two_csv_columns_of_one_name_are_refused) {
    const char *err = refusal("Timestamp,Model,Request tokens,Response tokens,request tokens\n"
                              "1,ChatGPT,10,5,20\n",
                              REPLAY_AUTO);
    CHECK_MSG(strstr(err, ":1: two columns named 'Request tokens' (columns 3 and 5)"), "%s", err);
    err = refusal("TIMESTAMP,ContextTokens,GeneratedTokens,TIMESTAMP\n"
                  "2023-11-16 18:17:03.97,10,5,2023-11-16 18:17:03.97\n",
                  REPLAY_AZURE);
    CHECK_MSG(strstr(err, ":1: two columns named 'TIMESTAMP' (columns 1 and 4)"), "%s", err);
    /* a column the reader does not use may repeat */
    replay_trace t;
    load_text_ok(&t,
                 "Timestamp,Model,Request tokens,Response tokens,Model\n"
                 "1,ChatGPT,10,5,x\n",
                 REPLAY_AUTO);
    CHECK_INT(t.n, 1);
    replay_free(&t);
}

/* Mooncake lines: `in` tokens of these hash ids, at t_ms. */
static void mooncake_line(char *buf, size_t cap, int t_ms, int in, const char *ids) {
    snprintf(buf + strlen(buf), cap - strlen(buf),
             "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 2, \"hash_ids\": "
             "[%s]}\n",
             t_ms, in, ids);
}

/* Every record's token ids (input_tokens of them), malloc'd. */
static int32_t **all_ids(const replay_trace *t) {
    int32_t **ids = calloc(t->n, sizeof *ids);
    for (size_t k = 0; k < t->n; k++) {
        ids[k] = malloc((size_t)t->rec[k].input_tokens * sizeof **ids);
        CHECK_INT(replay_token_ids(t, k, ids[k]), t->rec[k].input_tokens);
    }
    return ids;
}

static void free_ids(int32_t **ids, size_t n) {
    for (size_t k = 0; k < n; k++)
        free(ids[k]);
    free(ids);
}

TEST(defects_replay_salt_the_same_salt_the_same_tokens_another_salt_none_shared) {
    char text[2048] = "";
    mooncake_line(text, sizeof text, 0, 1400, "7, 8, 9");
    mooncake_line(text, sizeof text, 1, 1300, "7, 8, 10");
    mooncake_line(text, sizeof text, 2, 1100, "7"); /* past its one block, its own */
    mooncake_line(text, sizeof text, 3, 512, "8");
    replay_trace a, b;
    load_text_ok(&a, text, REPLAY_MOONCAKE);
    load_text_ok(&b, text, REPLAY_MOONCAKE);
    replay_set_salt(&a, 0x5eed);
    replay_set_salt(&b, 0x5eed);
    int32_t **x = all_ids(&a), **y = all_ids(&b);
    for (size_t k = 0; k < a.n; k++)
        CHECK_MSG(!memcmp(x[k], y[k], (size_t)a.rec[k].input_tokens * sizeof **x),
                  "record %zu differs under one salt", k);
    /* within the run, shared hash ids are shared blocks, and only those */
    size_t block = 512 * sizeof **x;
    CHECK(!memcmp(x[0], x[1], 2 * block));
    CHECK(memcmp(x[0] + 1024, x[1] + 1024, 276 * sizeof **x));
    CHECK(!memcmp(x[0], x[2], block));
    CHECK(memcmp(x[0] + 512, x[2] + 512, block));
    CHECK(!memcmp(x[0] + 512, x[3], block));
    free_ids(y, b.n);

    /* another salt: no block, and no record's own tokens, in common */
    replay_set_salt(&b, 0x5eee);
    y = all_ids(&b);
    for (size_t k = 0; k < a.n; k++) {
        int same = 0, n = a.rec[k].input_tokens;
        for (int i = 0; i < n; i++)
            same += x[k][i] == y[k][i];
        CHECK_MSG(same < n / 100 + 3, "record %zu: %d of %d tokens the same under two salts", k,
                  same, n);
        for (int at = 0; at + 16 <= n; at += 16)
            CHECK_MSG(memcmp(x[k] + at, y[k] + at, 16 * sizeof **x), "record %zu: block at %d", k,
                      at);
    }
    free_ids(x, a.n);
    free_ids(y, b.n);
    replay_free(&a);
    replay_free(&b);

    /* a plain JSONL prefix_id too */
    const char *plain = "{\"timestamp_ms\": 0, \"input_tokens\": 40, \"output_tokens\": 1, "
                        "\"prefix_id\": \"sys\", \"prefix_tokens\": 32}\n";
    load_text_ok(&a, plain, REPLAY_JSONL);
    load_text_ok(&b, plain, REPLAY_JSONL);
    replay_set_salt(&b, 1);
    x = all_ids(&a);
    y = all_ids(&b);
    CHECK(memcmp(x[0], y[0], 16 * sizeof **x));
    free_ids(x, a.n);
    free_ids(y, b.n);
    replay_free(&a);
    replay_free(&b);
}

/* A trace of records 100 ms apart, each of these hash ids (512 tokens
 * an id), written to `name`; into want, each record's prefix-cache hit
 * when replayed alone on a fresh server: the longest run of leading ids
 * an earlier record has, in blocks of 512, but never the last 16-token
 * block of the prompt (the server computes a prompt's last token). */
static char *shared_trace(const char *name, int n, const int ids[][4], const int *n_ids,
                          int *want) {
    char text[4096] = "";
    for (int i = 0; i < n; i++) {
        char list[64] = "";
        for (int b = 0; b < n_ids[i]; b++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", b ? ", " : "",
                     ids[i][b]);
        mooncake_line(text, sizeof text, i * 100, 512 * n_ids[i], list);
        int shared = 0;
        for (int j = 0; j < i; j++) {
            int k = 0;
            while (k < n_ids[i] && k < n_ids[j] && ids[i][k] == ids[j][k])
                k++;
            shared = k > shared ? k : shared;
        }
        int tokens = 512 * n_ids[i], cap = (tokens - 1) / 16 * 16;
        want[i] = 512 * shared < cap ? 512 * shared : cap;
    }
    return strdup(write_file(name, text));
}

/* `run --replay PATH` against the simulator on `port`, into DIR/NAME,
 * with EXTRA; checks every row's cached_tokens against want (by its
 * trace line) and returns their sum. */
static long replay_and_check_hits(int port, const char *path, const char *extra, const char *dir,
                                  const char *name, const int *want, int n) {
    char args[4096];
    snprintf(args, sizeof args,
             "run --quiet --no-sampling --url http://127.0.0.1:%d --replay %s --time-scale 2 "
             "--ignore-eos %s --out %s/%s",
             port, path, extra, dir, name);
    servelab_ok(args);
    snprintf(args, sizeof args, "%s/%s/requests.csv", dir, name);
    csv_table *t = csv_read(args);
    CHECK_MSG(t && t->n_rows == n, "%s: %d rows", args, t ? t->n_rows : -1);
    long sum = 0;
    for (int r = 0; r < t->n_rows; r++) {
        int i = (int)csv_num(t, r, "trace_line") - 1;
        CHECK(i >= 0 && i < n);
        CHECK_STR(csv_get(t, r, "error"), "");
        CHECK_MSG((int)csv_num(t, r, "cached_tokens") == want[i],
                  "%s, line %d: %g tokens cached, %d alone", name, i + 1,
                  csv_num(t, r, "cached_tokens"), want[i]);
        sum += want[i];
    }
    csv_free(t);
    return sum;
}

/* The salt meta.json's config records for the run DIR/NAME. */
static char *recorded_salt(const char *dir, const char *name) {
    char p[2048];
    snprintf(p, sizeof p, "%s/%s/meta.json", dir, name);
    json_t *meta = json_load_file(p, 0, NULL);
    CHECK_MSG(meta, "no %s", p);
    json_t *salt = json_object_get(json_object_get(meta, "config"), "cache_bust_salt");
    CHECK_MSG(json_is_string(salt), "%s: config.cache_bust_salt is not a string", p);
    char *out = strdup(json_string_value(salt));
    json_decref(meta);
    return out;
}

/* Two traces whose hash ids both count from 0, as every published
 * Mooncake trace's do, replayed one after the other against ONE server:
 * each gets exactly the prefix-cache hits it gets alone (before, the
 * second found the first's blocks under its own ids). The run's salt is
 * recorded, and a run given it again sends the same tokens: all hit. */
TEST(defects_replay_salt_two_traces_on_one_server_share_nothing) {
    enum { NA = 6, NB = 6 };
    static const int ids_a[NA][4] = {{0, 1, 2}, {0, 1, 3}, {4}, {0, 5}, {4, 6}, {0, 1, 2, 7}};
    static const int n_a[NA] = {3, 3, 1, 2, 2, 4};
    static const int ids_b[NB][4] = {{0, 1}, {2}, {0, 1, 4}, {2, 3}, {5}, {0, 6}};
    static const int n_b[NB] = {2, 1, 3, 2, 1, 2};
    int want_a[NA], want_b[NB], all_a[NA];
    char *a = shared_trace("a.jsonl", NA, ids_a, n_a, want_a);
    char *b = shared_trace("b.jsonl", NB, ids_b, n_b, want_b);
    char *dir = temp_dir();
    sim_proc p = sim_start("--profile tiny");
    long hits = replay_and_check_hits(p.port, a, "", dir, "a", want_a, NA);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_hits_total"), hits);
    hits += replay_and_check_hits(p.port, b, "", dir, "b", want_b, NB);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_hits_total"), hits);
    /* trace a again with run a's salt: the same prompts, every one cached
     * but its last block */
    char *salt = recorded_salt(dir, "a"), *salt_b = recorded_salt(dir, "b"), extra[128];
    CHECK_MSG(strcmp(salt, salt_b), "runs a and b drew one salt, %s", salt);
    snprintf(extra, sizeof extra, "--cache-bust-salt %s", salt);
    for (int i = 0; i < NA; i++)
        all_a[i] = (512 * n_a[i] - 1) / 16 * 16;
    hits += replay_and_check_hits(p.port, a, extra, dir, "a-again", all_a, NA);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_hits_total"), hits);
    sim_stop(&p);
    free(salt);
    free(salt_b);
    free(a);
    free(b);
}
