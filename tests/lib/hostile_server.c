/* hostile_server: the scripted server. One listening socket made in the
 * test process (so the port is known before anything forks), an accept loop
 * in a child, one grandchild per connection. A connection handler reads a
 * request (head, then Content-Length bytes), answers it by path and script,
 * and goes on with the next request on the same connection only after an
 * answer that leaves the connection usable.
 *
 * Bounds: the accept loop takes at most MAX_CONNECTIONS connections and lives
 * at most SERVER_LIMIT_S seconds; a handler lives at most HANDLER_LIMIT_S
 * seconds and answers at most MAX_REQUESTS requests; every wait is a poll
 * with a timeout. PR_SET_PDEATHSIG ties each process to its parent. */
#include "hostile_server.h"
#include "support.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTIONS 4096
#define MAX_REQUESTS 1000
#define SERVER_LIMIT_S 120
#define HANDLER_LIMIT_S 30
#define READ_WAIT_MS 15000
#define HEAD_CAP 65536

typedef struct conn {
    int fd;
    const hostile_script *script;
    hostile_stats *stats;
    hostile_mode mode; /* whose bytes_sent the writes count toward */
} conn;

typedef enum { KEEP, CLOSE } after;

static void count(int *counter) {
    __atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST);
}

int hostile_count(const int *counter) {
    return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

long long hostile_bytes(const long long *counter) {
    return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

/* Write everything or fail (the peer went away). */
static int send_all(conn *c, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(c->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        __atomic_add_fetch(&c->stats->bytes_sent[c->mode], (long long)w, __ATOMIC_SEQ_CST);
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_str(conn *c, const char *s) {
    return send_all(c, s, strlen(s));
}

/* One chunk of a chunked body. */
static int send_chunk(conn *c, const char *s) {
    char size[32];
    snprintf(size, sizeof size, "%zx\r\n", strlen(s));
    return send_str(c, size) || send_str(c, s) || send_str(c, "\r\n") ? -1 : 0;
}

/* ---- the well-behaved stream's events ---- */

static void token_event(char *buf, size_t cap, int i, int last) {
    snprintf(buf, cap,
             "data: {\"id\":\"cmpl-hostile\",\"object\":\"text_completion\",\"created\":1,"
             "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" tok%d\",\"logprobs\":null,"
             "\"finish_reason\":%s}]}\n\n",
             i, last ? "\"length\"" : "null");
}

static const char usage_event[] =
    "data: {\"id\":\"cmpl-hostile\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
    "\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"total_tokens\":12,\"completion_tokens\":4}}"
    "\n\n";
static const char done_event[] = "data: [DONE]\n\n";

/* The whole GOOD stream as one string (for trickling). */
static void good_stream(char *buf, size_t cap) {
    size_t n = 0;
    for (int i = 0; i < HOSTILE_GOOD_TOKENS; i++) {
        token_event(buf + n, cap - n, i, i == HOSTILE_GOOD_TOKENS - 1);
        n += strlen(buf + n);
    }
    snprintf(buf + n, cap - n, "%s%s", usage_event, done_event);
}

static const char sse_chunked_head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                       "Transfer-Encoding: chunked\r\n\r\n";
static const char sse_close_head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                     "Connection: close\r\n\r\n";

/* Read and drop whatever comes until the peer closes (or the alarm). */
static void wait_for_close(conn *c) {
    char buf[4096];
    struct pollfd pfd = {c->fd, POLLIN, 0};
    for (int i = 0; i < 100000; i++) {
        int r = poll(&pfd, 1, 1000);
        if (r < 0 && errno != EINTR)
            return;
        if (r > 0 && read(c->fd, buf, sizeof buf) <= 0)
            return;
    }
}

/* ---- the modes ---- */

/* A chunked event stream of the GOOD tokens: `gap_ms` before each write,
 * the first `together` tokens in one write (one read at the client), the
 * last token marked finished when `mark_last`, then `tail` and [DONE]. */
typedef struct stream_shape {
    int gap_ms, together, mark_last;
    const char *tail;
} stream_shape;

static after answer_stream(conn *c, const stream_shape *sh) {
    char ev[1024];
    if (send_str(c, sse_chunked_head))
        return CLOSE;
    for (int i = 0; i < HOSTILE_GOOD_TOKENS;) {
        sleep_ms(sh->gap_ms);
        size_t n = 0;
        for (int k = i == 0 ? sh->together : 1; k > 0 && i < HOSTILE_GOOD_TOKENS; k--, i++) {
            token_event(ev + n, sizeof ev - n, i, sh->mark_last && i == HOSTILE_GOOD_TOKENS - 1);
            n += strlen(ev + n);
        }
        if (send_chunk(c, ev))
            return CLOSE;
    }
    if (send_chunk(c, sh->tail) || send_chunk(c, done_event) || send_str(c, "0\r\n\r\n"))
        return CLOSE;
    return KEEP;
}

static after answer_good(conn *c) {
    return answer_stream(c, &(stream_shape){20, 1, 1, usage_event});
}

/* The first two tokens in one chunk of one write: what a client that
 * reads late sees, made certain. */
static after answer_two_in_one(conn *c) {
    return answer_stream(c, &(stream_shape){20, 2, 1, usage_event});
}

/* llama.cpp's final chunk, as its server sends it (values from a recorded
 * exchange, tests/data/transcripts), without usage. */
static const char timings_event[] =
    "data: {\"choices\":[{\"text\":\"\",\"index\":0,\"logprobs\":null,\"finish_reason\":"
    "\"length\"}],\"created\":1796006841,\"model\":\"m\",\"object\":\"text_completion\","
    "\"id\":\"chatcmpl-x\",\"timings\":{\"cache_n\":6,\"prompt_n\":1,\"prompt_ms\":9.37,"
    "\"prompt_per_token_ms\":9.37,\"prompt_per_second\":106.72358591248667,\"predicted_n\":4,"
    "\"predicted_ms\":126.96,\"predicted_per_token_ms\":31.74,\"predicted_per_second\":31.5}}\n\n";
static const char cached_usage_event[] =
    "data: {\"id\":\"cmpl-hostile\",\"object\":\"text_completion\",\"created\":1,\"model\":\"m\","
    "\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"total_tokens\":12,\"completion_tokens\":4,"
    "\"prompt_tokens_details\":{\"cached_tokens\":5}}}\n\n";

/* The GOOD tokens (none marked last, 5 ms apart), then `tail` and [DONE]. */
static after answer_with_tail(conn *c, const char *tail) {
    return answer_stream(c, &(stream_shape){5, 1, 0, tail});
}

/* The script's own events, then [DONE]. */
static after answer_events(conn *c) {
    char ev[8192];
    if (send_str(c, sse_chunked_head))
        return CLOSE;
    for (const char *const *e = c->script->events; e && *e; e++) {
        sleep_ms(5);
        snprintf(ev, sizeof ev, "data: %s\n\n", *e);
        if (send_chunk(c, ev))
            return CLOSE;
    }
    if (send_chunk(c, done_event) || send_str(c, "0\r\n\r\n"))
        return CLOSE;
    return KEEP;
}

static after answer_huge(conn *c, int many_lines) {
    if (send_str(c, sse_close_head))
        return CLOSE;
    enum { LINE = 1024 };
    static char block[65536];
    if (many_lines) { /* "data: " + 1017 x + "\n" = 1 KiB per line */
        for (size_t i = 0; i < sizeof block; i += LINE) {
            memcpy(block + i, "data: ", 6);
            memset(block + i + 6, 'x', LINE - 7);
            block[i + LINE - 1] = '\n';
        }
    } else {
        memset(block, 'x', sizeof block);
        if (send_str(c, "data: "))
            return CLOSE;
    }
    for (size_t sent = 0; sent < c->script->huge_bytes; sent += sizeof block)
        if (send_all(c, block, sizeof block))
            return CLOSE;
    send_str(c, "\n\n");
    return CLOSE;
}

static after answer_headers_only(conn *c, int terminated) {
    char head[16384];
    size_t n = (size_t)snprintf(head, sizeof head,
                                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                "Transfer-Encoding: chunked\r\n");
    for (int i = 0; i < 198; i++) /* 200 header lines in all */
        n += (size_t)snprintf(head + n, sizeof head - n, "X-Hostile-%03d: waiting\r\n", i);
    if (terminated)
        snprintf(head + n, sizeof head - n, "\r\n");
    if (send_str(c, head) == 0)
        wait_for_close(c);
    return CLOSE;
}

static after answer_trickle(conn *c) {
    char body[4096];
    good_stream(body, sizeof body);
    if (send_str(c, sse_close_head))
        return CLOSE;
    for (size_t i = 0; body[i]; i++) {
        sleep_ms(c->script->trickle_ms);
        if (send_all(c, body + i, 1))
            break;
    }
    return CLOSE;
}

static after answer_partial(conn *c, int reset) {
    char ev[512], size[32];
    if (send_str(c, sse_chunked_head))
        return CLOSE;
    token_event(ev, sizeof ev, 0, 0);
    if (send_chunk(c, ev))
        return CLOSE;
    token_event(ev, sizeof ev, 1, 0);
    snprintf(size, sizeof size, "%zx\r\n", strlen(ev));
    if (send_str(c, size) || send_all(c, ev, strlen(ev) / 2))
        return CLOSE;
    sleep_ms(50);
    if (reset) {
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    return CLOSE; /* the caller closes: FIN, or RST with the linger set */
}

static after answer_whole(conn *c, int status, const char *ctype, const char *body) {
    char head[512];
    snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
             status,
             status == 200   ? "OK"
             : status == 404 ? "Not Found"
                             : "Internal Server Error",
             ctype, strlen(body));
    return send_str(c, head) || send_str(c, body) ? CLOSE : KEEP;
}

static after answer_error_mid_stream(conn *c, int as_event) {
    char ev[512];
    if (send_str(c, sse_chunked_head))
        return CLOSE;
    for (int i = 0; i < 2; i++) {
        sleep_ms(20);
        token_event(ev, sizeof ev, i, 0);
        if (send_chunk(c, ev))
            return CLOSE;
    }
    const char *err =
        as_event ? "event: error\ndata: {\"error\":{\"message\":\"upstream overloaded\","
                   "\"type\":\"InternalServerError\",\"code\":500}}\n\n"
                 : "data: {\"error\":{\"object\":\"error\",\"message\":\"upstream overloaded\","
                   "\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}\n\n";
    if (send_chunk(c, err))
        return CLOSE;
    for (int i = 2; i < HOSTILE_GOOD_TOKENS; i++) { /* as if nothing had happened */
        sleep_ms(20);
        token_event(ev, sizeof ev, i, i == HOSTILE_GOOD_TOKENS - 1);
        if (send_chunk(c, ev))
            return CLOSE;
    }
    if (send_chunk(c, usage_event) || send_chunk(c, done_event) || send_str(c, "0\r\n\r\n"))
        return CLOSE;
    return KEEP;
}

/* The answer, then another that no request asked for: a server out of step
 * with its connection (a client that takes it as the next request's answer
 * stays one answer behind from then on). */
static after answer_twice(conn *c) {
    if (answer_good(c) == CLOSE)
        return CLOSE;
    sleep_ms(c->script->extra_ms);
    static const char extra[] =
        "data: {\"id\":\"cmpl-extra\",\"object\":\"text_completion\",\"created\":1,"
        "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" extra extra\","
        "\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":8,"
        "\"total_tokens\":10,\"completion_tokens\":2}}\n\n";
    if (send_str(c, sse_chunked_head) || send_chunk(c, extra) || send_chunk(c, done_event) ||
        send_str(c, "0\r\n\r\n"))
        return CLOSE;
    return KEEP;
}

/* A stream of tiny events, written 64 KiB at a time: millions of chunks
 * in a few seconds, each the least an answer can carry. */
static after answer_many_events(conn *c) {
    static const char ev[] = "data: {\"choices\":[{\"text\":\"x\"}]}\n\n";
    enum { EV = sizeof ev - 1, PER_BLOCK = 65536 / EV };
    static char block[PER_BLOCK * EV];
    for (int i = 0; i < PER_BLOCK; i++)
        memcpy(block + (size_t)i * EV, ev, EV);
    if (send_str(c, sse_close_head))
        return CLOSE;
    for (long sent = 0; sent < c->script->many_events; sent += PER_BLOCK) {
        long n =
            c->script->many_events - sent < PER_BLOCK ? c->script->many_events - sent : PER_BLOCK;
        if (send_all(c, block, (size_t)n * EV))
            return CLOSE;
    }
    send_str(c, done_event);
    return CLOSE;
}

/* CRC-32 (IEEE, reflected), bit by bit: the gzip trailer's checksum. */
static unsigned long crc32_of(const unsigned char *p, size_t n) {
    unsigned long crc = 0xffffffffUL;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320UL : crc >> 1;
    }
    return crc ^ 0xffffffffUL;
}

/* `in` as a gzip member of one stored (uncompressed) deflate block: a valid
 * encoding any gzip reader decodes, made without zlib. Returns its length. */
static size_t gzip_stored(const char *in, size_t n, unsigned char *out) {
    static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    size_t k = 0;
    memcpy(out, head, sizeof head);
    k += sizeof head;
    out[k++] = 1; /* the last block, stored */
    out[k++] = (unsigned char)(n & 0xff);
    out[k++] = (unsigned char)(n >> 8);
    out[k++] = (unsigned char)(~n & 0xff);
    out[k++] = (unsigned char)((~n >> 8) & 0xff);
    memcpy(out + k, in, n);
    k += n;
    unsigned long crc = crc32_of((const unsigned char *)in, n);
    for (int i = 0; i < 4; i++)
        out[k++] = (unsigned char)(crc >> (8 * i));
    for (int i = 0; i < 4; i++)
        out[k++] = (unsigned char)(n >> (8 * i));
    return k;
}

static after answer_gzip(conn *c) {
    char body[4096], head[256];
    unsigned char gz[4200];
    good_stream(body, sizeof body);
    size_t n = gzip_stored(body, strlen(body), gz);
    snprintf(head, sizeof head,
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
             "Content-Length: %zu\r\n\r\n",
             n);
    return send_str(c, head) || send_all(c, (const char *)gz, n) ? CLOSE : KEEP;
}

static after answer_completion(conn *c, hostile_mode m) {
    c->mode = m;
    switch (m) {
    case HOSTILE_GOOD: return answer_good(c);
    case HOSTILE_HUGE_LINE: return answer_huge(c, 0);
    case HOSTILE_HUGE_EVENT: return answer_huge(c, 1);
    case HOSTILE_SILENT: wait_for_close(c); return CLOSE;
    case HOSTILE_HEADERS_ONLY: return answer_headers_only(c, 1);
    case HOSTILE_HEADERS_OPEN: return answer_headers_only(c, 0);
    case HOSTILE_TRICKLE: return answer_trickle(c);
    case HOSTILE_PARTIAL_FIN: return answer_partial(c, 0);
    case HOSTILE_PARTIAL_RST: return answer_partial(c, 1);
    case HOSTILE_HTML_500:
        return answer_whole(c, 500, "text/html; charset=utf-8",
                            "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title>"
                            "</head><body><h1>Internal Server Error</h1><p>The server is on "
                            "fire.</p></body></html>\n");
    case HOSTILE_JSON_WHOLE:
        return answer_whole(
            c, 200, "application/json",
            "{\"id\":\"cmpl-hostile\",\"object\":\"text_completion\",\"created\":1,"
            "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" tok0 tok1 tok2 "
            "tok3 tok4 tok5 tok6\",\"logprobs\":null,\"finish_reason\":\"length\"}],"
            "\"usage\":{\"prompt_tokens\":8,\"total_tokens\":15,"
            "\"completion_tokens\":7}}");
    case HOSTILE_ERROR_EVENT: return answer_error_mid_stream(c, 1);
    case HOSTILE_ERROR_DATA: return answer_error_mid_stream(c, 0);
    case HOSTILE_TWO_ANSWERS: return answer_twice(c);
    case HOSTILE_MANY_EVENTS: return answer_many_events(c);
    case HOSTILE_GZIP_SSE: return answer_gzip(c);
    case HOSTILE_NOT_FOUND: return answer_whole(c, 404, "application/json", HOSTILE_NOT_FOUND_BODY);
    case HOSTILE_TWO_IN_ONE: return answer_two_in_one(c);
    case HOSTILE_TIMINGS: return answer_with_tail(c, timings_event);
    case HOSTILE_CACHED: return answer_with_tail(c, cached_usage_event);
    case HOSTILE_EVENTS: return answer_events(c);
    case HOSTILE_N_MODES: break;
    }
    return CLOSE;
}

/* /tokenize with a tokenizer unlike servelab's rule: a word (a run of
 * letters) of up to 2 letters is one token, a longer one two. The count of
 * the "prompt" field's text, found by hand (the body is small and ours). */
static after answer_picky_count(conn *c, const char *body) {
    const char *p = strstr(body, "\"prompt\":\"");
    int count = 0;
    if (p)
        for (p += 10; *p && *p != '"';) {
            int len = 0;
            while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
                len++;
                p++;
            }
            if (len)
                count += len <= 2 ? 1 : 2;
            else
                p++;
        }
    char reply[64];
    snprintf(reply, sizeof reply, "{\"count\":%d}", count);
    return answer_whole(c, 200, "application/json", reply);
}

/* ---- requests ---- */

typedef struct request {
    char head[HEAD_CAP];
    char method[16], path[256];
    long id;             /* N of X-Request-Id: req-N, or -1 */
    char body[HEAD_CAP]; /* its first HEAD_CAP - 1 bytes, NUL-terminated */
} request;

static int wait_readable(int fd) {
    struct pollfd pfd = {fd, POLLIN, 0};
    int r;
    do
        r = poll(&pfd, 1, READ_WAIT_MS);
    while (r < 0 && errno == EINTR);
    return r > 0 ? 0 : -1;
}

/* Read one request: its head whole, its body dropped. -1 at EOF or error. */
static int read_request(int fd, request *rq) {
    size_t n = 0;
    char *end = NULL;
    while (!end) {
        if (n + 1 >= sizeof rq->head || wait_readable(fd))
            return -1;
        ssize_t r = read(fd, rq->head + n, sizeof rq->head - 1 - n);
        if (r <= 0)
            return -1;
        n += (size_t)r;
        rq->head[n] = 0;
        end = strstr(rq->head, "\r\n\r\n");
    }
    size_t head_len = (size_t)(end - rq->head) + 4;
    long long body = 0;
    const char *cl = strcasestr(rq->head, "\r\nContent-Length:");
    if (cl && cl < end)
        body = atoll(cl + 17);
    long long left = body - (long long)(n - head_len);
    size_t kept = n - head_len < sizeof rq->body - 1 ? n - head_len : sizeof rq->body - 1;
    memcpy(rq->body, rq->head + head_len, kept);
    char sink[4096];
    while (left > 0) {
        if (wait_readable(fd))
            return -1;
        ssize_t r = read(fd, sink, left < (long long)sizeof sink ? (size_t)left : sizeof sink);
        if (r <= 0)
            return -1;
        size_t take =
            kept + (size_t)r < sizeof rq->body - 1 ? (size_t)r : sizeof rq->body - 1 - kept;
        memcpy(rq->body + kept, sink, take);
        kept += take;
        left -= r;
    }
    rq->body[kept] = 0;
    *end = 0;
    if (sscanf(rq->head, "%15s %255s", rq->method, rq->path) != 2)
        return -1;
    const char *idh = strcasestr(rq->head, "\r\nX-Request-Id: req-");
    rq->id = idh ? atol(idh + 20) : -1;
    return 0;
}

static void serve(conn *c) {
    static request rq;
    for (int k = 0; k < MAX_REQUESTS; k++) {
        if (read_request(c->fd, &rq))
            return;
        after a;
        if (!strcmp(rq.method, "GET") && !strcmp(rq.path, "/v1/models") &&
            c->script->models_status) {
            c->mode = HOSTILE_GOOD;
            if (c->script->models_status < 0)
                wait_for_close(c);
            a = c->script->models_status < 0
                    ? CLOSE
                    : answer_whole(c, c->script->models_status, "application/json",
                                   "{\"detail\":\"Not Found\"}");
        } else if (!strcmp(rq.method, "GET") && !strcmp(rq.path, "/v1/models")) {
            c->mode = HOSTILE_GOOD;
            a = answer_whole(c, 200, "application/json",
                             "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\","
                             "\"owned_by\":\"hostile\"}]}");
        } else if (!strcmp(rq.method, "POST") && !strcmp(rq.path, "/tokenize") &&
                   c->script->picky_tokenizer) {
            c->mode = HOSTILE_GOOD;
            a = answer_picky_count(c, rq.body);
        } else if (!strcmp(rq.method, "POST") && strstr(rq.path, "completions")) {
            const hostile_script *s = c->script;
            hostile_mode m = s->modes[rq.id >= 0 ? rq.id % s->n_modes : 0];
            count(&c->stats->completions);
            count(&c->stats->by_mode[m]);
            a = answer_completion(c, m);
        } else {
            c->mode = HOSTILE_GOOD;
            a = answer_whole(c, 404, "application/json", "{\"detail\":\"Not Found\"}");
        }
        if (a == CLOSE)
            return;
    }
}

static void die_with_parent(int limit_s) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm((unsigned)limit_s);
}

static _Noreturn void accept_loop(int lfd, const hostile_script *s, hostile_stats *stats) {
    pid_t parent = getppid();
    die_with_parent(SERVER_LIMIT_S);
    if (getppid() != parent)
        _exit(0);
    signal(SIGCHLD, SIG_IGN); /* handlers reap themselves */
    signal(SIGPIPE, SIG_IGN);
    for (int k = 0; k < MAX_CONNECTIONS; k++) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            _exit(1);
        }
        count(&stats->connections);
        pid_t pid = fork();
        if (pid == 0) {
            close(lfd);
            die_with_parent(HANDLER_LIMIT_S);
            conn c = {fd, s, stats, HOSTILE_GOOD};
            serve(&c);
            close(fd);
            _exit(0);
        }
        close(fd);
    }
    _exit(0);
}

hostile_server hostile_start(const hostile_script *s) {
    CHECK(s->n_modes >= 1 && s->n_modes <= 8);
    hostile_server h = {0, 0, NULL};
    h.stats =
        mmap(NULL, sizeof *h.stats, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(h.stats != MAP_FAILED);
    memset(h.stats, 0, sizeof *h.stats);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(lfd >= 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(lfd, 512) == 0);
    socklen_t sl = sizeof sa;
    CHECK(getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    h.port = ntohs(sa.sin_port);
    fflush(stdout);
    fflush(stderr);
    h.pid = fork();
    CHECK(h.pid >= 0);
    if (h.pid == 0)
        accept_loop(lfd, s, h.stats);
    close(lfd);
    return h;
}

void hostile_stop(hostile_server *h) {
    if (h->pid <= 0)
        return;
    kill(h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
    h->pid = 0;
}
