/* chunk: what one streamed event from an OpenAI-compatible server means for
 * measurement: did it carry output (a token to time), is it the end, an
 * error, or the usage report. Covers the dialects of vLLM, SGLang, TGI,
 * llama.cpp's server (also its native /completion stream), Ollama's OpenAI
 * API and OpenAI itself; the same call reads a whole non-streamed JSON body
 * (an error answer, or a complete response). Besides, it reads what some
 * servers report of the request themselves: llama.cpp's "timings" and the
 * prompt tokens served from a prefix cache. */
#ifndef SERVELAB_CHUNK_H
#define SERVELAB_CHUNK_H

#include <stddef.h>

typedef struct chunk_info {
    int done;      /* data was exactly "[DONE]" (surrounding whitespace ignored) */
    int malformed; /* not valid JSON (or not a JSON object), or bad_count */
    int bad_count; /* a usage completion_tokens or prompt_tokens that cannot be true: not
                      null and not a whole number in [0, 2^31 - 1]; malformed too, and
                      every other field as for input that is not JSON */
    int error;     /* an error object: {"error":...} (non-null) or {"object":"error",...} */
    char error_message[256]; /* its "message" (else its "type", else the error as JSON),
                                cut at a UTF-8 character boundary */
    int has_output;          /* carries output: non-empty choices[].text (completions),
                                choices[].delta.content, delta.reasoning_content, delta.reasoning, or
                                non-empty delta.tool_calls (chat), the same fields of choices[].message
                                (a non-streamed body), or a non-empty top-level "content" string
                                (llama.cpp native /completion) */
    int has_answer;          /* output that is not reasoning: text, content, tool_calls (a
                                reasoning model's answer, where its thinking is over) */
    int has_tool_call;       /* a non-empty delta.tool_calls (or message.tool_calls) */
    int output_tokens;       /* tokens this chunk carried when the server says so: the length of
                                llama.cpp native's "tokens" array; else 0 (the caller derives
                                per-chunk tokens from cumulative usage.completion_tokens) */
    int has_usage;           /* a "usage" object with a completion_tokens count */
    long prompt_tokens, completion_tokens; /* from usage; prompt_tokens 0 when absent */
    char finish_reason[24];                /* "" when null/absent; first choice's finish_reason; for
                                              llama.cpp native, "stop" when "stop": true */
    int native_stop; /* llama.cpp native /completion final event ("stop": true) */

    /* The server's own account of the request, read only from JSON chunks
     * that are neither malformed nor errors ([DONE] reports nothing). A
     * value that is absent, null or not plausible (not a number, negative,
     * or for a count not a whole number in [0, 2^31 - 1]) reads as -1 (NAN
     * for a duration) and is otherwise ignored: it never makes the chunk
     * malformed. */
    int has_timings; /* a top-level "timings" object (llama.cpp's final chunk, in its
                        /v1 and native streams and its non-streamed bodies) */
    double timings_prompt_ms, timings_predicted_ms; /* its prompt_ms and predicted_ms */
    long timings_prompt_n, timings_predicted_n,     /* its prompt_n, predicted_n and cache_n */
        timings_cache_n;
    long timings_draft_n, timings_draft_accepted; /* its draft_n and draft_n_accepted: the
                                                     request's speculative drafts (present only
                                                     when it drafted) */
    long cached_tokens;    /* usage.prompt_tokens_details.cached_tokens (vLLM, OpenAI, llama.cpp) */
    long reasoning_tokens; /* usage.completion_tokens_details.reasoning_tokens (OpenAI) */
} chunk_info;

/* Parse one SSE data payload (need not be NUL-terminated). Never crashes on
 * any input; *out is always fully written (padding included: zeros). */
void chunk_parse(const char *data, size_t len, chunk_info *out);

/* The straightforward jansson version chunk_parse replaced; kept as the
 * oracle the tests and bench/chunk_parse compare against. */
void chunk_parse_reference(const char *data, size_t len, chunk_info *out);

#endif
