#!/bin/sh
# Benchmark: servelab's per-request timing columns against a packet capture
# of the same run. Starts `servelab sim --close-after-stream` on a free
# loopback port (so every request opens its own connection, as against
# llama.cpp's server), captures that port on lo with tcpdump, runs `servelab
# run` against it, and hands capture and run to bench/wire_phases.py, which
# ties connections to requests by their X-Request-Id and prints, per timing
# column, how many requests matched and p50/p99/max of |row - capture| in
# ms, with PASS/FAIL against LIMIT_MS at p99. With two or more CPUs the
# simulator gets the last one and the client the others, as calibrate
# places them. Needs root (tcpdump) and python3; run from the repository
# root:
#   sh bench/wire_phases.sh
# Environment: SERVELAB (./servelab), RATE (20), REQUESTS (200),
# PROMPTS (random:64:32), LIMIT_MS (0.1), KEEP=1 keeps the capture and the
# run's files (the directory is printed).
set -e
BIN=${SERVELAB:-./servelab}
RATE=${RATE:-20}
REQUESTS=${REQUESTS:-200}
PROMPTS=${PROMPTS:-random:64:32}
LIMIT_MS=${LIMIT_MS:-0.1}
HERE=$(dirname "$0")
if [ "$(id -u)" != 0 ]; then
    echo "wire_phases: tcpdump needs root" >&2
    exit 2
fi
DIR=$(mktemp -d /tmp/servelab-wire-XXXXXX)
SIM_PID=
DUMP_PID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    [ -n "$DUMP_PID" ] && kill -INT "$DUMP_PID" 2>/dev/null && wait "$DUMP_PID" 2>/dev/null
    [ -n "$SIM_PID" ] && kill -TERM "$SIM_PID" 2>/dev/null && wait "$SIM_PID" 2>/dev/null
    if [ "${KEEP:-0}" = 1 ]; then echo "wire_phases: files kept in $DIR" >&2; else rm -rf "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits up to 10 s for FILE to contain TEXT.
wait_for() { # FILE TEXT WHAT
    i=0
    while ! grep -q "$2" "$1" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -gt 100 ]; then
            echo "wire_phases: $3 did not start:" >&2
            cat "$1" "$1.err" >&2 2>/dev/null || true
            exit 2
        fi
        sleep 0.1
    done
}

# The simulator on the last CPU this process may use, the client on the rest.
# shellcheck disable=SC2046 # split on purpose: SIM_CPU CLIENT_CPUS
set -- $(python3 -c 'import os
c = sorted(os.sched_getaffinity(0))
print(c[-1], ",".join(map(str, c[:-1]))) if len(c) > 1 else None')
SIM_CPUS=${1:+--cpus $1}
CLIENT_CPUS=${2:+--cpus $2}

# shellcheck disable=SC2086
"$BIN" sim --port 0 --close-after-stream $SIM_CPUS >"$DIR/sim.out" 2>"$DIR/sim.out.err" &
SIM_PID=$!
wait_for "$DIR/sim.out" "listening on" "servelab sim"
PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$DIR/sim.out")

# Immediate mode, or TPACKET_V3 holds the last block back and the final
# requests are missing; a short snap length (the heads and the first events
# are all that is read) so the ring holds many frames and drops none.
tcpdump -i lo -n -tt -U --immediate-mode -s 1024 -B 65536 --time-stamp-precision=nano \
    -w "$DIR/wire.pcap" "tcp port $PORT" 2>"$DIR/tcpdump.out" &
DUMP_PID=$!
wait_for "$DIR/tcpdump.out" "listening on" "tcpdump"

echo "wire_phases: sim on 127.0.0.1:$PORT${1:+ (CPU $1)}, client${2:+ on CPUs $2}," \
    "$REQUESTS requests at $RATE req/s, prompts $PROMPTS"
# shellcheck disable=SC2086
if ! "$BIN" run --quiet --url "http://127.0.0.1:$PORT" --rate "$RATE" --requests "$REQUESTS" \
    --prompts "$PROMPTS" --out "$DIR/run" $CLIENT_CPUS >"$DIR/run.out" 2>&1; then
    echo "wire_phases: servelab run failed:" >&2
    cat "$DIR/run.out" >&2
    exit 2
fi
grep -E '^requests|^client' "$DIR/run.out" || true

sleep 0.3 # the last connections' FINs
kill -INT "$DUMP_PID"
wait "$DUMP_PID" || true
DUMP_PID=
grep -E 'captured|dropped' "$DIR/tcpdump.out" | sed 's/^/tcpdump: /'
DROPPED=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' "$DIR/tcpdump.out")
if [ "${DROPPED:-0}" != 0 ]; then
    echo "wire_phases: warning: the capture lost $DROPPED packets; figures may be wrong" >&2
fi

set +e
python3 "$HERE/wire_phases.py" "$DIR/wire.pcap" "$PORT" "$DIR/run" "$LIMIT_MS"
STATUS=$?
exit "$STATUS"
