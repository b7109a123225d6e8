/* stop: the request to stop that a signal makes. SIGINT (Ctrl-C), SIGTERM
 * (what Kubernetes and `kill` send) and SIGHUP (a dropped SSH session) all
 * set one flag instead of killing the process, so that a run cancels what is
 * left as rows and writes every file, and a sweep stops the server it
 * started. Every loop that may wait long polls stop_signal(). */
#ifndef SERVELAB_STOP_H
#define SERVELAB_STOP_H

/* Catch SIGINT, SIGTERM and SIGHUP from now on (idempotent). */
void stop_install(void);
/* The first of those signals that arrived, or 0. */
int stop_signal(void);

#endif
