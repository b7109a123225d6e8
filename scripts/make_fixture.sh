#!/bin/sh
# Regenerates results/fixture: the raw rows of a small sweep against the
# simulator (configs/fixture.yaml: three offered loads x two repetitions)
# and their report. Run it when the row format changes; `make test` checks
# that the committed report still matches the committed rows.
set -e
BIN=${SERVELAB:-./servelab}
rm -rf results/fixture
"$BIN" sweep configs/fixture.yaml --out results/fixture --quiet
# the run directories only: the report names paths relative to its argument
"$BIN" report results/fixture
