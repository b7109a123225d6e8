/* spec_counters: the speculative-decoding counters of a /metrics page. */
#include "monitor/spec_counters.h"
#include "monitor/prom.h"

#include <stdlib.h>
#include <string.h>

/* The name without its server prefix, and which server: NULL when it is
 * neither vLLM's nor llama.cpp's. */
static const char *unprefixed(const char *name, const char **source) {
    if (!strncmp(name, "vllm:", 5)) {
        *source = "vllm";
        return name + 5;
    }
    if (!strncmp(name, "llamacpp:", 9)) {
        *source = "llamacpp";
        return name + 9;
    }
    return NULL;
}

static void on_sample(void *ud, const prom_sample *s) {
    spec_counters *c = ud;
    const char *source, *n = unprefixed(s->name, &source);
    if (!n || strncmp(n, "spec_decode_num_", 16) || s->value != s->value)
        return;
    n += 16;
    if (!strcmp(n, "drafts_total")) {
        c->drafts += s->value;
        c->found = 1;
        c->source = source;
    } else if (!strcmp(n, "draft_tokens_total")) {
        c->draft_tokens += s->value;
    } else if (!strcmp(n, "accepted_tokens_total")) {
        c->accepted += s->value;
    } else if (!strcmp(n, "accepted_tokens_per_pos_total")) {
        const char *pos = prom_label_get(s, "position");
        char *end;
        long i = pos ? strtol(pos, &end, 10) : -1;
        if (pos && *pos && !*end && i >= 0 && i < SPEC_MAX_POS) {
            c->per_pos[i] += s->value;
            if (i + 1 > c->n_pos)
                c->n_pos = (int)i + 1;
        }
    }
}

void spec_counters_read(const char *page, size_t n, spec_counters *c) {
    memset(c, 0, sizeof *c);
    if (page)
        prom_parse(page, n, on_sample, c, NULL, NULL);
}

json_t *spec_counters_json(const spec_counters *c) {
    if (!c->found)
        return NULL;
    json_t *per = json_array();
    for (int i = 0; i < c->n_pos; i++)
        json_array_append_new(per, json_real(c->per_pos[i]));
    return json_pack("{s:s,s:f,s:f,s:f,s:o}", "source", c->source, "num_drafts", c->drafts,
                     "num_draft_tokens", c->draft_tokens, "num_accepted_tokens", c->accepted,
                     "num_accepted_tokens_per_pos", per);
}
