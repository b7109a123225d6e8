/* summary_keys: the tables of rundir/summary_keys.h made from its rows. */
#include "rundir/summary_keys.h"

#define RUNDIR_KEY(name, type, unit, always, meaning) {#name, type, unit, always, meaning},

static const rundir_key summary_keys[] = {RUNDIR_SUMMARY_KEYS(RUNDIR_KEY)};
static const rundir_key client_keys[] = {RUNDIR_CLIENT_KEYS(RUNDIR_KEY)};

const rundir_keys rundir_summary_keys = {"summary.json", summary_keys,
                                         (int)(sizeof summary_keys / sizeof *summary_keys)};
const rundir_keys rundir_client_keys = {"client", client_keys,
                                        (int)(sizeof client_keys / sizeof *client_keys)};

void rundir_keys_fill(json_t *obj, const rundir_keys *k) {
    for (int i = 0; i < k->n; i++)
        if (k->key[i].always && !json_object_get(obj, k->key[i].name))
            json_object_set_new(obj, k->key[i].name, json_null());
}
