/* fault_cases: what the fault-injection loops (failing writes, t6170;
 * failing allocations, t6180) run, and what they check after each try:
 * the commands that write a user's files (a virtual run, a report, a
 * merge, a fit, a capacity search), the inputs those need, and the two
 * checks every try gets (each JSON document whole; a profile, when left,
 * readable). One list, so the two loops cover the same commands. */
#ifndef SERVELAB_TEST_FAULT_CASES_H
#define SERVELAB_TEST_FAULT_CASES_H

/* After each try: `out` the try's output path, `code` its exit code,
 * `when` what failed ("at 4 blocks", "allocation 120 failed"). */
typedef void (*fault_check_fn)(const char *out, int code, const char *when);

typedef struct fault_case {
    const char *name;
    char fmt[8192];       /* servelab's arguments, one %s: the try's output path */
    fault_check_fn check; /* beside fault_json_whole; NULL: none */
} fault_case;

enum { FAULT_CASES = 5 };

/* Makes the inputs under dir (a whole virtual run, two shards of a run
 * against a simulator, a run to fit) and fills the five cases. */
void fault_cases_make(const char *dir, fault_case cases[FAULT_CASES]);
/* Every JSON document servelab writes whole, directly in dir, parses;
 * else the test fails naming `what` and `when`. */
void fault_json_whole(const char *dir, const char *what, const char *when);

#endif
