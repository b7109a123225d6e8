/* t8050-short-probes-answer-what-they-show: when --max-time cuts the probes
 * shorter than an overload of the precision needs to show, a load that
 * passed is not the answer: the longest run that passed there shows an
 * overload of d = 2 x W / (its arrivals - the ramp) or more, and the answer
 * is that load less d. On a real vLLM a load held through a search's
 * 3-minute confirmation then failed for a quarter to a half of 3,000
 * requests on a fresh start (docs/capacity.md).
 *
 * The engine: 8 slots, 50 tokens of 10 ms each, evenly spaced arrivals:
 * 16 req/s exactly, and the search finds 16 passing (nothing queues at the
 * service rate when nothing is random). With TTFT <= 5 s a 3% overload
 * needs 334 s of arrivals to show; 5 and 15 minutes leave probes of far
 * less, so the answer is 16 less what their runs could not show, and more
 * time shows more. There is no throughput probe with even arrivals. The
 * twin is off: its answer would be capped the same way, and its CPU is
 * the soft knee's tests'. */
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVEN_MD8_VIRTUAL                                                                           \
    "capacity --virtual --sim \"--profile tiny --max-num-seqs 8 --decode-base-ms 10 "              \
    "--decode-per-seq-ms 0 --prefill-per-token-ms 0\" --prompts random:8:50 --max-tokens 50 "      \
    "--ignore-eos --no-sampling --quiet --arrival constant --slo ttft=5s --seed 1000 --twin off"

static double number(const json_t *j, const char *key) {
    const json_t *v = json_object_get(j, key);
    CHECK_MSG(json_is_number(v), "%s is not a number", key);
    return json_number_value(v);
}

/* The search with --max-time `budget`: its answer, after checking that it
 * is the passing load less the overload its longest run there shows. */
static double capped_answer(const char *dir, const char *budget, double *shown) {
    char cmd[4096], path[4200], *out = NULL;
    snprintf(cmd, sizeof cmd, EVEN_MD8_VIRTUAL " --max-time %s --out %s/%s", budget, dir, budget);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    snprintf(path, sizeof path, "%s/%s/capacity.json", dir, budget);
    json_t *j = json_load_file(path, 0, NULL);
    CHECK_MSG(j, "no %s", path);
    const json_t *cap = json_object_get(j, "capped");
    CHECK_MSG(json_is_object(cap), "not capped: %s", out);
    CHECK_STR(json_string_value(json_object_get(cap, "by")), "overload");
    double probed = number(cap, "probed_load"), answer = number(j, "max_rate_rps");
    *shown = number(cap, "overload_shown");
    CHECK_MSG(fabs(probed - 16) < 1e-9, "passed up to %g req/s", probed);
    CHECK_MSG(*shown > 0.03 && number(cap, "longest_s") < number(j, "probe_seconds_needed"),
              "shown %g over %g s", *shown, number(cap, "longest_s"));
    /* the load less d, down to three digits, and not an upper bound */
    CHECK_MSG(answer <= probed / (1 + *shown) + 1e-9 && answer > probed / (1 + *shown) - 0.1,
              "%g against %g / (1 + %g)", answer, probed, *shown);
    CHECK(json_is_false(json_object_get(j, "upper_bound")));
    CHECK(number(j, "ci_low_rps") <= answer);
    char said[64];
    snprintf(said, sizeof said, "users start waiting at %.3g req/s (", answer);
    CHECK_MSG(strstr(out, said) && strstr(out, "probes passed up to 16 req/s, but the longest"),
              "%s", out);
    json_decref(j);
    free(out);
    return answer;
}

TEST(capacity_short_probes_answer_what_their_runs_show) {
    char *dir = temp_dir();
    double shown5, shown15;
    double at5 = capped_answer(dir, "5m", &shown5), at15 = capped_answer(dir, "15m", &shown15);
    /* longer probes show a smaller overload: the answer comes nearer 16 */
    CHECK_MSG(shown15 < shown5 && at15 > at5 && at15 < 16, "5 min: %g (%g); 15 min: %g (%g)", at5,
              shown5, at15, shown15);
    free(dir);
}
