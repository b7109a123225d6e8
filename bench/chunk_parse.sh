#!/bin/sh
# Benchmark: chunk_parse, the client's per-chunk hot path, against the
# jansson reading it replaced (chunk_parse_reference), on vLLM completions
# chunks, chat chunks with continuous usage and the recorded llama.cpp
# streams. Builds bench/chunk_parse.c against src/client (-O2, as `make`
# does), then prints chunks/s for 5 rounds of N chunks each and the median
# speedup. Run from the repository root.
#   sh bench/chunk_parse.sh [N] [TRANSCRIPT_DIR]
set -e
N=${1:-200000}
TRANSCRIPTS=${2:-tests/data/transcripts/llama.cpp-server}
CC=${CC:-cc}
DIR=$(mktemp -d /tmp/servelab-chunk-XXXXXX)
trap 'rm -rf "$DIR"' EXIT
$CC -O2 -g -std=c17 -D_GNU_SOURCE -Wall -Wextra -Isrc -o "$DIR/chunk_parse" \
    bench/chunk_parse.c src/protocol/chunk.c src/protocol/chunk_reference.c \
    src/protocol/chunk_rules.c src/protocol/jscan.c src/protocol/sse.c src/common/util.c \
    $(pkg-config --libs jansson) -lm
"$DIR/chunk_parse" "$N" "$TRANSCRIPTS"
