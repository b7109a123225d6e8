/* SSE parser tests: the WHATWG line and field rules (LF, CRLF, bare CR, CR
 * and LF in different reads, comments, "data:" with and without the space,
 * multi-line data, event types, events without data), end of stream without
 * a blank line, the size limit and its memory bound, the BOM, buffer reuse,
 * and that any way of cutting a stream into reads gives the same events. */
#include "protocol/sse.h"
#include "support.h"
#include "test.h"

#include <string.h>

#define MAX_EV 64

typedef struct events {
    int n;
    char *type[MAX_EV];
    char *data[MAX_EV];
    size_t len[MAX_EV];
} events;

static void on_event(void *ud, const char *type, const char *data, size_t len) {
    events *e = ud;
    CHECK_MSG(data[len] == '\0', "event %d: data not NUL-terminated", e->n);
    CHECK_MSG(e->n < MAX_EV, "more than %d events", MAX_EV);
    e->type[e->n] = strdup(type);
    e->data[e->n] = malloc(len + 1);
    memcpy(e->data[e->n], data, len + 1);
    e->len[e->n] = len;
    e->n++;
}

static void events_clear(events *e) {
    for (int i = 0; i < e->n; i++) {
        free(e->type[i]);
        free(e->data[i]);
    }
    memset(e, 0, sizeof *e);
}

/* Parse `s` cut at the given offsets (ascending, each within s) and finish. */
static void parse_cut(const char *s, size_t n, const size_t *cuts, int ncuts, events *out) {
    sse_parser p;
    memset(out, 0, sizeof *out);
    sse_init(&p, 1 << 16, on_event, out);
    size_t at = 0;
    for (int i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : n;
        CHECK_INT(sse_feed(&p, s + at, end - at), 0);
        at = end;
    }
    sse_finish(&p);
    sse_release(&p);
}

static void parse_whole(const char *s, events *out) {
    parse_cut(s, strlen(s), NULL, 0, out);
}

static void check_same(const events *want, const events *got, const char *how) {
    CHECK_MSG(got->n == want->n, "%s: %d events, want %d", how, got->n, want->n);
    for (int i = 0; i < want->n; i++) {
        CHECK_MSG(strcmp(got->type[i], want->type[i]) == 0, "%s: event %d type '%s' != '%s'", how,
                  i, got->type[i], want->type[i]);
        CHECK_MSG(got->len[i] == want->len[i] && !memcmp(got->data[i], want->data[i], want->len[i]),
                  "%s: event %d data '%s' != '%s'", how, i, got->data[i], want->data[i]);
    }
}

static void check_event(const events *e, int i, const char *type, const char *data) {
    CHECK_MSG(i < e->n, "no event %d (only %d)", i, e->n);
    CHECK_STR(e->type[i], type);
    CHECK_STR(e->data[i], data);
    CHECK_INT(e->len[i], strlen(data));
}

/* Every rule at once, with a BOM, CRLF, bare CR and an unterminated end. */
static const char mixed_stream[] = "\xEF\xBB\xBF"
                                   ": welcome\r\n"
                                   "retry: 1000\r\n"
                                   "\r\n"
                                   "data: one\r\ndata: two\r\n\r\n"
                                   "event: error\n"
                                   "data:{\"error\":{\"message\":\"x\"}}\n\n"
                                   "data: l1\rdata:l2\r\r"
                                   "id: 7\n"
                                   "data\n"
                                   "\n"
                                   ":keep-alive\n\n"
                                   "data: \xC3\xA9 \xC3\xBCn\n"
                                   "data:  spaced\n"
                                   "\n"
                                   "event: no-data\n\n"
                                   "data: [DONE]\n\n"
                                   "data: tail";

static void check_mixed(const events *e) {
    CHECK_INT(e->n, 7);
    check_event(e, 0, "message", "one\ntwo");
    check_event(e, 1, "error", "{\"error\":{\"message\":\"x\"}}");
    check_event(e, 2, "message", "l1\nl2");
    check_event(e, 3, "message", "");
    check_event(e, 4, "message", "\xC3\xA9 \xC3\xBCn\n spaced");
    check_event(e, 5, "message", "[DONE]");
    check_event(e, 6, "message", "tail");
}

TEST(sse_mixed_stream_whole) {
    events e;
    parse_whole(mixed_stream, &e);
    check_mixed(&e);
    events_clear(&e);
}

TEST(sse_every_split_gives_same_events) {
    size_t n = strlen(mixed_stream);
    events want, got;
    parse_whole(mixed_stream, &want);
    check_mixed(&want);

    /* One byte per read. */
    sse_parser p;
    memset(&got, 0, sizeof got);
    sse_init(&p, 1 << 16, on_event, &got);
    for (size_t i = 0; i < n; i++)
        CHECK_INT(sse_feed(&p, mixed_stream + i, 1), 0);
    sse_finish(&p);
    sse_release(&p);
    check_same(&want, &got, "1-byte reads");
    events_clear(&got);

    /* Every 2-piece and 3-piece cut (empty pieces included). */
    char how[64];
    for (size_t a = 0; a <= n; a++) {
        size_t cut1[1] = {a};
        parse_cut(mixed_stream, n, cut1, 1, &got);
        snprintf(how, sizeof how, "cut at %zu", a);
        check_same(&want, &got, how);
        events_clear(&got);
        for (size_t b = a; b <= n; b++) {
            size_t cut2[2] = {a, b};
            parse_cut(mixed_stream, n, cut2, 2, &got);
            snprintf(how, sizeof how, "cuts at %zu,%zu", a, b);
            check_same(&want, &got, how);
            events_clear(&got);
        }
    }
    events_clear(&want);
}

TEST(sse_transcript_every_split_gives_same_events) {
    size_t n;
    char *body =
        read_file("tests/data/transcripts/llama.cpp-server/13_v1_chat_completions_stream_usage"
                  ".body.txt",
                  &n);
    CHECK_MSG(body, "transcript 13_ missing");
    events want, got;
    parse_cut(body, n, NULL, 0, &want);
    CHECK_INT(want.n, 20); /* see t3030-chunk-recorded-streams.c */
    check_event(&want, 19, "message", "[DONE]");
    for (size_t a = 0; a <= n; a++) {
        size_t cut[1] = {a};
        parse_cut(body, n, cut, 1, &got);
        char how[32];
        snprintf(how, sizeof how, "cut at %zu", a);
        check_same(&want, &got, how);
        events_clear(&got);
    }
    sse_parser p;
    memset(&got, 0, sizeof got);
    sse_init(&p, 1 << 16, on_event, &got);
    for (size_t i = 0; i < n; i++)
        CHECK_INT(sse_feed(&p, body + i, 1), 0);
    sse_finish(&p);
    sse_release(&p);
    check_same(&want, &got, "1-byte reads");
    events_clear(&got);
    events_clear(&want);
    free(body);
}

TEST(sse_several_events_in_one_read) {
    events e;
    parse_whole("data: a\n\ndata: b\n\ndata: c\n\n", &e);
    CHECK_INT(e.n, 3);
    check_event(&e, 0, "message", "a");
    check_event(&e, 1, "message", "b");
    check_event(&e, 2, "message", "c");
    events_clear(&e);
}

TEST(sse_crlf_and_bare_cr_line_ends) {
    events e;
    parse_whole("data: a\r\n\r\ndata: b\r\rdata: c\r\ndata: d\n\r", &e);
    CHECK_INT(e.n, 3);
    check_event(&e, 0, "message", "a");
    check_event(&e, 1, "message", "b");
    check_event(&e, 2, "message", "c\nd");
    events_clear(&e);
}

TEST(sse_cr_and_lf_in_different_reads_are_one_line_end) {
    /* Were "\r" | "\n" two line ends, the LF would be a blank line and "a"
     * would be dispatched alone. */
    const char *s = "data: a\r\ndata: b\r\n\r\n";
    size_t cuts[3] = {8, 17, 19}; /* after each of the first three CRs */
    events e;
    parse_cut(s, strlen(s), cuts, 3, &e);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message", "a\nb");
    events_clear(&e);

    /* A CR ending a read, then a read starting with a new line's text. */
    const char *t = "data: a\r\rdata: b\r\r";
    size_t cut3[3] = {8, 9, 17};
    parse_cut(t, strlen(t), cut3, 3, &e);
    CHECK_INT(e.n, 2);
    check_event(&e, 0, "message", "a");
    check_event(&e, 1, "message", "b");
    events_clear(&e);
}

TEST(sse_comments_and_keepalives_are_ignored) {
    events e;
    parse_whole(":keep-alive\n\n: ping\n\n:\n\ndata: x\n: between data lines\ndata: y\n\n"
                ":data: not a field\n\n",
                &e);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message", "x\ny");
    events_clear(&e);
}

TEST(sse_field_rules) {
    events e;
    /* No space; only one space removed; a bare "data" is an empty line;
     * id, retry, unknown, misspelt and wrongly cased fields are ignored. */
    parse_whole("data:x\n\n"
                "data:  two\n\n"
                "data\n\n"
                "data:\n\n"
                "id: 5\nretry: 100\nfoo: bar\ndataa: q\nDATA: q\n data: q\ndata: kept\n\n"
                "data: a: b\n\n",
                &e);
    CHECK_INT(e.n, 6);
    check_event(&e, 0, "message", "x");
    check_event(&e, 1, "message", " two");
    check_event(&e, 2, "message", "");
    check_event(&e, 3, "message", "");
    check_event(&e, 4, "message", "kept");
    check_event(&e, 5, "message", "a: b");
    events_clear(&e);
}

TEST(sse_multiline_data_joined_with_newline) {
    events e;
    parse_whole("data: {\"a\":\ndata: 1}\ndata:\ndata: end\n\n", &e);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message", "{\"a\":\n1}\n\nend");
    events_clear(&e);
}

TEST(sse_event_type_set_and_reset) {
    events e;
    parse_whole("event: error\ndata: {\"error\":\"boom\"}\n\n"
                "data: after\n\n"
                "event: first\nevent: second\ndata: z\n\n"
                "event: lost\n\n"
                "data: plain\n\n"
                "event\ndata: empty type\n\n",
                &e);
    CHECK_INT(e.n, 5);
    check_event(&e, 0, "error", "{\"error\":\"boom\"}");
    check_event(&e, 1, "message", "after");
    check_event(&e, 2, "second", "z");
    check_event(&e, 3, "message", "plain");
    check_event(&e, 4, "message", "empty type");
    events_clear(&e);
}

TEST(sse_done_marker_is_an_ordinary_event) {
    events e;
    parse_whole("data: {\"choices\":[]}\n\ndata: [DONE]\n\n", &e);
    CHECK_INT(e.n, 2);
    check_event(&e, 1, "message", "[DONE]");
    events_clear(&e);
}

TEST(sse_events_without_data_are_not_dispatched) {
    events e;
    parse_whole("event: ping\n\nid: 1\n\nretry: 5\n\n\n\n\n", &e);
    CHECK_INT(e.n, 0);
    events_clear(&e);
}

TEST(sse_finish_dispatches_unterminated_event) {
    events e;
    parse_whole("data: a\n\ndata: b\n", &e); /* one LF, no blank line */
    CHECK_INT(e.n, 2);
    check_event(&e, 1, "message", "b");
    events_clear(&e);

    parse_whole("data: a\n\ndata: [DONE]", &e); /* no line end at all */
    CHECK_INT(e.n, 2);
    check_event(&e, 1, "message", "[DONE]");
    events_clear(&e);

    parse_whole("event: error\ndata: x\r", &e);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "error", "x");
    events_clear(&e);

    parse_whole("data: a\n\n", &e); /* properly ended: finish adds nothing */
    CHECK_INT(e.n, 1);
    events_clear(&e);

    parse_whole("data: a\n\nevent: x\n: c", &e); /* pending event without data */
    CHECK_INT(e.n, 1);
    events_clear(&e);

    /* finish twice, and on a fresh parser, is harmless. */
    sse_parser p;
    sse_init(&p, 100, on_event, &e);
    sse_finish(&p);
    CHECK_INT(sse_feed(&p, "data: q", 7), 0);
    sse_finish(&p);
    sse_finish(&p);
    CHECK_INT(e.n, 1);
    sse_release(&p);
    events_clear(&e);
}

TEST(sse_over_limit_fails_and_memory_stays_bounded) {
    const size_t max = 64;
    events e = {0};
    sse_parser p;
    char big[1000];
    memset(big, 'x', sizeof big);

    /* A line of exactly max bytes, and an event of exactly max bytes, pass. */
    sse_init(&p, max, on_event, &e);
    CHECK_INT(sse_feed(&p, "data:", 5), 0);
    CHECK_INT(sse_feed(&p, big, max - 5), 0);
    CHECK_INT(sse_feed(&p, "\n\n", 2), 0);
    CHECK_INT(e.n, 1);
    CHECK_INT(e.len[0], max - 5);
    CHECK_MSG(p.data_cap <= max + 1, "data buffer %zu > %zu", p.data_cap, max + 1);

    /* One more byte on the line fails, for good. */
    CHECK_INT(sse_feed(&p, "data:", 5), 0);
    CHECK_INT(sse_feed(&p, big, max - 4), -1);
    CHECK_INT(sse_feed(&p, "\n\ndata: ok\n\n", 12), -1);
    sse_finish(&p);
    CHECK_INT(e.n, 1);
    events_clear(&e);

    /* A line that never ends, fed a byte at a time: fails, stays bounded. */
    sse_reset(&p);
    CHECK_INT(sse_feed(&p, "data: ", 6), 0);
    int rc = 0;
    for (int i = 0; i < 100000 && rc == 0; i++)
        rc = sse_feed(&p, "y", 1);
    CHECK_INT(rc, -1);
    CHECK_MSG(p.data_cap <= max + 1, "data buffer %zu > %zu", p.data_cap, max + 1);
    CHECK_INT(e.n, 0);

    /* A long comment line counts as a line too. */
    sse_reset(&p);
    CHECK_INT(sse_feed(&p, ":", 1), 0);
    CHECK_INT(sse_feed(&p, big, sizeof big), -1);

    /* Many short data lines: each line is fine, the event is not. */
    sse_reset(&p);
    rc = 0;
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = sse_feed(&p, "data: 0123456789\n", 17);
    CHECK_INT(rc, -1);
    CHECK_MSG(p.data_cap <= max + 1, "data buffer %zu > %zu", p.data_cap, max + 1);

    /* A long event type counts against the event. */
    sse_reset(&p);
    CHECK_INT(sse_feed(&p, "event: ", 7), 0);
    CHECK_INT(sse_feed(&p, big, 40), 0);
    CHECK_INT(sse_feed(&p, "\ndata: ", 7), 0);
    CHECK_INT(sse_feed(&p, big, 40), -1);
    CHECK_MSG(p.type_cap <= max + 1, "type buffer %zu > %zu", p.type_cap, max + 1);

    /* reset clears the failure. */
    sse_reset(&p);
    CHECK_INT(sse_feed(&p, "data: fine\n\n", 12), 0);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message", "fine");
    sse_release(&p);
    events_clear(&e);
}

TEST(sse_bom_at_stream_start_only) {
    events e;
    parse_whole("\xEF\xBB\xBF"
                "data: a\n\n",
                &e);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message", "a");
    events_clear(&e);

    /* A BOM after the start is data (here, part of the value). */
    parse_whole("data: \xEF\xBB\xBF"
                "b\n\n",
                &e);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message",
                "\xEF\xBB\xBF"
                "b");
    events_clear(&e);

    /* Only one BOM is removed: a second one makes the field name unknown. */
    parse_whole("\xEF\xBB\xBF\xEF\xBB\xBF"
                "data: c\n\n",
                &e);
    CHECK_INT(e.n, 0);
    events_clear(&e);

    /* The start of a BOM that is not one is kept: here it becomes part of
     * an unknown field name, and the stream goes on. */
    parse_whole("\xEF\xBB"
                "x: 1\ndata: d\n\n",
                &e);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message", "d");
    events_clear(&e);

    /* A stream of only part of a BOM ends cleanly. */
    parse_whole("\xEF", &e);
    CHECK_INT(e.n, 0);
    events_clear(&e);

    /* After reset the next stream may have its own BOM. */
    sse_parser p;
    sse_init(&p, 100, on_event, &e);
    CHECK_INT(sse_feed(&p,
                       "\xEF\xBB\xBF"
                       "data: 1\n\n",
                       12),
              0);
    sse_reset(&p);
    CHECK_INT(sse_feed(&p, "\xEF", 1), 0);
    CHECK_INT(sse_feed(&p, "\xBB", 1), 0);
    CHECK_INT(sse_feed(&p,
                       "\xBF"
                       "data: 2\n\n",
                       10),
              0);
    CHECK_INT(e.n, 2);
    check_event(&e, 1, "message", "2");
    sse_release(&p);
    events_clear(&e);
}

TEST(sse_reset_drops_partial_event_and_keeps_buffers) {
    events e = {0};
    sse_parser p;
    sse_init(&p, 4096, on_event, &e);
    CHECK_INT(sse_feed(&p, "event: error\ndata: partial\r", 27), 0);
    char *data = p.data;
    size_t cap = p.data_cap;
    CHECK(data != NULL);
    sse_reset(&p);
    CHECK(p.data == data && p.data_cap == cap);
    /* The pending CR is forgotten too: this LF is a blank line, no event. */
    CHECK_INT(sse_feed(&p, "\ndata: next\n\n", 13), 0);
    CHECK_INT(e.n, 1);
    check_event(&e, 0, "message", "next");
    sse_release(&p);
    CHECK(p.data == NULL && p.data_cap == 0);
    events_clear(&e);
}

static void count_event(void *ud, const char *type, const char *data, size_t len) {
    (void)type;
    (void)data;
    (void)len;
    (*(int *)ud)++;
}

TEST(sse_steady_state_reuses_buffers) {
    int n = 0;
    sse_parser p;
    sse_init(&p, 1 << 16, count_event, &n);
    const char *ev = "event: x\ndata: {\"choices\":[{\"text\":\" token\"}]}\n\n";
    CHECK_INT(sse_feed(&p, ev, strlen(ev)), 0);
    char *data = p.data, *type = p.type;
    size_t dcap = p.data_cap, tcap = p.type_cap;
    for (int i = 0; i < 10000; i++)
        CHECK_INT(sse_feed(&p, ev, strlen(ev)), 0);
    CHECK_INT(n, 10001);
    CHECK(p.data == data && p.type == type && p.data_cap == dcap && p.type_cap == tcap);
    sse_release(&p);
}
