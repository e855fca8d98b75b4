#!/bin/sh
# Fuzz one of the settings parsers of shim/common/ with libFuzzer under
# ASan/UBSan (clang with compiler-rt's fuzzer runtime: Debian's
# libclang-rt-14-dev): debug-spec (OBS_DEBUG, debug_spec.c) or capture-spec
# (OBS_CAPTURE, capture_spec.c), seeded with its kept corpus
# (tests/fuzz/<name>_corpus); new inputs are merged back into
# WORKDIR/merged (-merge=1 keeps only inputs that add coverage).
#   tests/fuzz/run-fuzz-spec.sh debug-spec|capture-spec [SECONDS] [WORKDIR]     (default 600 s)
set -eu
case ${1:-} in
debug-spec | capture-spec) name=$(echo "$1" | tr - _) ;;
*)
    echo "usage: $0 debug-spec|capture-spec [SECONDS] [WORKDIR]" >&2
    exit 2
    ;;
esac
seconds=${2:-600}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${3:-${TMPDIR:-/tmp}/obs-fuzz-$1}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus"
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DOBS_LIBFUZZER -I"$src/shim" -I"$src/tests/fuzz" \
    "$src/tests/fuzz/${name}_fuzz.c" "$src/shim/common/$name.c" -o "$work/fuzz_$name"
cd "$work"
"./fuzz_$name" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 \
    corpus "$src/tests/fuzz/${name}_corpus"
mkdir -p merged
"./fuzz_$name" -merge=1 merged "$src/tests/fuzz/${name}_corpus" corpus
echo "run-fuzz-spec $1: no crash in ${seconds}s; minimised corpus in $work/merged ($(ls merged | wc -l) files)"
