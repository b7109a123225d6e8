/* A run that measured nothing, or failed more than it may, says so in its
 * exit code: every request failed is exit 1, and so is a share of failures
 * above --max-error-rate; under it, 0. And the one mapping from an outcome
 * to an exit code (common/outcome.h), which the commands and campaign.json
 * both read. */
#include "common/outcome.h"
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static int faulty_run(int port, const char *dir, const char *name, const char *extra, char **out) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "run --quiet --no-sampling --url http://127.0.0.1:%d --rate 200 --requests 100 "
             "--max-tokens 4 --out %s/%s %s",
             port, dir, name, extra);
    return servelab_cmd(cmd, out);
}

TEST(exit_1_past_max_error_rate) {
    char *dir = temp_dir(), *out;
    sim_proc p = sim_start("--fault http500=0.3 --seed 5");
    CHECK_INT(faulty_run(p.port, dir, "a", "--max-error-rate 0.05", &out), 1);
    CHECK_MSG(strstr(out, "requests failed (more than --max-error-rate)"), "%s", out);
    CHECK_INT(faulty_run(p.port, dir, "b", "--max-error-rate 0.9", &out), 0);
    CHECK_INT(faulty_run(p.port, dir, "c", "", &out), 0); /* default: only when all failed */
    char rows[1024];
    snprintf(rows, sizeof rows, "%s/c/requests.csv", dir);
    csv_table *t = csv_read(rows);
    int failed = 0;
    for (int i = 0; i < t->n_rows; i++)
        failed += strcmp(csv_get(t, i, "error"), "") != 0;
    CHECK_MSG(failed > 5 && failed < 95, "%d failed", failed);
    sim_stop(&p);
}

TEST(exit_1_when_every_request_failed) {
    char *dir = temp_dir(), *out;
    sim_proc p = sim_start("--fault http429=1");
    CHECK_INT(faulty_run(p.port, dir, "a", "", &out), 1);
    CHECK_MSG(strstr(out, "100 of 100 requests failed"), "%s", out);
    sim_stop(&p);
}

TEST(outcome_exit_code_is_the_documented_one) {
    CHECK_INT(outcome_exit_code(OUTCOME_OK, SIGINT), 0);
    CHECK_INT(outcome_exit_code(OUTCOME_FAILED, 0), 1);
    CHECK_INT(outcome_exit_code(OUTCOME_BAD_INPUT, 0), 2);
    CHECK_INT(outcome_exit_code(OUTCOME_STOPPED, SIGINT), 130);
    CHECK_INT(outcome_exit_code(OUTCOME_STOPPED, SIGHUP), 129);
    CHECK_INT(outcome_exit_code(OUTCOME_STOPPED, 0), 128 + SIGTERM); /* no signal seen: SIGTERM's */
}
