#!/bin/sh
# The layers of src/: which folders each folder's files may include. The
# data flows workload -> client -> analysis -> report, with the protocol
# (HTTP/1.1, SSE, a chunk's JSON) below the client, the simulator
# and the monitors beside; common/ is below everything; run/ (which may send
# a schedule to the simulator's engine in virtual time), calibrate/ and
# sweep/ put the pieces together, capacity/ searches with sweep/'s, fit/
# reads rows into a simulator profile; cli/ holds
# the commands. rundir/ owns the run directory (its files' columns and
# keys, its writers' shared parts, the --out policy): above the analysis,
# below everything that writes or reads a run. An include that
# climbs (client/ including analysis/, say) is printed with its file and
# line, and the exit status is 1.
cd "$(dirname "$0")/.." || exit 2
allowed() {
    case "$1" in
    common) echo "common" ;;
    workload | monitor | sim | analysis | protocol) echo "$1 common" ;;
    rundir) echo "rundir analysis monitor workload protocol common" ;;
    client) echo "client rundir protocol common workload monitor" ;;
    report) echo "report rundir analysis common" ;;
    run) echo "run rundir client protocol analysis monitor workload sim common" ;;
    calibrate) echo "calibrate rundir analysis common" ;;
    sweep) echo "sweep rundir run report sim analysis client protocol monitor workload common" ;;
    capacity) echo "capacity rundir sweep run report sim analysis client protocol monitor workload common" ;;
    fit) echo "fit rundir sim common" ;;
    cli) echo "cli rundir capacity sweep run calibrate fit report sim analysis client protocol monitor workload common" ;;
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
