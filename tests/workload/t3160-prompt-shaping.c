/* shaping: what servelab puts in front of every prompt (workload/shaping.h):
 * the cache-busting nonce is exactly 3 tokens by servelab's rule and unique
 * to the request and the run's salt; a shared prefix is exactly N tokens
 * and the same for every request of its group; with both off a body is what
 * it was before either existed. And the run records its salt, so the same
 * salt gives the same bodies, and a new run a new one. */
#include "model/tokens.h"
#include "csv_util.h"
#include "support.h"
#include "test.h"
#include "workload/workload.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static workload builtin(void) {
    workload w;
    char err[256];
    CHECK_MSG(workload_load(&w, "builtin", NULL, err, sizeof err) == 0, "%s", err);
    workload_assign(&w, 200, 7);
    return w;
}

/* The "prompt" (completions) of request req's body, as JSON (caller frees). */
static json_t *prompt_of(const workload *w, size_t req, int chat) {
    body_opts o = {.chat = chat};
    char *body = workload_body(w, req, &o, NULL);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    json_t *p = json_incref(json_object_get(j, chat ? "messages" : "prompt"));
    json_decref(j);
    return p;
}

static int text_tokens(json_t *s) {
    return (int)count_text_tokens(json_string_value(s), json_string_length(s));
}

TEST(shaping_off_leaves_every_prompt_as_it_was) {
    workload w = builtin();
    for (size_t i = 0; i < 200; i++) {
        json_t *p = prompt_of(&w, i, 0);
        CHECK_STR(json_string_value(p), w.items[w.assign[i]].text);
        CHECK_INT(workload_prompt_tokens(&w, i), w.items[w.assign[i]].prompt_tokens);
        json_decref(p);
    }
    workload_free(&w);
}

TEST(shaping_nonce_is_three_tokens_and_unique) {
    workload w = builtin();
    w.shape.cache_bust = 1;
    w.shape.salt = 0x1234;
    char seen[200][16];
    for (size_t i = 0; i < 200; i++) {
        json_t *p = prompt_of(&w, i, 0);
        const char *text = json_string_value(p);
        CHECK_INT(text_tokens(p), w.items[w.assign[i]].prompt_tokens + 3);
        CHECK_INT(workload_prompt_tokens(&w, i), text_tokens(p));
        CHECK(!strcmp(text + 9, w.items[w.assign[i]].text)); /* the prompt follows it whole */
        snprintf(seen[i], sizeof seen[i], "%.9s", text);
        for (size_t k = 0; k < i; k++)
            CHECK_MSG(strcmp(seen[k], seen[i]), "requests %zu and %zu share a nonce", k, i);
        json_decref(p);
    }
    /* another salt, other nonces, for the same requests */
    w.shape.salt = 0x1235;
    json_t *p = prompt_of(&w, 0, 0);
    CHECK(strncmp(json_string_value(p), seen[0], 9));
    json_decref(p);
    workload_free(&w);
}

TEST(shaping_prefix_is_exact_and_shared_by_its_group) {
    int sizes[] = {1, 7, 64, 500};
    for (int s = 0; s < 4; s++) {
        workload w = builtin();
        w.shape.prefix_tokens = sizes[s];
        w.shape.prefix_groups = 3;
        const char *first_of_group[3] = {0};
        json_t *keep[3] = {0};
        int groups_seen = 0;
        for (size_t i = 0; i < 60; i++) {
            json_t *p = prompt_of(&w, i, 0);
            CHECK_INT(text_tokens(p), w.items[w.assign[i]].prompt_tokens + sizes[s]);
            CHECK_INT(workload_prompt_tokens(&w, i), text_tokens(p));
            int g = shaping_group(&w.shape, i);
            CHECK(g >= 0 && g < 3);
            const char *text = json_string_value(p);
            size_t plen = strlen(text) - strlen(w.items[w.assign[i]].text);
            if (!first_of_group[g]) {
                first_of_group[g] = text;
                keep[g] = json_incref(p);
                groups_seen++;
            } else {
                CHECK_MSG(!strncmp(first_of_group[g], text, plen), "group %d differs", g);
            }
            json_decref(p);
        }
        CHECK_INT(groups_seen, 3);
        CHECK(strncmp(first_of_group[0], first_of_group[1], 8) ||
              strncmp(first_of_group[1], first_of_group[2], 8));
        for (int g = 0; g < 3; g++)
            json_decref(keep[g]);
        workload_free(&w);
    }
}

TEST(shaping_chat_prefix_is_a_system_message_and_the_nonce_follows_it) {
    workload w = builtin();
    w.shape.prefix_tokens = 40;
    w.shape.prefix_groups = 1;
    w.shape.prefix_system = 1;
    w.shape.cache_bust = 1;
    json_t *a = prompt_of(&w, 0, 1), *b = prompt_of(&w, 1, 1);
    json_t *sa = json_array_get(a, 0), *sb = json_array_get(b, 0);
    CHECK_STR(json_string_value(json_object_get(sa, "role")), "system");
    CHECK_INT(text_tokens(json_object_get(sa, "content")), 40);
    CHECK(json_equal(sa, sb)); /* one shared system prompt */
    const char *ca = json_string_value(json_object_get(json_array_get(a, 1), "content"));
    const char *cb = json_string_value(json_object_get(json_array_get(b, 1), "content"));
    CHECK(ca[0] == 'x' && ca[8] == '\n' && strncmp(ca, cb, 9));
    json_decref(a);
    json_decref(b);
    workload_free(&w);
}

TEST(shaping_random_ids_get_prefix_and_nonce_ids) {
    workload w;
    char err[256];
    CHECK(workload_load(&w, "random:20:5", NULL, err, sizeof err) == 0);
    workload_assign(&w, 10, 3);
    w.shape.prefix_tokens = 32;
    w.shape.prefix_groups = 1;
    w.shape.cache_bust = 1;
    json_t *a = prompt_of(&w, 0, 0), *b = prompt_of(&w, 1, 0);
    CHECK_INT((int)json_array_size(a), 32 + 3 + 20);
    CHECK_INT(workload_prompt_tokens(&w, 0), 55);
    for (size_t i = 0; i < 32; i++)
        CHECK(json_equal(json_array_get(a, i), json_array_get(b, i)));
    int same = 1;
    for (size_t i = 32; i < 35; i++)
        same &= json_equal(json_array_get(a, i), json_array_get(b, i));
    CHECK(!same);
    json_decref(a);
    json_decref(b);
    workload_free(&w);
}

static char *meta_salt(const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    json_t *m = json_load_file(path, 0, NULL);
    CHECK_MSG(m, "no %s", path);
    json_t *s = json_object_get(json_object_get(m, "config"), "cache_bust_salt");
    CHECK_MSG(json_is_string(s), "meta.json has no config.cache_bust_salt");
    char *v = strdup(json_string_value(s));
    json_decref(m);
    return v;
}

TEST(shaping_runs_record_their_salt_and_a_new_run_draws_another) {
    char *dir = temp_dir();
    sim_proc p = sim_start("--profile tiny");
    char args[2048];
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args,
                 "run --quiet --url http://127.0.0.1:%d --requests 5 --rate 50 --seed 1 "
                 "--max-tokens 4 --out %s/r%d",
                 p.port, dir, k);
        servelab_ok(args);
    }
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --requests 5 --rate 50 --seed 1 "
             "--max-tokens 4 --cache-bust-salt 00ab --out %s/fixed",
             p.port, dir);
    servelab_ok(args);
    sim_stop(&p);
    char a[1100], b[1100], c[1100];
    snprintf(a, sizeof a, "%s/r0", dir);
    snprintf(b, sizeof b, "%s/r1", dir);
    snprintf(c, sizeof c, "%s/fixed", dir);
    char *sa = meta_salt(a), *sb = meta_salt(b), *sc = meta_salt(c);
    CHECK_MSG(strcmp(sa, sb), "two runs drew the same salt %s", sa);
    CHECK_STR(sc, "00ab");
    free(sa);
    free(sb);
    free(sc);
}

TEST(shaping_bad_options_exit_2_before_traffic) {
    const char *bad[] = {
        "--cache-bust maybe", "--cache-bust-salt xyz", "--cache-bust-salt 00112233445566778",
        "--prefix-tokens -1", "--prefix-groups 0",     "--prefix-mode middle"};
    for (int i = 0; i < 6; i++) {
        char args[512], *out;
        snprintf(args, sizeof args, "run --url http://127.0.0.1:1 --requests 1 %s", bad[i]);
        int code = servelab_cmd(args, &out);
        CHECK_MSG(code == 2, "%s: exit %d: %s", bad[i], code, out);
        CHECK_MSG(strchr(out, '\n') == out + strlen(out) - 1, "%s: not one line: %s", bad[i], out);
        free(out);
    }
}

/* --extra-body: its fields are in every body; servelab's own keys and
 * anything but a JSON object are refused with the reason. */
TEST(extra_body_fields_join_every_body) {
    workload w = builtin();
    char why[256];
    json_t *extra =
        workload_extra_body("{\"cache_prompt\": false, \"n_probs\": 2}", why, sizeof why);
    CHECK_MSG(extra != NULL, "%s", why);
    body_opts o = {.chat = 1, .extra = extra};
    char *body = workload_body(&w, 3, &o, NULL);
    json_t *j = json_loads(body, 0, NULL);
    CHECK(json_is_false(json_object_get(j, "cache_prompt")));
    CHECK_INT((int)json_integer_value(json_object_get(j, "n_probs")), 2);
    CHECK(json_is_true(json_object_get(j, "stream")) && json_object_get(j, "messages"));
    json_decref(j);
    free(body);
    json_decref(extra);
    CHECK(workload_extra_body("{\"stream\": false}", why, sizeof why) == NULL);
    CHECK_STR(why, "'stream' is set by servelab itself (see --help), not by --extra-body");
    CHECK(workload_extra_body("[1]", why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "expected a JSON object") != NULL, "%s", why);
    CHECK(workload_extra_body("{nope", why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "not JSON") != NULL, "%s", why);
    workload_free(&w);
}
