/* yamlread: a YAML document read strictly, for the campaign loader and the
 * simulator's profile files.
 *
 * Two passes over the text. The first streams libyaml's events only to catch
 * what its document loader would hide: syntax errors (with their line),
 * aliases (the loader silently shares the anchored node, and YAML's `<<`
 * merge key is not implemented, so they would not mean what a reader
 * expects) and a second document (the loader would read only the first).
 * The second pass loads the node tree, which the caller walks with the
 * helpers below.
 *
 * libyaml hands every scalar over as an untyped string; a value is parsed
 * by its option row (common/opt.h), exactly as the same value on the
 * command line would be. A number or boolean in quotes ('5', "true") is a
 * string to any other YAML reader, so it is refused rather than guessed;
 * an unquoted empty value, ~ or null counts as no value. Documents nested
 * deeper than YREAD_MAX_DEPTH are refused before they are loaded. libyaml also accepts
 * duplicate keys, so check_keys looks at every key of a map (known, not
 * repeated) before any of its values is read.
 *
 * Every message is one line, "PATH:LINE: KEY: what is wrong", where KEY is a
 * dotted path (runs[2].rate) and LINE the line of that key. */
#ifndef SERVELAB_YAMLREAD_H
#define SERVELAB_YAMLREAD_H

#include "common/opt.h"

#include <stddef.h>
#include <yaml.h>

#define KEY_PATH_LEN 256
#define YREAD_MAX_DEPTH 32

typedef struct yread {
    yaml_document_t *doc;
    const char *name; /* the file, in messages */
    char *err;
    size_t errlen;
    char **strings; /* copies of the values kept (see yread_keep) */
    int n_strings, cap_strings;
} yread;

/* Parse `buf` and, when it is one valid document without aliases, call
 * walk(y, root, arg) on its root node (NULL for an empty document). Returns
 * what walk returned, or -1 with the message in y->err. */
int yread_document(yread *y, const char *buf, size_t len,
                   int (*walk)(yread *y, const yaml_node_t *root, void *arg), void *arg);

int yread_line(const yaml_node_t *n);
yaml_node_t *yread_node(yread *y, int index);
const char *yread_text(const yaml_node_t *n);
/* An unquoted empty value, ~ or null. */
int yread_is_null(const yaml_node_t *n);
/* "prefix.key" (or "key" when prefix is "") into out[KEY_PATH_LEN]. */
void yread_join(char *out, const char *prefix, const char *key);
/* A copy of s that lives as long as the strings of y (its owner frees them). */
const char *yread_keep(yread *y, const char *s);

/* The error at `line`, or at node `at` (a key, for anything about its value).
 * Both return -1. */
int yread_fail_line(yread *y, int line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int yread_fail(yread *y, const yaml_node_t *at, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "expected WHAT, got 'value'" (or "got a map", "got a list", "got no value"). */
int yread_expected(yread *y, const yaml_node_t *at, const char *key, const yaml_node_t *v,
                   const char *what);
/* The text of scalar `v` (the value of key `k`), or NULL after the error
 * when it is not a scalar, is null, or hides a NUL byte. */
const char *yread_scalar(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key,
                         const char *what);
/* Every key of map `m` is a scalar, named in `known` (NULL: any name), and
 * given once. */
int yread_check_keys(yread *y, const yaml_node_t *m, const char *prefix, const char *const *known);
/* v is a map, else the error. */
int yread_want_map(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key);
/* The scalar value of key k, parsed and stored by option row d into the
 * struct at base: the words of any error are the row's own. */
int yread_set(yread *y, const yaml_node_t *k, const yaml_node_t *v, const char *key,
              const opt_def *d, void *base);

#endif
