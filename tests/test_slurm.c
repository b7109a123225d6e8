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

TEST_SLOW(slurm_srun_four_shards_merge_into_one_run) {
    char *dir = temp_dir(), cmd[4096], *out;
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
    for (int i = 0; i < 4; i++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/shard-%d/meta.json", dir, i);
        char *meta = read_file(p, NULL);
        CHECK_MSG(meta && strstr(meta, "\"source\": \"SLURM_PROCID\""),
                  "shard %d did not take its rank from Slurm", i);
        free(meta);
    }
    snprintf(cmd, sizeof cmd, "merge %s/shard-0 %s/shard-1 %s/shard-2 %s/shard-3 --out %s/merged",
             dir, dir, dir, dir, dir);
    servelab_ok(cmd);
    char p[1200];
    snprintf(p, sizeof p, "%s/merged/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK(t != NULL);
    CHECK_INT(t->n_rows, 120);
    for (int i = 0; i < t->n_rows; i++) {
        char want[32];
        snprintf(want, sizeof want, "req-%d", i);
        CHECK_STR(csv_get(t, i, "request_id"), want);
        CHECK_STR(csv_get(t, i, "error"), "");
    }
    csv_free(t);
    snprintf(cmd, sizeof cmd, "report %s/merged", dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "report %s/merged --check", dir);
    code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    free(conf);
    sim_stop(&sim);
}

/* The same under Open MPI's launcher: `mpirun -np 4`, the rank from
 * OMPI_COMM_WORLD_RANK. Where mpirun is not installed the test says so and
 * passes only when SERVELAB_REQUIRE_MPI is unset (.ci/run installs Debian's
 * openmpi-bin and sets it). */
TEST_SLOW(mpirun_four_shards_merge_into_one_run) {
    char *dir = temp_dir(), cmd[4096], *out;
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
    for (int i = 0; i < 4; i++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/shard-%d/meta.json", dir, i);
        char *meta = read_file(p, NULL);
        CHECK_MSG(meta && strstr(meta, "\"source\": \"OMPI_COMM_WORLD_RANK\""),
                  "shard %d did not take its rank from Open MPI", i);
        free(meta);
    }
    snprintf(cmd, sizeof cmd, "merge %s/shard-3 %s/shard-2 %s/shard-1 %s/shard-0 --out %s/merged",
             dir, dir, dir, dir, dir);
    servelab_ok(cmd);
    char p[1200];
    snprintf(p, sizeof p, "%s/merged/requests.csv", dir);
    csv_table *t = csv_read(p);
    CHECK(t != NULL);
    CHECK_INT(t->n_rows, 120);
    for (int i = 0; i < t->n_rows; i++)
        CHECK_STR(csv_get(t, i, "error"), "");
    csv_free(t);
    snprintf(cmd, sizeof cmd, "report %s/merged", dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "report %s/merged --check", dir);
    code = servelab_cmd(cmd, &out);
    CHECK_MSG(code == 0, "%s", out);
    sim_stop(&sim);
}
