/* docs: docs/files.md's tables printed from rundir/'s (see docs.h). A
 * table of columns is `| column | type | unit | needed | meaning |`, where
 * needed says a reader refuses a file without it (rundir/columns.h's
 * contract columns). */
#include "rundir/docs.h"
#include "rundir/columns.h"
#include "rundir/summary_keys.h"

#include <stdio.h>
#include <string.h>

#define BEGIN_MARK "<!-- BEGIN generated: "
#define END_MARK "<!-- END generated: "

static void columns_table(strbuf *o, const rundir_table *t) {
    sb_puts(o, "| column | type | unit | needed | meaning |\n| --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < t->n; i++) {
        const rundir_column *c = &t->col[i];
        sb_printf(o, "| `%s` | %s | %s | %s | %s |\n", c->name, rundir_type_name(c->type), c->unit,
                  c->contract ? "yes" : "", c->meaning);
    }
}

/* A table of keys; `client`'s has a column for what a merge makes of each. */
static void keys_table(strbuf *o, const rundir_keys *k) {
    int merged = k == &rundir_client_keys;
    sb_printf(o, "| key | type | unit |%s meaning |\n| --- | --- | --- |%s --- |\n",
              merged ? " in a merge |" : "", merged ? " --- |" : "");
    for (int i = 0; i < k->n; i++) {
        const rundir_key *e = &k->key[i];
        sb_printf(o, "| `%s` | %s | %s |", e->name, e->type, e->unit);
        if (merged)
            sb_printf(o, " %s |", rundir_merge_words(e->merge));
        sb_printf(o, " %s |\n", e->meaning);
    }
}

/* The table NAME (n bytes) into o: 0, or -1 when there is none. */
static int table_named(strbuf *o, const char *name, size_t n) {
    const rundir_table *tables[] = {&rundir_requests, &rundir_chunks, &rundir_errors};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        if (strlen(tables[i]->file) == n && !memcmp(tables[i]->file, name, n)) {
            columns_table(o, tables[i]);
            return 0;
        }
    const rundir_keys *keys[] = {&rundir_summary_keys, &rundir_client_keys};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i]->name) == n && !memcmp(keys[i]->name, name, n)) {
            keys_table(o, keys[i]);
            return 0;
        }
    return -1;
}

int rundir_docs_splice(const char *in, strbuf *out, char *err, int errlen) {
    const char *p = in, *b;
    while ((b = strstr(p, BEGIN_MARK))) {
        const char *name = b + strlen(BEGIN_MARK), *close = strstr(name, " -->\n");
        if (!close) {
            snprintf(err, errlen, "a BEGIN marker without its ' -->'");
            return -1;
        }
        size_t n = (size_t)(close - name);
        char end[160];
        snprintf(end, sizeof end, "%s%.*s -->\n", END_MARK, (int)n, name);
        const char *e = strstr(close, end);
        if (!e || n > 100) {
            snprintf(err, errlen, "the marker of %.*s has no END", (int)(n > 100 ? 100 : n), name);
            return -1;
        }
        sb_putn(out, p, (size_t)(close + 5 - p));
        if (table_named(out, name, n)) {
            snprintf(err, errlen, "no table is called %.*s", (int)n, name);
            return -1;
        }
        sb_puts(out, end);
        p = e + strlen(end);
    }
    sb_puts(out, p);
    return 0;
}
