/* hf model: scripts/hf_model_write.py, the writer of random-weight Llama
 * models in Hugging Face format that vLLM loads (docs/vllm.md). The test
 * writes the small shape (tiny-100m) with the test tokenizer and reads the
 * folder back with parsers of its own, so a folder the writer gets wrong
 * fails here rather than as a load error in vLLM: config.json's shape and
 * token ids, model.safetensors' header (an 8-byte length, a JSON header of
 * names, dtypes, shapes and back-to-back offsets) and file size, the quiet
 * tokens kept down in dimension 0 as gguf_write.py keeps them, the BOS
 * added by tokenizer.json's post processor, the same bytes for the same
 * seed, and the one-line refusals. It needs python3 (scripts/deps.sh test
 * installs it) and fails, saying so, without it. */
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* tiny-100m with tests/data/tokenizer-bpe's 269 tokens. */
enum { EMBD = 768, LAYERS = 8, FF = 2048, VOCAB = 269, KV_WIDTH = 256 };
enum { TENSORS = 1 + LAYERS * 9 + 2 };

static void require_python3(void) {
    int code;
    char *out = run_capture("command -v python3", &code);
    free(out);
    CHECK_MSG(code == 0, "python3 is not on PATH: scripts/deps.sh test installs it; this test "
                         "runs scripts/hf_model_write.py with it");
}

/* Writes dir/NAME with the test tokenizer at f16; the script's stderr. */
static char *write_folder(const char *dir, const char *name, const char *extra, int *code) {
    char cmd[2600];
    snprintf(cmd, sizeof cmd,
             "python3 scripts/hf_model_write.py tiny-100m %s/%s --tokenizer "
             "tests/data/tokenizer-bpe --dtype f16 %s 2>&1",
             dir, name, extra);
    return run_capture(cmd, code);
}

static float half_to_float(uint16_t h) {
    int exp = h >> 10 & 0x1f, mant = h & 0x3ff;
    float v = exp ? ldexpf(1.0f + mant / 1024.0f, exp - 15) : ldexpf(mant / 1024.0f, -14);
    return h & 0x8000 ? -v : v;
}

/* The safetensors file: its bytes and its parsed header. */
typedef struct st_file {
    unsigned char *bytes;
    size_t len, data_start;
    json_t *head;
} st_file;

static st_file st_read(const char *path) {
    st_file st = {0};
    st.bytes = (unsigned char *)read_file(path, &st.len);
    CHECK_MSG(st.bytes && st.len > 8, "%s: missing or short", path);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | st.bytes[i];
    CHECK_MSG(n % 8 == 0 && n < st.len - 8, "header length %llu", (unsigned long long)n);
    json_error_t e;
    st.head = json_loadb((const char *)st.bytes + 8, (size_t)n, 0, &e);
    CHECK_MSG(st.head && json_is_object(st.head), "header JSON: %s", e.text);
    st.data_start = 8 + (size_t)n;
    return st;
}

/* Tensor NAME's shape must be rows x cols (cols 0: a vector of rows), F16;
 * returns its element (r, c). */
static float st_at(const st_file *st, const char *name, long rows, long cols, long r, long c) {
    json_t *t = json_object_get(st->head, name);
    CHECK_MSG(t != NULL, "no tensor %s", name);
    CHECK_STR(json_string_value(json_object_get(t, "dtype")), "F16");
    json_t *shape = json_object_get(t, "shape");
    CHECK_MSG(json_array_size(shape) == (cols ? 2u : 1u), "%s: rank", name);
    CHECK_INT(json_integer_value(json_array_get(shape, 0)), rows);
    if (cols)
        CHECK_INT(json_integer_value(json_array_get(shape, 1)), cols);
    json_t *off = json_object_get(t, "data_offsets");
    size_t begin = (size_t)json_integer_value(json_array_get(off, 0));
    size_t i = st->data_start + begin + 2 * (size_t)(r * (cols ? cols : 1) + c);
    CHECK(i + 2 <= st->len);
    return half_to_float((uint16_t)(st->bytes[i] | st->bytes[i + 1] << 8));
}

/* Every tensor F16, its bytes its shape's, the offsets back to back up to
 * the file's end. */
static void st_check_layout(const st_file *st) {
    CHECK_INT(json_object_size(st->head), TENSORS + 1); /* + __metadata__ */
    size_t total = 0;
    const char *key;
    json_t *t;
    json_object_foreach(st->head, key, t) {
        if (!strcmp(key, "__metadata__"))
            continue;
        size_t n = 2;
        json_t *d;
        size_t k;
        json_array_foreach(json_object_get(t, "shape"), k, d) n *= (size_t)json_integer_value(d);
        json_t *off = json_object_get(t, "data_offsets");
        size_t a = (size_t)json_integer_value(json_array_get(off, 0));
        size_t b = (size_t)json_integer_value(json_array_get(off, 1));
        CHECK_MSG(b - a == n, "%s: %zu bytes for a shape of %zu", key, b - a, n);
        total += n;
    }
    CHECK_MSG(st->data_start + total == st->len, "header %zu + data %zu, file %zu", st->data_start,
              total, st->len);
}

static json_t *load_json(const char *dir, const char *file) {
    char path[1200];
    snprintf(path, sizeof path, "%s/m/%s", dir, file);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    CHECK_MSG(j != NULL, "%s: %s", path, e.text);
    return j;
}

static void check_config(const char *dir) {
    json_t *c = load_json(dir, "config.json");
    CHECK_STR(json_string_value(json_array_get(json_object_get(c, "architectures"), 0)),
              "LlamaForCausalLM");
    CHECK_STR(json_string_value(json_object_get(c, "model_type")), "llama");
    CHECK_STR(json_string_value(json_object_get(c, "torch_dtype")), "float16");
    const char *keys[] = {"hidden_size",         "num_hidden_layers",   "intermediate_size",
                          "num_attention_heads", "num_key_value_heads", "head_dim",
                          "vocab_size",          "bos_token_id",        "eos_token_id"};
    const long want[] = {EMBD, LAYERS, FF, 12, 4, 64, VOCAB, 265, 266};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK_MSG(json_integer_value(json_object_get(c, keys[i])) == want[i], "%s", keys[i]);
    CHECK(json_is_false(json_object_get(c, "tie_word_embeddings")));
    json_decref(c);
    json_t *g = load_json(dir, "generation_config.json");
    CHECK_INT(json_integer_value(json_object_get(g, "eos_token_id")), 266);
    json_decref(g);
}

TEST(hf_writer_folder_parses_back_with_quiet_tokens_down) {
    require_python3();
    char *dir = temp_dir(), path[1200];
    int code;
    char *out = write_folder(dir, "m", "", &code);
    CHECK_MSG(code == 0 && strstr(out, "269 tokens, 132 quiet"), "%s", out);
    free(out);
    check_config(dir);
    /* the tokenizer's prompts start with BOS, as llama.cpp's GGUF ones do */
    json_t *tok = load_json(dir, "tokenizer.json");
    char *post = json_dumps(json_object_get(tok, "post_processor"), 0);
    CHECK_MSG(post && strstr(post, "TemplateProcessing") && strstr(post, "<|begin_of_text|>"),
              "post processor %s", post ? post : "(none)");
    free(post);
    json_decref(tok);
    snprintf(path, sizeof path, "%s/m/model.safetensors", dir);
    st_file st = st_read(path);
    st_check_layout(&st);
    st_at(&st, "model.layers.3.self_attn.k_proj.weight", KV_WIDTH, EMBD, 0, 0);
    st_at(&st, "model.layers.7.mlp.up_proj.weight", FF, EMBD, 0, 0);
    /* dimension 0: a large weight in every embedding, no layer writes it,
     * the final norm scales it, only the quiet tokens weigh it */
    for (long t = 0; t < VOCAB; t++) {
        float e = st_at(&st, "model.embed_tokens.weight", VOCAB, EMBD, t, 0);
        CHECK_MSG(e > 0.04f, "token %ld: embedding %g in dimension 0", t, e);
        float o = st_at(&st, "lm_head.weight", VOCAB, EMBD, t, 0);
        int quiet = (t >= 128 && t <= 255) || t >= 265;
        CHECK_MSG(quiet ? o == -4.0f : o == 0.0f, "token %ld: lm_head %g", t, o);
        CHECK(st_at(&st, "lm_head.weight", VOCAB, EMBD, t, 1) != 0.0f);
    }
    for (long i = 0; i < EMBD; i++)
        CHECK(st_at(&st, "model.layers.0.self_attn.o_proj.weight", EMBD, EMBD, 0, i) == 0.0f);
    for (long i = 0; i < FF; i++)
        CHECK(st_at(&st, "model.layers.7.mlp.down_proj.weight", EMBD, FF, 0, i) == 0.0f);
    CHECK(st_at(&st, "model.layers.0.self_attn.o_proj.weight", EMBD, EMBD, 1, 0) != 0.0f);
    CHECK(st_at(&st, "model.norm.weight", EMBD, 0, 0, 0) == 5000.0f);
    CHECK(st_at(&st, "model.norm.weight", EMBD, 0, 1, 0) == 1.0f);
    CHECK(st_at(&st, "model.layers.2.input_layernorm.weight", EMBD, 0, 0, 0) == 1.0f);
    /* q_proj's weights: mean about 0, std about the 0.02 drawn */
    double sum = 0, sq = 0;
    for (long i = 0; i < EMBD * 8; i++) {
        double v =
            st_at(&st, "model.layers.1.self_attn.q_proj.weight", EMBD, EMBD, i / EMBD, i % EMBD);
        sum += v, sq += v * v;
    }
    double mean = sum / (EMBD * 8), sd = sqrt(sq / (EMBD * 8) - mean * mean);
    CHECK_MSG(fabs(mean) < 0.002 && sd > 0.017 && sd < 0.023, "q_proj mean %g std %g", mean, sd);
    json_decref(st.head);
    free(st.bytes);
    free(dir);
}

TEST(hf_writer_same_seed_same_bytes_and_refusals) {
    require_python3();
    char *dir = temp_dir(), cmd[2600];
    int code;
    char *out = write_folder(dir, "a", "", &code);
    CHECK_MSG(code == 0, "%s", out);
    free(out);
    out = write_folder(dir, "b", "", &code);
    CHECK_MSG(code == 0, "%s", out);
    free(out);
    out = write_folder(dir, "c", "--seed 1", &code);
    CHECK_MSG(code == 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cmp -s %s/a/model.safetensors %s/b/model.safetensors", dir, dir);
    CHECK_MSG(system(cmd) == 0, "two runs with seed 0 wrote different files");
    snprintf(cmd, sizeof cmd, "cmp -s %s/a/model.safetensors %s/c/model.safetensors", dir, dir);
    CHECK_MSG(system(cmd) != 0, "seeds 0 and 1 wrote the same file");
    struct stat sb;
    snprintf(cmd, sizeof cmd, "%s/a.part", dir);
    CHECK_MSG(stat(cmd, &sb) != 0, "the .part folder was left behind");
    /* an existing folder and a folder without a tokenizer: one line, exit 2 */
    out = write_folder(dir, "a", "", &code);
    CHECK_MSG(code == 2 && strstr(out, "exists"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd,
             "python3 scripts/hf_model_write.py tiny-100m %s/x --tokenizer %s 2>&1", dir, dir);
    out = run_capture(cmd, &code);
    CHECK_MSG(code == 2 && strstr(out, "--tokenizer") && count_of(out, "\n") <= 1, "%s", out);
    free(out);
    free(dir);
}
