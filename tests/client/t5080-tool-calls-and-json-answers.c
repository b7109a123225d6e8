/* t5080-tool-calls-and-json-answers: tool calls and JSON answers (--tools, --response-format)
 * against the simulator's ground truth. The simulator answers from the
 * schema and makes a share of its answers wrong on purpose (a required
 * property left out, or the text cut), and max_tokens cuts others short;
 * its trace says which. servelab's verdict on every answer must be the
 * trace's, its time to the first tool call the first output chunk's, and
 * the summary's counts the rows'. The schema subset is checked on its own,
 * and bad files are refused with one line before any traffic. */
#include "common/json_schema.h"
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARAMS                                                                                     \
    "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":12},"        \
    "\"unit\":{\"type\":\"string\",\"enum\":[\"c\",\"f\"]},\"days\":{\"type\":\"integer\","        \
    "\"minimum\":1,\"maximum\":7}},\"required\":[\"city\",\"unit\"],"                              \
    "\"additionalProperties\":false}"

static void write_text(const char *dir, const char *name, const char *text) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* The trace's verdict on each request, by request id. */
static const char *truth_of(const csv_table *trace, const char *id) {
    for (int i = 0; i < trace->n_rows; i++)
        if (!strcmp(csv_get(trace, i, "request_id"), id))
            return csv_get(trace, i, "structured");
    return NULL;
}

/* One run against a simulator that spoils 25% of its structured answers;
 * every row's verdict checked against the trace. Returns the valid count. */
static int run_and_check(const char *dir, const char *ask, int expect_tool) {
    char args[2048];
    snprintf(args, sizeof args, "--invalid-json-pct 25 --seed 4 --trace %s/trace.csv", dir);
    sim_proc p = sim_start(args);
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --api chat --rate 25 --requests 80 --seed 6 "
             "--prompts random:16:16 %s --out %s/run",
             p.port, ask, dir);
    CHECK_INT(servelab_cmd(args, NULL), 0);
    sim_stop(&p);
    char path[1200];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    csv_table *trace = csv_read(path);
    snprintf(path, sizeof path, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(trace && t && t->n_rows == 80);
    int valid = 0, kinds[3] = {0};
    for (int i = 0; i < t->n_rows; i++) {
        const char *id = csv_get(t, i, "request_id"), *truth = truth_of(trace, id);
        CHECK_MSG(truth && *truth, "%s: no structured answer in the trace", id);
        int want = !strcmp(truth, "valid");
        kinds[!strcmp(truth, "valid") ? 0 : !strcmp(truth, "invalid") ? 1 : 2]++;
        CHECK_MSG((int)csv_num(t, i, "answer_valid") == want, "%s: servelab says %s, the trace %s",
                  id, csv_get(t, i, "answer_valid"), truth);
        valid += want;
        CHECK_INT((int)csv_num(t, i, "tool_calls"), expect_tool);
        if (expect_tool) /* the call is the answer's first output */
            CHECK(csv_num(t, i, "first_tool_ms") == csv_num(t, i, "first_token_ms"));
        else
            CHECK(isnan(csv_num(t, i, "first_tool_ms")));
    }
    CHECK_MSG(kinds[0] > 0 && kinds[1] > 0, "the trace holds %d valid, %d spoiled, %d cut",
              kinds[0], kinds[1], kinds[2]);
    snprintf(path, sizeof path, "%s/run/summary.json", dir);
    json_t *s = json_load_file(path, 0, NULL);
    json_t *a = json_object_get(s, "answers");
    CHECK_INT((int)json_integer_value(json_object_get(a, "checked")), 80);
    CHECK_INT((int)json_integer_value(json_object_get(a, "valid")), valid);
    CHECK_INT((int)json_integer_value(json_object_get(a, "tool_calls")), expect_tool * 80);
    json_decref(s);
    csv_free(trace);
    csv_free(t);
    return valid;
}

TEST(answers_tool_calls_are_judged_as_the_simulator_made_them) {
    char *dir = temp_dir(), ask[1400];
    write_text(
        dir, "tools.json",
        "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"lookup\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}}},"
        "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":" PARAMS
        "}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}}");
    snprintf(ask, sizeof ask, "--tools %s/tools.json", dir);
    run_and_check(dir, ask, 1);
}

/* JSON answers, some cut short by max_tokens (their JSON never closes). */
TEST(answers_json_schema_cut_and_spoiled_ones_are_invalid) {
    char *dir = temp_dir(), ask[1400];
    write_text(dir, "format.json",
               "{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"w\",\"schema\":" PARAMS "}}");
    snprintf(ask, sizeof ask, "--response-format %s/format.json --max-tokens 9", dir);
    run_and_check(dir, ask, 0);
}

TEST(json_schema_subset_checks_what_it_says) {
    json_t *schema = json_loads(PARAMS, 0, NULL);
    static const struct {
        const char *value;
        int ok;
        const char *why;
    } cases[] = {
        {"{\"city\":\"oslo\",\"unit\":\"c\",\"days\":3}", 1, ""},
        {"{\"city\":\"oslo\",\"unit\":\"c\"}", 1, ""},
        {"{\"unit\":\"c\"}", 0, "$: missing required 'city'"},
        {"{\"city\":3,\"unit\":\"c\"}", 0, "$.city: expected string"},
        {"{\"city\":\"oslo\",\"unit\":\"k\"}", 0, "$.unit: not one of enum"},
        {"{\"city\":\"oslo\",\"unit\":\"c\",\"days\":9}", 0, "$.days: above maximum"},
        {"{\"city\":\"oslo\",\"unit\":\"c\",\"days\":2.5}", 0, "$.days: expected integer"},
        {"{\"city\":\"a very long city name\",\"unit\":\"c\"}", 0, "$.city: longer than maxLength"},
        {"{\"city\":\"oslo\",\"unit\":\"c\",\"x\":1}", 0, "$.x: not an allowed property"},
        {"[1]", 0, "$: expected object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *v = json_loads(cases[i].value, JSON_DECODE_ANY, NULL);
        char why[256];
        int ok = json_schema_check(schema, v, why, sizeof why);
        CHECK_MSG(ok == cases[i].ok && !strcmp(why, cases[i].why), "%s: %d '%s'", cases[i].value,
                  ok, why);
        json_decref(v);
    }
    json_t *items =
        json_loads("{\"type\":\"array\",\"items\":{\"type\":\"number\"},\"minItems\":2}", 0, NULL);
    json_t *v = json_loads("[1, \"two\"]", 0, NULL);
    char why[256];
    CHECK(!json_schema_check(items, v, why, sizeof why) && !strcmp(why, "$[1]: expected number"));
    json_decref(v);
    char w[512];
    CHECK(json_schema_usable(schema, w, sizeof w));
    json_t *other =
        json_loads("{\"type\":\"object\",\"properties\":{\"a\":{\"contains\":{}}}}", 0, NULL);
    CHECK(!json_schema_usable(other, w, sizeof w) && strstr(w, "keyword 'contains'"));
    json_decref(other);
    json_decref(items);
    json_decref(schema);
}

TEST(answers_bad_files_exit_2_before_traffic) {
    char *dir = temp_dir(), args[2048], *out;
    write_text(dir, "notjson.json", "{tools");
    write_text(dir, "obj.json", "{\"type\":\"function\"}");
    write_text(dir, "dup.json",
               "[{\"type\":\"function\",\"function\":{\"name\":\"a\"}},"
               "{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]");
    write_text(dir, "choice.json",
               "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}],"
               "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"b\"}}}");
    write_text(dir, "ok.json", "[{\"type\":\"function\",\"function\":{\"name\":\"a\"}}]");
    write_text(dir, "xml.json", "{\"type\":\"xml\"}");
    write_text(dir, "noschema.json", "{\"type\":\"json_schema\",\"json_schema\":{}}");
    static const char *const bad[] = {"--api chat --tools %s/missing.json",
                                      "--api chat --tools %s/notjson.json",
                                      "--api chat --tools %s/obj.json",
                                      "--api chat --tools %s/dup.json",
                                      "--api chat --tools %s/choice.json",
                                      "--api completions --tools %s/ok.json",
                                      "--api chat --response-format %s/xml.json",
                                      "--api chat --response-format %s/noschema.json"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char flags[1400];
        snprintf(flags, sizeof flags, bad[i], dir);
        /* a URL nothing listens on: refusing comes before any traffic */
        snprintf(args, sizeof args, "run --url http://127.0.0.1:9 --requests 3 %s --out %s/r%zu",
                 flags, dir, i);
        int code = servelab_cmd(args, &out);
        CHECK_MSG(code == 2 && strchr(out, '\n') == strrchr(out, '\n'), "%s: exit %d: %s", flags,
                  code, out);
        free(out);
    }
}
