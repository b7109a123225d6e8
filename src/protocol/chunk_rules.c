/* chunk_rules: the rules both readings of a chunk share (see
 * chunk_rules.h). Kept out of line, as they run once a chunk at most. */
#include "protocol/chunk_rules.h"

#include <math.h>
#include <string.h>

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int chunk_is_done(const char *s, size_t len) {
    while (len > 0 && is_blank(*s)) {
        s++;
        len--;
    }
    while (len > 0 && is_blank(s[len - 1]))
        len--;
    return len == 6 && memcmp(s, "[DONE]", 6) == 0;
}

void chunk_copy_text(char *dst, size_t cap, const char *s) {
    size_t n = strlen(s);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
}

enum chunk_count chunk_count_of_double(double d, long *out) {
    if (!(d >= 0 && d <= CHUNK_COUNT_MAX) || (double)(long)d != d)
        return COUNT_BAD;
    *out = (long)d;
    return COUNT_OK;
}

double chunk_duration_of_double(double d) {
    return isfinite(d) && d >= 0 ? d + 0.0 : NAN;
}

void chunk_no_server_report(chunk_info *out) {
    out->has_timings = 0;
    out->timings_prompt_ms = out->timings_predicted_ms = NAN;
    out->timings_prompt_n = out->timings_predicted_n = out->timings_cache_n = -1;
    out->timings_draft_n = out->timings_draft_accepted = -1;
    out->cached_tokens = -1;
    out->reasoning_tokens = -1;
}

void chunk_bad_count(chunk_info *out) {
    memset(out, 0, sizeof *out);
    chunk_no_server_report(out);
    out->malformed = 1;
    out->bad_count = 1;
}
