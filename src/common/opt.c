/* opt: reading, checking, printing and recording options from their tables
 * (see opt.h for the model). Values are parsed here and nowhere else, so a
 * message about a bad value has the same words wherever the value came
 * from; the callers only put the flag ("run: --rate: ") or the campaign's
 * file, line and key ("gpu.yaml:5: runs[1].rate: ") in front. */
#include "common/notice.h"
#include "common/opt.h"
#include "common/util.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const opt_def *opt_find(const opt_def *table, const char *name) {
    for (const opt_def *d = table; d->name; d++)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

const opt_def *opt_find_key(const opt_def *table, const char *key) {
    for (const opt_def *d = table; d->name; d++)
        if (d->key && !strcmp(d->key, key))
            return d;
    return NULL;
}

/* ---- values ---- */

/* The largest value an integer row's field holds. */
static long long int_limit(const opt_def *d) {
    if (d->max > 0)
        return (long long)d->max;
    return d->size == sizeof(int) ? INT_MAX : LLONG_MAX;
}

const char *opt_what(const opt_def *d, char *buf, size_t n) {
    const char *cmp = d->above ? ">" : ">=";
    switch (d->type) {
    case OPT_FLAG: snprintf(buf, n, "true or false"); break;
    case OPT_STRING: snprintf(buf, n, "a string"); break;
    case OPT_LIST: snprintf(buf, n, "a string"); break;
    case OPT_INT: snprintf(buf, n, "an integer >= %lld", (long long)d->min); break;
    case OPT_NUMBER: snprintf(buf, n, "a number %s %g", cmp, d->min); break;
    case OPT_SECONDS:
        snprintf(buf, n, "seconds %s %g (a number, or like 90s, 2m)", cmp, d->min);
        break;
    case OPT_RATE: snprintf(buf, n, "a positive number or inf"); break;
    case OPT_CHOICE: {
        size_t k = (size_t)snprintf(buf, n, "one of ");
        for (const char *c = d->choices; *c && k + 1 < n; c++) {
            if (*c == '|') {
                k += (size_t)snprintf(buf + k, n - k, ", ");
            } else {
                buf[k++] = *c;
                buf[k] = 0;
            }
        }
        break;
    }
    }
    return buf;
}

/* "expected WHAT, got 'TEXT'", the text cut at 60 characters and any
 * control character in it made a space, so the message stays one line. */
static int expected(const opt_def *d, const char *text, char *err, size_t errlen) {
    char what[160], shown[64];
    snprintf(shown, sizeof shown, "%.60s", text);
    for (char *s = shown; *s; s++)
        if ((unsigned char)*s < 0x20)
            *s = ' ';
    snprintf(err, errlen, "expected %s, got '%s%s'", opt_what(d, what, sizeof what), shown,
             strlen(text) > 60 ? "..." : "");
    return -1;
}

/* Is `text` exactly one of the '|'-separated choices? */
static int is_choice(const char *choices, const char *text) {
    size_t n = strlen(text);
    for (const char *c = choices; c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, text, n))
            return 1;
        c = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* A plain decimal number at the start of s: [+-]digits[.digits][e[+-]digits]
 * (no hex, no inf or nan, no leading space: strtod takes all of those).
 * Returns its length, 0 when there is none. */
static size_t decimal_length(const char *s) {
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    for (; s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (s[i] == '.')
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (!digits)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        if (s[j] < '0' || s[j] > '9')
            return i;
        while (s[j] >= '0' && s[j] <= '9')
            j++;
        i = j;
    }
    return i;
}

/* The whole of s is a decimal number, or one followed by a duration's unit. */
static int is_decimal(const char *s, int unit_ok) {
    size_t n = decimal_length(s);
    if (!n)
        return 0;
    return !s[n] || (unit_ok && (!strcmp(s + n, "ms") || !strcmp(s + n, "us") ||
                                 !strcmp(s + n, "s") || !strcmp(s + n, "m")));
}

static void store_int(const opt_def *d, void *field, long long v) {
    if (d->size == sizeof(int))
        *(int *)field = (int)v;
    else
        *(int64_t *)field = (int64_t)v;
}

static int set_int(const opt_def *d, const char *text, void *field, char *err, size_t errlen) {
    long v;
    if (!is_decimal(text, 0) || parse_int(text, &v) || v < (long)d->min)
        return expected(d, text, err, errlen);
    if ((long long)v > int_limit(d)) {
        snprintf(err, errlen, "%ld is too large (at most %lld)", v, int_limit(d));
        return -1;
    }
    store_int(d, field, v);
    return 0;
}

/* A number or seconds against the row's bounds. */
static int in_range(const opt_def *d, double v) {
    return isfinite(v) && v >= d->min && !(d->above && v == d->min);
}

static int set_number(const opt_def *d, double v, const char *text, void *field, char *err,
                      size_t errlen) {
    if (!in_range(d, v))
        return expected(d, text, err, errlen);
    if (d->max > 0 && v > d->max) {
        snprintf(err, errlen, "%g is too large (at most %g)", v, d->max);
        return -1;
    }
    *(double *)field = v;
    return 0;
}

static int set_value(const opt_def *d, const char *text, void *field, char *err, size_t errlen) {
    double v;
    switch (d->type) {
    case OPT_FLAG:
        if (strcmp(text, "true") && strcmp(text, "false"))
            return expected(d, text, err, errlen);
        *(int *)field = !strcmp(text, "true");
        return 0;
    case OPT_STRING:
        if (!*text && !d->empty_ok) {
            snprintf(err, errlen, "expected a non-empty string");
            return -1;
        }
        if (d->check && d->check(text, err, errlen))
            return -1;
        *(const char **)field = text;
        return 0;
    case OPT_LIST: {
        opt_list *l = field;
        if (d->check && d->check(text, err, errlen))
            return -1;
        if (l->n == OPT_LIST_MAX) {
            snprintf(err, errlen, "at most %d values", OPT_LIST_MAX);
            return -1;
        }
        l->v[l->n++] = text;
        return 0;
    }
    case OPT_CHOICE:
        if (!is_choice(d->choices, text))
            return expected(d, text, err, errlen);
        *(const char **)field = text;
        return 0;
    case OPT_INT: return set_int(d, text, field, err, errlen);
    case OPT_NUMBER:
        if (!is_decimal(text, 0) || parse_double(text, &v))
            return expected(d, text, err, errlen);
        return set_number(d, v, text, field, err, errlen);
    case OPT_SECONDS:
        if (!is_decimal(text, 1) || parse_duration_ms(text, &v))
            return expected(d, text, err, errlen);
        return set_number(d, v / 1000, text, field, err, errlen);
    case OPT_RATE:
        if (!strcasecmp(text, "inf")) {
            *(double *)field = INFINITY;
            return 0;
        }
        if (!is_decimal(text, 0) || parse_double(text, &v) || !isfinite(v) || v <= 0)
            return expected(d, text, err, errlen);
        *(double *)field = v;
        return 0;
    }
    return expected(d, text, err, errlen);
}

int opt_set(const opt_def *d, const char *text, void *base, char *err, size_t errlen) {
    if (set_value(d, text, (char *)base + d->at, err, errlen))
        return -1;
    if (d->seen)
        *(int *)((char *)base + d->seen - 1) = 1;
    return 0;
}

void opt_defaults(const opt_def *table, void *base) {
    char err[256];
    for (const opt_def *d = table; d->name; d++)
        if (d->def && set_value(d, d->def, (char *)base + d->at, err, sizeof err))
            notice_warn("internal: the default of --%s does not parse: %s", d->name, err);
}

/* ---- the command line ---- */

static void add_given(opt_args *a, const opt_def *d, const char *value) {
    a->given = xrealloc(a->given, (size_t)(a->n_given + 1) * sizeof *a->given);
    a->given[a->n_given++] = (opt_given){d, value};
}

/* One "--name[=value]" at argv[*i]; may take argv[*i + 1] as its value. */
static int scan_option(const opt_def *table, int argc, char **argv, int *i, opt_args *out,
                       char *err, size_t errlen) {
    const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), arg);
    if (!strcmp(name, "help") && !eq) {
        out->help = 1;
        return 0;
    }
    const opt_def *d = len < sizeof name ? opt_find(table, name) : NULL;
    if (!d) {
        snprintf(err, errlen, "unknown option '%.*s'", (int)(eq ? eq - argv[*i] : 200), argv[*i]);
        return -1;
    }
    if (d->type == OPT_FLAG) {
        if (eq) {
            snprintf(err, errlen, "--%s takes no value", d->name);
            return -1;
        }
        add_given(out, d, NULL);
    } else if (eq) {
        add_given(out, d, eq + 1);
    } else if (d->bare) {
        add_given(out, d, d->bare);
    } else if (*i + 1 < argc) {
        add_given(out, d, argv[++*i]);
    } else {
        snprintf(err, errlen, "--%s needs a value", d->name);
        return -1;
    }
    return 0;
}

int opt_scan(const opt_def *table, int argc, char **argv, opt_args *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->positional = xcalloc((size_t)(argc > 0 ? argc : 1), sizeof *out->positional);
    int options_end = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_end || a[0] != '-' || !a[1]) {
            out->positional[out->n_positional++] = argv[i];
        } else if (!strcmp(a, "--")) {
            options_end = 1;
        } else if (!strcmp(a, "-h")) {
            out->help = 1;
        } else if (a[1] != '-') {
            snprintf(err, errlen, "unknown option '%.200s'", a);
            opt_args_free(out);
            return -1;
        } else if (scan_option(table, argc, argv, &i, out, err, errlen)) {
            opt_args_free(out);
            return -1;
        }
    }
    return 0;
}

const char *opt_value(const opt_args *a, const char *name) {
    const char *v = NULL;
    for (int i = 0; i < a->n_given; i++)
        if (!strcmp(a->given[i].def->name, name))
            v = a->given[i].value;
    return v;
}

int opt_apply(const opt_args *a, void *base, char *err, size_t errlen) {
    for (int i = 0; i < a->n_given; i++) {
        const opt_def *d = a->given[i].def;
        char why[512];
        if (opt_set(d, d->type == OPT_FLAG ? "true" : a->given[i].value, base, why, sizeof why)) {
            snprintf(err, errlen, "--%s: %s", d->name, why);
            return -1;
        }
    }
    return 0;
}

void opt_args_free(opt_args *a) {
    free(a->given);
    free(a->positional);
    memset(a, 0, sizeof *a);
}

/* ---- printing ---- */

/* "--name ARG", "--name[=ARG]", "--name", or "key: ARG" for a campaign key
 * that has no flag. */
static void usage_of(const opt_def *d, char *buf, size_t n) {
    const char *arg = d->arg ? d->arg : d->choices ? d->choices : "VALUE";
    if (d->key_only)
        snprintf(buf, n, "%s: %s", d->key, arg);
    else if (d->type == OPT_FLAG)
        snprintf(buf, n, "--%s", d->name);
    else if (d->bare)
        snprintf(buf, n, "--%s[=%s]", d->name, arg);
    else
        snprintf(buf, n, "--%s %s", d->name, arg);
}

void opt_print_help(FILE *f, const opt_def *table) {
    for (const opt_def *d = table; d->name; d++) {
        if (d->group)
            fprintf(f, "%s%s:\n", d == table ? "" : "\n", d->group);
        char use[96];
        usage_of(d, use, sizeof use);
        if (strlen(use) > 24)
            fprintf(f, "  %s\n  %-24s %s", use, "", d->help);
        else
            fprintf(f, "  %-24s %s", use, d->help);
        if (d->def && d->type != OPT_FLAG)
            fprintf(f, " (%s)", *d->def ? d->def : "\"\"");
        fputc('\n', f);
    }
}

void opt_roff(FILE *f, const char *text) {
    if (*text == '.' || *text == '\'')
        fputs("\\&", f);
    for (const char *s = text; *s; s++) {
        if (*s == '-' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
        if (*s == '\n' && (s[1] == '.' || s[1] == '\''))
            fputs("\\&", f);
    }
}

void opt_print_man(FILE *f, const opt_def *table, const char *key_prefix) {
    for (const opt_def *d = table; d->name; d++) {
        char use[96];
        usage_of(d, use, sizeof use);
        fputs(".TP\n\\fB", f);
        opt_roff(f, use);
        fputs("\\fR\n", f);
        opt_roff(f, d->help);
        if (d->def && d->type != OPT_FLAG) {
            fputs(" (default ", f);
            opt_roff(f, *d->def ? d->def : "\"\"");
            fputs(")", f);
        }
        if (d->key) {
            fputs("; campaign key \\fI", f);
            opt_roff(f, key_prefix);
            opt_roff(f, d->key);
            fputs("\\fR", f);
        }
        fputs(".\n", f);
    }
}

/* Markdown table cells: '|' escaped. */
static void md_cell(FILE *f, const char *text) {
    for (const char *s = text; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

void opt_print_markdown(FILE *f, const opt_def *table, const char *key_prefix) {
    fputs("| option | campaign key | default | what it does |\n| --- | --- | --- | --- |\n", f);
    for (const opt_def *d = table; d->name; d++) {
        char use[96];
        usage_of(d, use, sizeof use);
        fputs("| `", f);
        md_cell(f, use);
        fputs("` | ", f);
        if (d->key) {
            fputc('`', f);
            md_cell(f, key_prefix);
            md_cell(f, d->key);
            fputc('`', f);
        }
        fputs(" | ", f);
        if (d->def && d->type != OPT_FLAG) {
            fputc('`', f);
            md_cell(f, *d->def ? d->def : "\"\"");
            fputc('`', f);
        }
        fputs(" | ", f);
        md_cell(f, d->help);
        fputs(" |\n", f);
    }
}

/* ---- recording ---- */

static json_t *value_json(const opt_def *d, const char *field) {
    switch (d->type) {
    case OPT_FLAG: return json_boolean(*(const int *)field);
    case OPT_STRING:
    case OPT_CHOICE: {
        const char *s = *(const char *const *)field;
        return s ? json_string(s) : json_null();
    }
    case OPT_INT:
        return json_integer(d->size == sizeof(int) ? *(const int *)field
                                                   : (json_int_t) * (const int64_t *)field);
    case OPT_NUMBER:
    case OPT_SECONDS: return json_real(*(const double *)field);
    case OPT_RATE: {
        double v = *(const double *)field;
        return isinf(v) ? json_string("inf") : json_real(v);
    }
    case OPT_LIST: {
        const opt_list *l = (const opt_list *)field;
        json_t *a = json_array();
        for (int i = 0; i < l->n; i++)
            json_array_append_new(a, json_string(l->v[i]));
        return a;
    }
    }
    return json_null();
}

json_t *opt_json(const opt_def *table, const void *base) {
    json_t *o = json_object();
    for (const opt_def *d = table; d->name; d++)
        if (d->meta)
            json_object_set_new(o, d->meta, value_json(d, (const char *)base + d->at));
    return o;
}
