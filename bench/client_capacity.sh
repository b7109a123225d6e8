#!/bin/sh
# Benchmark: how far the client measures within 1 ms on this machine.
# Runs `servelab calibrate` (the simulator and the client as two processes,
# the client's chunk times joined with the simulator's per-token trace) over
# more levels than its default, each level REPEAT times, and prints the
# medians: concurrent streams, chunks/s offered and achieved, schedule lag
# p50/p99, TTFT and inter-token error p50/p99 against the trace, client and
# simulator CPU and peak RSS, and client bytes per in-flight stream.
# With one client thread and one simulator thread on a machine of two or
# more CPUs, calibrate pins them apart and asks for SCHED_FIFO (see
# `servelab calibrate --help`).
#   sh bench/client_capacity.sh [REPEAT] [THREADS] [SIM_THREADS]
set -e
REPEAT=${1:-3}
THREADS=${2:-1}
SIM_THREADS=${3:-1}
BIN=${SERVELAB:-./servelab}
LEVELS=${LEVELS:-10@1,100@1,1000@10,2000@20,5000@50,5000@35,5000@25}
"$BIN" calibrate --repeat "$REPEAT" --threads "$THREADS" --sim-threads "$SIM_THREADS" \
    --levels "$LEVELS" --seconds 3 \
    --save /tmp/servelab-bench-calibration.json
