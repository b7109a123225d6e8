#!/bin/sh
# The layers of src/ (docs/architecture.md draws them): each room sits on a
# floor, and its files may include their own room's headers and those of
# rooms on lower floors only; rooms on one floor are siblings and include
# none of each other. From the bottom:
#   1 common                      mechanism: buffers, files, clocks, CSV, options
#   2 model                       the nouns every room shares: record, SLO, answer
#   3 protocol workload sim monitor analysis
#                                 the wire, what is sent, the simulated server,
#                                 what is watched, the figures
#   4 rundir                      the run directory: its files, tables, policy
#   5 client target               the load generator; the server under test
#   6 run                         one run, end to end
#   7 report fit calibrate        reading runs into pictures, profiles, a verdict
#   8 capacity sweep              the search; the campaign (siblings)
#   9 cli                         the commands: the only room that prints or exits
# An include that climbs or crosses (client/ including analysis/, capacity/
# including sweep/) is printed with its file and line, and the exit status
# is 1; so is a folder with no floor.
cd "$(dirname "$0")/.." || exit 2
floor() {
    case "$1" in
    common) echo 1 ;;
    model) echo 2 ;;
    protocol | workload | sim | monitor | analysis) echo 3 ;;
    rundir) echo 4 ;;
    client | target) echo 5 ;;
    run) echo 6 ;;
    report | fit | calibrate) echo 7 ;;
    capacity | sweep) echo 8 ;;
    cli) echo 9 ;;
    *) echo "" ;;
    esac
}
status=0
for f in src/*/*.[ch]; do
    room=$(echo "$f" | cut -d/ -f2)
    mine=$(floor "$room")
    [ -n "$mine" ] || { echo "$f: folder src/$room/ has no floor in the layers"; status=1; continue; }
    grep -n '^#include "' "$f" | while IFS=: read -r line text; do
        inc=$(echo "$text" | sed 's/^#include "\([^"/]*\)\/.*/\1/')
        [ "$inc" = "$room" ] && continue
        theirs=$(floor "$inc")
        if [ -z "$theirs" ]; then
            echo "$f:$line: src/$inc/ has no floor in the layers ($text)"
            exit 1
        elif [ "$theirs" -ge "$mine" ]; then
            echo "$f:$line: src/$room/ (floor $mine) may not include $inc/ (floor $theirs) ($text)"
            exit 1
        fi
    done || status=1
done
exit $status
