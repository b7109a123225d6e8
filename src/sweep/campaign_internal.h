/* campaign_internal: what the campaign loader's two files share; nothing
 * outside them includes it (campaign.h is the interface). campaign.c reads
 * the document (the top level, each run's keys, the runs) and hands the
 * target: map to campaign_target.c; both check a map's keys against lists
 * built from the option tables before reading it. */
#ifndef SERVELAB_CAMPAIGN_INTERNAL_H
#define SERVELAB_CAMPAIGN_INTERNAL_H

#include "common/opt.h"
#include "common/yamlread.h"
#include "sweep/campaign.h"

#include <stddef.h>

/* The most keys one kind of map may know. */
#define CAMPAIGN_MAX_KEYS 64

/* The load: the reader and the known keys of each kind of map, built from
 * the tables. */
typedef struct loader {
    yread y;
    campaign *c;
    const yaml_node_t *repetitions_at; /* the top level's repetitions key, if any */
    long long run_dirs;                /* runs x repetitions so far */
    const char *top_keys[CAMPAIGN_MAX_KEYS], *run_keys[CAMPAIGN_MAX_KEYS],
        *workload_keys[CAMPAIGN_MAX_KEYS], *server_keys[CAMPAIGN_MAX_KEYS];
} loader;

/* campaign.c */

/* Adds the first `len` bytes of `key` to the NULL-ended list, once. */
void campaign_add_key(yread *y, const char **keys, const char *key, size_t len);
/* Top-level names of a table's keys ("workload" for "workload.mix"); with
 * `under`, the names below that prefix instead. */
void campaign_keys_of(yread *y, const char **keys, const opt_def *table, const char *under);

/* campaign_target.c */

/* l->server_keys: the keys target.server may have. */
void campaign_target_keys(loader *l);
/* target: one of url, sim, server; or server with a sim that stands in for
 * it (sweep --target sim). 0, or -1 with the reader's error. */
int campaign_target_read(loader *l, const yaml_node_t *tk, const yaml_node_t *t);

#endif
