/* fuzz_schema: libFuzzer target for the JSON Schema check that judges tool
 * calls and JSON answers (common/json_schema.h).
 *
 * The input is a schema and an answer, split at the first NUL byte (no NUL:
 * the whole input is both). Whatever they are, the check ends (a $ref loop
 * included), says the same twice, and explains a mismatch in one line that
 * starts with a path from "$"; a schema it calls unusable says why in one
 * line from "$"; a value always matches itself as a const. */
#include "common/json_schema.h"
#include "fuzz_common.h"

#include <jansson.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t n_schema = nul ? (size_t)(nul - data) : size;
    const char *answer = nul ? (const char *)nul + 1 : (const char *)data;
    size_t n_answer = nul ? size - n_schema - 1 : size;
    json_t *schema = json_loadb((const char *)data, n_schema, JSON_DECODE_ANY, NULL);
    json_t *value = json_loadb(answer, n_answer, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    char why[512], why2[512];
    if (schema) {
        int usable = json_schema_usable(schema, why, sizeof why);
        FUZZ_CHECK(usable || (why[0] == '$' && !strchr(why, '\n')));
        if (value) {
            int a = json_schema_check(schema, value, why, sizeof why);
            int b = json_schema_check(schema, value, why2, sizeof why2);
            FUZZ_CHECK(a == b && !strcmp(why, why2));
            FUZZ_CHECK(a == 1 || a == 0);
            FUZZ_CHECK(a || (why[0] == '$' && !strchr(why, '\n')));
        }
    }
    if (value) {
        json_t *same = json_pack("{s:O}", "const", value);
        FUZZ_CHECK(json_schema_same(value, value));
        FUZZ_CHECK(json_schema_check(same, value, NULL, 0) == 1);
        json_decref(same);
    }
    json_decref(schema);
    json_decref(value);
    return 0;
}
