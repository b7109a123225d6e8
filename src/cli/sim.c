/* cli/sim: `servelab sim`, the simulated server: reads the command line
 * against sim_options (sim/sim_options.c), the profile first so that the
 * engine flags override it, places the process, and serves (sim/serve.c). */
#include "cli/commands.h"
#include "common/cpus.h"
#include "sim/serve.h"
#include "sim/sim_options.h"

#include <stdio.h>

/* The command once the profile is read into *po (sim_main frees it). */
static int sim_with(sim_opts *po, int argc, char **argv);

/* The first line on stdout, which scripts and tests wait for. */
static void say_listening(void *arg, const char *url) {
    (void)arg;
    printf("listening on %s\n", url);
    fflush(stdout);
}

static int sim_main(int argc, char **argv) {
    sim_opts o;
    opt_args args;
    char err[512];
    sim_opts_init(&o, "tiny");
    /* The profile first: the engine's flags override its values (an unknown
     * profile is reported by cli_parse, like any bad value). */
    if (opt_scan(sim_options, argc, argv, &args, err, sizeof err) == 0) {
        int rc = sim_opts_init_chosen(&o, opt_value(&args, "profile"),
                                      opt_value(&args, "profile-file"), err, sizeof err);
        opt_args_free(&args);
        if (rc < 0)
            return cli_fail(&cmd_sim, "%s", err);
    }
    int code = sim_with(&o, argc, argv);
    sim_opts_free(&o);
    return code;
}

static int sim_with(sim_opts *po, int argc, char **argv) {
    sim_opts *o = po;
    char err[512];
    int rc = cli_parse(&cmd_sim, argc, argv, o, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (sim_opts_finish(o, err, sizeof err))
        return cli_fail(&cmd_sim, "%s", err);
    if (o->cpus && cpus_pin(o->cpus, err, sizeof err))
        return cli_fail(&cmd_sim, "%s", err);
    if (o->realtime)
        cpus_realtime();
    outcome done = sim_serve(&o->cfg, say_listening, NULL, err, sizeof err);
    if (done != OUTCOME_OK)
        cli_fail(&cmd_sim, "%s", err);
    return cli_exit_code(done);
}

const command cmd_sim = {
    .name = "sim",
    .run = sim_main,
    .usage = "sim [options]",
    .about = "simulated OpenAI-compatible server (the fixture)",
    .text = "A simulated vLLM-like OpenAI-compatible server: continuous batching, paged KV\n"
            "cache, preemption, vLLM metric names. Prints 'listening on http://HOST:PORT'.",
    .options = sim_options,
    .key_prefix = "target.sim.",
    .notes = "A request must arrive whole within the request timeout (the first one counted\n"
             "from the connection's accept); an idle keep-alive connection closes after the\n"
             "idle timeout; at the connection limit a new connection evicts the one that has\n"
             "waited longest for its next request.\n",
};
