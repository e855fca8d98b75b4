#!/bin/sh
# Fuzz the layer finder (shim/phases/layer_finder.c, obs_layers_find) with
# libFuzzer under ASan/UBSan (clang with compiler-rt's fuzzer runtime:
# Debian's libclang-rt-14-dev), seeded with the kept corpus
# (tests/fuzz/layer_finder_corpus: the shapes tests/t_layer_finder checks,
# tests/fuzz/layer_finder_seeds.md); new inputs are merged back into
# WORKDIR/merged (-merge=1 keeps only inputs that add coverage).
#   tests/fuzz/run-fuzz-layer-finder.sh [SECONDS] [WORKDIR]     (default 600 s)
set -eu
seconds=${1:-600}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-${TMPDIR:-/tmp}/obs-fuzz-layer-finder}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus"
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DOBS_LIBFUZZER -I"$src/shim" -I"$src/tests/fuzz" \
    "$src/tests/fuzz/layer_finder_fuzz.c" "$src/shim/phases/layer_finder.c" -o "$work/fuzz_layer_finder"
cd "$work"
./fuzz_layer_finder -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    corpus "$src/tests/fuzz/layer_finder_corpus"
mkdir -p merged
./fuzz_layer_finder -merge=1 merged "$src/tests/fuzz/layer_finder_corpus" corpus
echo "run-fuzz-layer-finder: no crash in ${seconds}s; minimised corpus in $work/merged ($(ls merged | wc -l) files)"
