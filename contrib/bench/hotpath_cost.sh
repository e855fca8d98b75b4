#!/bin/bash
# make bench, hot path (docs/performance.md, "Instructions per call"): the
# instructions the shim adds to one kernel launch and to one copy, counted
# with valgrind's callgrind (exact, and the same on a loaded machine, where
# wall-clock is not). contrib/bench/bench_loop is run twice per mode, with N
# and 2N calls, and the figure is (Ir(2N) - Ir(N)) / N: the per-call cost
# with start-up and exit taken out, the slow paths that come once per
# buffer window (docs/shim.md, "Buffers and lost records") spread over the
# calls as they are in a run. Modes:
#   none         no shim (the simulated runtime alone)
#   record       the shim, OBS_PHASES=off
#   phases_auto  the shim, automatic phases (the default)
# and for copies: none, record.
#
# HOTPATH_SHIMS="label=PATH ..." measures each library named (default:
# this build's, "this=shim/.libs/libobsshim.so"), so that a build from
# before a change and one from after it are counted in one run, on the same
# simulator and bench_loop. Writes bench/results/hotpath-<UTC time>.csv.
#
# Environment: OBS_BUILDDIR (required), HOTPATH_LAUNCHES (N, default
# 100000), HOTPATH_SHIMS, BENCH_RESULTS.
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
results=${BENCH_RESULTS:-$builddir/bench/results}
n=${HOTPATH_LAUNCHES:-100000}
shims=${HOTPATH_SHIMS:-this=$builddir/shim/.libs/libobsshim.so}
app=$builddir/contrib/bench/bench_loop
sim=$builddir/sim/.libs

if ! command -v valgrind >/dev/null 2>&1; then
    echo "bench hot path: skipped: valgrind not found (Debian: valgrind)"
    exit 0
fi
for f in "$app" "$sim/libcudart.so.13" $(for s in $shims; do echo "${s#*=}"; done); do
    [ -e "$f" ] || { echo "bench hot path: $f is missing (run make first)" >&2; exit 1; }
done
mkdir -p "$results" || exit 1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
csv=$results/hotpath-$stamp.csv
work=$(mktemp -d "${TMPDIR:-/tmp}/obs-hotpath.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# Instructions of one run: callgrind's summary line. $1 the shim ("-" none),
# $2 the mode, $3 launches or copies, $4 the count.
instructions() {
    local shim=$1 mode=$2 what=$3 count=$4 out=$work/cg
    local -a env=(LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1)
    if [ "$shim" != - ]; then
        env+=(LD_PRELOAD="$shim" OBS_OUTPUT="$work/t-%p" OBS_TRACE=none OBS_SUMMARY=0)
        [ "$mode" = record ] && env+=(OBS_PHASES=off)
    fi
    rm -f "$out" "$work"/t-*
    env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" "$app" "--$what" "$count" \
        >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
    awk '/^summary:/ { print $2 }' "$out"
}

# Instructions per call added over no shim, and the absolute per call.
per_call() { # shim mode what
    local a b
    a=$(instructions "$1" "$2" "$3" "$n") || return 1
    b=$(instructions "$1" "$2" "$3" $((2 * n))) || return 1
    awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }'
}

echo "library,call,mode,instructions_per_call,added_over_none" >"$csv"
echo "bench hot path: callgrind, (Ir(2N) - Ir(N)) / N with N = $n"
printf '%-10s %-7s %-12s %14s %12s\n' library call mode "instr/call" "added"
for what in launches copies; do
    base=$(per_call - none "$what") || { echo "bench hot path: the run failed" >&2; exit 1; }
    call=launch
    [ "$what" = copies ] && call=copy
    printf '%-10s %-7s %-12s %14s %12s\n' - "$call" none "$base" -
    echo "-,$call,none,$base," >>"$csv"
    modes="record phases_auto"
    [ "$what" = copies ] && modes=record
    for s in $shims; do
        for mode in $modes; do
            v=$(per_call "${s#*=}" "$mode" "$what") || { echo "bench hot path: the run failed" >&2; exit 1; }
            added=$(awk -v v="$v" -v b="$base" 'BEGIN { printf "%.1f", v - b }')
            printf '%-10s %-7s %-12s %14s %12s\n' "${s%%=*}" "$call" "$mode" "$v" "$added"
            echo "${s%%=*},$call,$mode,$v,$added" >>"$csv"
        done
    done
done
echo "bench hot path: $csv"
