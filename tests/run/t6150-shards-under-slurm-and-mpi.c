/* Sharding under the launchers users run: a one-node Slurm cluster started
 * on this machine (scripts/slurm_cluster.sh: munged, slurmctld, slurmd),
 * then `srun -n 4 -O servelab run --shard auto --start-at EPOCH` against
 * the simulator, the four shards merged and the merged run's report checked
 * against its rows; and the same under Open MPI's `mpirun -np 4`. Where
 * Slurm (or mpirun) is not installed a test says so and passes only when
 * SERVELAB_REQUIRE_SLURM (SERVELAB_REQUIRE_MPI) is unset: .ci/run installs
 * both and sets both, so there they must run. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The four shards in dir/shard-0..3 took their ranks from `source`; merged
 * (given in reverse order when `reversed`), they are one run of 120 rows,
 * req-0 to req-119, none failed, whose report regenerates from its rows. */
static void merged_shards_are_one_run(const char *dir, const char *source, int reversed) {
    char cmd[4096], p[1200], want[96], *out;
    snprintf(want, sizeof want, "\"source\": \"%s\"", source);
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/shard-%d/meta.json", dir, i);
        char *meta = read_file(p, NULL);
        CHECK_MSG(meta && strstr(meta, want), "shard %d did not take its rank from %s", i, source);
        free(meta);
    }
    int o[4] = {0, 1, 2, 3}, r[4] = {3, 2, 1, 0};
    const int *k = reversed ? r : o;
    snprintf(cmd, sizeof cmd,
             "merge %s/shard-%d %s/shard-%d %s/shard-%d %s/shard-%d --out %s/merged", dir, k[0],
             dir, k[1], dir, k[2], dir, k[3], dir);
    servelab_ok(cmd);
    snprintf(p, sizeof p, "%s/merged/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK(t != NULL);
    CHECK_INT(t->n_rows, 120);
    for (int i = 0; i < t->n_rows; i++) {
        char id[32];
        snprintf(id, sizeof id, "req-%d", i);
        CHECK_STR(csv_get(t, i, "request_id"), id);
        CHECK_STR(csv_get(t, i, "error"), "");
    }
    csv_free(t);
    snprintf(cmd, sizeof cmd, "report %s/merged", dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "report %s/merged --check", dir);
    int code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    free(out);
}

TEST_SLOW(slurm_srun_four_shards_merge_into_one_run) {
    char *dir = temp_dir(), cmd[4096];
    int code;
    snprintf(cmd, sizeof cmd, "sh scripts/slurm_cluster.sh start %s/cluster 2>&1", dir);
    char *conf = run_capture(cmd, &code);
    if (code == 3 && !getenv("SERVELAB_REQUIRE_SLURM")) {
        printf("  not run: %s", conf); /* Slurm or root is missing here */
        free(conf);
        return;
    }
    CHECK_MSG(code == 0, "the cluster did not start: %s", conf);
    conf[strcspn(conf, "\n")] = 0;
    sim_proc sim = sim_start("--profile tiny --max-num-seqs 256");
    long long at = (long long)time(NULL) + 4;
    snprintf(cmd, sizeof cmd,
             "SLURM_CONF=%s srun -n 4 -O sh -c 'exec %s run --url http://127.0.0.1:%d "
             "--prompts random:16:8 --ignore-eos --rate 100 --requests 120 --seed 9 --quiet "
             "--no-sampling --shard auto --start-at %lld --out %s/shard-$SLURM_PROCID' 2>&1",
             conf, servelab_bin(), sim.port, at, dir);
    char *srun = run_capture(cmd, &code);
    snprintf(cmd, sizeof cmd, "sh scripts/slurm_cluster.sh stop %s/cluster", dir);
    int stop_code;
    free(run_capture(cmd, &stop_code));
    CHECK_MSG(code == 0, "srun exit %d: %s", code, srun);
    free(srun);
    merged_shards_are_one_run(dir, "SLURM_PROCID", 0);
    free(conf);
    sim_stop(&sim);
}

/* The same under Open MPI's launcher: `mpirun -np 4`, the rank from
 * OMPI_COMM_WORLD_RANK. Where mpirun is not installed the test says so and
 * passes only when SERVELAB_REQUIRE_MPI is unset (.ci/run installs Debian's
 * openmpi-bin and sets it). */
TEST_SLOW(mpirun_four_shards_merge_into_one_run) {
    char *dir = temp_dir(), cmd[4096];
    int code;
    char *where = run_capture("command -v mpirun", &code);
    if (code != 0 && !getenv("SERVELAB_REQUIRE_MPI")) {
        printf("  not run: mpirun is not installed (apt-get install openmpi-bin)\n");
        free(where);
        return;
    }
    free(where);
    CHECK_MSG(code == 0, "mpirun is not installed, and SERVELAB_REQUIRE_MPI is set");
    sim_proc sim = sim_start("--profile tiny --max-num-seqs 256");
    long long at = (long long)time(NULL) + 4;
    snprintf(cmd, sizeof cmd,
             "mpirun --allow-run-as-root --oversubscribe -np 4 sh -c 'exec %s run --url "
             "http://127.0.0.1:%d --prompts random:16:8 --ignore-eos --rate 100 --requests 120 "
             "--seed 9 --quiet --no-sampling --shard auto --start-at %lld --out "
             "%s/shard-$OMPI_COMM_WORLD_RANK' 2>&1",
             servelab_bin(), sim.port, at, dir);
    char *run = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "mpirun exit %d: %s", code, run);
    free(run);
    merged_shards_are_one_run(dir, "OMPI_COMM_WORLD_RANK", 1);
    sim_stop(&sim);
}
