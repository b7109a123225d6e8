/* spec_decode: speculative-decoding figures from two readings of the
 * server's counters. */
#include "analysis/spec_decode.h"

static double get(const json_t *o, const char *k) {
    return json_number_value(json_object_get(o, k));
}

json_t *spec_decode_figures(const json_t *before, const json_t *after) {
    if (!json_is_object(before) || !json_is_object(after))
        return NULL;
    double drafts = get(after, "num_drafts") - get(before, "num_drafts");
    double draft_tokens = get(after, "num_draft_tokens") - get(before, "num_draft_tokens");
    double accepted = get(after, "num_accepted_tokens") - get(before, "num_accepted_tokens");
    if (!(drafts > 0))
        return NULL;
    json_t *per = json_array();
    const json_t *pa = json_object_get(after, "num_accepted_tokens_per_pos"),
                 *pb = json_object_get(before, "num_accepted_tokens_per_pos");
    for (size_t i = 0; i < json_array_size(pa); i++)
        json_array_append_new(per, json_real((json_number_value(json_array_get(pa, i)) -
                                              json_number_value(json_array_get(pb, i))) /
                                             drafts));
    json_t *src = json_object_get(after, "source");
    return json_pack("{s:s,s:f,s:f,s:f,s:o,s:f,s:o}", "source",
                     json_is_string(src) ? json_string_value(src) : "", "num_drafts", drafts,
                     "draft_tokens", draft_tokens, "accepted_tokens", accepted, "acceptance_rate",
                     draft_tokens > 0 ? json_real(accepted / draft_tokens) : json_null(),
                     "acceptance_length", 1 + accepted / drafts, "per_position_acceptance_rates",
                     per);
}

json_t *spec_decode_of_metas(json_t *const *metas, int n) {
    static const char *const keys[] = {"num_drafts", "num_draft_tokens", "num_accepted_tokens"};
    double sum[3] = {0}, per[64] = {0};
    size_t n_per = 0;
    const char *source = NULL;
    for (int k = 0; k < n; k++) {
        const json_t *c = json_object_get(metas[k], "spec_decode_counters");
        const json_t *b = json_object_get(c, "before"), *a = json_object_get(c, "after");
        if (!json_is_object(a) || !json_is_object(b))
            continue;
        source = json_string_value(json_object_get(a, "source"));
        for (int i = 0; i < 3; i++)
            sum[i] += get(a, keys[i]) - get(b, keys[i]);
        const json_t *pa = json_object_get(a, "num_accepted_tokens_per_pos"),
                     *pb = json_object_get(b, "num_accepted_tokens_per_pos");
        for (size_t i = 0; i < json_array_size(pa) && i < 64; i++) {
            per[i] +=
                json_number_value(json_array_get(pa, i)) - json_number_value(json_array_get(pb, i));
            if (i + 1 > n_per)
                n_per = i + 1;
        }
    }
    if (!source)
        return NULL;
    json_t *pos = json_array(), *zero = json_array();
    for (size_t i = 0; i < n_per; i++) {
        json_array_append_new(pos, json_real(per[i]));
        json_array_append_new(zero, json_real(0));
    }
    json_t *after = json_pack("{s:s,s:f,s:f,s:f,s:o}", "source", source, keys[0], sum[0], keys[1],
                              sum[1], keys[2], sum[2], "num_accepted_tokens_per_pos", pos);
    json_t *before = json_pack("{s:f,s:f,s:f,s:o}", keys[0], 0.0, keys[1], 0.0, keys[2], 0.0,
                               "num_accepted_tokens_per_pos", zero);
    json_t *f = spec_decode_figures(before, after);
    json_decref(before);
    json_decref(after);
    return f;
}

void spec_decode_vllm_keys(const json_t *f, json_t *obj) {
    if (!f)
        return;
    const json_t *rate = json_object_get(f, "acceptance_rate");
    json_object_set_new(obj, "spec_decode_acceptance_rate",
                        json_is_number(rate) ? json_real(100 * json_number_value(rate))
                                             : json_null());
    json_object_set_new(obj, "spec_decode_acceptance_length",
                        json_real(get(f, "acceptance_length")));
    json_object_set_new(obj, "spec_decode_num_drafts",
                        json_integer((json_int_t)get(f, "num_drafts")));
    json_object_set_new(obj, "spec_decode_draft_tokens",
                        json_integer((json_int_t)get(f, "draft_tokens")));
    json_object_set_new(obj, "spec_decode_accepted_tokens",
                        json_integer((json_int_t)get(f, "accepted_tokens")));
    json_object_set_new(obj, "spec_decode_per_position_acceptance_rates",
                        json_deep_copy(json_object_get(f, "per_position_acceptance_rates")));
}
