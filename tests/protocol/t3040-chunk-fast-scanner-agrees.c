/* The fast chunk scanner against the jansson reading it replaced: chunk_parse
 * must agree exactly with chunk_parse_reference (parse_both, chunk_both.h)
 * on every recorded body and SSE event, on JSON edge cases (escaped and
 * repeated keys, NULs after values, surrogates and bad UTF-8), on numbers
 * at the edge of a double, on nesting at jansson's depth limit, and on a
 * seeded stream of mutated chunks (timings and cached_tokens among them). */
#include "chunk_both.h"
#include "protocol/chunk.h"
#include "protocol/sse.h"
#include "support.h"
#include "test.h"

#include <glob.h>
#include <stdint.h>
#include <string.h>

/* The string literal's bytes, NULs included. */
#define PARSE_LIT(lit, c) parse_both(lit, sizeof lit - 1, c)

static void on_event_both(void *ud, const char *type, const char *data, size_t len) {
    (void)type;
    chunk_info c;
    parse_both(data, len, &c);
    (*(int *)ud)++;
}

TEST(chunk_fast_matches_reference_on_transcripts) {
    /* Every recorded body, as one payload (the plain JSON answers) and
     * split into SSE events (the streams). */
    glob_t g;
    CHECK_INT(glob(TRANSCRIPTS "*.body.txt", 0, NULL, &g), 0);
    CHECK(g.gl_pathc >= 20);
    int events = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t n;
        char *body = read_file(g.gl_pathv[i], &n);
        CHECK_MSG(body, "cannot read %s", g.gl_pathv[i]);
        chunk_info c;
        parse_both(body, n, &c);
        sse_parser p;
        sse_init(&p, 1 << 20, on_event_both, &events);
        CHECK_INT(sse_feed(&p, body, n), 0);
        sse_finish(&p);
        sse_release(&p);
        free(body);
    }
    globfree(&g);
    CHECK(events >= 100);
}

/* Strings jansson refuses: so must the scanner. (A NUL is refused in a
 * key; in a value it is valid JSON, read with JSON_ALLOW_NUL.) */
static void check_strings_jansson_refuses(void) {
    chunk_info c;
    const char *bad[] = {
        "{\"\\u0000\":1}",
        "{\"choices\":[{\"delta\":{\"content\":\"x\"},\"a\\u0000\":1}]}",
        "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\\udc00\"}",
        "{\"a\":\"\\ud800\\ud800\"}",
        "{\"a\":\"\\ud800\\n\"}",
        "{\"a\":\"\\ud800x\"}",
        "{\"a\":\"\\u12\"}",
        "{\"a\":\"\\u12g4\"}",
        "{\"a\":\"\\x41\"}",
        "{\"a\":\"\\'\"}",
        "{\"a\":\"\t\"}",
        "{\"a\":\"\x7F\x1F\"}",
        "{\"a\":\"\xC0\x80\"}",
        "{\"a\":\"\xC1\xBF\"}",
        "{\"a\":\"\xE0\x80\xAF\"}",
        "{\"a\":\"\xED\xA0\x80\"}",
        "{\"a\":\"\xF0\x80\x80\x80\"}",
        "{\"a\":\"\xF4\x90\x80\x80\"}",
        "{\"a\":\"\xF5\x80\x80\x80\"}",
        "{\"a\":\"\xC3\"}",
        "{\"a\":\"\xC3\"",
        "{\"a\":\"\xE2\x82\"}",
        "{\"a\":\"\x80\"}",
        "{\"a\xC3\xA9\":1,\xC3\xA9}",
        "{\"a\":1,}",
        "{\"a\":[1,]}",
        "{,\"a\":1}",
        "{\"a\" 1}",
        "{\"a\":01}",
        "{\"a\":-}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":1e}",
        "{\"a\":1e+}",
        "{\"a\":+1}",
        "{\"a\":truex}",
        "{\"a\":nul}",
        "{\"a\":True}",
        "{\"a\":1}}",
        "{\"a\":1]",
        "\xEF\xBB\xBF{}",
        "{\"a\":[}",
        "{\"a\":{\"b\"}}",
        "{\"a\":{\"b\":}}",
        "{\"a\":\"\xE0\x9F\xBF\"}",
        "{\"a\":\"\xF0\x8F\xBF\xBF\"}",
        "{\"a\":\"\xED\xBF\xBF\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        parse_str(bad[i], &c);
        CHECK_MSG(c.malformed, "'%s' accepted", show(bad[i], strlen(bad[i])));
    }
}

/* Strings jansson takes: so must the scanner. */
static void check_strings_jansson_takes(void) {
    chunk_info c;
    const char *good[] = {
        "{\"a\":\"\\ud83d\\ude00 \\uD83D\\uDE00 \\u00E9 \\u20AC \\uFFFF\"}",
        "{\"a\":\"\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF\"}",
        "{\"a\":\"\x7F\"}",
        "{\"a\":\"\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xF0\x90\x80\x80\xC2\x80\"}",
        " \t\r\n{ \"a\" : [ 1 , -0 , 0.5 , 1E+2 , 1e-2 , true , false , null , { } , [ ] ] } \n",
        "{\"a\":1e-400,\"b\":-1e-99999999999999999999,\"c\":0.0000e99999999999}",
        "{\"a\":\"\\u0000\"}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        parse_str(good[i], &c);
        CHECK_MSG(!c.malformed, "'%s' refused", show(good[i], strlen(good[i])));
    }
    /* llama.cpp's server streamed this when a random-weight model sampled
     * the byte token 0x00: a token of output, not a malformed chunk */
    parse_str("{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":"
              "\"\\u0000\"}}],\"created\":1796144481,\"id\":\"chatcmpl-j\",\"object\":"
              "\"chat.completion.chunk\"}",
              &c);
    CHECK(!c.malformed && c.has_output);
}

TEST(chunk_fast_json_edge_cases) {
    chunk_info c;
    /* jansson drops one NUL right after a number or literal (its lexer
     * "ungets" through a NUL-terminated buffer); not after a string or
     * container, and not two. */
    PARSE_LIT("{\"a\":1\0,\"choices\":[{\"text\":\"x\"}]}", &c);
    CHECK(!c.malformed && c.has_output);
    PARSE_LIT("{\"a\":true\0}", &c);
    CHECK(!c.malformed);
    PARSE_LIT("{\"a\":[null\0,-0.5e3\0]}", &c);
    CHECK(!c.malformed);
    PARSE_LIT("{\"a\":1\0\0}", &c);
    CHECK(c.malformed);
    PARSE_LIT("{\"a\":\"x\"\0}", &c);
    CHECK(c.malformed);
    PARSE_LIT("{\"a\":{}\0}", &c);
    CHECK(c.malformed);
    PARSE_LIT("{\"a\":1}\0", &c);
    CHECK(c.malformed);

    /* Keys compare decoded; the last of a repeated key counts. */
    parse_str("{\"choices\":[{\"te\\u0078t\":\"a\"}]}", &c);
    CHECK(c.has_output);
    parse_str("{\"\\u0063hoices\":[{\"delta\":{\"cont\\u0065nt\":\"a\"}}],"
              "\"usage\":{\"completion\\u005ftokens\":3}}",
              &c);
    CHECK(c.has_output && c.has_usage && c.completion_tokens == 3);
    parse_str("{\"choices\":[{\"text\":\"a\"}],\"choices\":[]}", &c);
    CHECK(!c.has_output);
    parse_str("{\"choices\":[{\"text\":\"a\",\"text\":\"\"}]}", &c);
    CHECK(!c.has_output);
    parse_str("{\"choices\":[{\"finish_reason\":\"stop\",\"finish_reason\":null}]}", &c);
    CHECK_STR(c.finish_reason, "");
    parse_str("{\"error\":{\"message\":\"x\"},\"error\":null,\"choices\":[{\"text\":\"a\"}]}", &c);
    CHECK(!c.error && c.has_output);
    parse_str("{\"usage\":{\"completion_tokens\":3,\"completion_tokens\":\"3\"}}", &c);
    CHECK(!c.has_usage && c.malformed); /* the last one, a string, is no count */
    parse_str("{\"content\":\"a\",\"tokens\":[1],\"content\":null}", &c);
    CHECK(!c.has_output && c.output_tokens == 0);

    /* Decoded text: escapes in finish_reason and error messages. */
    parse_str("{\"choices\":[{\"finish_reason\":\"st\\u006fp\\n\\u00e9\\ud83d\\ude00\"}]}", &c);
    CHECK_STR(c.finish_reason, "stop\n\xC3\xA9\xF0\x9F\x98\x80");
    parse_str("{\"choices\":[{\"finish_reason\":\"abcdefghijklmnopqrstuv\\u00e9\"}]}", &c);
    CHECK_STR(c.finish_reason, "abcdefghijklmnopqrstuv"); /* é would straddle the cut */
    parse_str("{\"error\":\"a\\\"b\\\\c\\/d\\b\\f\\r\\t\"}", &c);
    CHECK_STR(c.error_message, "a\"b\\c/d\b\f\r\t");
    parse_str("{\"object\":\"\\u0065rror\",\"type\":\"t\"}", &c);
    CHECK(c.error);
    CHECK_STR(c.error_message, "t");
    parse_str("{\"choices\":[{\"text\":\"\\u0020\"}]}", &c);
    CHECK(c.has_output);

    check_strings_jansson_refuses();
    check_strings_jansson_takes();
}

TEST(chunk_fast_numbers_at_the_edge_of_a_double) {
    /* 2^1024 - 2^970 is the first decimal that rounds to infinity. */
    static const char t[] =
        "179769313486231580793728971405303415079934132710037826936173778980444968"
        "292764750946649017977587207096330286416692887910946555547851940402630657"
        "488671505820681908902000708383676273854845817711531764475730270069855571"
        "366959622842914819860834936475292719074168444365510704342711559699508093"
        "042880177904174497792";
    const char *forms[] = {
        "%s",         "%s.0",        "%s.0000000000000000000001",
        "-%s",        "%.308s.99e1", "%.308s",
        "%.309s1",    "0.%se309",    "0.000%se312",
        "%.20se289",  "%.20s9e289",  "%.25se284",
        "%.19s2e290",
    };
    char buf[800], num[700];
    chunk_info c;
    int accepted = 0, refused = 0;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(num, sizeof num, forms[i], t);
        for (int d = 0; d < 3; d++) {
            /* the number, and one unit in its last place below and above */
            snprintf(buf, sizeof buf, "{\"usage\":{\"completion_tokens\":1,\"x\":%s}}", num);
            parse_str(buf, &c);
            accepted += !c.malformed;
            refused += c.malformed;
            char *last = strpbrk(num, "eE");
            last = last ? last - 1 : num + strlen(num) - 1;
            if (*last == '0' || *last == '9' || *last == '.')
                break;
            *last = (char)(*last + (d == 0 ? -1 : 2));
        }
    }
    CHECK(accepted > 5 && refused > 5);
    parse_str("{\"a\":1.7976931348623157e308}", &c); /* DBL_MAX */
    CHECK(!c.malformed);
    parse_str("{\"a\":1.7976931348623159e308}", &c);
    CHECK(c.malformed);
    parse_str("{\"a\":-1e309}", &c);
    CHECK(c.malformed);

    /* Token counts: what a double makes of the number decides; one that
     * cannot be a count (past 2^31 - 1, negative, a fraction) is malformed. */
    parse_str("{\"usage\":{\"completion_tokens\":9007199254740993,\"prompt_tokens\":-0}}", &c);
    CHECK(c.malformed && c.bad_count && !c.has_usage);
    parse_str("{\"usage\":{\"completion_tokens\":2147483647,\"prompt_tokens\":-0}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 2147483647 && c.prompt_tokens == 0);
    parse_str("{\"usage\":{\"completion_tokens\":9007199254740995}}", &c);
    CHECK(c.malformed && !c.has_usage);
    parse_str("{\"usage\":{\"completion_tokens\":2147483647.0000000001}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 2147483647);
    parse_str("{\"usage\":{\"completion_tokens\":16.000000000000001,\"prompt_tokens\":2E1}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 16 && c.prompt_tokens == 20);
    parse_str("{\"usage\":{\"completion_tokens\":-1e-400,\"prompt_tokens\":0}}", &c);
    CHECK(c.has_usage && c.completion_tokens == 0 && c.prompt_tokens == 0);
    parse_str("{\"usage\":{\"completion_tokens\":-1e-400,\"prompt_tokens\":0.5}}", &c);
    CHECK(c.malformed && !c.has_usage);
    parse_str(
        "{\"usage\":{\"completion_tokens\":4.00000000000000000000000000000000000000000000000000"
        "000000000000000000000000000000000000000000000000000000000000000000000000000}}",
        &c);
    CHECK(c.has_usage && c.completion_tokens == 4);

    /* Error codes: the plain integers directly, the rest as jansson prints them. */
    parse_str("{\"error\":{\"code\":-42}}", &c);
    CHECK_STR(c.error_message, "error code -42");
    parse_str("{\"error\":{\"code\":-0}}", &c);
    CHECK_STR(c.error_message, "error code -0");
    parse_str("{\"error\":{\"code\":5e2}}", &c);
    CHECK_STR(c.error_message, "error code 500");
    parse_str("{\"error\":{\"code\":1234567890123456789}}", &c);
    CHECK_STR(c.error_message, "error code 1234567890123456768");
    parse_str("{\"error\":{\"message\":null,\"code\":500}}", &c);
    CHECK_STR(c.error_message, "null");
    parse_str("{\"error\":{\"message\":{\"k\":[1,\"\\u00e9\"]}}}", &c);
    CHECK_STR(c.error_message, "{\"k\":[1.0,\"\xC3\xA9\"]}");
    parse_str("{\"error\":[1],\"message\":7,\"code\":1}", &c);
    CHECK_STR(c.error_message, "7.0");
    parse_str("{\"object\":\"error\",\"code\":503}", &c);
    CHECK_STR(c.error_message, "error code 503");
}

/* Nesting at jansson's limit: every value counts, the root object is depth
 * 1, and the limit is 2048. */
static char *nested(const char *prefix, int levels, const char *open, const char *inner,
                    const char *close, const char *suffix, size_t *len) {
    size_t cap = strlen(prefix) + strlen(suffix) + strlen(inner) +
                 (size_t)levels * (strlen(open) + strlen(close)) + 1;
    char *s = malloc(cap);
    CHECK(s != NULL);
    char *p = s;
    size_t lo = strlen(open), lc = strlen(close);
    memcpy(p, prefix, strlen(prefix));
    p += strlen(prefix);
    for (int i = 0; i < levels; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, inner, strlen(inner));
    p += strlen(inner);
    for (int i = 0; i < levels; i++, p += lc)
        memcpy(p, close, lc);
    memcpy(p, suffix, strlen(suffix));
    p += strlen(suffix);
    *p = 0;
    *len = (size_t)(p - s);
    return s;
}

TEST(chunk_fast_depth_limit) {
    static const struct {
        const char *prefix, *open, *inner, *close, *suffix;
        int deepest_ok; /* most levels jansson still takes */
    } shapes[] = {
        {"{\"a\":", "[", "", "]", "}", 2047},  /* "a" is depth 2 */
        {"{\"a\":", "[", "1", "]", "}", 2046}, /* and the scalar counts too */
        {"{\"a\":", "{\"b\":", "1", "}", "}", 2046},
        {"{\"a\":", "{\"b\":", "{}", "}", "}", 2046},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":", "[", "", "]", "}}]}", 2044},
        {"{\"choices\":[{\"delta\":{\"tool_calls\":[", "[", "\"x\"", "]", "]}}]}", 2042},
        {"{\"error\":{\"message\":", "[", "", "]", "}}", 2046},
        {"{\"usage\":{\"x\":", "[", "", "]", "}}", 2046},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int levels = shapes[i].deepest_ok - 1; levels <= shapes[i].deepest_ok + 1; levels++) {
            size_t len;
            char *s = nested(shapes[i].prefix, levels, shapes[i].open, shapes[i].inner,
                             shapes[i].close, shapes[i].suffix, &len);
            chunk_info c;
            parse_both(s, len, &c);
            CHECK_MSG(c.malformed == (levels > shapes[i].deepest_ok), "shape %zu, %d levels: %d", i,
                      levels, c.malformed);
            free(s);
        }
    }
    /* Far too deep, inside the fields that are read closely: refused
     * without recursion. */
    size_t len;
    char *s = nested("{\"choices\":[{\"message\":{\"content\":\"x\",\"tool_calls\":", 300000,
                     "[{\"a\":", "1", "}]", "}}]}", &len);
    chunk_info c;
    parse_both(s, len, &c);
    CHECK(c.malformed);
    free(s);
}

/* A deterministic xorshift64. */
static uint64_t next_rand(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Fragments that tend to turn a chunk into a JSON edge case. */
static const char *const splices[] = {
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    " ",
    "\n",
    "\t",
    "0",
    "-",
    ".",
    "e",
    "E+",
    "1e309",
    "-0",
    "01",
    "1.",
    "9007199254740993",
    "16.0",
    "1e3",
    "-1",
    "true",
    "false",
    "null",
    "nul",
    "\\u",
    "\\u0000",
    "\\u0041",
    "\\u00e9",
    "\\ud83d\\ude00",
    "\\ud800",
    "\\udc00",
    "\\ud800\\u0041",
    "\\n",
    "\\x",
    "\xC3\xA9",
    "\xC3",
    "\xE2\x82\xAC",
    "\xE2\x82",
    "\xF0\x9F\x98\x80",
    "\xED\xA0\x80",
    "\xF4\x90\x80\x80",
    "\xC0\x80",
    "\xFF",
    "\x80",
    "\x01",
    "\x7F",
    "[DONE]",
    "\"text\":\"x\",",
    "\"content\":\"\",",
    "\"tool_calls\":[],",
    "\"finish_reason\":\"stop\",",
    "\"usage\":{\"completion_tokens\":7},",
    "\"error\":null,",
    "\"error\":{\"code\":500},",
    "\"error\":{\"message\":[1]},",
    "\"object\":\"error\",",
    "\"stop\":true,",
    "\"tokens\":[1,2],",
    "\"choices\":[],",
    "\"delta\":{\"reasoning\":\"r\"},",
    "\"message\":{\"content\":\"m\"},",
    "\"timings\":{\"prompt_ms\":9.37,\"cache_n\":6},",
    "\"timings\":null,",
    "\"prompt_ms\":",
    "\"predicted_n\":",
    "\"cache_n\":",
    "\"prompt_tokens_details\":{\"cached_tokens\":6},",
    "\"cached_tokens\":",
};

/* One random edit of buf (len bytes, room for cap). */
static size_t mutate(char *buf, size_t len, size_t cap, uint64_t *x) {
    size_t pos = len ? (size_t)(next_rand(x) % (len + 1)) : 0;
    switch (next_rand(x) % 8) {
    case 0: /* truncate */ return pos;
    case 1: /* any byte */
        if (pos < len)
            buf[pos] = (char)next_rand(x);
        return len;
    case 2: /* a NUL */
        if (pos < len)
            buf[pos] = '\0';
        return len;
    case 3: { /* delete a few bytes */
        size_t n = 1 + (size_t)(next_rand(x) % 4);
        if (pos + n > len)
            n = len - pos;
        memmove(buf + pos, buf + pos + n, len - pos - n);
        return len - n;
    }
    case 4: { /* a letter as its \u escape, so that keys and texts decode */
        if (pos < len && buf[pos] >= 'a' && buf[pos] <= 'z' && len + 5 < cap) {
            char esc[7];
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned char)buf[pos]);
            memmove(buf + pos + 6, buf + pos + 1, len - pos - 1);
            memcpy(buf + pos, esc, 6);
            return len + 5;
        }
        return len;
    }
    default: { /* insert a fragment */
        const char *f = splices[next_rand(x) % (sizeof splices / sizeof splices[0])];
        size_t n = strlen(f);
        if (len + n > cap)
            return len;
        memmove(buf + pos + n, buf + pos, len - pos);
        memcpy(buf + pos, f, n);
        return len + n;
    }
    }
}

typedef struct corpus {
    char **s;
    size_t *len;
    int n, cap;
} corpus;

static void corpus_add(corpus *c, const char *s, size_t len) {
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->s = realloc(c->s, (size_t)c->cap * sizeof *c->s);
        c->len = realloc(c->len, (size_t)c->cap * sizeof *c->len);
    }
    c->s[c->n] = malloc(len + 1);
    memcpy(c->s[c->n], s, len);
    c->s[c->n][len] = '\0';
    c->len[c->n++] = len;
}

static void on_event_corpus(void *ud, const char *type, const char *data, size_t len) {
    (void)type;
    corpus_add(ud, data, len);
}

TEST(chunk_fast_matches_reference_on_mutations) {
    corpus co = {0};
    glob_t g;
    CHECK_INT(glob(TRANSCRIPTS "*.body.txt", 0, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t n;
        char *body = read_file(g.gl_pathv[i], &n);
        CHECK(body);
        if (n < 4096)
            corpus_add(&co, body, n);
        sse_parser p;
        sse_init(&p, 1 << 20, on_event_corpus, &co);
        sse_feed(&p, body, n);
        sse_finish(&p);
        sse_release(&p);
        free(body);
    }
    globfree(&g);
    static const char *const dialects[] = {
        "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"text\":\" the\",\"logprobs\":null,\"finish_reason\":null,"
        "\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":5,\"total_tokens\":9,"
        "\"completion_tokens\":4}}",
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\","
        "\"reasoning_content\":null,\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
        "\"{\\\"a\\\":1}\"}}]},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null}",
        "{\"index\":0,\"content\":\" tok\",\"tokens\":[5,6],\"stop\":true,\"stop_type\":\"eos\"}",
        "{\"error\":{\"object\":\"error\",\"message\":\"engine "
        "dead\",\"type\":\"t\",\"code\":500}}",
        "{\"object\":\"error\",\"message\":\"y\",\"type\":\"BadRequestError\",\"param\":null,"
        "\"code\":400}",
        "{\"error\":\"Input validation error\",\"error_type\":\"validation\"}",
        "{\"error\":{\"code\":500,\"type\":null}}",
        "{\"choices\":[{\"message\":{\"content\":null,\"reasoning\":\"r\"},\"finish_reason\":"
        "\"length\"},{\"text\":\"x\"}],\"usage\":{\"completion_tokens\":1.0,\"prompt_tokens\":"
        "1e1}}",
        "{\"choices\":[],\"usage\":{\"completion_tokens\":16,\"prompt_tokens\":7,"
        "\"prompt_tokens_details\":{\"cached_tokens\":6}},\"timings\":{\"cache_n\":6,"
        "\"prompt_n\":1,\"prompt_ms\":-0,\"predicted_n\":16.0,\"predicted_ms\":1e2}}",
    };
    for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++)
        corpus_add(&co, dialects[i], strlen(dialects[i]));
    CHECK(co.n > 100);

    enum { CAP = 8192, ROUNDS = 250000 };
    char *buf = malloc(CAP);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int malformed = 0, output = 0, errors = 0, timings = 0, cached = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int k = (int)(next_rand(&x) % (uint64_t)co.n);
        size_t len = co.len[k] < CAP ? co.len[k] : CAP;
        memcpy(buf, co.s[k], len);
        int edits = 1 + (int)(next_rand(&x) % 3);
        for (int e = 0; e < edits; e++)
            len = mutate(buf, len, CAP, &x);
        chunk_info c;
        parse_both(buf, len, &c);
        malformed += c.malformed;
        output += c.has_output;
        errors += c.error;
        timings += c.has_timings;
        cached += c.cached_tokens >= 0;
    }
    /* The mutations reach both sides of the line. */
    CHECK_MSG(malformed > ROUNDS / 10 && malformed < ROUNDS * 9 / 10, "%d malformed", malformed);
    CHECK_MSG(output > ROUNDS / 10 && errors > ROUNDS / 100, "%d output, %d errors", output,
              errors);
    CHECK_MSG(timings > ROUNDS / 100 && cached > ROUNDS / 100, "%d timings, %d cached_tokens",
              timings, cached);
    free(buf);
    for (int i = 0; i < co.n; i++)
        free(co.s[i]);
    free(co.s);
    free(co.len);
}
