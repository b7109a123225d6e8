/* capacity_answer: the capacity answer has one sentence (model/answer.h),
 * and whoever says it says the same words: `servelab capacity` on stdout
 * and in capacity.json, `servelab report` of its directory (summary.md,
 * report.html, summary.json), `predict --capacity`, and any reader of
 * capacity.json. Each answer is written to JSON and read back, and its
 * sentence must come back byte for byte. */
#include "model/answer.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sentence of a, and of a written to capacity.json's keys and read
 * back, are the same; returns the sentence (static). */
static const char *round_trip(const capacity_answer *a) {
    static char said[1024];
    char back[1024];
    answer_sentence(a, said, sizeof said);
    json_t *j = answer_json(a);
    char *text = json_dumps(j, JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
    json_t *again = json_loads(text, 0, NULL);
    capacity_answer b;
    char err[256] = "";
    CHECK_MSG(answer_read(again, &b, err, sizeof err) == 0, "%s", err);
    answer_sentence(&b, back, sizeof back);
    CHECK_STR(back, said);
    CHECK_STR(json_string_value(json_object_get(j, "sentence")), said);
    CHECK(b.said[0] == 0); /* said from its fields, not from the stored sentence */
    free(text);
    json_decref(j);
    json_decref(again);
    return said;
}

static capacity_answer searched(void) {
    capacity_answer a;
    answer_init(&a, ANSWER_SEARCHED);
    a.goal = 0.99;
    a.slo = (slo_spec){.ttft_ms = 750, .e2e_ms = 30000};
    a.status = ANSWER_FOUND;
    a.max = 23.4;
    a.ci_low = 22.1;
    a.ci_high = 24.6;
    a.precision = 0.03;
    a.tries = 9;
    return a;
}

TEST(capacity_answer_sentences_survive_capacity_json) {
    capacity_answer a = searched();
    CHECK_STR(round_trip(&a), "users start waiting at 23.4 req/s (95% CI 22.1-24.6): above it more "
                              "than 1% of requests miss TTFT <= 750 ms");
    a.upper_bound = 1;
    a.need_s = 334;
    a.full_s = 300;
    a.confirm_asked = 1;
    a.out_of_time = 1;
    CHECK_STR(round_trip(&a),
              "users start waiting at 23.4 req/s or below (95% CI 22.1-24.6; not confirmed; the "
              "search ran out of --max-time): above it more than 1% of requests miss TTFT <= 750 "
              "ms; an upper bound: to show an overload of 3% a probe needs 334 s of arrivals and "
              "its probes had 300 s");
    a.upper_bound = a.out_of_time = 0;
    a.confirm_asked = 1;
    a.confirmed = 1;
    a.confirm_load = 13.1;
    a.confirm_s = 204;
    a.capped = ANSWER_CAP_THROUGHPUT;
    a.probed_load = 13.1;
    a.longest_s = 196;
    a.overload_shown = 10.0 / 190;
    a.tp_low = 13.0728;
    a.tp_high = 13.8669;
    a.max = 13;
    a.ci_low = 12.7;
    a.ci_high = 13.9;
    a.slo = (slo_spec){.ttft_ms = 5000};
    a.need_s = 336;
    a.full_s = 65;
    CHECK_STR(round_trip(&a),
              "users start waiting at 13 req/s (95% CI 12.7-13.9; confirmed over 3.4 min at "
              "13.1 req/s): above it more than 1% of requests miss TTFT <= 5000 ms; probes passed "
              "up to 13.1 req/s, but the longest of them had 196 s of arrivals, enough to show an "
              "overload of 5.3% and not one of 3% (336 s): the answer is the low end of the "
              "13.07-13.87 req/s the server completes");
    a.capped = ANSWER_CAP_OVERLOAD;
    a.tp_low = a.tp_high = NAN;
    CHECK(strstr(round_trip(&a), "(336 s): the answer is 5.3% under it"));
    a = searched();
    a.confirm_asked = 1;
    a.confirmed = 1;
    a.confirm_load = 23.4;
    a.confirm_s = 246;
    a.binding = 2;
    CHECK_STR(round_trip(&a), "users start waiting at 23.4 req/s (95% CI 22.1-24.6; confirmed over "
                              "4.1 min at 23.4 req/s): above it more than 1% of requests miss E2E "
                              "<= 30 s");
    a = searched();
    a.by_concurrency = 1;
    a.max = 8;
    a.ci_low = 8;
    a.ci_high = 9;
    CHECK(strstr(round_trip(&a), "users start waiting above 8 concurrent users (95% CI 8-9)"));
    a = searched();
    a.status = ANSWER_NOT_REACHED;
    a.reached = 64;
    CHECK_STR(round_trip(&a), "not reached: at 64 req/s, the most probed, at least 99% of requests "
                              "still met TTFT <= 750 ms, E2E <= 30 s");
    a = searched();
    a.status = ANSWER_MISSED_AT_LOWEST;
    a.lowest = 1;
    a.binding = ANSWER_FAILURES;
    a.none_succeeded = 1;
    snprintf(a.failure, sizeof a.failure, "connect: Connection refused");
    CHECK_STR(round_trip(&a), "no request succeeded at 1 req/s, the lowest load: requests fail "
                              "(connect: Connection refused)");
    a.none_succeeded = 0;
    a.binding = 3; /* ttfa: its own bound, not "failures" */
    a.slo.ttfa_ms = 2000;
    CHECK_STR(round_trip(&a),
              "already missed at the lowest load: at 1 req/s more than 1% of "
              "requests miss TTFA <= 2000 ms (lower --start-rate to look below it)");
}

TEST(capacity_answer_predicted_survives_capacity_json) {
    capacity_answer a;
    answer_init(&a, ANSWER_PREDICTED);
    a.goal = 0.99;
    a.slo.ttft_ms = 5000;
    a.status = ANSWER_FOUND;
    a.max = 15.59;
    a.fail_load = 15.61;
    a.tries = 14;
    a.requests_a_run = 200000;
    a.wall_s = 7.6;
    CHECK_STR(round_trip(&a), "long-run capacity: 15.59 req/s (it fails at 15.61): above it more "
                              "than 1% of requests miss TTFT <= 5000 ms (14 virtual runs of 200000 "
                              "requests, 7.6 s)");
}

/* The first line of a file that starts with `prefix`, after it. */
static char *line_after(const char *text, const char *prefix) {
    const char *p = text ? strstr(text, prefix) : NULL;
    if (!p)
        return strdup("");
    p += strlen(prefix);
    return strndup(p, strcspn(p, "\n"));
}

/* `servelab report` of a capacity search opens with the sentence the
 * search printed, caveats and all (a search cut short by --max-time says
 * its answer is an upper bound, or the load less what its runs could not
 * show). */
TEST(capacity_answer_report_says_what_capacity_printed) {
    char *dir = temp_dir(), cmd[4096], path[4200];
    snprintf(cmd, sizeof cmd,
             "%s capacity --virtual --sim \"--profile tiny\" --slo ttft=1s,tpot=200ms "
             "--max-time 120 --twin off --out %s/c --quiet 2>/dev/null",
             servelab_bin(), dir);
    int code;
    char *printed = run_capture(cmd, &code);
    CHECK_MSG(code == 0 || code == 1, "exit %d: %s", code, printed);
    printed[strcspn(printed, "\n")] = 0;
    CHECK_MSG(printed[0], "capacity printed nothing");
    snprintf(path, sizeof path, "%s/c/capacity.json", dir);
    json_t *cj = json_load_file(path, 0, NULL);
    CHECK_STR(json_string_value(json_object_get(cj, "sentence")), printed);
    if (json_is_true(json_object_get(cj, "upper_bound")))
        CHECK_MSG(strstr(printed, "or below") && strstr(printed, "an upper bound"), "%s", printed);
    if (json_is_object(json_object_get(cj, "capped")))
        CHECK_MSG(strstr(printed, "probes passed up to"), "%s", printed);
    json_decref(cj);
    snprintf(cmd, sizeof cmd, "report %s/c", dir);
    servelab_ok(cmd);
    snprintf(path, sizeof path, "%s/c/report/summary.md", dir);
    char *md = read_file(path, NULL), *bold = line_after(md, "# servelab report\n\n**");
    size_t n = strlen(bold);
    CHECK_MSG(n > 2 && !strcmp(bold + n - 2, "**"), "%s", bold);
    bold[n - 2] = 0;
    CHECK_STR(bold, printed);
    snprintf(path, sizeof path, "%s/c/report/summary.json", dir);
    json_t *sj = json_load_file(path, 0, NULL);
    CHECK_STR(json_string_value(json_object_get(json_object_get(sj, "answer"), "sentence")),
              printed);
    json_decref(sj);
    free(md);
    free(bold);
    free(printed);
    free(dir);
}

/* predict --capacity prints the sentence its capacity.json reads back to. */
TEST(capacity_answer_predict_prints_what_its_file_says) {
    char *dir = temp_dir(), cmd[4096], path[4200];
    snprintf(cmd, sizeof cmd,
             "%s predict --capacity --profile tiny --slo ttft=1s --capacity-requests 2000 "
             "--out %s/p --quiet 2>/dev/null",
             servelab_bin(), dir);
    int code;
    char *printed = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "exit %d: %s", code, printed);
    printed[strcspn(printed, "\n")] = 0;
    CHECK_MSG(strstr(printed, "long-run capacity"), "%s", printed);
    snprintf(path, sizeof path, "%s/p/capacity.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    capacity_answer a;
    char err[256] = "", said[1024];
    CHECK_MSG(answer_read(j, &a, err, sizeof err) == 0, "%s", err);
    CHECK_INT(a.source, ANSWER_PREDICTED);
    answer_sentence(&a, said, sizeof said);
    CHECK_STR(said, printed);
    json_decref(j);
    free(printed);
    free(dir);
}

/* Probes that began on a server still working after --drain-timeout are
 * named in the sentence, whatever the answer, and survive capacity.json. */
TEST(capacity_answer_says_probes_met_a_backlog) {
    capacity_answer a = searched();
    const char *plain = round_trip(&a);
    CHECK(strstr(plain, "drain") == NULL);
    a.busy_probes = 2;
    CHECK_STR(round_trip(&a),
              "users start waiting at 23.4 req/s (95% CI 22.1-24.6): above it more than 1% of "
              "requests miss TTFT <= 750 ms; 2 of 9 probes began on a server still working after "
              "--drain-timeout: their verdicts met its backlog");
    a.status = ANSWER_NOT_REACHED;
    a.reached = 40;
    CHECK(strstr(round_trip(&a), "; 2 of 9 probes began on a server still working") != NULL);
}

/* What the answer rests on names how it was reached: bisection, or the
 * twin fitted to the probes (checked by them or not), or bisection with
 * what became of the twin; capacity.json keeps each part. */
TEST(capacity_answer_says_whether_the_twin_gave_it) {
    capacity_answer a = searched();
    a.requests_total = 9000;
    a.wall_s = 600;
    CHECK(strstr(round_trip(&a), "; it rests on 9 probes of 9000 requests in all over 10.0 min, "
                                 "by bisection") != NULL);
    a.twin = ANSWER_TWIN_CHECKED;
    a.twin_load = 23.4;
    a.twin_probes = 7;
    CHECK(strstr(round_trip(&a),
                 "over 10.0 min, the capacity its twin (fitted to 7 probes' "
                 "rows) predicts, which the probes at it do not contradict") != NULL);
    a.twin = ANSWER_TWIN_UNCHECKED;
    CHECK(strstr(round_trip(&a), "predicts, unchecked: --max-time left no room to probe it") !=
          NULL);
    a.twin = ANSWER_TWIN_REJECTED;
    a.twin_load = 30;
    snprintf(a.twin_why, sizeof a.twin_why,
             "probe 8 at 30 req/s went worse than each of the "
             "twin's 100 runs of it (300 of 900 met)");
    CHECK(strstr(round_trip(&a), ", by bisection (the twin said 30 req/s; probe 8 at 30 req/s "
                                 "went worse than each of the twin's 100 runs of it (300 of 900 "
                                 "met))") != NULL);
    a.twin = ANSWER_TWIN_UNFIT;
    snprintf(a.twin_why, sizeof a.twin_why, "it could not be fitted: no batch had 30 clean gaps");
    CHECK(strstr(round_trip(&a), ", by bisection (no twin: it could not be fitted: no batch had "
                                 "30 clean gaps)") != NULL);
    json_t *j = answer_json(&a);
    CHECK_STR(json_string_value(json_object_get(j, "twin")), "unfit");
    json_decref(j);
}
