#!/bin/sh
# Benchmark: how far the client measures within 1 ms when the streams start
# together (--rate inf --concurrency N, as most people benchmark), against
# the simulator's per-token trace. Runs `servelab calibrate` on burst
# levels, each REPEAT times, and prints the median table and sentence of
# each. A burst level burst:S@MS runs 3 x S requests of 100 tokens
# (--burst-rounds 3, one more than calibrate's default), at most
# S in flight:
#   300 and 1,000 streams with a 10 ms step (--seconds 1: 100 tokens each)
#   5,000 streams with a 50 ms step (--seconds 5: 100 tokens each)
# Both at 100,000 chunks/s offered. The two stream lengths need two
# calibrate runs (--seconds is one per run), so two tables.
#   sh bench/burst_accuracy.sh [REPEAT] [THREADS] [SIM_THREADS]
# LEVELS_1S and LEVELS_5S replace the levels of each run.
set -e
REPEAT=${1:-3}
THREADS=${2:-1}
SIM_THREADS=${3:-1}
BIN=${SERVELAB:-./servelab}
LEVELS_1S=${LEVELS_1S:-burst:300@10,burst:1000@10}
LEVELS_5S=${LEVELS_5S:-burst:5000@50}
echo "burst_accuracy: $LEVELS_1S, 100 tokens a request (--seconds 1), medians of $REPEAT" >&2
"$BIN" calibrate --repeat "$REPEAT" --threads "$THREADS" --sim-threads "$SIM_THREADS" \
    --levels "$LEVELS_1S" --burst-rounds 3 --seconds 1 --save /tmp/servelab-bench-burst-1s.json
echo
echo "burst_accuracy: $LEVELS_5S, 100 tokens a request (--seconds 5), medians of $REPEAT" >&2
"$BIN" calibrate --repeat "$REPEAT" --threads "$THREADS" --sim-threads "$SIM_THREADS" \
    --levels "$LEVELS_5S" --burst-rounds 3 --seconds 5 --save /tmp/servelab-bench-burst-5s.json
