/* campaign_metadata: `sweep --metadata KEY=VALUE`, added to every run of a
 * loaded campaign (see campaign.h). Its own file because it edits a
 * campaign after the loader is done with it. */
#include "run/run.h"
#include "sweep/campaign.h"

#include <stdio.h>
#include <string.h>

static int has_key(const opt_list *l, const char *kv) {
    size_t k = (size_t)(strchr(kv, '=') - kv);
    for (int i = 0; i < l->n; i++)
        if (!strncmp(l->v[i], kv, k + 1))
            return 1;
    return 0;
}

int campaign_add_metadata(campaign *c, const char *kv, char *err, int errlen) {
    const opt_def *row = opt_find(run_options, "metadata");
    char why[256];
    if (row->check && row->check(kv, why, sizeof why)) {
        snprintf(err, (size_t)errlen, "--metadata: %s", why);
        return -1;
    }
    const char *mine = campaign_keep(c, kv);
    for (int i = -1; i < c->n_runs; i++) {
        opt_list *l = i < 0 ? &c->defaults.p.metadata : &c->runs[i].p.metadata;
        if (has_key(l, kv))
            continue;
        if (l->n == OPT_LIST_MAX) {
            snprintf(err, (size_t)errlen, "--metadata: more than %d entries for a run",
                     OPT_LIST_MAX);
            return -1;
        }
        l->v[l->n++] = mine;
    }
    return 0;
}
