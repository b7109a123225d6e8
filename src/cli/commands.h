/* commands: one entry point per subcommand; main.c only dispatches. Each
 * returns the process exit code (0 ok, 1 run/check failed, 2 bad usage). */
#ifndef SERVELAB_COMMANDS_H
#define SERVELAB_COMMANDS_H

int cmd_sim(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

#endif
