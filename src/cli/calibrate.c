/* cli/calibrate: `servelab calibrate`: how far this machine can be trusted
 * to measure. Prints a table and one sentence, and saves the result
 * (default ~/.cache/servelab/calibration.json) to compare a machine with
 * itself later (calibrate/session.c does the work). A run says on its own
 * when it went beyond 1 ms (summary.json's client.within_1ms). */
#include "calibrate/session.h"
#include "cli/commands.h"

#include <stdio.h>

#define CAL(field) OPT_AT(calib_session, field)
static const opt_def calibrate_options[] = {
    {.name = "levels",
     .type = OPT_STRING,
     CAL(levels),
     .arg = "S@MS,...",
     .check = calibrate_levels_check,
     .def = NULL,
     .help = "streams @ simulator step in ms; burst:S@MS starts the S together (default "
             "10@1,100@1,1000@10,5000@50,5000@25,burst:1000@10,burst:5000@50)"},
    {.name = "seconds",
     .type = OPT_NUMBER,
     CAL(o.seconds),
     .arg = "S",
     .min = 0.2,
     .max = 600,
     .def = "2",
     .help = "how long each stream lasts"},
    {.name = "burst-rounds",
     .type = OPT_INT,
     CAL(burst_rounds),
     .arg = "N",
     .min = 1,
     .max = 20,
     .def = "2",
     .help = "requests each stream of a burst level runs back to back"},
    {.name = "save",
     .type = OPT_STRING,
     CAL(save),
     .arg = "FILE",
     .help = "where to keep the result (~/.cache/servelab/calibration.json)"},
    {.name = "keep",
     .type = OPT_STRING,
     CAL(keep),
     .arg = "DIR",
     .help = "keep the rows and traces in DIR"},
    {.name = "repeat",
     .type = OPT_INT,
     CAL(o.repeat),
     .arg = "N",
     .min = 1,
     .max = 64,
     .def = "1",
     .help = "run each level N times, report medians"},
    {.name = "threads",
     .type = OPT_INT,
     CAL(o.threads),
     .arg = "N",
     .min = 1,
     .max = 64,
     .def = "1",
     .help = "client threads, as servelab run --threads"},
    {.name = "no-pin",
     .type = OPT_FLAG,
     CAL(no_pin),
     .help = "do not put the simulator and the client on separate CPUs"},
    {.name = "no-realtime",
     .type = OPT_FLAG,
     CAL(o.realtime),
     .help = "do not ask for SCHED_FIFO (run/sim --realtime)"},
    {.name = "http-client",
     .type = OPT_CHOICE,
     CAL(o.http_client),
     .arg = "C",
     .choices = "auto|builtin|libcurl",
     .help = "the client's HTTP client, as servelab run"},
    {.name = "client-progress",
     .type = OPT_FLAG,
     CAL(o.client_progress),
     .help = "the client prints its progress twice a second (to measure what that costs)"},
    {.name = "sim-threads",
     .type = OPT_INT,
     CAL(o.sim_threads),
     .arg = "N",
     .min = 1,
     .max = 64,
     .def = "1",
     .help = "the simulator's I/O threads, as servelab sim --threads"},
    {.name = "json",
     .type = OPT_FLAG,
     CAL(json),
     .help = "print the result as JSON instead of the table"},
    {0}};

static int calibrate_main(int argc, char **argv) {
    calib_session s = {0};
    opt_defaults(calibrate_options, &s);
    int rc = cli_parse(&cmd_calibrate, argc, argv, &s, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    s.o.realtime = !s.o.realtime; /* the flag is --no-realtime */
    s.o.self = cli_self_path(argv[0]);
    s.out = stdout;
    char err[512];
    if (calibrate_session(&s, err, sizeof err)) {
        fprintf(stderr, "servelab: calibrate: %s\n", err);
        return 1;
    }
    return 0;
}

const command cmd_calibrate = {
    .name = "calibrate",
    .run = calibrate_main,
    .usage = "calibrate [--levels S@MS,...] [--seconds S] [--save FILE]",
    .about = "how far this machine measures within 1 ms",
    .text = "Runs the simulator and the client on this machine at rising load and says\n"
            "up to which streams and chunk rate it measures within 1 ms: schedule lag, TTFT\n"
            "and inter-token errors against the simulator's per-token trace. A level's\n"
            "arrivals are spread over a second (S@MS) or all start together (burst:S@MS:\n"
            "--rate inf --concurrency S, 2 x S requests (--burst-rounds)); for each, the sentence "
            "claims no\n"
            "further than below the lightest level that failed. The two processes are\n"
            "pinned to separate CPUs when there are enough (--no-pin to not) and ask for\n"
            "SCHED_FIFO (--no-realtime to not).",
    .options = calibrate_options,
};
