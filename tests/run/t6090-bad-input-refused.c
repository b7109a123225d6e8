/* Bad input is refused with exit code 2 and one line before any traffic:
 * URLs that cannot be used, headers that would split a request, SLOs without
 * units or given twice, schedules that are empty or absurd, timeouts no
 * request can mean, numbers in quotes or in hex in a campaign, nesting no
 * campaign needs, and workload files a dry run can already see are missing. */
#include "support.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A listening socket nobody accepts on: a connection made to it waits in
 * its queue, where no_connection() looks for it. */
static int listener(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 64) == 0);
    CHECK(getsockname(fd, (struct sockaddr *)&sa, &sl) == 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static int no_connection(int fd) {
    int c = accept(fd, NULL, NULL);
    if (c >= 0)
        close(c);
    return c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* `servelab run --quiet ARGS` against the listener: exit 2, the message
 * holds `want`, one line, and nothing connected. */
static void refused(const char *args, const char *want) {
    int port, fd = listener(&port);
    char *dir = temp_dir(), cmd[4096], *out;
    snprintf(cmd, sizeof cmd,
             "run --quiet --no-sampling --url http://127.0.0.1:%d --requests 5 --out %s/r %s", port,
             dir, args);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2, "%s: exit %d: %s", args, code, out);
    CHECK_MSG(strstr(out, want) != NULL, "%s: want '%s' in: %s", args, want, out);
    CHECK_MSG(strchr(out, '\n') == strrchr(out, '\n'), "%s: more than one line: %s", args, out);
    CHECK_MSG(no_connection(fd), "%s: a connection was made", args);
    close(fd);
}

TEST(input_bad_urls_refused_before_traffic) {
    static const struct {
        const char *url, *want;
    } cases[] = {{"http://127.0.0.1:99999", "the port is not in 1-65535"},
                 {"http://[::1", "the host's '[' is not closed"},
                 {"'http://127.0.0.1:8000 '", "a space or a control character"},
                 {"http://:80/", "no host"},
                 {"http://h:8x", "the port is not a number"},
                 {"ftp://h", "expected a URL starting with http:// or https://"},
                 {"'http://u:secret@h:0'", "<redacted>"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *dir = temp_dir(), cmd[1024], *out;
        snprintf(cmd, sizeof cmd, "run --quiet --url %s --out %s/r", cases[i].url, dir);
        CHECK_MSG(servelab_cmd(cmd, &out) == 2, "%s accepted", cases[i].url);
        CHECK_MSG(strstr(out, cases[i].want) && !strstr(out, "secret"), "%s: %s", cases[i].url,
                  out);
    }
}

TEST(input_bad_headers_slos_and_schedules_refused_before_traffic) {
    refused("--header \"$(printf 'X-A: 1\\r\\nX-B: 2')\"", "may not hold CR or LF");
    refused("--slo ttft=500", "with a unit");
    refused("--slo ttft=1s,ttft=2s", "ttft is given twice");
    refused("--slo ttft=infms", "with a unit");
    refused("--rate 1e-300", "would take more than 7 days");
    refused("--rate 10 --duration 1e15", "--duration: 1e+15 is too large");
    refused("--timeout 1e300", "--timeout: 1e+300 is too large");
    refused("--rate 0x10", "--rate: expected a positive number or inf, got '0x10'");
    refused("--rate nan", "--rate: expected a positive number or inf, got 'nan'");
    refused("--requests ' 5'", "--requests: expected an integer >= 1, got ' 5'");
}

/* A campaign file's error: exit 2, one line starting FILE:LINE: */
static void campaign_refused(const char *yaml, const char *want) {
    char *dir = temp_dir(), path[1024], cmd[2048], *out;
    snprintf(path, sizeof path, "%s/c.yaml", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(yaml, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sweep --dry-run %s", path);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 2 && strstr(out, want), "exit %d, want '%s': %s", code, want, out);
}

TEST(input_campaign_numbers_in_quotes_or_hex_refused) {
#define HEAD "name: t\ntarget: {url: http://127.0.0.1:1}\n"
    campaign_refused(HEAD "rate: '5'\nruns: [{name: a}]\n",
                     "c.yaml:3: rate: expected a positive number or inf, got the string '5'");
    campaign_refused(HEAD "rate: 0x10\nruns: [{name: a}]\n",
                     "c.yaml:3: rate: expected a positive number or inf, got '0x10'");
    campaign_refused(HEAD "requests: \"120\"\nruns: [{name: a}]\n",
                     "c.yaml:3: requests: expected an integer >= 1, got the string '120'");
    campaign_refused(HEAD "workload: {ignore_eos: 'true'}\nruns: [{name: a}]\n",
                     "c.yaml:3: workload.ignore_eos: expected true or false, got the string");
    campaign_refused(HEAD "slo: {ttft_ms: '750'}\nruns: [{name: a}]\n",
                     "c.yaml:3: slo.ttft_ms: expected a number > 0, got the string '750'");
    campaign_refused("name: t\ntarget:\n  sim: {kv_blocks: '900'}\nruns: [{name: a}]\n",
                     "c.yaml:3: target.sim.kv_blocks: expected an integer >= 1, got the string");
}

TEST(input_campaign_schedule_of_more_than_a_week_refused) {
    campaign_refused(HEAD "runs: [{name: a, rate: 1e-300}]\n",
                     "c.yaml:3: runs[0]: 100 requests at 1e-300/s would take more than 7 days");
}

TEST(input_campaign_nesting_is_bounded) {
    size_t n = 100000;
    char *yaml = malloc(2 * n + 256), *w = yaml;
    w += sprintf(w, HEAD "workload: ");
    for (size_t i = 0; i < n; i++)
        *w++ = '[';
    for (size_t i = 0; i < n; i++)
        *w++ = ']';
    sprintf(w, "\nruns: [{name: a}]\n");
    campaign_refused(yaml, "c.yaml:3: nested deeper than 32 levels");
    free(yaml);
}

/* A dry run already loads every run's workload: a missing prompts file is
 * named with its run, and the dry run exits 2. */
TEST(input_dry_run_checks_workload_files) {
    campaign_refused(HEAD "runs:\n  - {name: a}\n"
                          "  - {name: b, workload: {prompts: /no/such/prompts.jsonl}}\n",
                     "runs[1] (b): --prompts /no/such/prompts.jsonl: cannot open");
    campaign_refused(HEAD "workload: {mix: {short: 1, huge: 2}}\nruns: [{name: a}]\n",
                     "runs[0] (a): --mix: unknown class 'huge'");
}

/* A schedule whose rows cannot fit in the memory the process may use is
 * refused before any traffic, with the arithmetic (round 3's C5: 10^8
 * requests reserved 13.6 GB of rows up front and aborted under a 4 GB
 * limit, in run and in predict). */
TEST(input_a_schedule_whose_rows_cannot_fit_in_memory_refused) {
    if (servelab_is_sanitized())
        return; /* AddressSanitizer's shadow memory does not fit under ulimit -v */
    int port, fd = listener(&port);
    char *dir = temp_dir(), cmd[4096];
    const char *how[] = {"run --url http://127.0.0.1:%d", "predict"};
    for (int i = 0; i < 2; i++) {
        char head[200];
        snprintf(head, sizeof head, how[i], port);
        snprintf(cmd, sizeof cmd,
                 "ulimit -v 4000000; exec %s %s --quiet --requests 100000000 --rate 1000 --out "
                 "%s/o%d 2>&1",
                 servelab_bin(), head, dir, i);
        int code;
        char *out = run_capture(cmd, &code);
        CHECK_MSG(code == 2 && strstr(out, "GB of rows") && strstr(out, "RLIMIT_AS") &&
                      strchr(out, '\n') == strrchr(out, '\n'),
                  "%s: exit %d: %s", how[i], code, out);
        free(out);
    }
    CHECK(no_connection(fd));
    close(fd);
    free(dir);
}
