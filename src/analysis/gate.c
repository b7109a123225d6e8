/* gate: reading --fail-on and judging each gate (gate.h has the rule). A
 * bare number is refused: "ttft_p95>10" reads as 10% to some and 10 ms to
 * others, so every threshold says which. */
#include "analysis/gate.h"
#include "common/util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The units a figure's absolute threshold may be in, as "%, ms, s or us". */
static const char *units_of(int fig) {
    switch (figure_unit_of(fig)) {
    case UNIT_MS: return "%, ms, s or us";
    case UNIT_TOK_S: return "% or tok/s";
    case UNIT_REQ_S: return "% or req/s";
    default: return "% or pp";
    }
}

/* The threshold's unit into g: 0, or -1 when the figure has no such unit. */
static int read_unit(const char *u, gate *g) {
    static const struct {
        const char *unit;
        figure_unit of;
        double scale;
    } units[] = {{"ms", UNIT_MS, 1},       {"s", UNIT_MS, 1000},     {"us", UNIT_MS, 0.001},
                 {"tok/s", UNIT_TOK_S, 1}, {"req/s", UNIT_REQ_S, 1}, {"pp", UNIT_FRACTION, 0.01}};
    if (!strcmp(u, "%")) {
        g->relative = 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (!strcmp(u, units[i].unit) && figure_unit_of(g->fig) == units[i].of) {
            g->threshold *= units[i].scale;
            return 0;
        }
    return -1;
}

/* One item, without blanks. */
static int parse_item(const char *item, gate *g, char *err, int errlen) {
    memset(g, 0, sizeof *g);
    snprintf(g->text, sizeof g->text, "%s", item);
    size_t name_len = strcspn(item, "<>");
    if (!item[name_len] || name_len == 0) {
        snprintf(err, errlen, "'%s': expected FIGURE>+N%% or FIGURE<-N%% (e.g. ttft_p95>+10%%)",
                 item);
        return -1;
    }
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)name_len, item);
    if ((g->fig = figure_find(name)) < 0) {
        snprintf(err, errlen, "'%s': unknown figure '%s' (see servelab compare --help)", item,
                 name);
        return -1;
    }
    int grows = item[name_len] == '>';
    if (grows != figure_lower_is_better(g->fig)) {
        snprintf(err, errlen, "'%s': %s is worse when it %s: write %s%c%cN%%", item, name,
                 grows ? "shrinks" : "grows", name, grows ? '<' : '>', grows ? '-' : '+');
        return -1;
    }
    const char *p = item + name_len + 1;
    if ((*p == '+' && !grows) || (*p == '-' && grows)) {
        snprintf(err, errlen, "'%s': the sign contradicts '%c'", item, grows ? '>' : '<');
        return -1;
    }
    if (*p == '+' || *p == '-')
        p++;
    char *end;
    g->threshold = isdigit((unsigned char)*p) || *p == '.' ? strtod(p, &end) : NAN;
    if (!isfinite(g->threshold)) {
        snprintf(err, errlen, "'%s': expected a number after '%c'", item, grows ? '>' : '<');
        return -1;
    }
    if (read_unit(end, g)) {
        snprintf(err, errlen, "'%s': the threshold needs a unit: %s", item, units_of(g->fig));
        return -1;
    }
    return 0;
}

/* s without its blanks, in place ("ttft_p95 > +10 %" is "ttft_p95>+10%"). */
static char *squeeze(char *s) {
    char *to = s;
    for (const char *p = s; *p; p++)
        if (!isspace((unsigned char)*p))
            *to++ = *p;
    *to = 0;
    return s;
}

int gate_parse(const char *spec, gate *g, char *err, int errlen) {
    char *copy = xstrdup(spec), *save = NULL;
    int n = 0, rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        t = squeeze(t);
        if (n == GATE_MAX) {
            snprintf(err, errlen, "more than %d gates", GATE_MAX);
            rc = -1;
        } else if (strlen(t) >= sizeof g->text) {
            snprintf(err, errlen, "'%.40s...': too long for a gate", t);
            rc = -1;
        } else {
            rc = parse_item(t, &g[n++], err, errlen);
        }
    }
    free(copy);
    if (!rc && n == 0) {
        snprintf(err, errlen, "'%s': no gate in it (e.g. ttft_p95>+10%%)", spec);
        rc = -1;
    }
    return rc ? -1 : n;
}

int gate_tripped(const gate *g, const figure_change *c) {
    if (c->v == VERDICT_GONE) /* measured before, nothing to measure now */
        return 1;
    if (c->v != VERDICT_WORSE)
        return 0;
    double change = g->relative ? 100 * c->rel : c->diff;
    if (isnan(change))
        return 0;
    return figure_lower_is_better(g->fig) ? change > g->threshold : change < -g->threshold;
}
