/* chunk_parse benchmark: the client's per-chunk cost, the one-pass scanner
 * (chunk_parse) against the jansson reading it replaced
 * (chunk_parse_reference), on three realistic streams:
 *   completions  vLLM /v1/completions chunks, one token each, usage null;
 *   chat_usage   vLLM /v1/chat/completions chunks with continuous usage
 *                stats (cumulative usage on every chunk);
 *   llamacpp     every SSE event of the recorded llama.cpp server streams.
 * Each stream is parsed N chunks a round by each implementation, in 5
 * rounds; prints chunks/s for every round and the medians, and the median
 * of the per-round speedups. Both must agree on every chunk (checked once).
 *   bench/chunk_parse [N] [TRANSCRIPT_DIR]   (see bench/chunk_parse.sh) */
#include "protocol/chunk.h"
#include "protocol/sse.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 5
#define MAX_CHUNKS 4096

/* The jansson reading is chunk_parse_reference (chunk.h, chunk_reference.c). */

typedef void (*parse_fn)(const char *, size_t, chunk_info *);

typedef struct workload {
    const char *name;
    char *chunk[MAX_CHUNKS];
    size_t len[MAX_CHUNKS];
    int n;
    size_t bytes;
} workload;

static void add(workload *w, const char *s, size_t len) {
    if (w->n == MAX_CHUNKS)
        return;
    w->chunk[w->n] = malloc(len + 1);
    memcpy(w->chunk[w->n], s, len);
    w->chunk[w->n][len] = '\0';
    w->len[w->n++] = len;
    w->bytes += len;
}

static const char *const words[] = {" the", " of", " and", " model", ",",     " token", " is",
                                    " a",   ".",   " in",  " that",  " \\\"", " é",     "\\n"};
#define NWORDS (sizeof words / sizeof words[0])

/* A 256-token vLLM completions stream: text chunks, then the final one. */
static void make_completions(workload *w) {
    char buf[1024];
    for (int i = 0; i < 256; i++) {
        int n = snprintf(buf, sizeof buf,
                         "{\"id\":\"cmpl-8c1f0e5b2a9d4f6e8b7a3c2d1e0f9a8b\",\"object\":"
                         "\"text_completion\",\"created\":1718000000,\"model\":"
                         "\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,\"text\":"
                         "\"%s\",\"logprobs\":null,\"finish_reason\":%s,\"stop_reason\":null}],"
                         "\"usage\":null}",
                         words[i % NWORDS], i == 255 ? "\"length\"" : "null");
        add(w, buf, (size_t)n);
    }
}

/* A 256-token chat stream with continuous_usage_stats: role chunk, content
 * deltas each with cumulative usage, the finish chunk. */
static void make_chat_usage(workload *w) {
    char buf[1024];
    const char *head = "{\"id\":\"chatcmpl-5f3e2d1c0b9a48776655443322110ffe\",\"object\":"
                       "\"chat.completion.chunk\",\"created\":1718000000,\"model\":"
                       "\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,\"delta\":";
    for (int i = 0; i <= 256; i++) {
        char delta[64];
        if (i == 0)
            snprintf(delta, sizeof delta, "{\"role\":\"assistant\",\"content\":\"\"}");
        else
            snprintf(delta, sizeof delta, "{\"content\":\"%s\"}", words[i % NWORDS]);
        int n = snprintf(buf, sizeof buf,
                         "%s%s,\"logprobs\":null,\"finish_reason\":%s}],\"usage\":{"
                         "\"prompt_tokens\":512,\"total_tokens\":%d,\"completion_tokens\":%d}}",
                         head, delta, i == 256 ? "\"length\"" : "null", 512 + i, i);
        add(w, buf, (size_t)n);
    }
}

static void on_event(void *ud, const char *type, const char *data, size_t len) {
    (void)type;
    add(ud, data, len);
}

static int load_transcripts(workload *w, const char *dir) {
    char pattern[1024];
    snprintf(pattern, sizeof pattern, "%s/*.body.txt", dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return -1;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "rb");
        if (!f)
            continue;
        static char body[1 << 20];
        size_t n = fread(body, 1, sizeof body, f);
        fclose(f);
        sse_parser p;
        sse_init(&p, 1 << 20, on_event, w);
        sse_feed(&p, body, n);
        sse_finish(&p);
        sse_release(&p);
    }
    globfree(&g);
    return w->n > 0 ? 0 : -1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile long sink;

/* Chunks per second for n chunks of w. */
static double run(const workload *w, parse_fn fn, long n) {
    chunk_info c;
    long acc = 0;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        int k = (int)(i % w->n);
        fn(w->chunk[k], w->len[k], &c);
        acc += c.has_output + c.completion_tokens + c.malformed;
    }
    double t = now_s() - t0;
    sink += acc;
    return (double)n / t;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v) {
    double s[ROUNDS];
    memcpy(s, v, sizeof s);
    qsort(s, ROUNDS, sizeof s[0], cmp_double);
    return s[ROUNDS / 2];
}

static int bench(const workload *w, long n) {
    for (int k = 0; k < w->n; k++) {
        chunk_info a, b;
        chunk_parse(w->chunk[k], w->len[k], &a);
        chunk_parse_reference(w->chunk[k], w->len[k], &b);
        if (memcmp(&a, &b, sizeof a) != 0) {
            fprintf(stderr, "%s: chunk %d read differently: %s\n", w->name, k, w->chunk[k]);
            return -1;
        }
    }
    double ref[ROUNDS], fast[ROUNDS], ratio[ROUNDS];
    printf("%s: %d distinct chunks, %.0f bytes on average, %ld chunks a round\n", w->name, w->n,
           (double)w->bytes / w->n, n);
    for (int r = 0; r < ROUNDS; r++) {
        ref[r] = run(w, chunk_parse_reference, n);
        fast[r] = run(w, chunk_parse, n);
        ratio[r] = fast[r] / ref[r];
        printf("  round %d: jansson %10.0f chunks/s   fast %10.0f chunks/s   x%.1f\n", r + 1,
               ref[r], fast[r], ratio[r]);
    }
    printf("  median:  jansson %10.0f chunks/s   fast %10.0f chunks/s   speedup x%.1f "
           "(%.0f ns vs %.0f ns a chunk)\n",
           median(ref), median(fast), median(ratio), 1e9 / median(ref), 1e9 / median(fast));
    return 0;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 200000;
    const char *dir = argc > 2 ? argv[2] : "tests/data/transcripts/llama.cpp-server";
    static workload completions = {.name = "completions"}, chat = {.name = "chat_usage"},
                    llamacpp = {.name = "llamacpp"};
    if (n <= 0) {
        fprintf(stderr, "usage: chunk_parse [N] [TRANSCRIPT_DIR]\n");
        return 2;
    }
    make_completions(&completions);
    make_chat_usage(&chat);
    if (load_transcripts(&llamacpp, dir) < 0) {
        fprintf(stderr, "chunk_parse: no transcripts under %s\n", dir);
        return 1;
    }
    if (bench(&completions, n) < 0 || bench(&chat, n) < 0 || bench(&llamacpp, n) < 0)
        return 1;
    return 0;
}
