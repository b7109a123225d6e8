/* chunk_both: chunk_parse checked against chunk_parse_reference on every
 * input, field by field (see chunk_both.h). The inputs are copied to an
 * exact-size buffer so that AddressSanitizer sees any read past the end. */
#include "chunk_both.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

const char *show(const char *data, size_t len) {
    static char buf[700];
    size_t n = 0;
    if (!data)
        return "(null)";
    for (size_t i = 0; i < len && n < sizeof buf - 8; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c >= 0x20 && c < 0x7F && c != '\\')
            buf[n++] = (char)c;
        else
            n += (size_t)snprintf(buf + n, sizeof buf - n, "\\x%02X", c);
    }
    if (n >= sizeof buf - 8)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "...");
    buf[n] = '\0';
    return buf;
}

void parse_both(const char *data, size_t len, chunk_info *c) {
    chunk_info r;
    memset(c, 0xA5, sizeof *c); /* both must write every field */
    memset(&r, 0x5A, sizeof r);
    /* An exact-size copy, so that AddressSanitizer sees any read past len. */
    char *copy = data ? malloc(len ? len : 1) : NULL;
    if (copy)
        memcpy(copy, data, len);
    chunk_parse(copy, len, c);
    chunk_parse_reference(copy, len, &r);
    free(copy);
#define SAME_INT(f)                                                                                \
    CHECK_MSG(c->f == r.f, "%s: fast %ld, jansson %ld, on '%s'", #f, (long)c->f, (long)r.f,        \
              show(data, len))
/* Bit for bit, so that NAN equals NAN and -0 differs from 0. */
#define SAME_DBL(f)                                                                                \
    CHECK_MSG(memcmp(&c->f, &r.f, sizeof r.f) == 0, "%s: fast %g, jansson %g, on '%s'", #f, c->f,  \
              r.f, show(data, len))
#define SAME_STR(f)                                                                                \
    CHECK_MSG(memcmp(c->f, r.f, sizeof r.f) == 0, "%s: fast '%s', jansson '%s', on '%s'", #f,      \
              c->f, r.f, show(data, len))
    SAME_INT(done);
    SAME_INT(malformed);
    SAME_INT(bad_count);
    SAME_INT(error);
    SAME_STR(error_message);
    SAME_INT(has_output);
    SAME_INT(output_tokens);
    SAME_INT(has_usage);
    SAME_INT(prompt_tokens);
    SAME_INT(completion_tokens);
    SAME_STR(finish_reason);
    SAME_INT(native_stop);
    SAME_INT(has_timings);
    SAME_DBL(timings_prompt_ms);
    SAME_DBL(timings_predicted_ms);
    SAME_INT(timings_prompt_n);
    SAME_INT(timings_predicted_n);
    SAME_INT(timings_cache_n);
    SAME_INT(cached_tokens);
    /* Padding included: chunk.h promises zeros there, which the fuzz
     * target's two-call comparison relies on. */
    CHECK_MSG(memcmp(c, &r, sizeof r) == 0, "fast and jansson differ (padding?) on '%s'",
              show(data, len));
#undef SAME_INT
#undef SAME_DBL
#undef SAME_STR
}

void parse_str(const char *s, chunk_info *c) {
    parse_both(s, strlen(s), c);
}
