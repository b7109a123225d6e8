/* Request parsing for the simulator (sim/request.c) without a server: each
 * refusal's status and message, the order the checks run in (the first
 * problem is the one reported), what a valid body asks for, and the output
 * length the engine is then given. */
#include "model/tokens.h"
#include "sim/request.h"
#include "test.h"

#include <string.h>

#define MODEL "sim-model"
#define MAX_LEN 100

static int parse(const char *body, int chat, completion_ask *ask, request_error *err) {
    return request_parse(body, strlen(body), chat, MODEL, MAX_LEN, ask, err);
}

/* The body is refused with this status and message. */
static void refused(const char *body, int chat, int status, const char *message) {
    completion_ask ask;
    request_error err;
    CHECK_MSG(parse(body, chat, &ask, &err) == -1, "accepted: %s", body);
    CHECK_MSG(err.status == status, "%s: status %d, want %d", body, err.status, status);
    CHECK_MSG(!strcmp(err.message, message), "%s: '%s', want '%s'", body, err.message, message);
}

TEST(sim_request_refusals_and_their_messages) {
    completion_ask ask;
    request_error err;
    CHECK_INT(parse("nope", 0, &ask, &err), -1);
    CHECK_INT(err.status, 400);
    CHECK(!strncmp(err.message, "invalid JSON body: ", 19) && strlen(err.message) > 19);
    refused("[1]", 0, 400, "invalid JSON body: not an object");
    refused("{\"model\":3,\"prompt\":\"x\"}", 0, 400, "model must be a string");
    refused("{\"model\":\"other\",\"prompt\":\"x\"}", 0, 404, "The model `other` does not exist.");
    refused("{}", 0, 400, "field required: prompt");
    refused("{}", 1, 400, "field required: messages");
    refused("{\"prompt\":[]}", 0, 400, "prompt must not be empty");
    refused("{\"prompt\":[1,-2]}", 0, 400, "prompt token ids must be non-negative integers");
    refused("{\"prompt\":[1,\"a\"]}", 0, 400, "prompt token ids must be non-negative integers");
    refused("{\"prompt\":[\"a\",\"b\"]}", 0, 400,
            "batched prompts are not supported by the simulator; send one prompt a request");
    refused("{\"prompt\":{}}", 0, 400,
            "prompt must be a string, a list of token ids, or a list of one of those");
    refused("{\"prompt\":[{}]}", 0, 400,
            "prompt must be a string, a list of token ids, or a list of one of those");
    refused("{\"messages\":[]}", 1, 400, "messages must be a non-empty list");
    refused("{\"messages\":{}}", 1, 400, "messages must be a non-empty list");
    refused("{\"messages\":[{\"content\":\"x\"}]}", 1, 400, "each message needs a string role");
    refused("{\"messages\":[{\"role\":\"user\"}]}", 1, 400,
            "message content must be a string, a list of parts, or null");
    refused("{\"messages\":[{\"role\":\"user\",\"content\":3}]}", 1, 400,
            "message content must be a string, a list of parts, or null");
    refused("{\"prompt\":\"hi\",\"max_tokens\":0}", 0, 400,
            "max_tokens must be a positive integer");
    refused("{\"prompt\":\"hi\",\"max_tokens\":1.5}", 0, 400,
            "max_tokens must be a positive integer");
    refused("{\"messages\":[{\"role\":\"user\",\"content\":null}],\"max_completion_tokens\":-1}", 1,
            400, "max_tokens must be a positive integer");
    refused("{\"prompt\":\"hi\",\"min_tokens\":\"a\"}", 0, 400,
            "min_tokens must be a non-negative integer");
    refused("{\"prompt\":\"hi\",\"min_tokens\":-1}", 0, 400,
            "min_tokens must be a non-negative integer");
    refused("{\"prompt\":\"hi\",\"min_tokens\":5,\"max_tokens\":2}", 0, 400,
            "min_tokens must not exceed max_tokens");
    refused("{\"prompt\":\"hi\",\"n\":2}", 0, 400, "the simulator supports n=1 only");
    refused("{\"prompt\":\"hello\",\"max_tokens\":99}", 0, 400,
            "This model's maximum context length is 100 tokens. However, you requested 101 "
            "tokens (2 in the messages, 99 in the completion). Please reduce the length of the "
            "messages or completion.");
}

TEST(sim_request_first_problem_is_reported) {
    /* model before prompt, prompt before lengths, max_tokens before n,
     * lengths before the context window */
    refused("{\"model\":1}", 0, 400, "model must be a string");
    refused("{\"model\":\"x\",\"prompt\":[]}", 0, 404, "The model `x` does not exist.");
    refused("{\"prompt\":[],\"max_tokens\":0}", 0, 400, "prompt must not be empty");
    refused("{\"prompt\":\"hi\",\"max_tokens\":0,\"n\":3}", 0, 400,
            "max_tokens must be a positive integer");
    refused("{\"prompt\":\"hi\",\"n\":3,\"max_tokens\":1000}", 0, 400,
            "the simulator supports n=1 only");
}

TEST(sim_request_reads_what_a_valid_body_asks) {
    completion_ask ask;
    request_error err;
    CHECK_INT(parse("{\"model\":\"sim-model\",\"prompt\":\"hello\",\"max_tokens\":7,\"min_tokens\":"
                    "3,\"n\":1,\"ignore_eos\":true}",
                    0, &ask, &err),
              0);
    CHECK_INT(ask.chat, 0);
    CHECK_INT(ask.prompt_tokens, 2);
    CHECK_INT(ask.max_tokens, 7);
    CHECK_INT(ask.min_tokens, 3);
    CHECK_INT(ask.ignore_eos, 1);
    CHECK_INT(ask.stream, 0);
    CHECK_INT(ask.include_usage, 0);
    request_ask_free(&ask);

    /* stream options count only when streaming */
    CHECK_INT(
        parse("{\"prompt\":[5,6,7],\"stream_options\":{\"include_usage\":true}}", 0, &ask, &err),
        0);
    CHECK_INT(ask.prompt_tokens, 3);
    CHECK_INT(ask.max_tokens, 0);
    CHECK_INT(ask.include_usage, 0);
    request_ask_free(&ask);
    CHECK_INT(parse("{\"prompt\":[\"hi\"],\"stream\":true,\"stream_options\":{\"include_usage\":"
                    "true,\"continuous_usage_stats\":true}}",
                    0, &ask, &err),
              0);
    CHECK_INT(ask.stream, 1);
    CHECK_INT(ask.include_usage, 1);
    CHECK_INT(ask.continuous_usage, 1);
    request_ask_free(&ask);

    /* an empty prompt still costs one token */
    CHECK_INT(parse("{\"prompt\":\"\"}", 0, &ask, &err), 0);
    CHECK_INT(ask.prompt_tokens, 1);
    request_ask_free(&ask);

    /* chat: the template's tokens, role and content (parts' text counts) */
    CHECK_INT(parse("{\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"},{\"role\":"
                    "\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi you\"}]},"
                    "{\"role\":\"user\",\"content\":null}],\"max_completion_tokens\":4}",
                    1, &ask, &err),
              0);
    int want = CHAT_TOKENS_REPLY_PRIMING + 3 * CHAT_TOKENS_PER_MESSAGE +
               2 * (int)count_text_tokens("user", 4) + (int)count_text_tokens("assistant", 9) +
               (int)count_text_tokens("hello there", 11) + (int)count_text_tokens("hi you", 6);
    CHECK_INT(ask.prompt_tokens, want);
    CHECK_INT(ask.max_tokens, 4);
    request_ask_free(&ask);
}

TEST(sim_request_output_length_plan) {
    completion_ask ask = {.prompt_tokens = 10, .max_tokens = 20, .ignore_eos = 1};
    seq s = {0};
    request_plan_output(&ask, MAX_LEN, 50, 42, &s);
    CHECK_INT(s.prompt_tokens, 10);
    CHECK_INT(s.target_tokens, 20);
    CHECK_INT(s.at_target, FINISH_LENGTH);

    /* a seeded draw between min_tokens (or the floor) and max_tokens,
     * the same for the same hash */
    ask.ignore_eos = 0;
    ask.min_tokens = 15;
    for (uint64_t h = 0; h < 200; h++) {
        seq a = {0}, b = {0};
        request_plan_output(&ask, MAX_LEN, 0, h, &a);
        request_plan_output(&ask, MAX_LEN, 0, h, &b);
        CHECK_INT(a.target_tokens, b.target_tokens);
        CHECK(a.target_tokens >= 15 && a.target_tokens <= 20);
        CHECK_INT(a.at_target, a.target_tokens == 20 ? FINISH_LENGTH : FINISH_STOP);
    }

    /* no max_tokens: up to 256, never past the context window, a stop */
    ask = (completion_ask){.prompt_tokens = 90};
    for (uint64_t h = 0; h < 200; h++) {
        seq a = {0};
        request_plan_output(&ask, MAX_LEN, 100, h, &a);
        CHECK_INT(a.target_tokens, 10);
        CHECK_INT(a.at_target, FINISH_STOP);
    }
}
