/* fuzz_prompts: libFuzzer target for the prompt sources (workload/workload.h):
 * a JSONL file, a ShareGPT file, a random:IN:OUT spec and the --mix string.
 *
 * Input: one mode byte, then the rest.
 *   mode & 3   0 or 3: the rest is a JSONL file; 1: a ShareGPT file
 *              (sharegpt:PATH); 2: the rest is the text after "random:"
 *   mode & 4   the rest starts with a --mix string, up to the first newline
 *   mode >> 3  body options: include_usage, continuous_usage, ignore_eos,
 *              a max_tokens override, a model name
 * A load that succeeds is assigned to 1..8 requests with a seed from the
 * input, and every request's body must be a JSON object with a prompt or
 * messages; a load that fails must say why in one line. */
#include "fuzz_common.h"
#include "workload/workload.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

static void check_bodies(workload *w, uint64_t h, uint8_t mode) {
    size_t n = 1 + (size_t)(h % 8);
    workload_assign(w, n, h >> 3);
    if (w->random_in > 4096)
        return; /* a million-token body is valid but slow */
    for (size_t req = 0; req < n; req++) {
        body_opts o = {.chat = (int)(req & 1),
                       .include_usage = mode >> 3 & 1,
                       .continuous_usage = mode >> 4 & 1,
                       .ignore_eos = mode >> 5 & 1,
                       .max_tokens = mode >> 6 & 1 ? 17 : 0,
                       .model = mode >> 7 ? "m" : NULL};
        FUZZ_CHECK(workload_class_of(w, req) != NULL);
        FUZZ_CHECK(workload_max_tokens(w, req, &o) > 0);
        FUZZ_CHECK(workload_prompt_tokens(w, req) >= 0);
        size_t len = 0;
        char *body = workload_body(w, req, &o, &len);
        FUZZ_CHECK(body && strlen(body) == len);
        json_t *j = json_loads(body, 0, NULL);
        FUZZ_CHECK(json_is_object(j));
        FUZZ_CHECK(json_object_get(j, o.chat ? "messages" : "prompt") != NULL);
        json_decref(j);
        free(body);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 20)
        return 0;
    uint8_t mode = data[0];
    const uint8_t *rest = data + 1;
    size_t n = size - 1;
    uint64_t h = fuzz_hash(0, data, size);

    char mix[256], *mixp = NULL;
    if (mode & 4) {
        const uint8_t *nl = memchr(rest, '\n', n);
        size_t ml = nl ? (size_t)(nl - rest) : n;
        if (ml >= sizeof mix || memchr(rest, '\0', ml))
            return 0;
        memcpy(mix, rest, ml);
        mix[ml] = '\0';
        mixp = mix;
        rest += nl ? ml + 1 : ml;
        n -= nl ? ml + 1 : ml;
    }

    char spec[600];
    int kind = mode & 3;
    if (kind == 2) {
        if (n > 64 || memchr(rest, '\0', n))
            return 0; /* a command-line word */
        snprintf(spec, sizeof spec, "random:%.*s", (int)n, (const char *)rest);
    } else {
        char path[512];
        snprintf(path, sizeof path, "%s/prompts.%s", fuzz_dir(), kind == 1 ? "json" : "jsonl");
        fuzz_write_file(path, rest, n);
        snprintf(spec, sizeof spec, "%s%s", kind == 1 ? "sharegpt:" : "", path);
    }

    workload w;
    char err[512] = "";
    if (workload_load(&w, spec, mixp, err, sizeof err) == 0)
        check_bodies(&w, h, mode);
    else
        FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL);
    workload_free(&w);
    return 0;
}
