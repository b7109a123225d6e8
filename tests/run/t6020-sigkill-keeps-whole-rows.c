/* run_kill: what a run killed with SIGKILL leaves. Every request row it
 * kept has every one of its chunk rows in chunks.csv (they go to disk
 * before the request row), so the inter-token data of a kept row is never
 * lost, and no line of either file is torn. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KILL_REQUESTS 1000

/* Chunk rows per request index, from chunks.csv. */
static int *chunk_counts(const char *dir) {
    char p[1200];
    snprintf(p, sizeof p, "%s/chunks.csv", dir);
    csv_table *t = csv_read(p); /* fails on any torn line */
    CHECK_MSG(t != NULL, "no %s", p);
    int *count = calloc(KILL_REQUESTS, sizeof *count);
    for (int i = 0; i < t->n_rows; i++) {
        const char *id = csv_get(t, i, "request_id");
        CHECK_MSG(!strncmp(id, "req-", 4), "chunk row %d: id %s", i + 2, id);
        int k = atoi(id + 4);
        CHECK(k >= 0 && k < KILL_REQUESTS);
        CHECK_INT(atoi(csv_get(t, i, "index")), count[k]); /* in order, none missing */
        count[k]++;
    }
    csv_free(t);
    return count;
}

TEST(run_sigkill_keeps_the_chunks_of_every_request_row) {
    char *dir = temp_dir();
    sim_proc p = sim_start(NULL);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "exec %s run --quiet --url http://127.0.0.1:%d --rate 100 --requests %d "
             "--prompts random:8:8 --ignore-eos --out %s/run",
             servelab_bin(), p.port, KILL_REQUESTS, dir);
    pid_t pid = spawn_sh(cmd, PROC_DEVNULL, PROC_DEVNULL);
    usleep(1500000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    sim_stop(&p);
    char run[1100], path[1200];
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(path, sizeof path, "%s/requests.csv", run);
    csv_table *t = csv_read(path);
    CHECK_MSG(t != NULL, "no %s", path);
    CHECK_MSG(t->n_rows > 50 && t->n_rows < KILL_REQUESTS, "%d rows", t->n_rows);
    int *count = chunk_counts(run);
    int with_chunks = 0;
    for (int i = 0; i < t->n_rows; i++) {
        const char *id = csv_get(t, i, "request_id");
        int k = atoi(id + 4), want = atoi(csv_get(t, i, "chunks"));
        with_chunks += want > 0;
        CHECK_MSG(count[k] == want, "%s: %d chunk rows in chunks.csv, its row says %d", id,
                  count[k], want);
    }
    CHECK_MSG(with_chunks > 50, "%d rows with chunks", with_chunks);
    free(count);
    csv_free(t);
    free(dir);
}
