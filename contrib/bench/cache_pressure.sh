#!/bin/bash
# make bench, cache pressure (make bench-cache; docs/performance.md, "Cache
# pressure"): what the shim adds to a launch when, between two launches, the
# program evicts the caches as an interpreter and a framework do, where the
# shim's code and data stay in cache in make bench's tight loop. For each
# level, contrib/bench/bench_loop --touch MIB --code KIB reads and writes
# every 64-byte line of a MIB buffer and runs KIB of straight-line code
# before each launch, and times each launch alone (the median of its
# launches; the touching is not in it). Levels:
#   hot     nothing touched (make bench's loop, each launch timed alone)
#   code    64 KiB of code: the first-level instruction cache evicted
#   4MiB    64 KiB of code and 4 MiB of data: the second-level cache too
#   16MiB   64 KiB of code and 16 MiB of data: the last level, where it is
#           smaller than that (not on a host with a larger one)
# Modes: none (no shim), record (OBS_PHASES=off), defaults (the shim's
# defaults: automatic phases and layers). Each run is one process; a round
# runs every level and mode, interleaved (the order rotated each round);
# "added" is the mode's median minus no shim's in the same round: medians
# over rounds, with min .. max. Beside it, the shim's own figure for the
# same runs (the summary's "Shim cost", ns per recorded call: the timed
# launches, the warm-up's and the few set-up calls). Before its launches
# bench_loop makes one copy to the device, as a framework copies its
# weights first.
#
# Writes bench/results/cache-<UTC time>.csv (one row per run) and
# cache-<UTC time>-summary.csv.
#
# Environment: OBS_BUILDDIR (required), CACHE_ROUNDS (7), CACHE_LEVELS
# (default: hot code 4MiB 16MiB), CACHE_LAUNCHES (timed launches per run,
# every level; default 20000 hot and code, 1000 at 4MiB, 400 at 16MiB),
# CACHE_SHIMS ("label=PATH ...": run the record and defaults modes for each
# library; default "this=this build's"), BENCH_RESULTS.
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
results=${BENCH_RESULTS:-$builddir/bench/results}
rounds=${CACHE_ROUNDS:-7}
levels=${CACHE_LEVELS:-hot code 4MiB 16MiB}
shims=${CACHE_SHIMS:-this=$builddir/shim/.libs/libobsshim.so}
app=$builddir/contrib/bench/bench_loop
sim=$builddir/sim/.libs
for f in "$app" "$sim/libcudart.so.13" $(for s in $shims; do echo "${s#*=}"; done); do
    [ -e "$f" ] || { echo "bench cache: $f is missing (run make first)" >&2; exit 1; }
done
mkdir -p "$results" || exit 1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw=$results/cache-$stamp.csv
summary=$results/cache-$stamp-summary.csv
work=$(mktemp -d "${TMPDIR:-/tmp}/obs-cache-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

level_args() { # the level's bench_loop options: fewer launches where each touches more
    case $1 in
    hot) echo "--touch 0 --code 0 --launches ${CACHE_LAUNCHES:-20000}" ;;
    code) echo "--touch 0 --code 64 --launches ${CACHE_LAUNCHES:-20000}" ;;
    4MiB) echo "--touch 4 --code 64 --launches ${CACHE_LAUNCHES:-1000}" ;;
    16MiB) echo "--touch 16 --code 64 --launches ${CACHE_LAUNCHES:-400}" ;;
    *) echo "bench cache: unknown level $1" >&2; exit 2 ;;
    esac
}

modes=(none)
for s in $shims; do
    modes+=("${s%%=*}:record" "${s%%=*}:defaults")
done
lib_of() { # label -> library
    local s
    for s in $shims; do [ "${s%%=*}" = "$1" ] && echo "${s#*=}"; done
}

echo "level,round,mode,load1,ns_per_launch_call,ns_per_launch_call_mean,ns_per_iteration,shim_ns_per_call,shim_once_ms" >"$raw"
run_one() { # level round mode
    local lvl=$1 r=$2 m=$3 out cost once load
    local -a cmd=(env LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1)
    if [ "$m" != none ]; then
        cmd+=(LD_PRELOAD="$(lib_of "${m%%:*}")" OBS_OUTPUT="$work/run" OBS_TRACE=none)
        [ "${m#*:}" = record ] && cmd+=(OBS_PHASES=off)
    fi
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2046 # the level's options are words
    if ! out=$("${cmd[@]}" "$app" --warmup 100 $(level_args "$lvl") 2>"$work/err"); then
        echo "bench cache: $lvl in mode $m failed:" >&2
        cat "$work/err" >&2
        exit 1
    fi
    cost=$(sed -n 's/^Shim cost: \([0-9.]*\) ns per recorded call.*/\1/p' "$work/err")
    once=$(sed -n 's/^Shim cost: .*, and \([0-9.]*\) ms once.*/\1/p' "$work/err")
    rm -f "$work"/run.*
    echo "$out" | awk -v l="$lvl" -v r="$r" -v m="$m" -v load="$load" -v cost="$cost" -v once="$once" '
        { v[$1] = $2 }
        END { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", l, r, m, load, v["ns_per_launch_call"],
              v["ns_per_launch_call_mean"], v["ns_per_iteration"], cost, once }' >>"$raw"
}

nmodes=${#modes[@]}
read -r -a lv <<<"$levels"
nl=${#lv[@]}
echo "bench cache: $rounds rounds x ${nl} levels x $nmodes modes (${modes[*]}) ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for ((round = 1; round <= rounds; round++)); do
    for ((j = 0; j < nl; j++)); do
        for ((k = 0; k < nmodes; k++)); do
            run_one "${lv[$(((j + round) % nl))]}" "$round" "${modes[$(((k + round) % nmodes))]}"
        done
    done
    printf '.' >&2
done
echo >&2
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

awk -F, -v lorder="$levels" -v morder="${modes[*]}" '
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lohi(a, n,    i) { lo = a[1]; hi = a[1]; for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] } }
NR == 1 { next }
{ k = $1 SUBSEP $2 SUBSEP $3; call[k] = $5; iter[k] = $7; cost[k] = $8; once[k] = $9 == "" ? 0 : $9; rounds[$2] = 1 }
END {
    nl = split(lorder, L, " "); nm = split(morder, M, " ")
    print "level,mode,rounds,ns_per_launch_call_none,ns_per_launch_call,added_ns,added_min,added_max,ratio,iteration_added_ns,shim_ns_per_call,shim_min,shim_max,shim_once_ms"
    for (li = 1; li <= nl; li++) for (mi = 1; mi <= nm; mi++) {
        n = 0
        for (r in rounds) {
            k = L[li] SUBSEP r SUBSEP M[mi]; b = L[li] SUBSEP r SUBSEP "none"
            if (!(k in call) || !(b in call)) continue
            n++; c[n] = call[k]; cb[n] = call[b]; d[n] = call[k] - call[b]; it[n] = iter[k] - iter[b]; s[n] = cost[k]
            on[n] = once[k]
        }
        if (n == 0) continue
        mc = median(c, n); mb = median(cb, n); md = median(d, n); lohi(d, n); dlo = lo; dhi = hi; mit = median(it, n)
        if (M[mi] == "none") { printf "%s,none,%d,%.1f,%.1f,,,,1.00,,,,,\n", L[li], n, mb, mc; continue }
        ms = median(s, n); lohi(s, n); mon = median(on, n)
        printf "%s,%s,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f,%.1f,%.1f,%.1f,%.1f,%.2f\n", L[li], M[mi], n, mb, mc, md, dlo, dhi, mc / mb, mit, ms, lo, hi, mon
    }
}' "$raw" >"$summary"

echo
printf '%-6s %-16s %9s %9s %18s %6s %9s %18s %10s\n' level mode "ns/call" added "added min..max" ratio "(a) shim" "(a) min..max" "(a) once"
awk -F, 'NR > 1 {
    if ($2 == "none") { printf "%-6s %-16s %9.1f %9s %18s %6s\n", $1, $2, $5, "-", "", "1.00"; next }
    printf "%-6s %-16s %9.1f %9.1f %8.1f..%-8.1f %5.2fx %9.1f %8.1f..%-8.1f %7.2f ms\n", $1, $2, $5, $6, $7, $8, $9, $11, $12, $13, $14
}' "$summary"
echo
echo "  levels: hot: nothing touched between launches; code: 64 KiB of straight-line code run before each;"
echo "  4MiB, 16MiB: that code and every line of a 4 or 16 MiB buffer read and written before each launch"
echo "  ns/call: median time inside one cudaLaunchKernel (each timed alone); added: minus no shim in the same round"
echo "  (a) shim: the shim's own figure (summary \"Shim cost\", ns per recorded call) for the same runs; (a) once: its"
echo "  one-time work (set-up, first uses), apart from the per-call figure (libraries before issue 36 count it in)"
echo "  (the CSV also has the whole loop per launch minus no shim, touching included: noise at 4 and 16 MiB)"
echo "  medians over $rounds interleaved rounds; load at the end $load_end"
echo "  raw: $raw"
echo "  summary: $summary"
exit 0
