/* answer: the capacity answer, with its whole interface: the highest load
 * at which at least `goal` of the requests meet the SLO, where it comes
 * from, and the one sentence that says it. `servelab capacity` (a search,
 * capacity/), `servelab predict --capacity` (the engine in virtual time,
 * capacity/longrun.h) and a report (report/answer.h: capacity.json read
 * back, or the crossing of a campaign's load line interpolated from its
 * runs) each fill a capacity_answer and say it with answer_sentence, so
 * that a report of a capacity search opens with the very sentence the
 * search printed, and an interpolated crossing says in its sentence that it
 * is not a capacity search and which runs it rests on.
 *
 * answer_json writes the answer's keys of capacity.json (docs/capacity.md
 * lists them; the search and predict add their probes or levels beside
 * them) and answer_read reads them back: every field the sentence needs is
 * among them. Numbers that do not apply are null there and NAN here, never
 * 0, so a reader cannot take "not found" for a capacity of nothing. */
#ifndef SERVELAB_MODEL_ANSWER_H
#define SERVELAB_MODEL_ANSWER_H

#include "model/slo.h"

#include <jansson.h>
#include <stddef.h>

typedef enum {
    ANSWER_SEARCHED,     /* servelab capacity: probes, a 95% interval */
    ANSWER_PREDICTED,    /* predict --capacity: virtual runs of the engine, bisected */
    ANSWER_INTERPOLATED, /* a report: between two runs of a campaign's load line */
} answer_source;

typedef enum {
    ANSWER_FOUND,
    ANSWER_NOT_REACHED,      /* the goal held at the highest load tried */
    ANSWER_MISSED_AT_LOWEST, /* and below it was not looked at */
    ANSWER_NO_LOAD,          /* interpolated: the runs have no load to order them by */
} answer_status;

/* capacity_answer.twin: how a search used the twin fitted to its probes */
enum {
    ANSWER_TWIN_NONE,      /* not asked (--twin off, older files, no bracket) */
    ANSWER_TWIN_CHECKED,   /* the answer is its proposal, probed (and a step above, if time) */
    ANSWER_TWIN_UNCHECKED, /* the answer is its proposal; --max-time left no room to probe it */
    ANSWER_TWIN_REJECTED,  /* a probe contradicted it: the answer is bisection's */
    ANSWER_TWIN_UNFIT,     /* it could not be fitted: the answer is bisection's */
};

/* capacity_answer.capped: why the answer is under the highest passing load */
enum { ANSWER_CAP_NONE, ANSWER_CAP_OVERLOAD, ANSWER_CAP_THROUGHPUT };

/* capacity_answer.binding: a bound of the SLO (0 to SLO_BOUNDS - 1), or
 * this: most misses were requests that failed. */
#define ANSWER_FAILURES SLO_BOUNDS

/* One run either side of an interpolated crossing: its load, its requests
 * and those that missed the SLO (late, or failed). */
typedef struct answer_run {
    double load;
    long requests, missed;
} answer_run;

typedef struct capacity_answer {
    answer_source source;
    answer_status status;
    int by_concurrency; /* loads are closed-loop users, else req/s */
    double goal;        /* the share of requests that must meet the SLO */
    slo_spec slo;
    int binding;            /* the bound most missed above the answer, or ANSWER_FAILURES */
    char failure[200];      /* ANSWER_FAILURES: the first failing probe's error, "" when none */
    double max;             /* found: the capacity */
    double ci_low, ci_high; /* its 95% interval (searched; NAN else) */
    double reached;         /* not reached: the highest load tried (it passed) */
    double lowest;          /* missed at lowest: the load tried first */
    int none_succeeded;     /* missed at lowest: not one request succeeded there */
    /* searched: how the search ended */
    int out_of_time;                  /* --max-time ended it before the precision */
    int confirm_asked;                /* --confirm on */
    int confirmed;                    /* the answer was run once more, longer, and held */
    double confirm_load, confirm_s;   /* that run's load and length */
    int upper_bound;                  /* probes shorter than the precision needs */
    double precision, need_s, full_s; /* the overload to show; a probe's arrivals: needed, had */
    /* searched, by rate: probes too short to show an overload of the
     * precision passed up to probed_load; the longest that passed there had
     * longest_s of arrivals, enough to show an overload of overload_shown
     * (a share) or more. The answer (max) is then probed_load less that
     * overload (ANSWER_CAP_OVERLOAD), or, when higher, the low end of what
     * the throughput probe says the server completes (tp_low-tp_high; NAN:
     * none) (ANSWER_CAP_THROUGHPUT), and no upper bound. */
    int capped; /* ANSWER_CAP_*; 0: not so */
    double probed_load, longest_s, overload_shown, tp_low, tp_high;
    double at_in_flight, at_goodput_rps, at_tokens_per_s; /* the best probe at the answer */
    int tries; /* probes (searched) or virtual runs (predicted) */
    /* searched: probes that began while the server was still working after
     * --drain-timeout (capacity/drain.h), so their verdicts met a backlog */
    int busy_probes;
    long requests_total; /* searched: the requests of every probe; -1 unknown (older files) */
    /* searched: the twin fitted to the probes (capacity/search_twin.c) */
    int twin;           /* ANSWER_TWIN_*: what became of it */
    double twin_load;   /* what it proposed (NAN: none) */
    int twin_probes;    /* the probes it was fitted to */
    char twin_why[240]; /* unfit or rejected: why */
    double twin_s;      /* the seconds its fits and virtual runs took (in wall_s) */
    double twin_scale;  /* its step costs' factor to match the throughput probe; NAN: no twin */
    double wall_s;
    /* predicted */
    double fail_load;    /* the lowest load that failed above the answer (NAN: none) */
    long requests_a_run; /* each virtual run's requests */
    /* interpolated */
    answer_run below, above; /* the runs that bracket the crossing (found) */
    int runs;                /* runs on the load line */
    /* a capacity.json written before the keys above: the sentence it
     * holds, said as it is ("" otherwise) */
    char said[1024];
} capacity_answer;

/* Every number NAN, nothing confirmed, from this source. */
void answer_init(capacity_answer *a, answer_source source);
/* The sentence, without a newline or a final stop. */
void answer_sentence(const capacity_answer *a, char *buf, size_t n);
/* capacity.json's answer keys (with "sentence"); the caller adds its own. */
json_t *answer_json(const capacity_answer *a);
/* capacity.json's object read back into *a (from a search or predict). 0,
 * or -1 with why in err when its status or unit is not one servelab
 * writes. */
int answer_read(const json_t *j, capacity_answer *a, char *err, int errlen);
/* "found", "not_reached", "missed_at_lowest" or "no_load". */
const char *answer_status_name(answer_status s);
/* capacity.json's "twin": "none", "checked", "unchecked", "rejected",
 * "unfit"; and back (anything else: ANSWER_TWIN_NONE). */
const char *answer_twin_name(int twin);
int answer_twin_of(const char *name);
/* The binding as capacity.json writes it: "ttft" ... "ttfa" or "failures". */
const char *answer_binding_name(int binding);

#endif
