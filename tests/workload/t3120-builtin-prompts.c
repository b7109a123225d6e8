/* Built-in prompt set: the three classes come in order with enough prompts,
 * every prompt's token count (model/tokens.h rule, system + user) lies in
 * its class's stated range, no prompt repeats anywhere, output ranges are
 * sane, and all text is plain ASCII, so the workload's size claims hold. */
#include "model/tokens.h"
#include "test.h"
#include "workload/builtin_prompts.h"

#include <string.h>

static size_t text_tokens(const char *s) {
    return s ? count_text_tokens(s, strlen(s)) : 0;
}

static size_t prompt_tokens(const builtin_prompt *p) {
    return text_tokens(p->system) + text_tokens(p->user);
}

static int same_text(const char *a, const char *b) {
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static int is_ascii(const char *s) {
    for (; s && *s; s++)
        if ((unsigned char)*s >= 0x80)
            return 0;
    return 1;
}

TEST(builtin_classes_in_order) {
    static const char *names[] = {"short", "medium", "long"};
    static const int min_prompts[] = {24, 24, 20};
    static const int out_max[] = {128, 256, 512};
    CHECK_INT(builtin_n_classes, 3);
    for (int c = 0; c < 3; c++) {
        const builtin_class *k = &builtin_classes[c];
        CHECK_STR(k->name, names[c]);
        CHECK_MSG(k->n_prompts >= min_prompts[c], "%s: %d prompts, want >= %d", k->name,
                  k->n_prompts, min_prompts[c]);
        CHECK(k->prompts != NULL);
        CHECK(k->prompt_min_tokens > 0);
        CHECK(k->prompt_min_tokens <= k->prompt_max_tokens);
        CHECK(k->output_min_tokens > 0);
        CHECK(k->output_min_tokens <= k->output_max_tokens);
        CHECK_INT(k->output_max_tokens, out_max[c]);
    }
}

TEST(builtin_prompt_tokens_in_range) {
    for (int c = 0; c < builtin_n_classes; c++) {
        const builtin_class *k = &builtin_classes[c];
        for (int i = 0; i < k->n_prompts; i++) {
            const builtin_prompt *p = &k->prompts[i];
            CHECK_MSG(p->user && p->user[0], "%s[%d]: empty user text", k->name, i);
            size_t t = prompt_tokens(p);
            CHECK_MSG(t >= (size_t)k->prompt_min_tokens && t <= (size_t)k->prompt_max_tokens,
                      "%s[%d]: %zu tokens, outside %d..%d", k->name, i, t, k->prompt_min_tokens,
                      k->prompt_max_tokens);
        }
    }
}

TEST(builtin_prompts_distinct) {
    for (int c = 0; c < builtin_n_classes; c++)
        for (int i = 0; i < builtin_classes[c].n_prompts; i++) {
            const builtin_prompt *p = &builtin_classes[c].prompts[i];
            for (int d = c; d < builtin_n_classes; d++)
                for (int j = (d == c ? i + 1 : 0); j < builtin_classes[d].n_prompts; j++) {
                    const builtin_prompt *q = &builtin_classes[d].prompts[j];
                    CHECK_MSG(!(same_text(p->system, q->system) && same_text(p->user, q->user)),
                              "%s[%d] repeats %s[%d]", builtin_classes[c].name, i,
                              builtin_classes[d].name, j);
                }
        }
}

TEST(builtin_prompts_ascii) {
    for (int c = 0; c < builtin_n_classes; c++)
        for (int i = 0; i < builtin_classes[c].n_prompts; i++) {
            const builtin_prompt *p = &builtin_classes[c].prompts[i];
            CHECK_MSG(is_ascii(p->system) && is_ascii(p->user), "%s[%d]: non-ASCII text",
                      builtin_classes[c].name, i);
        }
}
