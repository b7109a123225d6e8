/* summary_file: meta.json and summary.json written (see summary_file.h).
 * Both go through a temporary name and a rename (common/files.h), so a
 * reader never sees half a file; the keys are sorted as they are written,
 * so the order they are set in here does not reach the file. */
#include "rundir/summary_file.h"
#include "common/files.h"
#include "rundir/summary_keys.h"

#include <stdio.h>

static void set_or_skip(json_t *o, const char *key, json_t *v) {
    if (v)
        json_object_set_new(o, key, v);
}

int rundir_summary_write(const char *dir, const rundir_summary *in) {
    json_t *sj = summary_json(in->s);
    json_object_set_new(sj, "server", server_stats_json(in->server, in->s->output_tokens));
    json_t *client = json_object_get(sj, "client");
    if (in->client) {
        json_object_update(client, in->client);
        json_decref(in->client);
    }
    rundir_keys_fill(client, &rundir_client_keys);
    set_or_skip(sj, "server_process", in->server_process);
    set_or_skip(sj, "spec_decode", in->spec_decode);
    set_or_skip(sj, "stages", in->stages);
    json_object_set_new(sj, "interrupted", json_boolean(in->interrupted));
    rundir_keys_fill(sj, &rundir_summary_keys);
    int rc = write_json_atomic(dir, "summary.json", sj);
    json_decref(sj);
    return rc;
}

int rundir_meta_write(const char *dir, json_t *meta) {
    return write_json_atomic(dir, "meta.json", meta);
}

/* DIR/NAME as JSON, or NULL. */
static json_t *read_json(const char *dir, const char *name) {
    char path[4400];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return NULL;
    return json_load_file(path, 0, NULL);
}

json_t *rundir_summary_read(const char *dir) {
    return read_json(dir, "summary.json");
}

json_t *rundir_meta_read(const char *dir) {
    return read_json(dir, "meta.json");
}
