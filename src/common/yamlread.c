/* yamlread: the strict YAML reading behind the campaign loader (see
 * yamlread.h). */
#include "common/yamlread.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ---- */

int yread_line(const yaml_node_t *n) {
    return n ? (int)n->start_mark.line + 1 : 1;
}

static int vfail(yread *y, int line, const char *key, const char *fmt, va_list ap) {
    if (!y->err || !y->errlen)
        return -1;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (key && *key)
        snprintf(y->err, y->errlen, "%s:%d: %s: %s", y->name, line, key, msg);
    else
        snprintf(y->err, y->errlen, "%s:%d: %s", y->name, line, msg);
    /* Keys and values quoted from the file may hold newlines or tabs. */
    for (char *s = y->err; *s; s++)
        if ((unsigned char)*s < 0x20)
            *s = ' ';
    return -1;
}

int yread_fail_line(yread *y, int line, const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(y, line, key, fmt, ap);
    va_end(ap);
    return -1;
}

/* An error at node `at` (a key, for anything about that key's value). */
int yread_fail(yread *y, const yaml_node_t *at, const char *key, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(y, yread_line(at), key, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- nodes ---- */

yaml_node_t *yread_node(yread *y, int index) {
    return yaml_document_get_node(y->doc, index);
}

const char *yread_text(const yaml_node_t *n) {
    return (const char *)n->data.scalar.value;
}

/* An unquoted empty value, ~ or null: YAML's null, which no key accepts
 * (except target.sim, where it means "all defaults"). */
int yread_is_null(const yaml_node_t *n) {
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = yread_text(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* "prefix.key" (or "key" at the top level) into out[KEY_PATH_LEN], cut short
 * if it must be. */
void yread_join(char *out, const char *prefix, const char *key) {
    size_t n = 0;
    for (const char *s = prefix; *s && n < KEY_PATH_LEN - 1; s++)
        out[n++] = *s;
    if (*prefix && n < KEY_PATH_LEN - 1)
        out[n++] = '.';
    for (const char *s = key; *s && n < KEY_PATH_LEN - 1; s++)
        out[n++] = *s;
    out[n] = 0;
}

static int in_list(const char *const *list, const char *s) {
    for (; *list; list++)
        if (!strcmp(*list, s))
            return 1;
    return 0;
}

/* "expected WHAT, got 'value'" (or "got a map", "got a list", "got no value"). */
int yread_expected(yread *y, const yaml_node_t *at, const char *key, const yaml_node_t *v,
                   const char *what) {
    if (v->type == YAML_MAPPING_NODE)
        return yread_fail(y, at, key, "expected %s, got a map", what);
    if (v->type == YAML_SEQUENCE_NODE)
        return yread_fail(y, at, key, "expected %s, got a list", what);
    if (yread_is_null(v))
        return yread_fail(y, at, key, "expected %s, got no value", what);
    const char *s = yread_text(v);
    return yread_fail(y, at, key, "expected %s, got '%.60s%s'", what, s,
                      strlen(s) > 60 ? "..." : "");
}

/* The text of scalar `v` (the value of key `k`), or NULL with the error when
 * it is not a scalar, is null, or hides a NUL byte (a "\0" escape). */
const char *yread_scalar(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                         const char *what) {
    if (v->type != YAML_SCALAR_NODE || yread_is_null(v)) {
        yread_expected(y, k, key, v, what);
        return NULL;
    }
    if (strlen(yread_text(v)) != v->data.scalar.length) {
        yread_fail(y, k, key, "contains a NUL character");
        return NULL;
    }
    return yread_text(v);
}

/* Every key of map `m` is a scalar, named in `known` (NULL: any name), and
 * given once. */
int yread_check_keys(yread *y, const yaml_node_t *m, const char *prefix, const char *const *known) {
    yaml_node_pair_t *start = m->data.mapping.pairs.start;
    for (yaml_node_pair_t *pr = start; pr < m->data.mapping.pairs.top; pr++) {
        yaml_node_t *k = yread_node(y, pr->key);
        if (k->type != YAML_SCALAR_NODE)
            return yread_fail(y, k, prefix, "keys must be plain names, got a %s",
                              k->type == YAML_MAPPING_NODE ? "map" : "list");
        char path[KEY_PATH_LEN];
        yread_join(path, prefix, yread_text(k));
        if (known && !in_list(known, yread_text(k))) {
            strbuf names = {0};
            for (const char *const *s = known; *s; s++)
                sb_printf(&names, "%s%s", s == known ? "" : ", ", *s);
            yread_fail(y, k, path, "unknown key (known: %s)", names.s);
            sb_free(&names);
            return -1;
        }
        for (yaml_node_pair_t *q = start; q < pr; q++) {
            yaml_node_t *prev = yread_node(y, q->key);
            if (!strcmp(yread_text(prev), yread_text(k)))
                return yread_fail(y, k, path, "duplicate key (first at line %d)", yread_line(prev));
        }
    }
    return 0;
}

int yread_want_map(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key) {
    return v->type == YAML_MAPPING_NODE ? 0 : yread_expected(y, k, key, v, "a map");
}

/* ---- values ---- */

const char *yread_keep(yread *y, const char *s) {
    if (y->n_strings == y->cap_strings) {
        y->cap_strings = y->cap_strings ? 2 * y->cap_strings : 32;
        y->strings = xrealloc(y->strings, (size_t)y->cap_strings * sizeof *y->strings);
    }
    return y->strings[y->n_strings++] = xstrdup(s);
}

int yread_set(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key,
              const opt_def *d, void *base) {
    char what[160], why[512];
    const char *s = yread_scalar(y, k, v, key, opt_what(d, what, sizeof what));
    if (!s)
        return -1;
    if (opt_set(d, yread_keep(y, s), base, why, sizeof why))
        return yread_fail(y, k, key, "%s", why);
    /* A valid number or boolean in quotes is a string that looks like one:
     * another YAML reader would take it for text, so it is refused. */
    int quoted = v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
    if (quoted && d->type != OPT_STRING && d->type != OPT_CHOICE && d->type != OPT_LIST)
        return yread_fail(y, k, key,
                          "expected %s, got the string '%.60s' (write it without quotes)", what, s);
    return 0;
}

/* ---- the document ---- */

static int syntax_error(yread *y, const yaml_parser_t *p, const char *buf, size_t len) {
    if (p->error == YAML_MEMORY_ERROR)
        return yread_fail_line(y, 1, NULL, "out of memory while parsing YAML");
    int line;
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors (bad encoding, control characters) carry a byte
         * offset, not a mark. */
        line = 1;
        for (size_t i = 0; i < p->problem_offset && i < len; i++)
            line += buf[i] == '\n';
    } else {
        line = (int)p->problem_mark.line + 1;
    }
    const char *problem = p->problem ? p->problem : "unknown problem";
    if (p->context)
        return yread_fail_line(y, line, NULL, "YAML syntax error: %s (%s at line %d)", problem,
                               p->context, (int)p->context_mark.line + 1);
    return yread_fail_line(y, line, NULL, "YAML syntax error: %s", problem);
}

/* The event pass: syntax errors, aliases and extra documents. */
static int scan_events(yread *y, const char *buf, size_t len) {
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return yread_fail_line(y, 1, NULL, "out of memory while parsing YAML");
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    int rc = 0, docs = 0, depth = 0;
    for (;;) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            rc = syntax_error(y, &p, buf, len);
            break;
        }
        yaml_event_type_t type = e.type;
        int line = (int)e.start_mark.line + 1;
        if (type == YAML_ALIAS_EVENT)
            rc = yread_fail_line(y, line, NULL,
                                 "aliases (*%s) are not supported: write the value out",
                                 (const char *)e.data.alias.anchor);
        else if (type == YAML_DOCUMENT_START_EVENT && ++docs > 1)
            rc = yread_fail_line(y, line, NULL,
                                 "a second YAML document: a campaign is one document");
        else if ((type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) &&
                 ++depth > YREAD_MAX_DEPTH)
            rc = yread_fail_line(y, line, NULL, "nested deeper than %d levels", YREAD_MAX_DEPTH);
        else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT)
            depth--;
        yaml_event_delete(&e);
        if (rc || type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&p);
    return rc;
}

int yread_document(yread *y, const char *buf, size_t len,
                   int (*walk)(yread *y, const yaml_node_t *root, void *arg), void *arg) {
    if (scan_events(y, buf, len))
        return -1;
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p))
        return yread_fail_line(y, 1, NULL, "out of memory while parsing YAML");
    yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
    int rc;
    if (!yaml_parser_load(&p, &doc)) {
        rc = syntax_error(y, &p, buf, len);
    } else {
        y->doc = &doc;
        rc = walk(y, yaml_document_get_root_node(&doc), arg);
        y->doc = NULL;
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&p);
    return rc;
}
