/* sha256: the SHA-256 digest (FIPS 180-4) of a file, for meta.json to say
 * which server binary and which model file were measured. Written here:
 * it is forty lines, and no library the project links has it. */
#ifndef SERVELAB_SHA256_H
#define SERVELAB_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t used;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* The digest as 64 lowercase hex digits and a NUL into hex[65]. */
void sha256_hex(sha256_ctx *c, char hex[65]);
/* The digest of the file at `path` into hex[65] and its size into *bytes:
 * 0, or -1 with errno set when it cannot be read. */
int sha256_file(const char *path, char hex[65], long long *bytes);

#endif
