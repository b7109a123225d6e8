/* chunk_both: every chunk a test parses goes through both readers, the
 * hand-written scanner chunk_parse and the jansson reading it replaced
 * (chunk_parse_reference), and the test fails unless the two agree on
 * every field. Shared by the chunk tests (t3030-chunk-recorded-streams.c,
 * t3040-chunk-fast-scanner-agrees.c). */
#ifndef SERVELAB_TEST_CHUNK_BOTH_H
#define SERVELAB_TEST_CHUNK_BOTH_H

#include "protocol/chunk.h"

#include <stddef.h>

/* The recorded llama.cpp server answers (tests/data). */
#define TRANSCRIPTS "tests/data/transcripts/llama.cpp-server/"

/* The input, printable, for a failure message (a static buffer). */
const char *show(const char *data, size_t len);
/* chunk_parse into *c, failing the test unless chunk_parse_reference reads
 * the same input into the same chunk_info, field by field. */
void parse_both(const char *data, size_t len, chunk_info *c);
/* parse_both of a NUL-terminated string. */
void parse_str(const char *s, chunk_info *c);

#endif
