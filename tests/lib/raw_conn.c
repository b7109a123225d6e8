/* raw_conn: deadline-bounded loopback socket I/O (see raw_conn.h). Every
 * loop is bounded in count as well as in time. */
#include "raw_conn.h"
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int tcp_open(int port, int limit_ms) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    CHECK(fd >= 0);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
        return fd;
    struct pollfd pfd = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t el = sizeof err;
    if (errno != EINPROGRESS || poll(&pfd, 1, limit_ms) != 1 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
        close(fd);
        return -1;
    }
    return fd;
}

size_t send_within(int fd, const char *p, size_t n, int limit_ms) {
    size_t off = 0;
    double end = now_ms() + limit_ms;
    while (off < n && now_ms() < end) {
        ssize_t w = send(fd, p + off, n - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            poll(&pfd, 1, 10);
        } else {
            break;
        }
    }
    return off;
}

size_t read_until_close(int fd, char *buf, size_t cap, int limit_ms, int *closed) {
    size_t got = 0;
    *closed = 0;
    double end = now_ms() + limit_ms;
    for (int i = 0; i < 1000000 && !*closed; i++) {
        int left = (int)(end - now_ms());
        if (left <= 0)
            break;
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, left) <= 0)
            continue;
        char sink[16384];
        char *to = got + 1 < cap ? buf + got : sink;
        size_t room = got + 1 < cap ? cap - 1 - got : sizeof sink;
        ssize_t r = read(fd, to, room);
        if (r > 0 && to != sink)
            got += (size_t)r;
        else if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
            *closed = 1;
    }
    buf[got] = 0;
    return got;
}
