/* Defects of the client (round 2): the --tokenize auto word probe asked
 * ~250 questions in a row, 10 s each at worst, silently and deaf to
 * SIGINT (H2); a usage count lower than the tokens already streamed was
 * taken as the answer's (M6); an answer that came while the request was
 * still being written was taken as its answer (M12). A small scripted
 * server here sends the bytes each case needs. */
#include "client/tokenizer.h"
#include "common/stop.h"
#include "csv_util.h"
#include "raw_conn.h"
#include "support.h"
#include "test.h"
#include "workload/words.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the scripted server ---- */

#define BODY_KEPT 65536 /* of a request's body, what the server looks at */

typedef struct script {
    int tokenize_ms;     /* /tokenize: each answer this late; a long text's count is one short */
    const char *usage;   /* completions: two text chunks, then this usage completion_tokens */
    int stray_mid_write; /* completions: each one's own answer (4 tokens, "length"); from the
                            second on a connection, first an unasked one (2 tokens, "stop")
                            as soon as its head came, with its body still unread */
} script;

typedef struct server_stats {
    int tokenize_calls, completions, strays;
} server_stats;

typedef struct server {
    pid_t pid;
    int port;
    server_stats *stats;
} server;

static int bump(int *counter) {
    return __atomic_add_fetch(counter, 1, __ATOMIC_SEQ_CST);
}

static int seen(const int *counter) {
    return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

static void send_text(int fd, const char *s) {
    for (size_t n = strlen(s); n > 0;) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* A whole response with a Content-Length, kept alive. */
static void send_response(int fd, const char *type, const char *body) {
    char head[256];
    snprintf(head, sizeof head,
             "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n", type,
             strlen(body));
    send_text(fd, head);
    send_text(fd, body);
}

/* An event stream of n one-token text chunks, the last with `finish`, a
 * usage chunk saying `usage`, and [DONE]. */
static void send_stream(int fd, int n, const char *finish, const char *usage) {
    char body[4096];
    size_t at = 0;
    for (int i = 0; i < n; i++)
        at += (size_t)snprintf(
            body + at, sizeof body - at,
            "data: {\"object\":\"text_completion\",\"model\":\"m\","
            "\"choices\":[{\"index\":0,\"text\":\" t%d\",\"finish_reason\":%s%s%s}"
            "]}\n\n",
            i, i == n - 1 ? "\"" : "", i == n - 1 ? finish : "null", i == n - 1 ? "\"" : "");
    snprintf(body + at, sizeof body - at,
             "data: {\"object\":\"text_completion\",\"model\":\"m\",\"choices\":[],"
             "\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%s}}\n\ndata: [DONE]\n\n",
             usage);
    send_response(fd, "text/event-stream", body);
}

/* Reads a request's head into head (NUL-ended, its blank line cut) and
 * the body bytes that came with it into body; returns the body bytes still
 * to come, or -1 at EOF or error. */
static long read_head(int fd, char *head, size_t cap, char *body, size_t *kept) {
    size_t n = 0;
    char *end = NULL;
    while (!end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (n + 1 >= cap || poll(&p, 1, 10000) <= 0)
            return -1;
        ssize_t r = read(fd, head + n, cap - 1 - n);
        if (r <= 0)
            return -1;
        n += (size_t)r;
        head[n] = 0;
        end = strstr(head, "\r\n\r\n");
    }
    size_t extra = n - (size_t)(end + 4 - head);
    *kept = extra < BODY_KEPT - 1 ? extra : BODY_KEPT - 1;
    memcpy(body, end + 4, *kept);
    body[*kept] = 0;
    const char *cl = strcasestr(head, "\r\nContent-Length:");
    end[2] = 0;
    return cl && cl < end ? atol(cl + 17) - (long)extra : 0;
}

/* Reads the `left` body bytes still to come, keeping the first
 * BODY_KEPT - 1 of the body (kept of them already there). */
static int read_body(int fd, long left, char *body, size_t kept) {
    static char sink[1 << 16];
    while (left > 0) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0)
            return -1;
        ssize_t r = read(fd, sink, left < (long)sizeof sink ? (size_t)left : sizeof sink);
        if (r <= 0)
            return -1;
        size_t take = kept + (size_t)r < BODY_KEPT - 1 ? (size_t)r : BODY_KEPT - 1 - kept;
        memcpy(body + kept, sink, take);
        kept += take;
        body[kept] = 0;
        left -= r;
    }
    return 0;
}

/* The words of a /tokenize request's "prompt" (its spaces and one). */
static int prompt_words(const char *body) {
    const char *p = strstr(body, "\"prompt\":\"");
    int words = 1;
    for (p = p ? p + 10 : ""; *p && *p != '"'; p++)
        words += *p == ' ';
    return words;
}

static void serve(int fd, const script *s, server_stats *st) {
    static char head[1 << 16], body[BODY_KEPT];
    for (int k = 0, on_conn = 0; k < 1000; k++) {
        size_t kept;
        long left = read_head(fd, head, sizeof head, body, &kept);
        if (left < 0)
            return;
        int completion = !strncmp(head, "POST ", 5) && strstr(head, "completions");
        if (completion && s->stray_mid_write && on_conn++ > 0) {
            sleep_ms(200); /* the client is blocked writing the rest by now */
            bump(&st->strays);
            send_stream(fd, 2, "stop", "2");
        }
        if (read_body(fd, left, body, kept))
            return;
        if (!strncmp(head, "GET /v1/models", 14)) {
            send_response(fd, "application/json",
                          "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\"}]}");
        } else if (!strncmp(head, "POST /tokenize", 14) && s->tokenize_ms > 0) {
            bump(&st->tokenize_calls);
            sleep_ms(s->tokenize_ms);
            int words = prompt_words(body);
            char reply[64];
            snprintf(reply, sizeof reply, "{\"count\":%d}", words > 10 ? words - 1 : words);
            send_response(fd, "application/json", reply);
        } else if (completion) {
            bump(&st->completions);
            send_stream(fd, s->usage ? 2 : 4, "length", s->usage ? s->usage : "4");
        } else {
            send_text(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    }
}

/* Listens on a free loopback port; a child accepts, a grandchild serves
 * each connection; all die with the test (and within a minute). */
static server server_start(const script *s) {
    server h = {0};
    h.stats =
        mmap(NULL, sizeof *h.stats, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(h.stats != MAP_FAILED);
    memset(h.stats, 0, sizeof *h.stats);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), small = 4096;
    CHECK(lfd >= 0);
    if (s->stray_mid_write) /* so that a large body waits in the client's socket */
        setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(lfd, 128) == 0);
    CHECK(getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    h.port = ntohs(sa.sin_port);
    fflush(stdout);
    fflush(stderr);
    h.pid = fork();
    CHECK(h.pid >= 0);
    if (h.pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(60);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGCHLD, SIG_IGN);
        for (int k = 0; k < 1000; k++) {
            int fd = accept(lfd, NULL, NULL);
            if (fd < 0)
                continue;
            if (fork() == 0) {
                close(lfd);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                serve(fd, s, h.stats);
                _exit(0);
            }
            close(fd);
        }
        _exit(0);
    }
    close(lfd);
    return h;
}

static void server_stop(server *h) {
    kill(h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
}

/* ---- H2: the --tokenize auto probe ---- */

typedef struct probe_call {
    server_tokenizer t;
    tokenizer_limits lim;
    const char **kept;
    int result, done;
    double took_ms;
    pthread_t tid;
} probe_call;

static void *probe_thread(void *arg) {
    probe_call *c = arg;
    double t0 = now_ms();
    c->result = tokenizer_keep_words_within(&c->t, &c->lim, common_words, n_common_words, c->kept);
    c->took_ms = now_ms() - t0;
    __atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void probe_start(probe_call *c, int port, double budget_s) {
    static char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    *c = (probe_call){.t = {base, NULL, 0, "m"}, .lim = {budget_s, 0}};
    c->kept = malloc((size_t)n_common_words * sizeof *c->kept);
    CHECK(pthread_create(&c->tid, NULL, probe_thread, c) == 0);
}

/* Whether the probe ended within limit_ms. */
static int probe_ended(probe_call *c, int limit_ms) {
    for (double end = now_ms() + limit_ms; now_ms() < end; sleep_ms(10))
        if (__atomic_load_n(&c->done, __ATOMIC_SEQ_CST))
            return 1;
    return 0;
}

/* stderr into a file while f runs; the file's text. */
static char *stderr_of(void (*f)(void *), void *arg) {
    char *dir = temp_dir(), path[1100];
    snprintf(path, sizeof path, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    f(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *text = read_file(path, NULL);
    free(dir);
    return text ? text : strdup("");
}

typedef struct budget_case {
    server h;
    probe_call c;
    int ended;
} budget_case;

static void run_budget_case(void *arg) {
    budget_case *b = arg;
    probe_start(&b->c, b->h.port, 1.5);
    b->ended = probe_ended(&b->c, 5000);
}

/* A server whose /tokenize takes 300 ms a call and fails the batch check:
 * with a budget of 1.5 s the probe gives up "too slow" after about 1.5 s
 * and a handful of calls (before the fix it went on through all ~250
 * words, 75 s), having said on stderr that it asks word by word. */
TEST(defects_client_tokenize_probe_bounded_in_all) {
    script s = {.tokenize_ms = 300};
    budget_case b = {.h = server_start(&s)};
    char *err = stderr_of(run_budget_case, &b);
    int calls = seen(&b.h.stats->tokenize_calls);
    server_stop(&b.h);
    CHECK_MSG(b.ended, "the probe still ran 5 s in (%d calls); stderr: %s", calls, err);
    CHECK_INT(b.c.result, TOKENIZER_TOO_SLOW);
    CHECK_MSG(b.c.took_ms > 1300 && b.c.took_ms < 2500, "it took %.0f ms", b.c.took_ms);
    CHECK_MSG(calls >= 3 && calls <= 7, "%d calls", calls);
    char want[128];
    snprintf(want, sizeof want,
             "servelab: --tokenize auto: asking the server about %d words one at a time\n",
             n_common_words);
    CHECK_MSG(strstr(err, want), "stderr: %s", err);
    CHECK_MSG(strstr(err, "too slow"), "stderr: %s", err);
    pthread_join(b.c.tid, NULL);
    free(err);
}

/* SIGINT while a call is under way: the probe ends within about a second
 * (libcurl's progress callback sees the flag), with TOKENIZER_STOPPED, and
 * asks nothing more. */
TEST(defects_client_tokenize_probe_stops_at_sigint) {
    script s = {.tokenize_ms = 300};
    server h = server_start(&s);
    stop_install();
    probe_call c;
    probe_start(&c, h.port, 60);
    for (int i = 0; i < 500 && seen(&h.stats->tokenize_calls) < 4; i++)
        sleep_ms(10);
    kill(getpid(), SIGINT);
    double t0 = now_ms();
    int ended = probe_ended(&c, 3000), calls = seen(&h.stats->tokenize_calls);
    double took = now_ms() - t0;
    sleep_ms(400);
    int later = seen(&h.stats->tokenize_calls);
    server_stop(&h);
    CHECK_MSG(ended, "the probe still ran 3 s after SIGINT");
    CHECK_INT(c.result, TOKENIZER_STOPPED);
    CHECK_MSG(took < 1200, "it ended %.0f ms after SIGINT", took);
    CHECK_MSG(later == calls, "%d calls after the probe ended", later - calls);
    pthread_join(c.tid, NULL);
}

static int one_token_if_short(void *arg, const char *text, int *count) {
    (void)arg;
    int n = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, " ");
        n += len <= 3 ? 1 : 2;
        p += len;
        p += strspn(p, " ");
    }
    *count = n;
    return 0;
}

static void run_by_rule(void *arg) {
    const char **kept = malloc((size_t)n_common_words * sizeof *kept);
    *(int *)arg =
        tokenizer_keep_words_by(one_token_if_short, NULL, common_words, n_common_words, kept);
    free(kept);
}

/* `servelab predict`'s own counter goes word by word too: instant, no
 * budget, nothing said. */
TEST(defects_client_tokenize_by_a_local_counter_is_quiet_and_whole) {
    int k = -9, short_words = 0;
    char *err = stderr_of(run_by_rule, &k);
    for (int i = 0; i < n_common_words; i++)
        short_words += strlen(common_words[i]) <= 3;
    CHECK_INT(k, short_words);
    CHECK_STR(err, "");
    free(err);
}

/* The run: SIGINT during the probe ends it within a couple of seconds,
 * exit 130 (before: 60 more calls, ~20 s). */
TEST(defects_client_run_tokenize_probe_ends_at_sigint) {
    script s = {.tokenize_ms = 300};
    server h = server_start(&s);
    char *dir = temp_dir(), cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s run --url http://127.0.0.1:%d --model m --api chat --prompts random:20:2 "
             "--requests 2 --no-sampling --out %s/r",
             servelab_bin(), h.port, dir);
    pid_t run = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    for (int i = 0; i < 500 && seen(&h.stats->tokenize_calls) < 4; i++)
        sleep_ms(10);
    kill(run, SIGINT);
    double t0 = now_ms();
    int st = 0, ended = 0;
    while (!ended && now_ms() - t0 < 8000)
        if (!(ended = waitpid(run, &st, WNOHANG) == run))
            sleep_ms(20);
    double took = now_ms() - t0;
    if (!ended) {
        kill(run, SIGKILL);
        waitpid(run, &st, 0);
    }
    server_stop(&h);
    CHECK_MSG(ended && took < 2500, "the run ended %.0f ms after SIGINT", took);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
    free(dir);
}

/* ---- M6: a usage count below what was streamed ---- */

static csv_table *run_rows(int port, const char *client, const char *dir) {
    char args[2048], path[1200], *out;
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --model m --no-sampling --prompts random:8:2 "
             "--rate 50 --requests 3 --timeout 5 --http-client %s --out %s/run",
             port, client, dir);
    int code = servelab_cmd(args, &out);
    free(out);
    (void)code;
    snprintf(path, sizeof path, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK_MSG(t && t->n_rows == 3, "no rows in %s", path);
    return t;
}

/* Two text chunks, then usage completion_tokens 0 (or 1): malformed, with
 * either client; 2 (as many as came) and 3 (a chunk may hold more than one
 * token) are fine. Before the fix 0 and 1 were successes of 0 and 1 tokens. */
TEST(defects_client_usage_below_tokens_streamed_is_malformed) {
    const char *usage[] = {"0", "1", "2", "3"}, *want[] = {"malformed", "malformed", "", ""};
    const char *clients[] = {"builtin", "libcurl"};
    for (int u = 0; u < 4; u++)
        for (int c = 0; c < 2; c++) {
            script s = {.usage = usage[u]};
            server h = server_start(&s);
            char *dir = temp_dir();
            csv_table *t = run_rows(h.port, clients[c], dir);
            server_stop(&h);
            for (int i = 0; i < t->n_rows; i++)
                CHECK_MSG(!strcmp(csv_get(t, i, "error"), want[u]),
                          "usage %s after 2 chunks (%s): error '%s', output_tokens %s", usage[u],
                          clients[c], csv_get(t, i, "error"), csv_get(t, i, "output_tokens"));
            csv_free(t);
            free(dir);
        }
}

/* ---- M12: an answer that comes while the request is being written ---- */

/* Requests of ~8 MB one after another on one kept-alive connection; from
 * the second on, the server sends an unasked answer (2 tokens, "stop") as
 * soon as the request's head came and before reading its body, then the
 * request's own answer (4 tokens, "length"). The first cannot be the
 * request's answer (an OpenAI server reads the whole prompt first): the
 * builtin client drops it, and every row is the request's own. Before the
 * fix requests 2 and 3 took the unasked answer as theirs. */
TEST(defects_client_answer_before_the_request_was_written_is_not_taken) {
    script s = {.stray_mid_write = 1};
    server h = server_start(&s);
    char *dir = temp_dir(), args[2048], path[1200], *out;
    snprintf(path, sizeof path, "%s/big.jsonl", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("{\"prompt\": \"", f);
    for (int i = 0; i < 4 << 20; i++)
        fputs("x ", f);
    fputs("\", \"max_tokens\": 4}\n", f);
    fclose(f);
    snprintf(args, sizeof args,
             "run --quiet --url http://127.0.0.1:%d --model m --no-sampling --prompts %s "
             "--concurrency 1 --requests 3 --timeout 20 --http-client builtin --out %s/run",
             h.port, path, dir);
    int code = servelab_cmd(args, &out);
    int strays = seen(&h.stats->strays);
    server_stop(&h);
    CHECK_MSG(code == 0, "exit %d: %s", code, out);
    free(out);
    snprintf(path, sizeof path, "%s/run/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t && t->n_rows == 3);
    for (int i = 0; i < t->n_rows; i++)
        CHECK_MSG(!*csv_get(t, i, "error") && !strcmp(csv_get(t, i, "output_tokens"), "4") &&
                      !strcmp(csv_get(t, i, "finish_reason"), "length"),
                  "%s: error '%s', %s tokens, finish '%s'", csv_get(t, i, "request_id"),
                  csv_get(t, i, "error"), csv_get(t, i, "output_tokens"),
                  csv_get(t, i, "finish_reason"));
    CHECK_MSG(strays == 2, "the server sent %d unasked answers", strays);
    csv_free(t);
    free(dir);
}
