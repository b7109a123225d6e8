/* filesink: a file written through the two-buffer writer holds exactly the
 * bytes put into it, in order, past the size where it goes on past the page
 * cache (SINK_DIRECT_AFTER), with pieces of every length: one byte, rows
 * that straddle a buffer's end or a block's, rows larger than a buffer,
 * bytes written straight into sink_room, and a last part shorter than a
 * block. */
#include "common/filesink.h"
#include "support.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file's byte at offset i, the same whoever asks. */
static char byte_at(uint64_t i) {
    return (char)(((i * 2654435761u) >> 11) ^ (i >> 20));
}

static void fill_from(char *p, uint64_t at, size_t n) {
    for (size_t k = 0; k < n; k++)
        p[k] = byte_at(at + k);
}

TEST(filesink_writes_every_byte_past_the_cache_limit) {
    char *dir = temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    sink o;
    CHECK(sink_open(&o, path) == 0);
    uint64_t at = 0, rng = 7;
    const uint64_t total = SINK_DIRECT_AFTER + 13 * (uint64_t)SINK_BYTES + 1234;
    char *piece = malloc(SINK_BYTES * 2 + 77);
    CHECK(piece);
    int round = 0;
    while (at < total) {
        rng = rng * 6364136223846793005u + 1442695040888963407u;
        size_t n = (size_t)(rng >> 33) % 9000 + 1;
        if (round % 997 == 5)
            n = SINK_BYTES * 2 + 77; /* larger than a buffer */
        else if (round % 13 == 0)
            n = 1;
        if (n > total - at)
            n = (size_t)(total - at);
        if (round % 3 == 0 && n <= SINK_BYTES) { /* straight into the buffer */
            char *d = sink_room(&o, n);
            CHECK(d);
            fill_from(d, at, n);
            o.used += n;
        } else {
            fill_from(piece, at, n);
            CHECK(sink_put(&o, piece, n) == 0);
        }
        at += n;
        round++;
    }
    CHECK(sink_close(&o) == 0);
    free(piece);

    FILE *f = fopen(path, "rb");
    CHECK(f);
    static char buf[65536], want[65536];
    uint64_t got = 0;
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
        fill_from(want, got, k);
        CHECK_MSG(!memcmp(buf, want, k), "the 64 KiB from byte %llu differ",
                  (unsigned long long)got);
        got += k;
    }
    fclose(f);
    CHECK_MSG(got == total, "file has %llu bytes, %llu put", (unsigned long long)got,
              (unsigned long long)total);
}

TEST(filesink_a_small_file_and_an_empty_one) {
    char *dir = temp_dir();
    char path[4200];
    snprintf(path, sizeof path, "%s/small.txt", dir);
    sink o;
    CHECK(sink_open(&o, path) == 0);
    CHECK(sink_put(&o, "a,b\n", 4) == 0);
    CHECK(sink_close(&o) == 0);
    size_t len;
    CHECK_STR(read_file(path, &len), "a,b\n");
    snprintf(path, sizeof path, "%s/empty.txt", dir);
    CHECK(sink_open(&o, path) == 0);
    CHECK(sink_close(&o) == 0);
    CHECK_STR(read_file(path, &len), "");
}
