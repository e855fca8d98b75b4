#!/bin/sh
# Fuzz the OBS_PHASES / OBS_STEP parser with libFuzzer (clang with
# compiler-rt's fuzzer runtime: Debian's libclang-rt-14-dev).
#   tests/fuzz/run-fuzz.sh [SECONDS] [WORKDIR]     (default 600 s)
# The kept corpus (tests/fuzz/phase_rules_corpus) seeds the run; new inputs
# go to WORKDIR/corpus, and are merged back (-merge=1 keeps only inputs that
# add coverage) when the run ends without a crash.
set -eu
seconds=${1:-600}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-${TMPDIR:-/tmp}/obs-fuzz-phase-rules}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus"
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -DOBS_LIBFUZZER \
    -I"$src/shim" -I"$src/tests/fuzz" \
    "$src/tests/fuzz/phase_rules_fuzz.c" "$src/shim/phases/phase_rules.c" "$src/shim/trace/kernel_base_name.c" -o "$work/fuzz_phase_rules"
cd "$work"
./fuzz_phase_rules -max_total_time="$seconds" -max_len=2100 -print_final_stats=1 \
    corpus "$src/tests/fuzz/phase_rules_corpus"
mkdir -p merged
./fuzz_phase_rules -merge=1 merged "$src/tests/fuzz/phase_rules_corpus" corpus
echo "run-fuzz: no crash in ${seconds}s; minimised corpus in $work/merged ($(ls merged | wc -l) files)"
