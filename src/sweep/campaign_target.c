/* campaign_target: a campaign's target: map, read into the campaign (see
 * campaign.h): one of url (the URL rule of run --url), sim (a profile and
 * `servelab sim` options, kept as the simulator's command-line words) or
 * server (a managed server's command line, health path, timeouts, restart
 * policy and the environment it starts with), or server with a sim that
 * stands in for it (sweep --target sim), or vllm (vLLM's OpenAI server
 * from a python and a model folder, target/vllm_server.h). Its own file because the target
 * is the server under test, not a run: its keys, tables and checks are
 * none of the runs'. Errors are campaign.c's: "PATH:LINE: KEY: what is
 * wrong", KEY a dotted path (target.server.command). */
#include "sweep/campaign.h"
#include "sweep/campaign_internal.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/yamlread.h"
#include "run/run.h"
#include "sim/sim_options.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int server_command_check(const char *text, char *err, size_t errlen) {
    if (strstr(text, "{port}"))
        return 0;
    snprintf(err, errlen, "must contain {port} (servelab picks the port), got '%.60s'", text);
    return -1;
}

static int health_check(const char *text, char *err, size_t errlen) {
    if (text[0] == '/')
        return 0;
    snprintf(err, errlen, "expected a path starting with '/', got '%.60s'", text);
    return -1;
}

#define CAMPAIGN(field) OPT_AT(campaign, field)
/* How long a server servelab starts may take to be ready and to stop: the
 * same two rows in target.server and target.vllm. */
#define SERVER_PROCESS_ROWS                                                                        \
    {.name = "ready_timeout_s",                                                                    \
     .key = "ready_timeout_s",                                                                     \
     .type = OPT_NUMBER,                                                                           \
     CAMPAIGN(ready_timeout_s),                                                                    \
     .above = 1,                                                                                   \
     .def = "600"},                                                                                \
    {                                                                                              \
        .name = "stop_grace_s", .key = "stop_grace_s", .type = OPT_NUMBER, CAMPAIGN(stop_grace_s), \
        .def = "10"                                                                                \
    }
static const opt_def server_rows[] = {{.name = "command",
                                       .key = "command",
                                       .type = OPT_STRING,
                                       CAMPAIGN(server_command),
                                       .check = server_command_check},
                                      {.name = "health",
                                       .key = "health",
                                       .type = OPT_STRING,
                                       CAMPAIGN(health_path),
                                       .check = health_check,
                                       .def = "/health"},
                                      SERVER_PROCESS_ROWS,
                                      {.name = "restart",
                                       .key = "restart",
                                       .type = OPT_CHOICE,
                                       CAMPAIGN(restart),
                                       .choices = "on_change|always",
                                       .def = "on_change"},
                                      {0}};

/* target.vllm: what vLLM is started with, and target.server's
 * ready_timeout_s and stop_grace_s. */
static const opt_def vllm_rows[] = {
    {.name = "model", .key = "model", .type = OPT_STRING, CAMPAIGN(vllm.model)},
    {.name = "python", .key = "python", .type = OPT_STRING, CAMPAIGN(vllm.python)},
    {.name = "max_num_seqs",
     .key = "max_num_seqs",
     .type = OPT_INT,
     CAMPAIGN(vllm.max_num_seqs),
     .min = 1},
    {.name = "max_model_len",
     .key = "max_model_len",
     .type = OPT_INT,
     CAMPAIGN(vllm.max_model_len),
     .min = 1},
    {.name = "prefix_caching",
     .key = "prefix_caching",
     .type = OPT_CHOICE,
     CAMPAIGN(vllm.prefix_caching),
     .choices = "on|off"},
    {.name = "chunked_prefill",
     .key = "chunked_prefill",
     .type = OPT_CHOICE,
     CAMPAIGN(vllm.chunked_prefill),
     .choices = "on|off"},
    {.name = "max_num_batched_tokens",
     .key = "max_num_batched_tokens",
     .type = OPT_INT,
     CAMPAIGN(vllm.max_num_batched_tokens),
     .min = 1},
    {.name = "kv_cache_gib",
     .key = "kv_cache_gib",
     .type = OPT_INT,
     CAMPAIGN(vllm.kv_cache_gib),
     .min = 1},
    {.name = "gpu_blocks",
     .key = "gpu_blocks",
     .type = OPT_INT,
     CAMPAIGN(vllm.gpu_blocks),
     .min = 1},
    {.name = "dtype",
     .key = "dtype",
     .type = OPT_CHOICE,
     CAMPAIGN(vllm.dtype),
     .choices = "bfloat16|float32|float16"},
    SERVER_PROCESS_ROWS,
    {0}};

void campaign_target_keys(loader *l) {
    campaign_keys_of(&l->y, l->server_keys, server_rows, NULL);
    campaign_add_key(&l->y, l->server_keys, "env", 3);
}

/* One target.sim key: a sim option (kv_blocks for --kv-blocks) whose value
 * becomes one command-line word; true is the bare flag (realtime: true ->
 * --realtime) and false leaves it out. */
static int read_sim_key(loader *l, const yaml_node_t *k, const yaml_node_t *v, strbuf *args) {
    yread *y = &l->y;
    const char *key = yread_text(k);
    char path[KEY_PATH_LEN];
    yread_join(path, "target.sim", key);
    if (!*key || strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(key))
        return yread_fail(y, k, path, "sim keys are lowercase letters, digits and '_'");
    if (!strcmp(key, "profile")) {
        sim_opts scratch = {0};
        if (yread_set(y, k, v, path, opt_find(sim_options, "profile"), &scratch))
            return -1;
        l->c->sim_profile = scratch.profile;
        return 0;
    }
    const opt_def *d = opt_find_key(sim_options, key);
    if (!d) {
        const char *known[CAMPAIGN_MAX_KEYS] = {"profile"};
        campaign_keys_of(y, known, sim_options, NULL);
        strbuf names = {0};
        for (int i = 0; known[i]; i++)
            sb_printf(&names, "%s%s", i ? ", " : "", known[i]);
        yread_fail(y, k, path, "unknown key (known: %s)", names.s);
        sb_free(&names);
        return -1;
    }
    const char *val = yread_scalar(y, k, v, path, "a single value");
    if (!val)
        return -1;
    if (!*val || strpbrk(val, " \t\r\n"))
        return yread_expected(y, k, path, v, "a single word");
    sim_opts scratch = {0};
    if (yread_set(y, k, v, path, d, &scratch))
        return -1;
    if (d->type == OPT_FLAG && !*(int *)((char *)&scratch + d->at))
        return 0; /* false: no flag */
    sb_printf(args, "%s--%s", args->n ? " " : "", d->name);
    if (d->type != OPT_FLAG)
        sb_printf(args, " %s", val);
    return 0;
}

static int read_sim(loader *l, const yaml_node_t *sk, const yaml_node_t *s) {
    yread *y = &l->y;
    campaign *c = l->c;
    c->target = TARGET_SIM;
    c->sim_profile = "tiny";
    c->sim_args = "";
    if (yread_is_null(s))
        return 0;
    if (yread_want_map(y, sk, s, "target.sim") || yread_check_keys(y, s, "target.sim", NULL))
        return -1;
    strbuf args = {0};
    int rc = 0;
    for (yaml_node_pair_t *pr = s->data.mapping.pairs.start; pr < s->data.mapping.pairs.top && !rc;
         pr++)
        rc = read_sim_key(l, yread_node(y, pr->key), yread_node(y, pr->value), &args);
    if (!rc && args.s)
        c->sim_args = yread_keep(y, args.s);
    sb_free(&args);
    return rc;
}

/* target.server.env: NAME: value pairs, NAME a shell variable's name. */
static int read_env(loader *l, const yaml_node_t *k, const yaml_node_t *m) {
    yread *y = &l->y;
    campaign *c = l->c;
    const char *prefix = "target.server.env";
    if (yread_want_map(y, k, m, prefix) || yread_check_keys(y, m, prefix, NULL))
        return -1;
    int n = (int)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
    c->env_names = xcalloc((size_t)n + 1, sizeof *c->env_names);
    c->env_values = xcalloc((size_t)n + 1, sizeof *c->env_values);
    for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *nk = yread_node(y, pr->key), *nv = yread_node(y, pr->value);
        const char *name = yread_text(nk);
        char path[KEY_PATH_LEN];
        yread_join(path, prefix, name);
        size_t len = strlen(name);
        if (!len || len > 128 ||
            strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
                         "0123456789") != len ||
            (name[0] >= '0' && name[0] <= '9'))
            return yread_fail(y, nk, prefix,
                              "'%.60s' is not a variable name (letters, digits and _, not "
                              "starting with a digit)",
                              name);
        const char *value = yread_scalar(y, nk, nv, path, "a value");
        if (!value)
            return -1;
        c->env_names[c->n_env] = yread_keep(y, name);
        c->env_values[c->n_env++] = yread_keep(y, value);
    }
    return 0;
}

static int read_server(loader *l, const yaml_node_t *sk, const yaml_node_t *s) {
    yread *y = &l->y;
    campaign *c = l->c;
    const char *prefix = "target.server";
    c->target = TARGET_SERVER;
    opt_defaults(server_rows, c);
    if (yread_want_map(y, sk, s, prefix) || yread_check_keys(y, s, prefix, l->server_keys))
        return -1;
    for (yaml_node_pair_t *pr = s->data.mapping.pairs.start; pr < s->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *v = yread_node(y, pr->value);
        char path[KEY_PATH_LEN];
        yread_join(path, prefix, yread_text(k));
        if (!strcmp(yread_text(k), "env")) {
            if (read_env(l, k, v))
                return -1;
        } else if (yread_set(y, k, v, path, opt_find_key(server_rows, yread_text(k)), c)) {
            return -1;
        }
    }
    c->restart_always = !strcmp(c->restart, "always");
    if (!c->server_command)
        return yread_fail(y, s, prefix, "missing required key 'command'");
    return 0;
}

static int read_vllm(loader *l, const yaml_node_t *vk, const yaml_node_t *v) {
    yread *y = &l->y;
    campaign *c = l->c;
    const char *prefix = "target.vllm";
    const char *known[CAMPAIGN_MAX_KEYS] = {0};
    campaign_keys_of(y, known, vllm_rows, NULL);
    c->target = TARGET_VLLM;
    opt_defaults(vllm_rows, c);
    c->health_path = "/health";
    c->restart = "on_change";
    if (yread_want_map(y, vk, v, prefix) || yread_check_keys(y, v, prefix, known))
        return -1;
    for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *val = yread_node(y, pr->value);
        char path[KEY_PATH_LEN];
        yread_join(path, prefix, yread_text(k));
        if (yread_set(y, k, val, path, opt_find_key(vllm_rows, yread_text(k)), c))
            return -1;
    }
    if (!c->vllm.model)
        return yread_fail(y, v, prefix, "missing required key 'model' (a model folder)");
    if (!c->vllm.python) {
        char py[4200];
        vllm_server_default_python(py, sizeof py);
        c->vllm.python = yread_keep(y, py);
    }
    return 0;
}

/* target: one of url, sim, server, vllm; or server or vllm with a sim that
 * stands in for it (sweep --target sim). */
int campaign_target_read(loader *l, const yaml_node_t *tk, const yaml_node_t *t) {
    static const char *const target_keys[] = {"url", "sim", "server", "vllm", NULL};
    yread *y = &l->y;
    campaign *c = l->c;
    if (yread_want_map(y, tk, t, "target") || yread_check_keys(y, t, "target", target_keys))
        return -1;
    const yaml_node_t *kind = NULL, *url = NULL, *server = NULL, *vllm = NULL;
    for (yaml_node_pair_t *pr = t->data.mapping.pairs.start; pr < t->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yread_node(y, pr->key), *v = yread_node(y, pr->value);
        const char *key = yread_text(k);
        if (kind && (url || !strcmp(key, "url") || ((server || vllm) && strcmp(key, "sim"))))
            return yread_fail(y, k, "target",
                              "give one of url, sim, server, vllm, or server or vllm with sim "
                              "(got %s and %s)",
                              yread_text(kind), key);
        kind = k;
        int rc;
        if (!strcmp(key, "url")) {
            /* the URL rule of run --url */
            opt_def row = *opt_find(run_options, "url");
            row.at = offsetof(campaign, url);
            url = k;
            rc = yread_set(y, k, v, "target.url", &row, c);
        } else if (!strcmp(key, "sim")) {
            rc = read_sim(l, k, v);
            c->has_sim = 1;
        } else if (!strcmp(key, "vllm")) {
            vllm = k;
            rc = read_vllm(l, k, v);
        } else {
            server = k;
            rc = read_server(l, k, v);
        }
        if (rc)
            return -1;
    }
    if (!kind)
        return yread_fail(y, t, "target", "missing required key: one of url, sim, server, vllm");
    c->target = url ? TARGET_URL : server ? TARGET_SERVER : vllm ? TARGET_VLLM : TARGET_SIM;
    return 0;
}
