/* tokenize: --tokenize auto builds synthetic text from the common words
 * the server's own /tokenize counts one token each. Against a server whose
 * tokenizer is not servelab's rule (words of more than 2 letters are 2
 * tokens) exactly the 1-2 letter words are kept; against the simulator
 * (servelab's rule) every word, and a chat prompt of random:64 is 64 content
 * tokens on it, exactly; a server without /tokenize leaves the rule's
 * words, and says so; --tokenize off asks nothing. */
#include "csv_util.h"
#include "hostile_server.h"
#include "support.h"
#include "test.h"
#include "workload/words.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *meta_of(const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    json_t *m = json_load_file(path, 0, NULL);
    CHECK_MSG(m, "no %s", path);
    return m;
}

static void run_chat(int port, const char *dir, const char *extra) {
    char args[2048];
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --api chat --prompts random:64:4 "
             "--ignore-eos --requests 6 --rate 50 --no-sampling %s --out %s",
             port, extra, dir);
    servelab_ok(args);
}

TEST(tokenize_keeps_the_words_the_server_counts_one_token) {
    char *dir = temp_dir();
    hostile_script s = {.modes = {HOSTILE_GOOD}, .n_modes = 1, .picky_tokenizer = 1};
    hostile_server h = hostile_start(&s);
    char out[1100];
    snprintf(out, sizeof out, "%s/picky", dir);
    run_chat(h.port, out, "");
    hostile_stop(&h);
    int short_words = 0;
    for (int i = 0; i < n_common_words; i++)
        short_words += strlen(common_words[i]) <= 2;
    json_t *m = meta_of(out), *t = json_object_get(m, "tokenizer");
    CHECK_MSG(json_is_object(t), "meta.json has no tokenizer");
    CHECK(json_is_true(json_object_get(t, "used")));
    CHECK_INT((int)json_integer_value(json_object_get(t, "words_kept")), short_words);
    CHECK_INT((int)json_integer_value(json_object_get(t, "words_tried")), n_common_words);
    json_decref(m);
}

TEST(tokenize_against_the_simulator_is_exact) {
    char *dir = temp_dir();
    sim_proc p = sim_start("--profile tiny");
    char out[1100];
    snprintf(out, sizeof out, "%s/sim", dir);
    run_chat(p.port, out, "");
    char off[1100];
    snprintf(off, sizeof off, "%s/off", dir);
    run_chat(p.port, off, "--tokenize off");
    sim_stop(&p);
    json_t *m = meta_of(out), *t = json_object_get(m, "tokenizer");
    CHECK(json_is_true(json_object_get(t, "used")));
    CHECK_INT((int)json_integer_value(json_object_get(t, "words_kept")), n_common_words);
    json_decref(m);
    char path[1200];
    snprintf(path, sizeof path, "%s/requests.csv", out);
    csv_table *rows = csv_read(path);
    CHECK(rows && rows->n_rows == 6);
    /* 64 words and the nonce's 3 tokens, the message's 4 and its role's 1,
     * and the reply's priming 3 (the simulator's chat accounting) */
    for (int i = 0; i < rows->n_rows; i++)
        CHECK_STR(csv_get(rows, i, "prompt_tokens"), "75");
    csv_free(rows);
    m = meta_of(off);
    CHECK(json_object_get(m, "tokenizer") == NULL);
    json_decref(m);
}

TEST(tokenize_without_an_endpoint_says_so_and_runs) {
    char *dir = temp_dir();
    hostile_script s = {.modes = {HOSTILE_GOOD}, .n_modes = 1};
    hostile_server h = hostile_start(&s);
    char args[2048], *text;
    snprintf(args, sizeof args,
             "run --url http://127.0.0.1:%d --api chat --prompts random:16:4 --requests 3 "
             "--rate 50 --no-sampling --out %s/none",
             h.port, dir);
    int code = servelab_cmd(args, &text);
    hostile_stop(&h);
    CHECK_MSG(code == 0, "exit %d: %s", code, text);
    CHECK_MSG(strstr(text, "servelab's token rule") != NULL, "no note: %s", text);
    free(text);
    char out[1100];
    snprintf(out, sizeof out, "%s/none", dir);
    json_t *m = meta_of(out), *t = json_object_get(m, "tokenizer");
    CHECK(json_is_false(json_object_get(t, "used")));
    CHECK(json_is_string(json_object_get(t, "why")));
    json_decref(m);
}
