#!/bin/sh
# Fuzz the trace reader and obs-report's reports with libFuzzer (clang with
# compiler-rt's fuzzer runtime: Debian's libclang-rt-14-dev).
#   tests/fuzz/run-trace-fuzz.sh TARGET [SECONDS] [WORKDIR]   (default 600 s)
#   tests/fuzz/run-trace-fuzz.sh list                         the targets
# TARGET: load, summary, csv, json, perfetto, phases, suggest-phases, gaps,
# top, compare, merge, sqlite, html (tests/fuzz/trace_fuzz.h says what each
# runs), or all (load, then every report on each input). One binary per
# target (-DOBS_FUZZ_TARGET), built with ASan and UBSan (UB aborts).
# Seeds: tests/fuzz/trace_corpus (real traces) and trace_regressions (every
# crash input kept); dictionary tests/fuzz/trace.dict. New inputs go to
# WORKDIR/corpus; a crash leaves WORKDIR/crash-* (keep it in
# trace_regressions, named by what it hit). The last lines are the run's
# figures: seconds, executions, cov, ft, corpus, crash or none.
# Environment: CLANG, ZLIB_LIBS and SQLITE_LIBS (make passes configure's;
# by hand they are probed), FUZZ_MAX_LEN (default 131072), FUZZ_FLAGS
# (more libFuzzer flags), FUZZ_OBJDIR (the instrumented library objects,
# shared by the targets; default WORKDIR/obj).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
targets="load summary csv json perfetto phases suggest-phases gaps top compare merge sqlite html all"
target=${1:-all}
if [ "$target" = list ]; then
    echo "$targets"
    exit 0
fi
case " $targets " in
*" $target "*) ;;
*) echo "run-trace-fuzz: unknown target '$target' (one of: $targets)" >&2; exit 2 ;;
esac
seconds=${2:-600}
work=${3:-${TMPDIR:-/tmp}/obs-fuzz-trace-$target}
CLANG=${CLANG:-clang}
id=$(echo "$target" | tr - _)

# zlib and sqlite as configure found them; by hand, probe
if [ -z "${ZLIB_LIBS+set}" ]; then
    if echo '#include <zlib.h>' | "$CLANG" -E -x c - >/dev/null 2>&1; then ZLIB_LIBS=-lz; else ZLIB_LIBS=; fi
fi
if [ -z "${SQLITE_LIBS+set}" ]; then
    SQLITE_LIBS=$(pkg-config --libs sqlite3 2>/dev/null || true)
fi
defs="-D_GNU_SOURCE -DPACKAGE_VERSION=\"fuzz\""
libs="-lm -lpthread"
sources="$src/shim/trace/*.c"
for f in "$src"/contrib/obs-report/*.c; do
    case "$f" in
    */obs_report.c) ;; # main; the harness has its own command table
    */sqlite_export.c) [ -n "$SQLITE_LIBS" ] && sources="$sources $f" ;;
    *) sources="$sources $f" ;;
    esac
done
[ -n "$ZLIB_LIBS" ] && { defs="$defs -DHAVE_ZLIB"; libs="$libs $ZLIB_LIBS"; }
[ -n "$SQLITE_LIBS" ] && { defs="$defs -DHAVE_SQLITE"; libs="$libs $SQLITE_LIBS"; }
# UB aborts, but for NULL with a count of 0 (qsort/memcpy of an empty
# table, NULL + 0), which is harmless and which ASan would catch with a
# count above 0.
cflags="-g -O1 -std=gnu11 -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-sanitize=nonnull-attribute,pointer-overflow $defs
    -I$src -I$src/shim -I$src/contrib/obs-report -I$src/tests/fuzz"

# The library objects once (rebuilt when a source or header is newer),
# instrumented for coverage; the harness per target.
objdir=${FUZZ_OBJDIR:-$work/obj}
mkdir -p "$work/corpus" "$objdir" "$work/previous"
if [ "$(cat "$objdir/flags" 2>/dev/null)" != "$CLANG $cflags" ]; then
    rm -f "$objdir"/*.o
    echo "$CLANG $cflags" >"$objdir/flags"
fi
# an earlier run's findings: kept aside, so that the figures below are this run's
for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$f" ] && mv "$f" "$work/previous/"
done
objs=
for f in $sources; do
    o="$objdir/$(echo "${f#"$src"/}" | tr / _ | sed 's/\.c$/.o/')"
    if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ -n "$(find "$src/shim/trace" "$src/contrib/obs-report" -name '*.h' -newer "$o" | head -1)" ]; then
        # shellcheck disable=SC2086
        "$CLANG" $cflags -fsanitize=fuzzer-no-link -c "$f" -o "$o"
    fi
    objs="$objs $o"
done
# shellcheck disable=SC2086
"$CLANG" $cflags -fsanitize=fuzzer -DOBS_LIBFUZZER -DOBS_FUZZ_TARGET="$id" \
    "$src/tests/fuzz/trace_fuzz.c" $objs $libs -o "$work/fuzz_trace_$id"

cd "$work"
log="$work/fuzz-$id.log"
set +e
t0=$(date +%s)
# -close_fd_mask=2: the reports' warnings (damaged traces) stay quiet;
# libFuzzer and the sanitizers still report on their own copy of stderr.
# shellcheck disable=SC2086
"./fuzz_trace_$id" -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-131072}" -print_final_stats=1 \
    -close_fd_mask=2 -artifact_prefix="$work/" -dict="$src/tests/fuzz/trace.dict" ${FUZZ_FLAGS:-} \
    corpus "$src/tests/fuzz/trace_corpus" "$src/tests/fuzz/trace_regressions" 2>&1 | tee "$log"
set -e
elapsed=$(($(date +%s) - t0))
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\(\/[0-9a-zA-Z]*\)\{0,1\}\).*/\1/p')
# -fork=N prints no final stats: the last status line's count instead
[ -n "$execs" ] || execs=$(echo "$last" | sed -n 's/^#\([0-9]*\)[^0-9].*/\1/p')
crash=$(ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null | tr '\n' ' ')
echo "run-trace-fuzz: target $target: ${elapsed} s (of ${seconds}), executions ${execs:-?}, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
if [ -n "$crash" ]; then
    echo "run-trace-fuzz: target $target: CRASH: $crash(keep it in tests/fuzz/trace_regressions/, named by what it hit; log $log)"
    exit 1
fi
mkdir -p merged
"./fuzz_trace_$id" -merge=1 -close_fd_mask=2 merged "$src/tests/fuzz/trace_corpus" corpus >/dev/null 2>&1 || true
echo "run-trace-fuzz: target $target: no crash; minimised corpus in $work/merged ($(ls merged | wc -l) files)"
