#!/bin/sh
# Memcheck of the simulator under load and of a short client run against it:
# any memory error or definite leak fails (exit 1). Used by CI.
set -e
BIN=${SERVELAB:-./servelab}
DIR=$(mktemp -d /tmp/servelab-valgrind-XXXXXX)
SIM=
cleanup() {
    if [ -n "$SIM" ]; then kill "$SIM" 2>/dev/null || true; fi
    rm -rf "$DIR"
}
trap cleanup EXIT
VG="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite"
$VG --log-file="$DIR/sim.vg" "$BIN" sim --port 0 --fault http429=0.05,disconnect=0.05,malformed=0.05 > "$DIR/sim.out" &
SIM=$!
for i in $(seq 1 100); do
    grep -q listening "$DIR/sim.out" 2>/dev/null && break
    sleep 0.1
done
URL=$(sed -n 's/^listening on //p' "$DIR/sim.out")
[ -n "$URL" ] || { echo "valgrind: the simulator did not start"; exit 1; }
rc=0
$VG --log-file="$DIR/run.vg" "$BIN" run --quiet --url "$URL" --rate 100 --requests 300 \
    --api chat --out "$DIR/run" > /dev/null || rc=$?
kill -TERM $SIM
wait $SIM || rc_sim=$?
SIM=
for f in run sim; do
    if [ -s "$DIR/$f.vg" ]; then
        echo "valgrind: errors in $f:"
        cat "$DIR/$f.vg"
        rc=1
    fi
done
[ "${rc_sim:-0}" -eq 99 ] && rc=1
if [ "$rc" -ne 0 ]; then
    echo "valgrind: FAILED"
    exit 1
fi
echo "valgrind: 0 errors, no definite leaks (simulator under load with faults, client run of 300 requests)"
exit 0
