/* raw_conn: loopback TCP for tests that play a misbehaving client: a
 * non-blocking connection and reads and writes bounded by a deadline, so
 * that no test can hang on a peer that stops answering. */
#ifndef SERVELAB_TEST_RAW_CONN_H
#define SERVELAB_TEST_RAW_CONN_H

#include <stddef.h>

/* The monotonic clock in milliseconds. */
double now_ms(void);
/* A non-blocking loopback connection, connected within limit_ms; -1 if not. */
int tcp_open(int port, int limit_ms);
/* Write all of it within limit_ms; returns the bytes written. */
size_t send_within(int fd, const char *p, size_t n, int limit_ms);
/* Read until the peer closes (*closed = 1) or limit_ms passes; NUL-ends.
 * What does not fit in buf is read and dropped. */
size_t read_until_close(int fd, char *buf, size_t cap, int limit_ms, int *closed);

#endif
