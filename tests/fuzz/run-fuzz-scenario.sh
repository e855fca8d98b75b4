#!/bin/sh
# Fuzz the llm_replay scenario parser (tests/apps/scenario.c) with
# libFuzzer under ASan/UBSan (clang with compiler-rt's fuzzer runtime:
# Debian's libclang-rt-14-dev), seeded with tests/scenarios/*.scn.
#   tests/fuzz/run-fuzz-scenario.sh [SECONDS] [WORKDIR]     (default 600 s)
set -eu
seconds=${1:-600}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${2:-${TMPDIR:-/tmp}/obs-fuzz-scenario}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus"
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DOBS_LIBFUZZER -I"$src/tests/apps" -I"$src/tests/fuzz" \
    "$src/tests/fuzz/scenario_fuzz.c" "$src/tests/apps/scenario.c" -o "$work/fuzz_scenario"
cd "$work"
./fuzz_scenario -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 corpus "$src/tests/scenarios"
echo "run-fuzz-scenario: no crash in ${seconds}s; corpus in $work/corpus ($(ls corpus | wc -l) files)"
