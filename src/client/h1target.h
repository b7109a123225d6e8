/* h1target: the resolved address and the fixed request head of an
 * http:// URL, for our own HTTP/1.1 client (h1.c). */
#ifndef SERVELAB_H1TARGET_H
#define SERVELAB_H1TARGET_H

#include <netdb.h>
#include <stddef.h>

typedef struct h1_target {
    struct addrinfo *addrs; /* NULL: the URL did not split or its host did not resolve */
    int n_addrs;
    char *head_start; /* "POST /path HTTP/1.1\r\nHost: ...\r\n<headers>" */
    size_t head_start_len;
} h1_target;

/* Splits and resolves `url` and builds the head from `headers` ("Name:
 * value" lines, NULL terminated; a user header replaces ours of the same
 * name, and "Name:" with nothing after it removes it). */
void h1_target_init(h1_target *t, const char *url, const char *const *headers);
void h1_target_free(h1_target *t);

#endif
