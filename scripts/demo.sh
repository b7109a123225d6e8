#!/bin/sh
# Provisional demo until `servelab demo` lands: start the simulator with the
# gpu-7b profile, stream one chat completion, print it and the server's view.
set -e
BIN=${SERVELAB:-./servelab}
OUT=${1:-demo-out}
mkdir -p "$OUT"
"$BIN" sim --port 0 --profile gpu-7b --trace "$OUT/trace.csv" > "$OUT/sim.out" &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
for i in 1 2 3 4 5 6 7 8 9 10; do
    grep -q listening "$OUT/sim.out" 2>/dev/null && break
    sleep 0.2
done
URL=$(sed -n 's/^listening on //p' "$OUT/sim.out")
echo "simulator: $URL (profile gpu-7b)"
curl -sN "$URL/v1/chat/completions" -H 'Content-Type: application/json' \
    -d '{"messages":[{"role":"user","content":"Say hello"}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}'
kill $PID; wait $PID 2>/dev/null || true
echo "server trace ($OUT/trace.csv):"
cat "$OUT/trace.csv"
