/* bytescan: the next comma, LF, double quote or CR in a CSV file's bytes
 * (or, for a scan of lines, the next LF, quote or CR), found 64 bytes at a
 * time. A merge splits 144 million rows of 20 to 130
 * bytes; a loop over each byte spent half the copy's time testing bytes
 * (perf, 16 x 1M shards). Here one pass of vector compares marks every
 * stop among the next 64 bytes, and each field's end is then a count of
 * trailing zeros. Header-only: the scan is inlined into the loops that use
 * it. Bytes past `end` are not read unless they are before `limit`, a
 * bound the caller knows readable (the end of its mapping), and a stop
 * found at or past `end` is reported as `end`. */
#ifndef SERVELAB_BYTESCAN_H
#define SERVELAB_BYTESCAN_H

#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct bytescan {
    const char *base;  /* the 64 bytes bits describes start here */
    uint64_t bits;     /* bit i: base[i] is a stop */
    const char *end;   /* where the caller's bytes end */
    const char *limit; /* readable up to here (>= end) */
    int commas;        /* 1: a comma is a stop */
} bytescan;

static inline int bytescan_is_stop(unsigned char c, int commas) {
    return (commas && c == ',') || c == '\n' || c == '"' || c == '\r';
}

/* The stops among the 64 bytes at p (fewer when limit comes first). */
static inline uint64_t bytescan_mask(const char *p, const char *limit, int commas) {
#if defined(__SSE2__)
    if (limit - p >= 64) {
        const __m128i comma = _mm_set1_epi8(','), lf = _mm_set1_epi8('\n'),
                      quote = _mm_set1_epi8('"'), cr = _mm_set1_epi8('\r');
        uint64_t m = 0;
        for (int i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
            __m128i s = _mm_or_si128(_mm_cmpeq_epi8(v, lf),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, cr)));
            if (commas)
                s = _mm_or_si128(s, _mm_cmpeq_epi8(v, comma));
            m |= (uint64_t)(uint16_t)_mm_movemask_epi8(s) << (16 * i);
        }
        return m;
    }
#endif
    uint64_t m = 0;
    long n = limit - p < 64 ? (long)(limit - p) : 64;
    for (long i = 0; i < n; i++)
        m |= (uint64_t)bytescan_is_stop((unsigned char)p[i], commas) << i;
    return m;
}

/* A scan of the bytes before end (readable up to limit); commas: 1 to stop
 * at commas too. */
static inline void bytescan_init(bytescan *s, const char *end, const char *limit, int commas) {
    s->commas = commas;
    s->base = NULL;
    s->bits = 0;
    s->end = end;
    s->limit = limit > end ? limit : end;
}

/* The first stop at or after `from` (from < s->end), or s->end. */
static inline const char *bytescan_next(bytescan *s, const char *from) {
    for (;;) {
        if (!s->base || from < s->base || from >= s->base + 64) {
            s->base = from;
            s->bits = bytescan_mask(from, s->limit, s->commas);
        }
        uint64_t b = s->bits >> (from - s->base);
        if (b) {
            const char *x = from + __builtin_ctzll(b);
            return x < s->end ? x : s->end;
        }
        if (s->base + 64 >= s->end)
            return s->end;
        from = s->base + 64;
    }
}

#endif
