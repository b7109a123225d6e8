/* t1080-json-schema-verdicts: the schema check says what JSON Schema says
 * (round 3's L1: a `false` subschema, `items: false`, a pattern, anyOf,
 * $ref and exclusiveMinimum were passed unchecked; 1.0 was not enum [1];
 * a string holding \u0000 and an integer past 64 bits were "not JSON"), and
 * a schema it cannot check whole is refused when loaded, by name, before
 * any traffic. */
#include "common/json_schema.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct verdict_case {
    const char *schema, *value;
    int valid;
} verdict_case;

static const verdict_case cases[] = {
    {"{\"properties\":{\"a\":false}}", "{\"a\":1}", 0},
    {"{\"properties\":{\"a\":false}}", "{\"b\":1}", 1},
    {"{\"type\":\"array\",\"items\":false}", "[1,2]", 0},
    {"{\"type\":\"array\",\"items\":false}", "[]", 1},
    {"{\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"^[0-9]+$\"}}}", "{\"a\":\"abc\"}",
     0},
    {"{\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"^\\\\d+$\"}}}", "{\"a\":\"123\"}",
     1},
    {"{\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":\"^\\\\d+$\"}}}", "{\"a\":\"12x\"}",
     0},
    {"{\"properties\":{\"a\":{\"anyOf\":[{\"type\":\"string\"}]}}}", "{\"a\":5}", 0},
    {"{\"properties\":{\"a\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}}}",
     "{\"a\":null}", 1},
    {"{\"properties\":{\"a\":{\"$ref\":\"#/$defs/n\"}},\"$defs\":{\"n\":{\"type\":\"integer\"}}}",
     "{\"a\":\"str\"}", 0},
    {"{\"properties\":{\"a\":{\"$ref\":\"#/$defs/n\"}},\"$defs\":{\"n\":{\"type\":\"integer\"}}}",
     "{\"a\":3}", 1},
    {"{\"properties\":{\"a\":{\"type\":\"number\",\"exclusiveMinimum\":5}}}", "{\"a\":5}", 0},
    {"{\"properties\":{\"a\":{\"type\":\"number\",\"exclusiveMinimum\":5}}}", "{\"a\":5.5}", 1},
    {"{\"properties\":{\"a\":{\"enum\":[1]}}}", "{\"a\":1.0}", 1},
    {"{\"properties\":{\"a\":{\"const\":0}}}", "{\"a\":0.0}", 1},
    {"{\"properties\":{\"a\":{\"const\":0}}}", "{\"a\":0.5}", 0},
    {"{\"properties\":{\"s\":{\"type\":\"string\",\"maxLength\":5}}}", "{\"s\":\"a\\u0000b\"}", 1},
    {"{\"properties\":{\"s\":{\"type\":\"string\",\"maxLength\":2}}}", "{\"s\":\"a\\u0000b\"}", 0},
    {"{\"properties\":{\"a\":{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"number\"}]}}}",
     "{\"a\":1}", 0},
    {"{\"properties\":{\"a\":{\"not\":{\"type\":\"string\"}}}}", "{\"a\":\"x\"}", 0},
    {"{\"type\":\"array\",\"uniqueItems\":true}", "[1,1.0]", 0},
    {"{\"type\":\"number\",\"multipleOf\":0.5}", "2.5", 1},
    {"{\"type\":\"number\",\"multipleOf\":0.5}", "2.25", 0},
    {"{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"}],\"items\":{\"type\":\"integer\"}"
     "}",
     "[\"a\",1,2]", 1},
    {"{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"}],\"items\":{\"type\":\"integer\"}"
     "}",
     "[1,1]", 0},
    {"{\"if\":{\"properties\":{\"k\":{\"const\":\"n\"}}},\"then\":{\"required\":[\"v\"]}}",
     "{\"k\":\"n\"}", 0},
    {"{\"if\":{\"properties\":{\"k\":{\"const\":\"n\"}}},\"then\":{\"required\":[\"v\"]}}",
     "{\"k\":\"m\"}", 1},
    {"{\"$ref\":\"#\"}", "1", 0}, /* a loop: refused at load; the check itself still ends */
};

TEST(json_schema_verdicts_are_json_schemas) {
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *s = json_loads(cases[i].schema, 0, NULL);
        json_error_t je;
        json_t *v = json_loads(cases[i].value, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        CHECK_MSG(s && v, "case %zu does not parse: %s", i, je.text);
        char why[256];
        int ok = json_schema_check(s, v, why, sizeof why);
        CHECK_MSG(ok == cases[i].valid, "%s against %s: %d (%s)", cases[i].value, cases[i].schema,
                  ok, why);
        json_decref(s);
        json_decref(v);
    }
}

TEST(json_schemas_servelab_cannot_check_whole_are_named) {
    const char *bad[][2] = {
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"int\"}}}", "type 'int'"},
        {"{\"type\":\"array\",\"contains\":{\"type\":\"string\"}}", "keyword 'contains'"},
        {"{\"properties\":{\"a\":{\"pattern\":\"^(?=x)\"}}}", "pattern '^(?=x)'"},
        {"{\"properties\":{\"a\":{\"$ref\":\"other.json#/x\"}}}", "$ref 'other.json#/x'"},
        {"{\"properties\":{\"a\":7}}", "a schema must be an object or a boolean"},
        /* what regcomp cannot compile in bounded memory */
        {"{\"pattern\":\"((((((((((a))))))))))\"}", "pattern '(((("},
        {"{\"pattern\":\"(a{400}){400}\"}", "pattern '(a{400}){400}'"},
        {"{\"pattern\":\"a++\"}", "pattern 'a++'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *s = json_loads(bad[i][0], 0, NULL);
        char why[512];
        CHECK_MSG(!json_schema_usable(s, why, sizeof why) && strstr(why, bad[i][1]), "%s: '%s'",
                  bad[i][0], why);
        json_decref(s);
    }
    json_t *date = json_loads("{\"pattern\":\"^\\\\d{4}-\\\\d{2}-\\\\d{2}$\"}", 0, NULL);
    json_t *day = json_string("2026-12-06"), *not_day = json_string("2026-1-06");
    char w[512];
    CHECK_MSG(json_schema_usable(date, w, sizeof w), "%s", w);
    CHECK(json_schema_check(date, day, NULL, 0) == 1 &&
          json_schema_check(date, not_day, NULL, 0) == 0);
    json_decref(date);
    json_decref(day);
    json_decref(not_day);
    json_t *fine = json_loads(
        "{\"type\":\"object\",\"properties\":{\"when\":{\"type\":\"string\",\"format\":"
        "\"date-time\"},\"n\":{\"anyOf\":[{\"$ref\":\"#/$defs/n\"},{\"type\":\"null\"}]}},"
        "\"$defs\":{\"n\":{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"n\"],"
        "\"title\":\"T\"}",
        0, NULL);
    char why[512];
    CHECK_MSG(json_schema_usable(fine, why, sizeof why), "%s", why);
    json_decref(fine);
}

TEST(a_response_format_servelab_cannot_check_is_refused_before_traffic) {
    char *dir = temp_dir(), path[1200], args[4096], *out = NULL;
    snprintf(path, sizeof path, "%s/f.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":"
          "\"object\",\"properties\":{\"a\":{\"type\":\"int\"}}}}}",
          f);
    fclose(f);
    snprintf(args, sizeof args,
             "run --url http://127.0.0.1:9 --model m --api chat --response-format %s --requests 1 "
             "--out %s/o",
             path, dir);
    CHECK_INT(servelab_cmd(args, &out), 2);
    CHECK_MSG(strstr(out, "type 'int'") && strchr(out, '\n') == strrchr(out, '\n'), "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/o", dir);
    CHECK(access(path, F_OK) != 0);
    free(dir);
}
