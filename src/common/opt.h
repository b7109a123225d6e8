/* opt: option tables. Every option of a command is defined once, as one row
 * of its command's table: the name on the command line, the key in a
 * campaign file, the key meta.json records it under, its type, range,
 * default and help line, and where its value goes in the command's options
 * struct. The same row then drives everything else:
 *   - one parser reads a value from text for the command line and for a
 *     campaign's YAML alike, so both accept and reject the same values with
 *     the same words ("expected an integer >= 1, got '0'");
 *   - defaults are set by parsing the row's default text, so a default can
 *     never be a value the option would refuse;
 *   - --help, the man page and docs/options.md are printed from the rows;
 *   - meta.json's config and campaign.json's resolved runs are written from
 *     them.
 * Adding an option is a row, a field in the struct and the code that uses
 * the value. (curl keeps one document per option for the same reason.)
 *
 * The command line is read strictly: exact names only (--rate, never an
 * abbreviation such as --rat), "--name VALUE" or "--name=VALUE", a flag
 * takes no value, "--" ends the options, and options and positional
 * arguments may come in any order. -h and --help are always known.
 *
 * Nothing here allocates a value: a string option keeps a pointer to the
 * text it was given (argv, or a campaign's own copy), so the caller keeps
 * that text alive as long as the options. */
#ifndef SERVELAB_OPT_H
#define SERVELAB_OPT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
    OPT_FLAG,    /* no value: given means 1; true or false in a campaign */
    OPT_STRING,  /* text, not empty (empty too with .empty_ok) */
    OPT_CHOICE,  /* one of .choices ("a|b|c"), kept as that text */
    OPT_INT,     /* an integer in [.min, .max] into an int or a 64-bit field */
    OPT_NUMBER,  /* a finite number >= .min (> .min with .above), <= .max when set */
    OPT_SECONDS, /* a duration ("90", "90s", "2m", "500ms") kept in seconds, with .min as above */
    OPT_RATE,    /* a positive number, or inf (kept as INFINITY) */
    OPT_LIST,    /* repeatable: each value is appended to an opt_list */
} opt_type;

#define OPT_LIST_MAX 64

typedef struct opt_list {
    const char *v[OPT_LIST_MAX];
    int n;
} opt_list;

typedef struct opt_def {
    const char *name; /* on the command line, without "--"; NULL ends a table */
    const char *key;  /* in a campaign file, dotted ("workload.max_tokens"); NULL: none */
    const char *meta; /* in meta.json's config and campaign.json; NULL: not recorded */
    opt_type type;
    size_t at, size;  /* where the value goes: OPT_AT(struct, field) */
    size_t seen;      /* OPT_SEEN(struct, field): an int set to 1 when given; 0: none */
    const char *arg;  /* the value's placeholder in --help (N, S, URL); choices by default */
    const char *def;  /* the default, as a user would write it; NULL: none */
    const char *bare; /* the value of "--name" given without one (an optional value) */
    double min, max;  /* OPT_INT, OPT_NUMBER, OPT_SECONDS; max 0: the field's limit / none */
    int above;        /* the value must be > min rather than >= min */
    int empty_ok;     /* OPT_STRING may be "" */
    int key_only;     /* a campaign key with no command-line flag: shown as "key: ARG" */
    const char *choices;
    /* A further check of an OPT_STRING or OPT_LIST value: 0, or -1 with what
     * is wrong in err (e.g. "expected 'Name: value', got 'x'"). */
    int (*check)(const char *text, char *err, size_t errlen);
    const char *group; /* the --help heading this row starts; NULL: the one above */
    const char *help;  /* one line */
} opt_def;

#define OPT_AT(type, field) .at = offsetof(type, field), .size = sizeof(((type *)0)->field)
#define OPT_SEEN(type, field) .seen = offsetof(type, field) + 1

/* The row named `name`, or NULL. */
const opt_def *opt_find(const opt_def *table, const char *name);
/* The row whose campaign key is `key`, or NULL. */
const opt_def *opt_find_key(const opt_def *table, const char *key);

/* What a valid value looks like, for messages: "an integer >= 1",
 * "one of auto, on, off", "a positive number or inf". Returns buf. */
const char *opt_what(const opt_def *d, char *buf, size_t n);
/* Parse `text` as d's value and store it in the struct at `base` (and mark
 * it seen). 0, or -1 with "expected WHAT, got 'TEXT'" (or what .check said)
 * in err; nothing is stored on error. */
int opt_set(const opt_def *d, const char *text, void *base, char *err, size_t errlen);
/* Store every row's default (the struct is expected zeroed). */
void opt_defaults(const opt_def *table, void *base);

/* The command line, read against one table. */
typedef struct opt_given {
    const opt_def *def;
    const char *value; /* NULL for a flag */
} opt_given;

typedef struct opt_args {
    opt_given *given; /* in the order given */
    int n_given;
    char **positional;
    int n_positional;
    int help; /* -h or --help was given */
} opt_args;

/* Split argv (argv[0] is the command's name) into options and positional
 * arguments without storing anything: -1 with "unknown option '--rat'",
 * "--url needs a value" or "--insecure takes no value" in err. */
int opt_scan(const opt_def *table, int argc, char **argv, opt_args *out, char *err, size_t errlen);
/* The last value given for `name`, or NULL. */
const char *opt_value(const opt_args *a, const char *name);
/* Store what opt_scan found, in order: -1 with "--rate: expected ..." in err. */
int opt_apply(const opt_args *a, void *base, char *err, size_t errlen);
void opt_args_free(opt_args *a);

/* --help's list of options, grouped under their headings. */
void opt_print_help(FILE *f, const opt_def *table);
/* The same as roff for the man page (.TP entries) and as a Markdown table;
 * campaign keys are shown after `key_prefix` (e.g. "target.sim."). */
void opt_print_man(FILE *f, const opt_def *table, const char *key_prefix);
void opt_print_markdown(FILE *f, const opt_def *table, const char *key_prefix);
/* roff text with '-' and '\' escaped and a leading '.' or '\'' guarded. */
void opt_roff(FILE *f, const char *text);

/* An object of every row that has a meta key, with the struct's values:
 * flags as booleans, strings and choices as strings (null when unset),
 * numbers as numbers, a rate of inf as "inf", lists as arrays. */
json_t *opt_json(const opt_def *table, const void *base);

#endif
