/* fuzz_campaign: libFuzzer target for the sweep campaign loader
 * (sweep/campaign.h, campaign_load_string).
 *
 * The input is the YAML text (cut at a NUL byte, as a C string would be).
 * A campaign that loads must be as campaign.h promises: a target of the
 * kind it says with what that kind needs, at least one run, each with a name
 * that can be a directory, either a request count or a duration (and then a
 * finite rate), and positive limits. A campaign that does not load must say
 * why in one line that starts with the file name. */
#include "fuzz_common.h"
#include "sweep/campaign.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void check_params(const campaign_run *r) {
    const run_opts *p = &r->p;
    FUZZ_CHECK(p->api && (!strcmp(p->api, "completions") || !strcmp(p->api, "chat")));
    FUZZ_CHECK(p->prompts && p->arrival && r->server_args);
    FUZZ_CHECK((p->requests > 0) != (p->duration_s > 0));
    FUZZ_CHECK(p->requests >= 0 && p->duration_s >= 0);
    FUZZ_CHECK(p->rate > 0);
    FUZZ_CHECK(p->burstiness > 0 && p->timeout_s > 0 && run_metrics_interval_s(p, 1) > 0);
    FUZZ_CHECK(r->repetitions >= 1 && p->concurrency >= 0 && p->warmup >= 0);
    FUZZ_CHECK(p->max_tokens >= 0 && p->cost_per_hour >= 0);
}

static void check_campaign(const campaign *c) {
    FUZZ_CHECK(c->name && c->path);
    switch (c->target) {
    case TARGET_URL: FUZZ_CHECK(c->url && !strncmp(c->url, "http", 4)); break;
    case TARGET_SIM: FUZZ_CHECK(c->sim_profile && c->sim_args); break;
    case TARGET_SERVER:
        FUZZ_CHECK(c->server_command && strstr(c->server_command, "{port}"));
        FUZZ_CHECK(c->health_path && c->health_path[0] == '/');
        break;
    default: FUZZ_CHECK(!"unknown target kind");
    }
    FUZZ_CHECK(c->n_runs >= 1 && c->runs);
    for (int i = 0; i < c->n_runs; i++) {
        const campaign_run *r = &c->runs[i];
        FUZZ_CHECK(r->name && *r->name && strspn(r->name, ".") != strlen(r->name));
        FUZZ_CHECK(strspn(r->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789._-") == strlen(r->name));
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(c->runs[j].name, r->name) != 0);
        check_params(r);
        if (r->p.duration_s > 0)
            FUZZ_CHECK(isfinite(r->p.rate));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *yaml = malloc(size + 1);
    memcpy(yaml, data, size);
    yaml[size] = '\0';
    campaign c;
    char err[512] = "";
    if (campaign_load_string(yaml, "fuzz.yaml", &c, err, sizeof err) == 0) {
        check_campaign(&c);
        campaign_free(&c);
    } else {
        FUZZ_CHECK(!strncmp(err, "fuzz.yaml:", 10));
        FUZZ_CHECK(strchr(err, '\n') == NULL);
        /* a failed load leaves nothing to free, and freeing again is harmless */
        campaign_free(&c);
    }
    free(yaml);
    return 0;
}
