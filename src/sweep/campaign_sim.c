/* campaign_sim: `sweep --target sim`, a loaded campaign made to run
 * against its target.sim instead of its managed server, and with --speedup
 * K every run scaled to the simulator running K times faster (see
 * campaign.h). Its own file because it edits a campaign after the loader
 * is done with it, as campaign_metadata.c does. */
#include "sweep/campaign.h"
#include "common/strbuf.h"
#include "model/slo.h"

#include <stdio.h>

static int run_on_sim(campaign *c, campaign_run *r, double k, char *err, int errlen) {
    if (r->sim_args)
        r->server_args = r->sim_args;
    else if (c->target == TARGET_SERVER || c->target == TARGET_VLLM)
        r->server_args = "";
    if (k == 1)
        return 0;
    run_opts *p = &r->p;
    if (p->rate_plan || p->replay) {
        snprintf(err, errlen, "run %s: --speedup cannot scale a %s", r->name ? r->name : "(top)",
                 p->rate_plan ? "rate_plan" : "replay");
        return -1;
    }
    p->rate *= k; /* inf stays inf */
    p->duration_s /= k;
    p->think_time_s /= k;
    p->timeout_s /= k;
    r->slo.ttft_ms /= k;
    r->slo.tpot_ms /= k;
    r->slo.e2e_ms /= k;
    r->slo.ttfa_ms /= k;
    char slo[256];
    slo_format(&r->slo, slo, sizeof slo);
    p->slo = slo[0] ? campaign_keep(c, slo) : NULL;
    return 0;
}

int campaign_use_sim(campaign *c, double speedup, char *err, int errlen) {
    if (!c->has_sim) {
        snprintf(err, errlen, "%s: --target sim: the campaign's target has no sim: key",
                 c->path ? c->path : c->name);
        return -1;
    }
    for (int i = 0; i < c->n_runs; i++)
        if (run_on_sim(c, &c->runs[i], speedup, err, errlen))
            return -1;
    if (run_on_sim(c, &c->defaults, speedup, err, errlen))
        return -1;
    if (speedup != 1) {
        char add[64];
        snprintf(add, sizeof add, "%s--speedup %g", c->sim_args[0] ? " " : "", speedup);
        strbuf b = {0};
        sb_printf(&b, "%s%s", c->sim_args, add);
        c->sim_args = campaign_keep(c, b.s);
        sb_free(&b);
    }
    c->target = TARGET_SIM;
    return 0;
}
