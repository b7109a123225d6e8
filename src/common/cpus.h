/* cpus: keeping a measuring process on its own cores and ahead of the
 * machine's other work.
 *
 * On a machine shared with the server, two things put milliseconds into a
 * client's figures that belong to neither the client nor the server: the
 * scheduler waking the client on the server's core (loopback wakeups look
 * like a producer handing work to a consumer) and unrelated processes
 * preempting it. `--cpus` pins a process (its threads inherit it) and
 * `--realtime` asks for SCHED_FIFO, falling back to the highest nice value
 * allowed. Both are per-process and undone by exiting. */
#ifndef SERVELAB_CPUS_H
#define SERVELAB_CPUS_H

/* Pins the calling process to a CPU list such as "0", "2-3" or "0,2-3".
 * Returns 0, or -1 with a message naming what was wrong. */
int cpus_pin(const char *list, char *err, int errlen);

/* SCHED_FIFO at a low real-time priority when allowed, else nice -10, else
 * nothing. Returns what it got: "fifo", "nice" or "off". */
const char *cpus_realtime(void);
/* For a thread that only watches (progress, live metrics): SCHED_IDLE, so
 * that it runs only when the client's CPUs have nothing else to do. It
 * stays on them: moved to another CPU, a watcher preempted there (by a
 * real-time server, say) while holding a lock of the process's (its
 * memory map) would make the client wait for that CPU. */
void cpus_watcher_thread(void);

#endif
