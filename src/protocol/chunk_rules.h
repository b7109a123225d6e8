/* chunk_rules: what a value in a streamed chunk may mean, the one set of
 * rules both of chunk's readings apply (chunk.c, the fast scanner, and
 * chunk_reference.c, the jansson reading that defines the results), so that
 * the two cannot drift apart on what a count or a duration may be. */
#ifndef SERVELAB_CHUNK_RULES_H
#define SERVELAB_CHUNK_RULES_H

#include "protocol/chunk.h"

#include <stddef.h>
#include <stdint.h>

/* The largest token count there can be: what requests.csv and the records
 * hold (int32_t). */
#define CHUNK_COUNT_MAX INT32_MAX

/* What a count key held: nothing (absent or null), a count, or a value no
 * count can be. */
enum chunk_count { COUNT_ABSENT, COUNT_OK, COUNT_BAD };

/* data is exactly "[DONE]", surrounding whitespace aside. */
int chunk_is_done(const char *s, size_t len);

/* Copy a string into a fixed field, cutting it before a partial UTF-8
 * character rather than in the middle of one. */
void chunk_copy_text(char *dst, size_t cap, const char *s);

/* A count as a double (how jansson reads every number of a chunk): a whole
 * number in [0, CHUNK_COUNT_MAX] is stored in *out; -0 is 0. */
enum chunk_count chunk_count_of_double(double d, long *out);

/* A duration in ms a server reports: a finite number >= 0 (-0 as 0), else NAN. */
double chunk_duration_of_double(double d);

/* The server's report of itself as it reads before anything is found:
 * no timings, every number -1 or NAN. */
void chunk_no_server_report(chunk_info *out);

/* *out for a chunk whose usage cannot be true: malformed, and nothing else. */
void chunk_bad_count(chunk_info *out);

#endif
