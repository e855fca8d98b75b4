#!/bin/sh
# Fuzz the OBS_DEBUG parser (shim/common/debug_spec.c) with libFuzzer under
# ASan/UBSan (clang with compiler-rt's fuzzer runtime: Debian's
# libclang-rt-14-dev), seeded with the kept corpus
# (tests/fuzz/debug_spec_corpus); new inputs are merged back into
# WORKDIR/merged (-merge=1 keeps only inputs that add coverage).
#   tests/fuzz/run-fuzz-debug-spec.sh [SECONDS] [WORKDIR]     (default 600 s)
set -eu
seconds=${1:-600}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-${TMPDIR:-/tmp}/obs-fuzz-debug-spec}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus"
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DOBS_LIBFUZZER -I"$src/shim" -I"$src/tests/fuzz" \
    "$src/tests/fuzz/debug_spec_fuzz.c" "$src/shim/common/debug_spec.c" -o "$work/fuzz_debug_spec"
cd "$work"
./fuzz_debug_spec -max_total_time="$seconds" -max_len=512 -print_final_stats=1 \
    corpus "$src/tests/fuzz/debug_spec_corpus"
mkdir -p merged
./fuzz_debug_spec -merge=1 merged "$src/tests/fuzz/debug_spec_corpus" corpus
echo "run-fuzz-debug-spec: no crash in ${seconds}s; minimised corpus in $work/merged ($(ls merged | wc -l) files)"
