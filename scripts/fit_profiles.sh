#!/bin/sh
# The simulator's fitted profiles, from the committed rows, with
# `servelab fit`: profiles/NAME.yaml for each built-in profile that stands
# for a measured server (src/sim/profile_files.c builds them in).
#   scripts/fit_profiles.sh [OUTDIR]   # default: profiles/
# tests/fit/t7220-builtin-profiles-are-fits.c runs it into a scratch folder and compares.
set -eu
BIN=${SERVELAB:-./servelab}
OUT=${1:-profiles}
mkdir -p "$OUT"
# cpu-1b-2c: llama.cpp build 4748, the 1B shape at Q8_0, 2 cores
"$BIN" fit results/llamacpp-cpu/load results/llamacpp-cpu/slots results/llamacpp-cpu/context \
    --name cpu-1b-2c --min-gaps 20 --force --quiet --out "$OUT/cpu-1b-2c.yaml"
