/* fuzz_chunk: libFuzzer target for chunk_parse (protocol/chunk.h), which reads
 * one SSE data payload from a server, checked against
 * chunk_parse_reference, the jansson version it replaced.
 *
 * The input is the payload itself (not NUL-terminated: libFuzzer's buffer
 * ends exactly at the last byte, so a read past it is caught). Checks: the
 * result is fully written (two calls over differently pre-filled structs
 * agree byte for byte), flags are 0/1, the strings are terminated inside
 * their fields, an error message from valid JSON is valid UTF-8 (it is cut at
 * a character boundary), counts are not negative, what the server reports
 * of itself is either absent (-1, NAN) or plausible and only on a chunk
 * that is neither malformed nor an error, and every field equals what the
 * reference reads (the doubles bit for bit). */
#include "protocol/chunk.h"
#include "fuzz_common.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static int is_flag(int v) {
    return v == 0 || v == 1;
}

/* A reported count: -1, or a whole number in [0, 2^31 - 1]. */
static int is_reported_count(long v) {
    return v >= -1 && v <= INT32_MAX;
}

/* A reported duration: NAN, or finite and >= +0. */
static int is_reported_duration(double d) {
    return isnan(d) || (isfinite(d) && d >= 0 && !signbit(d));
}

static int same_double(double a, double b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

static void check_server_report(const chunk_info *a) {
    FUZZ_CHECK(is_flag(a->has_timings));
    FUZZ_CHECK(is_reported_duration(a->timings_prompt_ms) &&
               is_reported_duration(a->timings_predicted_ms));
    FUZZ_CHECK(is_reported_count(a->timings_prompt_n) &&
               is_reported_count(a->timings_predicted_n) && is_reported_count(a->timings_cache_n) &&
               is_reported_count(a->cached_tokens) && is_reported_count(a->reasoning_tokens) &&
               is_reported_count(a->timings_draft_n) &&
               is_reported_count(a->timings_draft_accepted));
    if (!a->has_timings)
        FUZZ_CHECK(isnan(a->timings_prompt_ms) && isnan(a->timings_predicted_ms) &&
                   a->timings_prompt_n == -1 && a->timings_predicted_n == -1 &&
                   a->timings_cache_n == -1);
    if (a->done || a->malformed || a->error)
        FUZZ_CHECK(!a->has_timings && a->cached_tokens == -1 && a->reasoning_tokens == -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    chunk_info a, b;
    memset(&a, 0xAA, sizeof a);
    memset(&b, 0x55, sizeof b);
    chunk_parse((const char *)data, size, &a);
    chunk_parse((const char *)data, size, &b);
    FUZZ_CHECK(memcmp(&a, &b, sizeof a) == 0);

    FUZZ_CHECK(is_flag(a.done) && is_flag(a.malformed) && is_flag(a.bad_count) &&
               is_flag(a.error) && is_flag(a.has_output) && is_flag(a.has_usage) &&
               is_flag(a.native_stop));
    size_t em = strnlen(a.error_message, sizeof a.error_message);
    FUZZ_CHECK(em < sizeof a.error_message);
    FUZZ_CHECK(strnlen(a.finish_reason, sizeof a.finish_reason) < sizeof a.finish_reason);
    FUZZ_CHECK(a.output_tokens >= 0);
    FUZZ_CHECK(a.prompt_tokens >= 0 && a.completion_tokens >= 0);
    if (a.done || a.malformed)
        FUZZ_CHECK(!a.error && !a.has_output && !a.has_usage && a.error_message[0] == '\0');
    FUZZ_CHECK(!(a.done && a.malformed));
    if (a.error) {
        FUZZ_CHECK(!a.has_output);
        FUZZ_CHECK(fuzz_utf8_valid(a.error_message, em));
    }
    FUZZ_CHECK(fuzz_utf8_valid(a.finish_reason, strlen(a.finish_reason)));
    check_server_report(&a);

    /* The allocation-free scanner must agree with the jansson version it
     * replaced, field by field (padding aside). */
    chunk_info r;
    memset(&r, 0x5A, sizeof r);
    chunk_parse_reference((const char *)data, size, &r);
    FUZZ_CHECK(a.done == r.done && a.malformed == r.malformed && a.error == r.error);
    FUZZ_CHECK(a.bad_count == r.bad_count && (!a.bad_count || a.malformed));
    FUZZ_CHECK(!memcmp(a.error_message, r.error_message, sizeof r.error_message));
    FUZZ_CHECK(a.has_output == r.has_output && a.output_tokens == r.output_tokens);
    FUZZ_CHECK(a.has_usage == r.has_usage && a.prompt_tokens == r.prompt_tokens &&
               a.completion_tokens == r.completion_tokens);
    FUZZ_CHECK(!memcmp(a.finish_reason, r.finish_reason, sizeof r.finish_reason));
    FUZZ_CHECK(a.native_stop == r.native_stop);
    FUZZ_CHECK(a.has_timings == r.has_timings &&
               same_double(a.timings_prompt_ms, r.timings_prompt_ms) &&
               same_double(a.timings_predicted_ms, r.timings_predicted_ms));
    FUZZ_CHECK(a.timings_prompt_n == r.timings_prompt_n &&
               a.timings_predicted_n == r.timings_predicted_n &&
               a.timings_cache_n == r.timings_cache_n && a.cached_tokens == r.cached_tokens);
    FUZZ_CHECK(a.has_answer == r.has_answer && a.has_tool_call == r.has_tool_call &&
               a.reasoning_tokens == r.reasoning_tokens);
    FUZZ_CHECK(a.timings_draft_n == r.timings_draft_n &&
               a.timings_draft_accepted == r.timings_draft_accepted);
    /* an answer or a tool call is output; a tool call is an answer */
    FUZZ_CHECK(is_flag(a.has_answer) && is_flag(a.has_tool_call));
    FUZZ_CHECK((!a.has_answer || a.has_output) && (!a.has_tool_call || a.has_answer));
    return 0;
}
