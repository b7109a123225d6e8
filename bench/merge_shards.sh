#!/bin/sh
# Benchmark: `servelab merge` of SHARDS shards of one schedule, each of
# REQUESTS request rows and CHUNKS chunk rows a request (default 16 x
# 1,000,000 x 8). The shards' meta.json come from a real sharded run (one
# request a shard, against `servelab sim` on loopback); their rows are then
# replaced by synthetic ones in the format `servelab run` writes, with the
# indices each shard owns (k, k + SHARDS, ...) in completion order (a little
# out of index order, as a real shard's are), and meta.json's counts made to
# match. Shards started at different wall-clock times (t0_utc a few ms
# apart), so every time column is moved, the costlier case.
#
# Prints wall time and peak RSS of each of REPEAT merges and their
# medians; with OLD=BINARY, that binary's too, run for run side by side on
# the same shards, the ratio of the medians, and whether the two merged
# directories hold the same requests.csv, chunks.csv and summary.json byte
# for byte. Before each merge the last one's output is removed, synced,
# and SETTLE seconds (default 15) let the disk finish with the removal: on
# a file system mounted with discard (this VM's) the blocks of 5 GB just
# freed are discarded in the background, and a merge started at once ran
# up to twice as long. Target: 16 x 1M in under 20 s.
#   sh bench/merge_shards.sh [SHARDS] [REQUESTS] [CHUNKS] [REPEAT]
#   OLD=/path/to/older/servelab sh bench/merge_shards.sh
set -e
S=${1:-16}
N=${2:-1000000}
C=${3:-8}
REPEAT=${4:-3}
BIN=${SERVELAB:-./servelab}
SETTLE=${SETTLE:-15}
DIR=$(mktemp -d /tmp/servelab-bench-XXXXXX)
SIMPID=
cleanup() {
    [ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null || true
    if [ -n "${KEEP:-}" ]; then echo "kept: $DIR"; else rm -rf "$DIR"; fi
}
trap cleanup EXIT
. "$(dirname "$0")/side_by_side.sh"

# ---- the shards' meta.json, from a real sharded run ----
PORT=$((20000 + $$ % 20000))
"$BIN" sim --port "$PORT" --profile tiny >/dev/null 2>&1 &
SIMPID=$!
sleep 0.5
for k in $(seq 0 $((S - 1))); do
    "$BIN" run --url "http://127.0.0.1:$PORT" --prompts random:16:8 --max-tokens 8 --ignore-eos \
        --rate 1000 --requests "$S" --seed 3 --quiet --no-sampling --shard "$k/$S" \
        --out "$DIR/shard-$k" >/dev/null 2>&1
done
kill "$SIMPID" 2>/dev/null || true
SIMPID=

echo "generating $S shards of $N requests and $((N * C)) chunks each in $DIR ..."
gen() { # shard k: its rows and its meta.json's counts
    k=$1
    d=$DIR/shard-$k
    awk -v n="$N" -v c="$C" -v k="$k" -v s="$S" -v req="$d/requests.csv" -v chk="$d/chunks.csv" '
    function emit(j,   i, sc, sent, f, t, q, cls, err) {
        i = j * s + k;
        sc = i * 0.625; sent = sc + 0.05; f = sent + 20 + rand() * 200; t = f;
        for (q = 0; q < c; q++) {
            if (q) t += 5 + rand() * 30;
            printf "req-%d,%d,%.3f,1\n", i, q, t > chk;
        }
        cls = (i % 3 == 0) ? "short" : (i % 3 == 1) ? "medium" : "long";
        err = (i % 97 == 0) ? "timeout" : "";
        printf "req-%d,%s,%.3f,%.3f,%.3f,%.3f,%.3f,120,%d,%.3f,%.3f,%.3f,length,200,%s,%d,0.010\n",
            i, cls, sc, sent, f, t, t + 0.1, c, f - sent, (c > 1 ? (t - f) / (c - 1) : 0), t + 0.1 - sent, err, c > req;
    }
    BEGIN {
        srand(k + 1);
        print "request_id,class,scheduled_ms,sent_ms,first_token_ms,last_token_ms,end_ms,prompt_tokens,output_tokens,ttft_ms,tpot_ms,e2e_ms,finish_reason,http_status,error,chunks,lag_ms" > req;
        print "request_id,index,t_ms,tokens" > chk;
        for (j = 0; j < n; j += 2) { # completion order: neighbours swapped now and then
            if (j + 1 < n && rand() < 0.3) { emit(j + 1); emit(j) }
            else { emit(j); if (j + 1 < n) emit(j + 1) }
        }
    }'
    python3 - "$d/meta.json" "$N" "$S" "$k" <<'EOF'
import json, sys
p, n, s, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
m = json.load(open(p))
m["shard"]["requests"] = n
m["shard"]["schedule_requests"] = n * s
m["config"]["requests"] = n * s
m["start_at_utc"] = None
m["t0_utc"] = "2026-12-03T12:00:00.%06dZ" % (1000 * k)
json.dump(m, open(p, "w"), indent=2)
EOF
}
for k in $(seq 0 $((S - 1))); do
    gen "$k" &
    if [ $((k % 2)) -eq 1 ]; then wait; fi
done
wait
for k in $(seq 0 $((S - 1))); do
    [ "$(wc -l <"$DIR/shard-$k/requests.csv")" -eq $((N + 1)) ] ||
        { echo "generating shard $k failed" >&2; exit 1; }
done
du -sh "$DIR" | awk '{print "shards on disk: " $1}'
SHARDS=$(for k in $(seq 0 $((S - 1))); do printf '%s ' "$DIR/shard-$k"; done)

for r in $(seq 1 "$REPEAT"); do
    if [ -n "${OLD:-}" ]; then
        rm -rf "$DIR/merged-old" "$DIR/merged"
        sync
        sleep "$SETTLE"
        # the first version held every row in memory: a large merge may be killed
        timed old "run $r old:" "$OLD" merge $SHARDS --out "$DIR/merged-old" || true
    fi
    rm -rf "$DIR/merged"
    sync
    sleep "$SETTLE"
    timed new "run $r:    " "$BIN" merge $SHARDS --out "$DIR/merged"
done
wc -l "$DIR/merged/requests.csv" "$DIR/merged/chunks.csv" | head -2
medians new "" "target: 16 x 1M < 20 s"
if [ -n "${OLD:-}" ] && [ -n "${old_times:-}" ]; then
    medians old "old "
    echo "ratio new/old: $(ratio new old)"
    same=yes
    for f in requests.csv chunks.csv summary.json; do
        cmp -s "$DIR/merged/$f" "$DIR/merged-old/$f" || { same=no; echo "differs: $f"; }
    done
    echo "same output: $same"
fi
