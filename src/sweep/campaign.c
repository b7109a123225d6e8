/* campaign: the schema of a sweep's YAML file (see campaign.h for the
 * resolved form; yamlread.c does the strict reading): the document's top
 * level, each run's keys over the defaults, the runs, and the campaign's
 * lifetime (load, keep, free). Its target: map is campaign_target.c's;
 * what edits a loaded campaign is campaign_metadata.c's and
 * campaign_sim.c's.
 *
 * Every value is parsed by an option row (common/opt.h): a run's keys by
 * run_options and campaign_run_keys, target.sim's by sim_options, the rest
 * (target.server's in campaign_target.c, mix weights here) by small tables,
 * the slo by model/slo.h (its text form, "ttft=750ms,tpot=100ms", is
 * --slo's). So the checks and their words are those of the command line.
 *
 * Resolution: the top-level keys fill campaign.defaults; each run starts from
 * a copy of them and applies its own keys on top, so workload and slo
 * override key by key (an slo in the text form replaces every bound). requests and duration exclude
 * each other: a map that sets one clears the other it inherited.
 *
 * The first error stops the load. Its message is one line,
 * "PATH:LINE: KEY: what is wrong", where KEY is a dotted path (runs[2].rate)
 * and LINE the line of that key; a missing key is reported at the line of
 * the map that lacks it, with the map's path as KEY. */
#include "sweep/campaign.h"
#include "sweep/campaign_internal.h"
#include "common/files.h"
#include "common/strbuf.h"
#include "model/slo.h"
#include "common/util.h"
#include "common/yamlread.h"
#include "workload/arrivals.h"
#include "workload/rate_plan.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CR(field) OPT_AT(campaign_run, field)
const opt_def campaign_run_keys[] = {
    {.name = "repetitions",
     .key = "repetitions",
     .meta = "repetitions",
     .type = OPT_INT,
     CR(repetitions),
     .key_only = 1,
     .arg = "N",
     .min = 1,
     .max = INT_MAX,
     .def = "1",
     .help = "how many times the run is repeated; repetition K uses seed + K - 1"},
    {.name = "server_args",
     .key = "server_args",
     .meta = "server_args",
     .type = OPT_STRING,
     CR(server_args),
     .key_only = 1,
     .arg = "ARGS",
     .empty_ok = 1,
     .def = "",
     .help = "arguments for the managed server ({server_args}) or the simulator"},
    {.name = "sim_args",
     .key = "sim_args",
     .meta = "sim_args",
     .type = OPT_STRING,
     CR(sim_args),
     .key_only = 1,
     .arg = "ARGS",
     .empty_ok = 1,
     .help = "the simulator's arguments for the run when it stands in for the server "
             "(sweep --target sim)"},
    {0}};

/* One map of options (the top level or a run) while it is read. */
typedef struct level {
    campaign_run *run;
    const yaml_node_t *requests_at; /* this map's own requests key, if any */
    const yaml_node_t *duration_at;
} level;

typedef struct mix_weight {
    double w;
} mix_weight;
static const opt_def weight_row = {.name = "weight", .type = OPT_NUMBER, OPT_AT(mix_weight, w)};

#define CAMPAIGN(field) OPT_AT(campaign, field)
static const opt_def name_row = {.name = "name", .type = OPT_STRING, CAMPAIGN(name)};

/* shards: auto, or a count of 1 to 100000, in digits (as sweep --shard). */
static int shards_check(const char *text, char *err, size_t errlen) {
    long n;
    if (!strcmp(text, "auto") || (strspn(text, "0123456789") == strlen(text) &&
                                  !parse_int(text, &n) && n >= 1 && n <= 100000))
        return 0;
    snprintf(err, errlen, "expected auto or a number of shards from 1 to 100000, got '%.60s'",
             text);
    return -1;
}
static const opt_def shards_row = {
    .name = "shards", .type = OPT_STRING, CAMPAIGN(shards), .check = shards_check};

/* Adds the first `len` bytes of `key` to the NULL-ended list, once. */
void campaign_add_key(yread *y, const char **keys, const char *key, size_t len) {
    int n = 0;
    while (keys[n] && (strlen(keys[n]) != len || strncmp(keys[n], key, len)))
        n++;
    if (keys[n] || n == CAMPAIGN_MAX_KEYS - 1)
        return;
    char name[KEY_PATH_LEN];
    snprintf(name, sizeof name, "%.*s", (int)len, key);
    keys[n] = yread_keep(y, name);
}

/* Top-level names of a table's keys ("workload" for "workload.mix"); with
 * `under`, the names below that prefix instead. */
void campaign_keys_of(yread *y, const char **keys, const opt_def *table, const char *under) {
    size_t ul = under ? strlen(under) : 0;
    for (const opt_def *d = table; d->name; d++) {
        if (!d->key || (under && strncmp(d->key, under, ul)))
            continue;
        const char *k = under ? d->key + ul : d->key;
        const char *dot = strchr(k, '.');
        campaign_add_key(y, keys, k, dot ? (size_t)(dot - k) : strlen(k));
    }
}

static void build_keys(loader *l) {
    yread *y = &l->y;
    campaign_add_key(y, l->top_keys, "name", 4);
    campaign_add_key(y, l->top_keys, "target", 6);
    campaign_keys_of(y, l->top_keys, run_options, NULL);
    campaign_keys_of(y, l->top_keys, campaign_run_keys, NULL);
    campaign_add_key(y, l->top_keys, "runs", 4);
    campaign_add_key(y, l->top_keys, "shards", 6);
    campaign_add_key(y, l->run_keys, "name", 4);
    campaign_keys_of(y, l->run_keys, run_options, NULL);
    campaign_keys_of(y, l->run_keys, campaign_run_keys, NULL);
    campaign_keys_of(y, l->workload_keys, run_options, "workload.");
    campaign_target_keys(l);
}

/* Letters, digits and "._-", as in run names and mix classes (they end up
 * in directory names and in "a=0.5,b=0.5"). */
static int is_word(const char *s) {
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

/* ---- a level's keys ---- */

/* workload.mix: class -> weight >= 0, not all zero, kept as "a=0.5,b=0.3". */
static int read_mix(loader *l, level *lv, const yaml_node_t *mk, const yaml_node_t *m,
                    const char *prefix) {
    yread *y = &l->y;
    if (yread_want_map(y, mk, m, prefix) || yread_check_keys(y, m, prefix, NULL))
        return -1;
    strbuf b = {0};
    double sum = 0;
    int rc = 0;
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top && !rc;
         pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *v = yread_node(y, pr->value);
        char path[KEY_PATH_LEN];
        yread_join(path, prefix, yread_text(k));
        mix_weight mw;
        if (!is_word(yread_text(k)))
            rc = yread_fail(y, k, path, "class names are letters, digits, '.', '_' or '-'");
        else if (!(rc = yread_set(y, k, v, path, &weight_row, &mw))) {
            sum += mw.w;
            sb_printf(&b, "%s%s=%g", b.n ? "," : "", yread_text(k), mw.w);
        }
    }
    if (!rc && !(sum > 0))
        rc = yread_fail(y, mk, prefix, "expected at least one class with a weight > 0");
    if (!rc)
        lv->run->p.mix = yread_keep(y, b.s);
    sb_free(&b);
    return rc;
}

static int read_workload(loader *l, level *lv, const yaml_node_t *wk, const yaml_node_t *w,
                         const char *prefix) {
    yread *y = &l->y;
    if (yread_want_map(y, wk, w, prefix) || yread_check_keys(y, w, prefix, l->workload_keys))
        return -1;
    for (yaml_node_pair_t *pr = w->data.mapping.pairs.start; pr < w->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *v = yread_node(y, pr->value);
        char path[KEY_PATH_LEN], key[KEY_PATH_LEN];
        yread_join(path, prefix, yread_text(k));
        yread_join(key, "workload", yread_text(k));
        int rc = !strcmp(yread_text(k), "mix")
                     ? read_mix(l, lv, k, v, path)
                     : yread_set(y, k, v, path, opt_find_key(run_options, key), &lv->run->p);
        if (rc)
            return -1;
    }
    return 0;
}

/* requests or duration: not both in one map. */
static int read_count(loader *l, level *lv, const yaml_node_t *k, const yaml_node_t *v,
                      const char *path) {
    int is_req = !strcmp(yread_text(k), "requests");
    const yaml_node_t *other = is_req ? lv->duration_at : lv->requests_at;
    if (other)
        return yread_fail(&l->y, k, path, "cannot be combined with %s (line %d): give one of them",
                          is_req ? "duration" : "requests", yread_line(other));
    *(is_req ? &lv->requests_at : &lv->duration_at) = k;
    if (yread_set(&l->y, k, v, path, opt_find_key(run_options, yread_text(k)), &lv->run->p))
        return -1;
    if (is_req && lv->run->p.requests > RATE_PLAN_MAX_REQUESTS)
        return yread_fail(&l->y, k, path, "%lld is too large (at most %d requests a run)",
                          (long long)lv->run->p.requests, RATE_PLAN_MAX_REQUESTS);
    return 0;
}

/* One key (already checked to be known) of a level's map. */
static int apply_key(loader *l, level *lv, const char *prefix, const yaml_node_t *k,
                     const yaml_node_t *v) {
    const char *key = yread_text(k);
    char path[KEY_PATH_LEN];
    yread_join(path, prefix, key);
    if (!strcmp(key, "workload"))
        return read_workload(l, lv, k, v, path);
    if (!strcmp(key, "slo"))
        return slo_read_yaml(&l->y, k, v, path, &lv->run->slo);
    if (!strcmp(key, "requests") || !strcmp(key, "duration"))
        return read_count(l, lv, k, v, path);
    const opt_def *d = opt_find_key(run_options, key);
    if (d)
        return yread_set(&l->y, k, v, path, d, &lv->run->p);
    return yread_set(&l->y, k, v, path, opt_find_key(campaign_run_keys, key), lv->run);
}

/* After a level's map: the requests/duration choice and the slo string. */
static void finish_level(loader *l, level *lv) {
    run_opts *p = &lv->run->p;
    if (lv->duration_at) {
        p->requests = 0;
        p->have_requests = 0;
    }
    if (lv->requests_at) {
        p->duration_s = 0;
        p->have_duration = 0;
    }
    char slo[256];
    slo_format(&lv->run->slo, slo, sizeof slo);
    p->slo = slo[0] ? yread_keep(&l->y, slo) : NULL;
}

/* A copy the campaign owns (freed by campaign_free). */
const char *campaign_keep(campaign *c, const char *text) {
    c->strings = xrealloc(c->strings, (size_t)(c->n_strings + 1) * sizeof *c->strings);
    return c->strings[c->n_strings++] = xstrdup(text);
}

/* ---- runs and the campaign ---- */

/* The names of what a sweep writes in OUT beside the run directories
 * (rundir/outdir.h, sweep/sweep_shards.h): a run of one of these names would
 * share its directory with them, and lose its rows to the next --resume. */
static const char *const sweep_own_names[] = {"report", "servers", "shards", "campaign.json", NULL};

static int read_run_name(loader *l, campaign_run *run, int i, const yaml_node_t *k,
                         const yaml_node_t *v, const char *prefix) {
    yread *y = &l->y;
    char path[KEY_PATH_LEN];
    yread_join(path, prefix, "name");
    opt_def row = {.name = "name", .type = OPT_STRING, OPT_AT(campaign_run, name)};
    if (yread_set(y, k, v, path, &row, run))
        return -1;
    if (!is_word(run->name) || strspn(run->name, ".") == strlen(run->name))
        return yread_fail(y, k, path,
                          "expected letters, digits, '.', '_' or '-' (it names a "
                          "directory), got '%.60s'",
                          run->name);
    if (run->name[0] == '.')
        return yread_fail(y, k, path,
                          "'%.60s' starts with '.': the report and --force skip hidden "
                          "directories, so its rows would be left out; choose another name",
                          run->name);
    for (const char *const *own = sweep_own_names; *own; own++)
        if (!strcmp(run->name, *own))
            return yread_fail(y, k, path,
                              "'%s' is the name of the sweep's own %s in --out (report, "
                              "servers, shards and campaign.json are taken): choose another "
                              "name",
                              run->name, strchr(*own, '.') ? "file" : "folder");
    for (int j = 0; j < i; j++)
        if (!strcmp(l->c->runs[j].name, run->name))
            return yread_fail(y, k, path, "duplicate run name '%s' (first at line %d)", run->name,
                              l->c->runs[j].line);
    return 0;
}

static int read_run(loader *l, int i, const yaml_node_t *r, const level *defaults) {
    yread *y = &l->y;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "runs[%d]", i);
    if (r->type != YAML_MAPPING_NODE)
        return yread_expected(y, r, prefix, r, "a map");
    if (yread_check_keys(y, r, prefix, l->run_keys))
        return -1;
    campaign_run *run = &l->c->runs[i];
    l->c->n_runs = i + 1;
    *run = *defaults->run;
    run->name = NULL;
    run->line = yread_line(r);
    level lv = {.run = run}; /* its slo starts as the defaults' */
    for (yaml_node_pair_t *pr = r->data.mapping.pairs.start; pr < r->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *v = yread_node(y, pr->value);
        int rc = strcmp(yread_text(k), "name") ? apply_key(l, &lv, prefix, k, v)
                                               : read_run_name(l, run, i, k, v, prefix);
        if (rc)
            return -1;
    }
    finish_level(l, &lv);
    if (!run->name)
        return yread_fail(y, r, prefix, "missing required key 'name'");
    if (run->p.duration_s > 0 && isinf(run->p.rate))
        return yread_fail(y, r, prefix, "duration (%gs) needs a finite rate, but rate is inf",
                          run->p.duration_s);
    if (run->p.duration_s <= 0 && isfinite(run->p.rate) &&
        (double)(run->p.requests - 1) / run->p.rate > ARRIVALS_MAX_S)
        return yread_fail(y, r, prefix,
                          "%lld requests at %g/s would take more than %d days to arrive",
                          (long long)run->p.requests, run->p.rate, ARRIVALS_MAX_S / 86400);
    if (run->p.duration_s > 0 && run->p.rate * run->p.duration_s > RATE_PLAN_MAX_REQUESTS)
        return yread_fail(y, r, prefix,
                          "rate %g/s for %gs would schedule about %.3g requests (at most %d a "
                          "run)",
                          run->p.rate, run->p.duration_s, run->p.rate * run->p.duration_s,
                          RATE_PLAN_MAX_REQUESTS);
    return 0;
}

/* The key `name` of map m, or NULL. */
static const yaml_node_t *key_in(yread *y, const yaml_node_t *m, const char *name) {
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        const yaml_node_t *k = yread_node(y, pr->key);
        if (!strcmp(yread_text(k), name))
            return k;
    }
    return NULL;
}

/* Run i's repetitions added to the campaign's run directories, which stop
 * at CAMPAIGN_MAX_RUN_DIRS (a dry run of 2e9 repetitions wrote 3 GB of
 * plan). The error is at the repetitions key that goes over: run i's own,
 * else the top level's it inherits. */
static int count_run_dirs(loader *l, int i, const yaml_node_t *r) {
    l->run_dirs += l->c->runs[i].repetitions;
    if (l->run_dirs <= CAMPAIGN_MAX_RUN_DIRS)
        return 0;
    const yaml_node_t *own = key_in(&l->y, r, "repetitions");
    char path[KEY_PATH_LEN];
    snprintf(path, sizeof path, "runs[%d].repetitions", i);
    const yaml_node_t *at = own ? own : l->repetitions_at ? l->repetitions_at : r;
    return yread_fail(&l->y, at, own || !l->repetitions_at ? path : "repetitions",
                      "the campaign would make %lld run directories (runs x repetitions), "
                      "at most %d",
                      l->run_dirs, CAMPAIGN_MAX_RUN_DIRS);
}

static int read_runs(loader *l, const yaml_node_t *k, const yaml_node_t *v, const level *defaults) {
    if (v->type != YAML_SEQUENCE_NODE)
        return yread_expected(&l->y, k, "runs", v, "a list of runs");
    int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n == 0)
        return yread_fail(&l->y, k, "runs", "expected at least one run");
    l->c->runs = xcalloc((size_t)n, sizeof *l->c->runs);
    for (int i = 0; i < n; i++) {
        const yaml_node_t *r = yread_node(&l->y, v->data.sequence.items.start[i]);
        if (read_run(l, i, r, defaults) || count_run_dirs(l, i, r))
            return -1;
    }
    return 0;
}

static int read_campaign(yread *y, const yaml_node_t *root, void *arg) {
    loader *l = arg;
    campaign *c = l->c;
    const char *what = "a map with name, target and runs";
    if (!root || yread_is_null(root))
        return yread_fail_line(y, 1, NULL, "empty document: expected %s", what);
    if (root->type != YAML_MAPPING_NODE)
        return yread_expected(y, root, NULL, root, what);
    if (yread_check_keys(y, root, "", l->top_keys))
        return -1;
    run_opts_defaults(&c->defaults.p);
    opt_defaults(campaign_run_keys, &c->defaults);
    level lv = {.run = &c->defaults};
    const yaml_node_t *target = NULL, *runs_k = NULL, *runs_v = NULL;
    for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *v = yread_node(y, pr->value);
        const char *key = yread_text(k);
        int rc = 0;
        if (!strcmp(key, "name")) {
            rc = yread_set(y, k, v, "name", &name_row, c);
        } else if (!strcmp(key, "target")) {
            target = k;
            rc = campaign_target_read(l, k, v);
        } else if (!strcmp(key, "runs")) {
            runs_k = k;
            runs_v = v;
        } else if (!strcmp(key, "shards")) {
            rc = yread_set(y, k, v, "shards", &shards_row, c);
        } else {
            if (!strcmp(key, "repetitions"))
                l->repetitions_at = k;
            rc = apply_key(l, &lv, "", k, v);
        }
        if (rc)
            return -1;
    }
    finish_level(l, &lv);
    if (!c->name)
        return yread_fail(y, root, NULL, "missing required key 'name'");
    if (!target)
        return yread_fail(y, root, NULL, "missing required key 'target'");
    if (!runs_v)
        return yread_fail(y, root, NULL, "missing required key 'runs'");
    return read_runs(l, runs_k, runs_v, &lv);
}

/* ---- loading ---- */

static int load(const char *buf, size_t len, const char *name, campaign *c, char *err, int errlen) {
    loader l = {.c = c};
    l.y.name = name;
    l.y.err = err;
    l.y.errlen = err && errlen > 0 ? (size_t)errlen : 0;
    build_keys(&l);
    int rc = yread_document(&l.y, buf, len, read_campaign, &l);
    c->path = yread_keep(&l.y, name);
    c->strings = l.y.strings;
    c->n_strings = l.y.n_strings;
    if (rc)
        campaign_free(c);
    return rc;
}

int campaign_load_string(const char *yaml, const char *name, campaign *c, char *err, int errlen) {
    memset(c, 0, sizeof *c);
    return load(yaml, strlen(yaml), name ? name : "<string>", c, err, errlen);
}

int campaign_load(const char *path, campaign *c, char *err, int errlen) {
    memset(c, 0, sizeof *c);
    size_t len;
    char *buf = read_whole_file(path, &len);
    if (!buf) {
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "%s: cannot read: %s", path, file_why(errno));
        return -1;
    }
    int rc = load(buf, len, path, c, err, errlen);
    free(buf);
    return rc;
}

void campaign_free(campaign *c) {
    if (!c)
        return;
    for (int i = 0; i < c->n_strings; i++)
        free(c->strings[i]);
    free(c->strings);
    free(c->runs);
    free(c->env_names);
    free(c->env_values);
    memset(c, 0, sizeof *c);
}
