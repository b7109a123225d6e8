/* slo: the SLO's one text form (parsed and written back), its human and
 * JSON forms, and the inputs refused with --slo's words. */
#include "model/slo.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void round_trip(const char *text, const char *canonical) {
    slo_spec a, b;
    char err[256] = "", out[256];
    CHECK_MSG(slo_parse(text, &a, err, sizeof err) == 0, "%s: %s", text, err);
    slo_format(&a, out, sizeof out);
    CHECK_STR(out, canonical);
    CHECK_MSG(slo_parse(out, &b, err, sizeof err) == 0, "%s: %s", out, err);
    CHECK(!memcmp(&a, &b, sizeof a));
}

TEST(slo_parse_and_format_round_trip) {
    round_trip("ttft=750ms,tpot=100ms", "ttft=750ms,tpot=100ms");
    round_trip("ttfa=2s,ttft=1s", "ttft=1000ms,ttfa=2000ms");
    round_trip("e2e=30s,tpot=50.5ms,ttft=0.5m,ttfa=1500us",
               "ttft=30000ms,tpot=50.5ms,e2e=30000ms,ttfa=1.5ms");
    round_trip("ttft=0.1ms", "ttft=0.1ms");
    slo_spec s = {.ttft_ms = 1.0 / 3};
    char out[128];
    slo_format(&s, out, sizeof out);
    slo_spec back;
    char err[128];
    CHECK(slo_parse(out, &back, err, sizeof err) == 0 && back.ttft_ms == s.ttft_ms);
    slo_spec none = {0};
    slo_format(&none, out, sizeof out);
    CHECK_STR(out, "");
    CHECK(!slo_has_bound(&none) && slo_has_bound(&s));
}

static void refused(const char *text, const char *msg) {
    slo_spec s;
    char err[256] = "";
    CHECK_MSG(slo_parse(text, &s, err, sizeof err) == -1, "%s was read", text);
    CHECK_STR(err, msg);
}

TEST(slo_parse_refuses_bare_numbers_unknown_bounds_and_repeats) {
    refused("ttft=750",
            "--slo: 'ttft=750' is not NAME=DURATION with a unit (e.g. ttft=750ms, e2e=30s)");
    refused("ttft", "--slo: 'ttft' is not NAME=DURATION with a unit (e.g. ttft=750ms, e2e=30s)");
    refused("ttft=0ms",
            "--slo: 'ttft=0ms' is not NAME=DURATION with a unit (e.g. ttft=750ms, e2e=30s)");
    refused("p99=1s", "--slo: unknown bound 'p99' (ttft, tpot, e2e, ttfa)");
    refused("ttft=1s,tpot=9ms,ttft=2s", "--slo: ttft is given twice");
}

TEST(slo_human_and_json_forms) {
    slo_spec s;
    char err[128], buf[256];
    CHECK(slo_parse("ttft=750ms,e2e=30s,ttfa=2s", &s, err, sizeof err) == 0);
    slo_human(&s, buf, sizeof buf);
    CHECK_STR(buf, "TTFT <= 750 ms, E2E <= 30 s, TTFA <= 2000 ms");
    slo_bound_human(&s, 2, buf, sizeof buf);
    CHECK_STR(buf, "E2E <= 30 s");
    CHECK_STR(slo_bound_name(3), "ttfa");
    json_t *stated = slo_json(&s, SLO_JSON_STATED), *three = slo_json(&s, SLO_JSON_THREE);
    char *a = json_dumps(stated, JSON_COMPACT), *b = json_dumps(three, JSON_COMPACT);
    CHECK_STR(a, "{\"ttft_ms\":750.0,\"e2e_ms\":30000.0,\"ttfa_ms\":2000.0}");
    CHECK_STR(b, "{\"ttft_ms\":750.0,\"tpot_ms\":null,\"e2e_ms\":30000.0,\"ttfa_ms\":2000.0}");
    slo_spec back;
    slo_from_json(three, &back);
    CHECK(!memcmp(&back, &s, sizeof s));
    free(a);
    free(b);
    json_decref(stated);
    json_decref(three);
}

/* A campaign's SLO in the text form, ttfa among its bounds, reaches each
 * run as --slo's text, and the dry run shows it. */
TEST(slo_campaign_text_form_in_the_dry_run) {
    char *dir = temp_dir(), cfg[1024], cmd[1200], *out;
    snprintf(cfg, sizeof cfg, "%s/c.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fputs("name: t\ntarget: {url: http://127.0.0.1:1}\nrequests: 10\nrate: 2\n"
          "slo: \"ttfa=2s,ttft=1s\"\n"
          "runs:\n  - {name: a}\n  - {name: b, slo: {tpot: 50ms, e2e_ms: 30000}}\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sweep --dry-run %s", cfg);
    CHECK_INT(servelab_cmd(cmd, &out), 0);
    CHECK_MSG(strstr(out, ", slo ttft=1000ms,ttfa=2000ms\n") &&
                  strstr(out, ", slo ttft=1000ms,tpot=50ms,e2e=30000ms,ttfa=2000ms\n"),
              "%s", out);
    free(out);
    free(dir);
}
