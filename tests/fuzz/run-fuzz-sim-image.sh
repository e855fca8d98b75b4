#!/bin/sh
# Fuzz the simulated driver's image reader (sim/cudrv_sim_image.c) with
# libFuzzer under ASan/UBSan (clang with compiler-rt's fuzzer runtime:
# Debian's libclang-rt-14-dev), seeded with the kept corpus
# (tests/fuzz/sim_image_corpus); new inputs are merged back into
# WORKDIR/merged (-merge=1 keeps only inputs that add coverage).
#   tests/fuzz/run-fuzz-sim-image.sh [SECONDS] [WORKDIR]     (default 600 s)
set -eu
seconds=${1:-600}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-${TMPDIR:-/tmp}/obs-fuzz-sim-image}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus"
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DOBS_LIBFUZZER -I"$src/sim" -I"$src/tests/fuzz" \
    "$src/tests/fuzz/sim_image_fuzz.c" "$src/sim/cudrv_sim_image.c" -o "$work/fuzz_sim_image"
cd "$work"
./fuzz_sim_image -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 \
    corpus "$src/tests/fuzz/sim_image_corpus"
mkdir -p merged
./fuzz_sim_image -merge=1 merged "$src/tests/fuzz/sim_image_corpus" corpus
echo "run-fuzz-sim-image: no crash in ${seconds}s; minimised corpus in $work/merged ($(ls merged | wc -l) files)"
