/* stop: one flag set by SIGINT, SIGTERM or SIGHUP (see stop.h). The handler
 * only stores the signal number; sig_atomic_t makes that safe. */
#include "common/stop.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_sig;

static void on_stop_signal(int sig) {
    if (!stop_sig)
        stop_sig = sig;
}

void stop_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int stop_signal(void) {
    return stop_sig;
}
