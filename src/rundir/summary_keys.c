/* summary_keys: the tables of rundir/summary_keys.h made from its rows, the
 * null a key gets when its writer cannot know it, and a merge's `client`
 * made from its shards' by each key's rule. */
#include "rundir/summary_keys.h"

#include <stdio.h>

#define RUNDIR_KEY(name, type, unit, always, meaning)                                              \
    {#name, type, unit, always, RUNDIR_MERGE_ROWS, meaning},
#define RUNDIR_CLIENT_KEY(name, type, unit, merge, meaning) {#name, type, unit, 1, merge, meaning},

static const rundir_key summary_keys[] = {RUNDIR_SUMMARY_KEYS(RUNDIR_KEY)};
static const rundir_key client_keys[] = {RUNDIR_CLIENT_KEYS(RUNDIR_CLIENT_KEY)};

const rundir_keys rundir_summary_keys = {"summary.json", summary_keys,
                                         (int)(sizeof summary_keys / sizeof *summary_keys)};
const rundir_keys rundir_client_keys = {"client", client_keys,
                                        (int)(sizeof client_keys / sizeof *client_keys)};

void rundir_keys_fill(json_t *obj, const rundir_keys *k) {
    for (int i = 0; i < k->n; i++)
        if (k->key[i].always && !json_object_get(obj, k->key[i].name))
            json_object_set_new(obj, k->key[i].name, json_null());
}

const char *rundir_merge_words(rundir_merge m) {
    switch (m) {
    case RUNDIR_MERGE_ROWS: return "from the merged rows";
    case RUNDIR_MERGE_SUM: return "the shards' sum";
    case RUNDIR_MERGE_MAX: return "the shards' largest";
    case RUNDIR_MERGE_ALL: return "`true` when every shard's is";
    case RUNDIR_MERGE_NONE: return "`null`";
    case RUNDIR_MERGE_NOTES: return "every shard's, each line after `shard I: `";
    }
    return "";
}

/* One key by a numeric or boolean rule over the shards: null as soon as a
 * shard lacks a value. */
static json_t *combine(json_t *const *shards, int n, const char *key, rundir_merge m) {
    double acc = m == RUNDIR_MERGE_ALL ? 1 : 0;
    int integers = 1;
    for (int i = 0; i < n; i++) {
        json_t *v = json_object_get(shards[i], key);
        if (m == RUNDIR_MERGE_ALL ? !json_is_boolean(v) : !json_is_number(v))
            return json_null();
        integers &= json_is_integer(v);
        double x = m == RUNDIR_MERGE_ALL ? json_is_true(v) : json_number_value(v);
        acc = m == RUNDIR_MERGE_SUM   ? acc + x
              : m == RUNDIR_MERGE_MAX ? (i == 0 || x > acc ? x : acc)
                                      : (acc && x);
    }
    if (m == RUNDIR_MERGE_ALL)
        return json_boolean(n > 0 && acc);
    return n == 0 ? json_null() : integers ? json_integer((json_int_t)acc) : json_real(acc);
}

/* Every shard's lines, each named by its shard (its place in index order). */
static json_t *notes_of(json_t *const *shards, int n, const char *key) {
    json_t *all = json_array();
    for (int i = 0; i < n; i++) {
        size_t k;
        json_t *line;
        json_array_foreach(json_object_get(shards[i], key), k, line) {
            char text[1200];
            snprintf(text, sizeof text, "shard %d: %s", i, json_string_value(line) ?: "");
            json_array_append_new(all, json_string(text));
        }
    }
    return all;
}

json_t *rundir_client_merge(json_t *const *shards, int n) {
    json_t *o = json_object();
    for (int i = 0; i < rundir_client_keys.n; i++) {
        const rundir_key *k = &rundir_client_keys.key[i];
        json_t *v = k->merge == RUNDIR_MERGE_ROWS    ? NULL
                    : k->merge == RUNDIR_MERGE_NONE  ? json_null()
                    : k->merge == RUNDIR_MERGE_NOTES ? notes_of(shards, n, k->name)
                                                     : combine(shards, n, k->name, k->merge);
        if (v)
            json_object_set_new(o, k->name, v);
    }
    return o;
}
