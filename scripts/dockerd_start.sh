#!/bin/sh
# dockerd_start.sh [LOG]: makes sure a Docker daemon answers, for the image
# test (tests/cli/t9030-docker-image.c, scripts/docker_image.sh). When `docker info`
# already answers it does nothing; otherwise it starts Debian's dockerd
# (docker.io) detached, logging to LOG (default /var/log/dockerd.log), and
# waits until it answers. The daemon gets no bridge and touches no
# iptables: every container servelab's scripts run uses --network host, so
# all traffic stays on this machine's loopback. Needs root. Exit 3 when
# dockerd is not installed, 1 when it did not come up (the log's tail
# says why).
set -eu
log=${1:-/var/log/dockerd.log}

docker info >/dev/null 2>&1 && exit 0
command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ] ||
    { echo "dockerd_start.sh: dockerd is not installed (apt-get install docker.io)" >&2; exit 3; }
[ "$(id -u)" -eq 0 ] || { echo "dockerd_start.sh: needs root to start dockerd" >&2; exit 3; }
PATH=$PATH:/usr/sbin
mkdir -p "$(dirname "$log")"
# setsid: the daemon outlives the shell (and the test's process group) that started it
setsid dockerd --bridge=none --iptables=false >>"$log" 2>&1 </dev/null &
i=0
until docker info >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -ge 300 ] || ! kill -0 $! 2>/dev/null; then
        echo "dockerd_start.sh: dockerd did not answer within 30 s; the end of $log:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    sleep 0.1
done
echo "dockerd_start.sh: dockerd started (pid $!, log $log)" >&2
