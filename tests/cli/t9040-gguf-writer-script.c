/* gguf: scripts/gguf_write.py, the writer of random-weight llama models
 * for measuring a real inference server without a download. The test writes
 * the small shape (tiny-100m) at every type and reads the GGUF v3 header
 * back with a parser of its own, so a file the writer gets wrong fails here
 * rather than as a load error in the server: the magic and version, the
 * metadata keys llama.cpp reads for the llama architecture and the
 * SentencePiece vocabulary, every tensor's name, shape, type and aligned
 * offset, and the file's size equal to the aligned header plus the aligned
 * tensor data. A few weights are decoded to check their scale, and the same
 * seed must give the same bytes. It needs python3 (scripts/deps.sh test
 * installs it) and fails, saying so, without it. */
#include "support.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { GGUF_U32 = 4, GGUF_I32 = 5, GGUF_F32 = 6, GGUF_BOOL = 7, GGUF_STR = 8, GGUF_ARR = 9 };
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q8_0 = 8, GGML_BF16 = 30 };

/* tiny-100m as the script defines it. */
enum { EMBD = 768, LAYERS = 8, FF = 2048, VOCAB = 32000, KV_WIDTH = 256 };
enum { TENSORS = 1 + LAYERS * 9 + 2, ALIGN = 32 };

typedef struct weight_type {
    const char *name;
    int ggml, file_type, block, block_bytes;
} weight_type;

static const weight_type types[] = {
    {"f32", GGML_F32, 0, 1, 4},     {"f16", GGML_F16, 1, 1, 2},     {"bf16", GGML_BF16, 32, 1, 2},
    {"q8_0", GGML_Q8_0, 7, 32, 34}, {"q4_0", GGML_Q4_0, 2, 32, 18},
};

/* What the header said, as far as the test checks it. */
typedef struct header {
    uint64_t n_tensors, n_kv, data_start, data_bytes;
    char arch[64], tok_model[64], tok0[64], tok3[64], tok258[64];
    uint32_t u32[16]; /* values of the u32 keys in u32_keys, in that order */
    float rms_eps;
    uint64_t n_tokens, n_scores, n_token_types;
    int add_bos;
    uint64_t embd_offset;
} header;

static const char *const u32_keys[] = {
    "llama.context_length",
    "llama.embedding_length",
    "llama.block_count",
    "llama.feed_forward_length",
    "llama.attention.head_count",
    "llama.attention.head_count_kv",
    "llama.rope.dimension_count",
    "llama.vocab_size",
    "general.file_type",
    "general.alignment",
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.unknown_token_id",
};
enum { N_U32_KEYS = sizeof u32_keys / sizeof u32_keys[0] };

static uint64_t rd(FILE *f, int bytes) {
    unsigned char b[8];
    CHECK_MSG(fread(b, 1, (size_t)bytes, f) == (size_t)bytes, "header cut short");
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

/* A GGUF string into buf (cut to cap - 1; the rest skipped). */
static void rd_str(FILE *f, char *buf, size_t cap) {
    uint64_t n = rd(f, 8);
    CHECK_MSG(n < (1u << 20), "string of %llu bytes", (unsigned long long)n);
    size_t keep = n < cap - 1 ? (size_t)n : cap - 1;
    CHECK(fread(buf, 1, keep, f) == keep);
    buf[keep] = 0;
    CHECK(fseek(f, (long)(n - keep), SEEK_CUR) == 0);
}

static int scalar_bytes(uint32_t type) {
    static const int size[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    CHECK_MSG(type <= 12 && type != GGUF_STR && type != GGUF_ARR, "value type %u", type);
    return size[type];
}

/* An array value: its count, its strings' first three into h when it is
 * the token list. */
static uint64_t rd_array(FILE *f, const char *key, header *h) {
    uint32_t etype = (uint32_t)rd(f, 4);
    uint64_t n = rd(f, 8);
    int tokens = !strcmp(key, "tokenizer.ggml.tokens");
    for (uint64_t i = 0; i < n; i++) {
        if (etype != GGUF_STR) {
            CHECK(fseek(f, (long)(n * (uint64_t)scalar_bytes(etype)), SEEK_CUR) == 0);
            break;
        }
        char s[64];
        rd_str(f, s, sizeof s);
        if (tokens && i == 0)
            snprintf(h->tok0, sizeof h->tok0, "%s", s);
        if (tokens && i == 3)
            snprintf(h->tok3, sizeof h->tok3, "%s", s);
        if (tokens && i == 258)
            snprintf(h->tok258, sizeof h->tok258, "%s", s);
    }
    CHECK_MSG(!tokens || etype == GGUF_STR, "tokens are of type %u", etype);
    CHECK_MSG(strcmp(key, "tokenizer.ggml.scores") || etype == GGUF_F32, "scores' type %u", etype);
    CHECK_MSG(strcmp(key, "tokenizer.ggml.token_type") || etype == GGUF_I32, "types' %u", etype);
    return n;
}

static void rd_kv(FILE *f, header *h) {
    char key[128], s[64];
    rd_str(f, key, sizeof key);
    uint32_t type = (uint32_t)rd(f, 4);
    if (type == GGUF_STR) {
        rd_str(f, s, sizeof s);
        if (!strcmp(key, "general.architecture"))
            snprintf(h->arch, sizeof h->arch, "%s", s);
        if (!strcmp(key, "tokenizer.ggml.model"))
            snprintf(h->tok_model, sizeof h->tok_model, "%s", s);
        return;
    }
    if (type == GGUF_ARR) {
        uint64_t n = rd_array(f, key, h);
        if (!strcmp(key, "tokenizer.ggml.tokens"))
            h->n_tokens = n;
        if (!strcmp(key, "tokenizer.ggml.scores"))
            h->n_scores = n;
        if (!strcmp(key, "tokenizer.ggml.token_type"))
            h->n_token_types = n;
        return;
    }
    uint64_t v = rd(f, scalar_bytes(type));
    for (int i = 0; i < N_U32_KEYS; i++)
        if (!strcmp(key, u32_keys[i])) {
            CHECK_MSG(type == GGUF_U32, "%s is of type %u", key, type);
            h->u32[i] = (uint32_t)v;
        }
    if (!strcmp(key, "llama.attention.layer_norm_rms_epsilon")) {
        uint32_t bits = (uint32_t)v;
        CHECK(type == GGUF_F32);
        memcpy(&h->rms_eps, &bits, sizeof bits);
    }
    if (!strcmp(key, "tokenizer.ggml.add_bos_token"))
        h->add_bos = type == GGUF_BOOL ? (int)v : -1;
}

static uint64_t aligned(uint64_t n) {
    return (n + ALIGN - 1) / ALIGN * ALIGN;
}

/* The shape and type tensor i must have: dims (row length first). */
static void expected_tensor(int i, const weight_type *t, char *name, size_t cap, uint64_t dims[2],
                            int *n_dims, int *type) {
    static const char *const per_layer[] = {"attn_norm", "attn_q",      "attn_k",
                                            "attn_v",    "attn_output", "ffn_norm",
                                            "ffn_gate",  "ffn_down",    "ffn_up"};
    static const uint64_t rows[][2] = {{EMBD, 0},        {EMBD, EMBD}, {EMBD, KV_WIDTH},
                                       {EMBD, KV_WIDTH}, {EMBD, EMBD}, {EMBD, 0},
                                       {EMBD, FF},       {FF, EMBD},   {EMBD, FF}};
    if (i == 0 || i == TENSORS - 1) {
        snprintf(name, cap, "%s", i == 0 ? "token_embd.weight" : "output.weight");
        dims[0] = EMBD, dims[1] = VOCAB, *n_dims = 2, *type = t->ggml;
    } else if (i == TENSORS - 2) {
        snprintf(name, cap, "output_norm.weight");
        dims[0] = EMBD, *n_dims = 1, *type = GGML_F32;
    } else {
        int k = (i - 1) % 9;
        snprintf(name, cap, "blk.%d.%s.weight", (i - 1) / 9, per_layer[k]);
        dims[0] = rows[k][0], dims[1] = rows[k][1];
        *n_dims = rows[k][1] ? 2 : 1;
        *type = *n_dims == 2 ? t->ggml : GGML_F32;
    }
}

/* Tensor infos: each as expected, at the offset the ones before it leave. */
static void rd_tensors(FILE *f, const weight_type *t, header *h) {
    uint64_t offset = 0;
    for (int i = 0; i < (int)h->n_tensors; i++) {
        char name[96], want[96];
        uint64_t dims[2] = {0, 0};
        int n_dims, type;
        expected_tensor(i, t, want, sizeof want, dims, &n_dims, &type);
        rd_str(f, name, sizeof name);
        CHECK_STR(name, want);
        CHECK_INT(rd(f, 4), n_dims);
        for (int d = 0; d < n_dims; d++)
            CHECK_INT(rd(f, 8), dims[d]);
        CHECK_MSG((int)rd(f, 4) == type, "%s: not of type %d", name, type);
        uint64_t at = rd(f, 8), n = dims[0] * (n_dims == 2 ? dims[1] : 1);
        CHECK_MSG(at == offset, "%s at %llu, not %llu", name, (unsigned long long)at,
                  (unsigned long long)offset);
        if (i == 0)
            h->embd_offset = at;
        const weight_type *wt = type == GGML_F32 ? &types[0] : t;
        offset += aligned(n / (uint64_t)wt->block * (uint64_t)wt->block_bytes);
    }
    h->data_start = aligned((uint64_t)ftell(f));
    h->data_bytes = offset;
}

static header read_header(const char *path, const weight_type *t) {
    header h;
    memset(&h, 0, sizeof h);
    memset(h.u32, 0xff, sizeof h.u32); /* a key never written stays at ~0 and fails */
    h.add_bos = -1;
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    char magic[4];
    CHECK(fread(magic, 1, 4, f) == 4);
    CHECK_MSG(!memcmp(magic, "GGUF", 4), "%s: no GGUF magic", path);
    CHECK_INT(rd(f, 4), 3);
    h.n_tensors = rd(f, 8);
    h.n_kv = rd(f, 8);
    CHECK_INT(h.n_tensors, TENSORS);
    for (uint64_t i = 0; i < h.n_kv; i++)
        rd_kv(f, &h);
    rd_tensors(f, t, &h);
    fclose(f);
    return h;
}

static void check_metadata(const header *h, const weight_type *t) {
    static const uint32_t want[N_U32_KEYS] = {8192,  EMBD, LAYERS, FF, 12, 4, 64,
                                              VOCAB, 0,    ALIGN,  1,  2,  0};
    for (int i = 0; i < N_U32_KEYS; i++)
        CHECK_MSG(h->u32[i] == (i == 8 ? (uint32_t)t->file_type : want[i]), "%s: %s = %u", t->name,
                  u32_keys[i], h->u32[i]);
    CHECK_STR(h->arch, "llama");
    CHECK_STR(h->tok_model, "llama");
    CHECK_NEAR(h->rms_eps, 1e-5, 1e-9);
    CHECK_INT(h->n_tokens, VOCAB);
    CHECK_INT(h->n_scores, VOCAB);
    CHECK_INT(h->n_token_types, VOCAB);
    CHECK_STR(h->tok0, "<unk>");
    CHECK_STR(h->tok3, "<0x00>");
    CHECK_STR(h->tok258, "<0xFF>");
    CHECK_INT(h->add_bos, 1);
}

static float half_to_float(uint16_t h) {
    int exp = h >> 10 & 0x1f, mant = h & 0x3ff;
    float v = exp ? ldexpf(1.0f + mant / 1024.0f, exp - 15) : ldexpf(mant / 1024.0f, -14);
    return h & 0x8000 ? -v : v;
}

/* The first 4096 weights of token_embd decoded: mean about 0, std about
 * the 0.02 the script draws from, within what 4096 draws allow. */
static void check_weights(const char *path, const header *h, const weight_type *t) {
    enum { N = 4096 };
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    CHECK(fseek(f, (long)(h->data_start + h->embd_offset), SEEK_SET) == 0);
    unsigned char *raw = malloc(N * 4);
    CHECK(raw && fread(raw, 1, N * 4, f) == N * 4);
    fclose(f);
    double sum = 0, sq = 0;
    for (int i = 0; i < N; i++) {
        float v;
        if (t->ggml == GGML_F32) {
            memcpy(&v, raw + 4 * i, 4);
        } else if (t->ggml == GGML_F16 || t->ggml == GGML_BF16) {
            uint16_t x = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
            uint32_t bits = (uint32_t)x << 16;
            if (t->ggml == GGML_F16)
                v = half_to_float(x);
            else
                memcpy(&v, &bits, 4);
        } else {
            const unsigned char *b = raw + (i / 32) * t->block_bytes;
            float d = half_to_float((uint16_t)(b[0] | b[1] << 8));
            int j = i % 32;
            if (t->ggml == GGML_Q8_0)
                v = d * (float)(int8_t)b[2 + j];
            else
                v = d * (float)((j < 16 ? b[2 + j] & 15 : b[2 + j - 16] >> 4) - 8);
        }
        sum += v, sq += (double)v * v;
    }
    free(raw);
    double mean = sum / N, sd = sqrt(sq / N - mean * mean);
    CHECK_MSG(fabs(mean) < 0.002 && sd > 0.017 && sd < 0.023, "%s: weights' mean %g, std %g",
              t->name, mean, sd);
}

static char *write_model(const char *dir, const char *type, const char *extra) {
    static char path[1200];
    char cmd[2600];
    snprintf(path, sizeof path, "%s/tiny-%s%s.gguf", dir, type, extra[0] ? "-seed" : "");
    snprintf(cmd, sizeof cmd, "python3 scripts/gguf_write.py tiny-100m %s %s %s 2>&1", type, path,
             extra);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "%s: exit %d: %s", cmd, code, out ? out : "");
    free(out);
    return path;
}

static void require_python3(void) {
    int code;
    char *out = run_capture("command -v python3", &code);
    free(out);
    CHECK_MSG(code == 0, "python3 is not on PATH: scripts/deps.sh test installs it; this test "
                         "runs scripts/gguf_write.py with it");
}

TEST(gguf_writer_tiny_model_headers_parse_back) {
    require_python3();
    char *dir = temp_dir();
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const char *path = write_model(dir, types[i].name, "");
        header h = read_header(path, &types[i]);
        check_metadata(&h, &types[i]);
        struct stat st;
        CHECK(stat(path, &st) == 0);
        CHECK_MSG((uint64_t)st.st_size == h.data_start + h.data_bytes,
                  "%s: %lld bytes, header and data make %llu", types[i].name, (long long)st.st_size,
                  (unsigned long long)(h.data_start + h.data_bytes));
        check_weights(path, &h, &types[i]);
        CHECK(remove(path) == 0);
    }
    free(dir);
}

TEST(gguf_writer_same_seed_same_bytes) {
    require_python3();
    char *dir = temp_dir(), cmd[2600];
    char a[1200], b[1200];
    snprintf(a, sizeof a, "%s", write_model(dir, "q4_0", ""));
    snprintf(cmd, sizeof cmd, "mv %s %s.first", a, a);
    CHECK(system(cmd) == 0);
    write_model(dir, "q4_0", "");
    snprintf(cmd, sizeof cmd, "cmp -s %s %s.first", a, a);
    CHECK_MSG(system(cmd) == 0, "two runs with seed 0 wrote different files");
    snprintf(b, sizeof b, "%s", write_model(dir, "q4_0", "--seed 1"));
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    CHECK_MSG(system(cmd) != 0, "seeds 0 and 1 wrote the same file");
    free(dir);
}

/* --- a model with a real tokenizer (scripts/gguf_vocab.py) ------------------ */

/* What the tokenizer model's header says, read without expecting shapes. */
typedef struct tok_header {
    char tok_model[64], pre[64];
    uint64_t n_tokens, n_types, n_merges;
    int32_t types[512]; /* the first 512 token types */
    int has_template;
    uint32_t bos, eos, vocab_size;
    int n_tensors;
    char names[TENSORS][48];
    uint64_t dims[TENSORS][2], offset[TENSORS];
    uint32_t type[TENSORS];
    uint64_t data_start;
} tok_header;

static void tok_kv(FILE *f, tok_header *h) {
    char key[128], s[64];
    rd_str(f, key, sizeof key);
    uint32_t type = (uint32_t)rd(f, 4);
    if (type == GGUF_STR) {
        rd_str(f, s, sizeof s);
        if (!strcmp(key, "tokenizer.ggml.model"))
            snprintf(h->tok_model, sizeof h->tok_model, "%s", s);
        if (!strcmp(key, "tokenizer.ggml.pre"))
            snprintf(h->pre, sizeof h->pre, "%s", s);
        h->has_template |= !strcmp(key, "tokenizer.chat_template");
        return;
    }
    if (type == GGUF_ARR) {
        uint32_t etype = (uint32_t)rd(f, 4);
        uint64_t n = rd(f, 8);
        if (!strcmp(key, "tokenizer.ggml.tokens"))
            h->n_tokens = n;
        if (!strcmp(key, "tokenizer.ggml.merges"))
            h->n_merges = n;
        for (uint64_t i = 0; i < n; i++) {
            if (etype == GGUF_STR) {
                rd_str(f, s, sizeof s);
                continue;
            }
            uint64_t v = rd(f, scalar_bytes(etype));
            if (!strcmp(key, "tokenizer.ggml.token_type") && i < 512)
                h->types[i] = (int32_t)v;
        }
        if (!strcmp(key, "tokenizer.ggml.token_type"))
            h->n_types = n;
        return;
    }
    uint64_t v = rd(f, scalar_bytes(type));
    if (!strcmp(key, "tokenizer.ggml.bos_token_id"))
        h->bos = (uint32_t)v;
    if (!strcmp(key, "tokenizer.ggml.eos_token_id"))
        h->eos = (uint32_t)v;
    if (!strcmp(key, "llama.vocab_size"))
        h->vocab_size = (uint32_t)v;
}

static tok_header read_tok_header(const char *path) {
    tok_header h;
    memset(&h, 0, sizeof h);
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    char magic[4];
    CHECK(fread(magic, 1, 4, f) == 4 && !memcmp(magic, "GGUF", 4));
    CHECK_INT(rd(f, 4), 3);
    h.n_tensors = (int)rd(f, 8);
    CHECK_INT(h.n_tensors, TENSORS);
    uint64_t n_kv = rd(f, 8);
    for (uint64_t i = 0; i < n_kv; i++)
        tok_kv(f, &h);
    for (int i = 0; i < h.n_tensors; i++) {
        rd_str(f, h.names[i], sizeof h.names[i]);
        uint32_t nd = (uint32_t)rd(f, 4);
        h.dims[i][1] = 1;
        for (uint32_t d = 0; d < nd; d++)
            h.dims[i][d] = rd(f, 8);
        h.type[i] = (uint32_t)rd(f, 4);
        h.offset[i] = rd(f, 8);
    }
    h.data_start = aligned((uint64_t)ftell(f));
    fclose(f);
    return h;
}

/* Element `i` of tensor `name` (an F16 or F32 one). */
static float element(const char *path, const tok_header *h, const char *name, uint64_t i) {
    int t = 0;
    while (t < h->n_tensors && strcmp(h->names[t], name))
        t++;
    CHECK_MSG(t < h->n_tensors, "no tensor %s", name);
    int w = h->type[t] == GGML_F32 ? 4 : 2;
    CHECK(h->type[t] == GGML_F32 || h->type[t] == GGML_F16);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    CHECK(fseek(f, (long)(h->data_start + h->offset[t] + i * (uint64_t)w), SEEK_SET) == 0);
    unsigned char b[4];
    CHECK(fread(b, 1, (size_t)w, f) == (size_t)w);
    fclose(f);
    float v;
    if (w == 4)
        memcpy(&v, b, 4);
    else
        v = half_to_float((uint16_t)(b[0] | b[1] << 8));
    return v;
}

/* tests/data/tokenizer-bpe: 256 byte tokens, 9 merges, 3 special tokens and
 * one user-defined; the byte tokens 0x80-0xFF are pieces of a character. */
TEST(gguf_writer_real_tokenizer_and_its_quiet_tokens) {
    require_python3();
    char *dir = temp_dir(), path[1200], cmd[2600];
    snprintf(path, sizeof path, "%s/tok.gguf", dir);
    snprintf(cmd, sizeof cmd,
             "python3 scripts/gguf_write.py tiny-100m f16 %s --tokenizer tests/data/tokenizer-bpe "
             "2>&1",
             path);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0 && strstr(out, "269 tokens, 132 quiet"), "%s", out);
    free(out);
    tok_header h = read_tok_header(path);
    CHECK_STR(h.tok_model, "gpt2");
    CHECK_STR(h.pre, "llama-bpe");
    CHECK_INT(h.n_tokens, 269);
    CHECK_INT(h.n_types, 269);
    CHECK_INT(h.vocab_size, 269);
    CHECK_INT(h.n_merges, 9);
    CHECK(h.has_template);
    CHECK_INT(h.bos, 265);
    CHECK_INT(h.eos, 266);
    CHECK(h.types[65] == 1 && h.types[265] == 3 && h.types[267] == 3 && h.types[268] == 4);
    /* untied: output.weight, vocabulary long */
    CHECK_STR(h.names[TENSORS - 1], "output.weight");
    CHECK_INT(h.dims[TENSORS - 1][1], 269);
    /* dimension 0: every embedding holds a large weight there, no layer
     * writes it, the output norm scales it, and only quiet tokens weigh it */
    for (uint64_t tok = 0; tok < 269; tok++) {
        float e = element(path, &h, "token_embd.weight", tok * EMBD);
        CHECK_MSG(e > 0.04f, "token %llu: embedding %g in dimension 0", (unsigned long long)tok, e);
        float o = element(path, &h, "output.weight", tok * EMBD);
        int quiet = (tok >= 128 && tok <= 255) || tok >= 265;
        CHECK_MSG(quiet ? o == -4.0f : o == 0.0f, "token %llu: output weight %g",
                  (unsigned long long)tok, o);
        CHECK(element(path, &h, "output.weight", tok * EMBD + 1) != 0.0f);
    }
    for (uint64_t i = 0; i < EMBD; i++)
        CHECK(element(path, &h, "blk.0.attn_output.weight", i) == 0.0f);
    for (uint64_t i = 0; i < FF; i++)
        CHECK(element(path, &h, "blk.7.ffn_down.weight", i) == 0.0f);
    CHECK(element(path, &h, "blk.0.attn_output.weight", EMBD) != 0.0f);
    CHECK(element(path, &h, "output_norm.weight", 0) == 5000.0f);
    CHECK(element(path, &h, "output_norm.weight", 1) == 1.0f);
    /* a folder without a tokenizer is refused in one line */
    snprintf(cmd, sizeof cmd,
             "python3 scripts/gguf_write.py tiny-100m f16 %s/x.gguf --tokenizer %s 2>&1", dir, dir);
    out = run_capture(cmd, &code);
    CHECK_MSG(code == 2 && strstr(out, "--tokenizer") && count_of(out, "\n") <= 1, "%s", out);
    free(out);
    CHECK(remove(path) == 0);
    free(dir);
}

/* A tokenizer.json whose ids are not 0..n-1 each once, or whose parts are
 * not the shapes tokenizers writes, is refused in one line and nothing is
 * written (round 3's Q4: tracebacks, a 2^40-entry list, and a vocabulary
 * of -1 ids or none at all written silently). */
TEST(gguf_writer_refuses_a_malformed_tokenizer) {
    require_python3();
    char *dir = temp_dir(), cmd[4096], here[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && python3 - <<'PY'\n"
             "import json, os, shutil\n"
             "src = '%s/tests/data/tokenizer-bpe'\n"
             "def case(name, edit):\n"
             "    t = json.load(open(src + '/tokenizer.json'))\n"
             "    edit(t)\n"
             "    os.makedirs(name)\n"
             "    json.dump(t, open(name + '/tokenizer.json', 'w'))\n"
             "    shutil.copy(src + '/tokenizer_config.json', name)\n"
             "case('huge-id', lambda t: t['model']['vocab'].__setitem__('zz', 2**40))\n"
             "case('string-id', lambda t: t['model']['vocab'].__setitem__('zz', '5'))\n"
             "case('negative-id', lambda t: t['model']['vocab'].__setitem__('zz', -1))\n"
             "case('shared-id', lambda t: t['model']['vocab'].__setitem__('zz', 3))\n"
             "case('vocab-list', lambda t: t['model'].__setitem__('vocab', []))\n"
             "case('pre-list', lambda t: t.__setitem__('pre_tokenizer', ['x']))\n"
             "PY",
             dir, getcwd(here, sizeof here) ? here : ".");
    int code;
    free(run_capture(cmd, &code));
    CHECK_INT(code, 0);
    const char *cases[] = {"huge-id",   "string-id",  "negative-id",
                           "shared-id", "vocab-list", "pre-list"};
    for (int i = 0; i < 6; i++) {
        snprintf(cmd, sizeof cmd,
                 "python3 scripts/gguf_write.py tiny-100m q4_0 %s/%s.gguf --tokenizer %s/%s 2>&1",
                 dir, cases[i], dir, cases[i]);
        char *out = run_capture(cmd, &code);
        CHECK_MSG(code == 2 && count_of(out, "\n") <= 1 && !strstr(out, "Traceback"), "%s: %d %s",
                  cases[i], code, out);
        free(out);
        snprintf(cmd, sizeof cmd, "%s/%s.gguf", dir, cases[i]);
        struct stat st;
        CHECK_MSG(stat(cmd, &st) != 0, "%s: a model was written", cases[i]);
    }
    free(dir);
}
