#!/bin/sh
# The layers of src/: which folders each folder's files may include. The
# data flows workload -> client -> analysis -> report, with the protocol
# (HTTP/1.1, SSE, a chunk's JSON) below the client, the simulator
# and the monitors beside; common/ is below everything, and model/ (the
# nouns every layer shares: the SLO, the capacity answer) just above it; run/ (which may send
# a schedule to the simulator's engine in virtual time), calibrate/ and
# sweep/ put the pieces together, capacity/ searches with sweep/'s, fit/
# reads rows into a simulator profile; cli/ holds
# the commands. An include that
# climbs (client/ including analysis/, say) is printed with its file and
# line, and the exit status is 1.
cd "$(dirname "$0")/.." || exit 2
allowed() {
    case "$1" in
    common) echo "common" ;;
    model) echo "model common" ;;
    workload | monitor | sim | analysis | protocol) echo "$1 model common" ;;
    client) echo "client protocol model common workload monitor" ;;
    report) echo "report analysis model common" ;;
    run) echo "run client protocol analysis monitor workload sim model common" ;;
    calibrate) echo "calibrate analysis model common" ;;
    sweep) echo "sweep run report sim analysis client protocol monitor workload model common" ;;
    capacity) echo "capacity sweep run report sim analysis client protocol monitor workload model common" ;;
    fit) echo "fit sim model common" ;;
    cli) echo "cli capacity sweep run calibrate fit report sim analysis client protocol monitor workload model common" ;;
    *) echo "" ;;
    esac
}
status=0
for f in src/*/*.[ch]; do
    layer=$(echo "$f" | cut -d/ -f2)
    ok=$(allowed "$layer")
    [ -n "$ok" ] || { echo "$f: folder src/$layer/ has no place in the layers"; status=1; continue; }
    grep -n '^#include "' "$f" | while IFS=: read -r line text; do
        inc=$(echo "$text" | sed 's/^#include "\([^"/]*\)\/.*/\1/')
        case " $ok " in
        *" $inc "*) ;;
        *) echo "$f:$line: src/$layer/ may not include $inc/ ($text)"; exit 1 ;;
        esac
    done || status=1
done
exit $status
