#!/bin/sh
# Benchmark: the client's peak memory for a long run at low concurrency.
# 1,000,000 requests (2 output tokens each, ~20 in flight) against the
# simulator; prints the client's and the simulator's peak RSS and the
# client's bytes per finished request. Target (issue 6): under 200 MiB.
#   sh bench/run_memory.sh [REQUESTS] [RATE]
set -e
N=${1:-1000000}
RATE=${2:-8000}
BIN=${SERVELAB:-./servelab}
DIR=$(mktemp -d /tmp/servelab-mem-XXXXXX)
trap 'kill $SIM 2>/dev/null; rm -rf "$DIR"' EXIT
"$BIN" sim --port 0 --decode-base-ms 0.2 > "$DIR/sim.out" &
SIM=$!
for i in $(seq 1 50); do grep -q listening "$DIR/sim.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$DIR/sim.out")
echo "running $N requests at $RATE/s against $URL ..."
/usr/bin/time -f "%M %e %U %S" -o "$DIR/run.rss" "$BIN" run --quiet --url "$URL" \
    --rate "$RATE" --arrival constant --requests "$N" --prompts random:8:2 --ignore-eos \
    --no-sampling --out "$DIR/run" | sed -n '1,3p'
SIM_HWM=$(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$SIM/status)
kill -TERM $SIM; wait $SIM 2>/dev/null || true
SIM=
read -r rss wall user sys < "$DIR/run.rss"
echo "client: peak RSS $((rss / 1024)) MiB over $wall s ($((rss * 1024 / N)) bytes per request), CPU ${user}s user ${sys}s sys"
echo "simulator: peak RSS $SIM_HWM MiB"
echo "rows: $(($(wc -l < "$DIR/run/requests.csv") - 1)) requests, $(($(wc -l < "$DIR/run/chunks.csv") - 1)) chunks"
