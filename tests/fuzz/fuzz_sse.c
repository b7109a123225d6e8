/* fuzz_sse: libFuzzer target for the SSE parser (protocol/sse.h).
 *
 * The input is a response body, byte for byte. It is parsed three ways: in
 * one piece, cut at three points derived from its hash, and one byte at a
 * time, and the three must give the same events and the same failure. That
 * is done twice: with a 4096-byte event limit and with a small limit derived
 * from the hash (16..271 bytes), so the limit path is hit often. Every event
 * must be NUL-terminated and within the limit, and the buffers must never
 * grow past it. */
#include "protocol/sse.h"
#include "fuzz_common.h"

#include <stdint.h>
#include <string.h>

typedef struct log {
    size_t max;
    size_t events;
    uint64_t hash;
} log;

static void on_event(void *ud, const char *type, const char *data, size_t len) {
    log *l = ud;
    FUZZ_CHECK(data[len] == '\0');
    size_t tl = strlen(type); /* 0 when the "event:" value starts with a NUL byte */
    FUZZ_CHECK(len <= l->max);
    if (strcmp(type, "message") != 0)
        FUZZ_CHECK(len + tl <= l->max);
    l->events++;
    l->hash = fuzz_hash(l->hash, type, tl + 1);
    l->hash = fuzz_hash(l->hash, &len, sizeof len);
    l->hash = fuzz_hash(l->hash, data, len);
}

static void check_bounds(const sse_parser *p, size_t max) {
    FUZZ_CHECK(p->data_cap <= max + 1);
    FUZZ_CHECK(p->type_cap <= max + 1);
    FUZZ_CHECK(p->data_len + p->type_len <= max);
}

/* Feed data cut at `cuts` (ascending, n_cuts of them; SIZE_MAX: every
 * byte), finish, and report the events in *out; returns the failed flag. */
static int run(sse_parser *p, size_t max, const uint8_t *data, size_t n, const size_t *cuts,
               int n_cuts, log *out) {
    memset(out, 0, sizeof *out);
    out->max = max;
    p->ud = out;
    int failed = 0;
    size_t at = 0;
    for (int i = 0; i <= n_cuts && at <= n; i++) {
        size_t end = i < n_cuts ? cuts[i] : n;
        if (sse_feed(p, (const char *)data + at, end - at) < 0)
            failed = 1;
        check_bounds(p, max);
        at = end;
    }
    if (!failed)
        sse_finish(p);
    else
        FUZZ_CHECK(sse_feed(p, "\n\n", 2) < 0); /* stays failed */
    check_bounds(p, max);
    return failed;
}

static void three_ways(size_t max, const uint8_t *data, size_t n, uint64_t h) {
    sse_parser p;
    log whole, cut, bytes;
    sse_init(&p, max, on_event, NULL);
    int f1 = run(&p, max, data, n, NULL, 0, &whole);

    size_t cuts[3] = {(size_t)(h % (n + 1)), (size_t)((h >> 21) % (n + 1)),
                      (size_t)((h >> 42) % (n + 1))};
    for (int i = 0; i < 3; i++) /* sort the three */
        for (int j = i + 1; j < 3; j++)
            if (cuts[j] < cuts[i]) {
                size_t t = cuts[i];
                cuts[i] = cuts[j];
                cuts[j] = t;
            }
    sse_reset(&p); /* reuse the buffers */
    int f2 = run(&p, max, data, n, cuts, 3, &cut);
    sse_release(&p);

    sse_init(&p, max, on_event, NULL);
    size_t *every = malloc((n ? n : 1) * sizeof *every);
    for (size_t i = 0; i < n; i++)
        every[i] = i;
    int f3 = run(&p, max, data, n, every, (int)n, &bytes);
    free(every);
    sse_release(&p);

    FUZZ_CHECK(f1 == f2 && f1 == f3);
    FUZZ_CHECK(whole.events == cut.events && whole.events == bytes.events);
    FUZZ_CHECK(whole.hash == cut.hash && whole.hash == bytes.hash);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 16)
        return 0;
    uint64_t h = fuzz_hash(0, data, size);
    three_ways(4096, data, size, h);
    three_ways(16 + (size_t)(h >> 56), data, size, h * 0x9E3779B97F4A7C15ULL);
    return 0;
}
