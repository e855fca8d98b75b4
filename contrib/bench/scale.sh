#!/bin/bash
# make bench-scale: 10 million kernel launches from 4 threads under the shim
# (record mode: OBS_PHASES=off), the same run without the shim, then the
# trace converted by obs-report. Prints a verdict table and writes
# bench/results/scale-<UTC time>.csv. The trace (~500 MB) lives in a
# temporary directory that is removed at the end.
#
# Environment: OBS_BUILDDIR (required), SCALE_THREADS (4), SCALE_LAUNCHES
# (10000000 in all), SCALE_DIR (where the trace goes; default $TMPDIR or
# /tmp), SCALE_REPEATS (3: runs per conversion, the median is kept),
# BENCH_RESULTS (default $OBS_BUILDDIR/bench/results).
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
threads=${SCALE_THREADS:-4}
total=${SCALE_LAUNCHES:-10000000}
per_thread=$((total / threads))
total=$((per_thread * threads))
results=${BENCH_RESULTS:-$builddir/bench/results}

app=$builddir/contrib/bench/bench_loop
shim=$builddir/shim/.libs/libobsshim.so
# OBS_PRELOAD_FIRST (make check-sanitize: the ASan runtime) goes before the shim
preload=${OBS_PRELOAD_FIRST:+$OBS_PRELOAD_FIRST:}$shim
sim=$builddir/sim/.libs
report=$builddir/obs-report
for f in "$app" "$shim" "$report" "$sim/libcudart.so.13" /usr/bin/time; do
    if [ ! -e "$f" ]; then
        echo "bench-scale: $f is missing" >&2
        exit 1
    fi
done

work=$(mktemp -d "${SCALE_DIR:-${TMPDIR:-/tmp}}/obs-scale.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$results" || exit 1
csv=$results/scale-$(date -u +%Y%m%dT%H%M%SZ).csv

# Peak RSS (KiB) and wall seconds of a command, from GNU time.
measure() {
    /usr/bin/time -f '%M %e' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
        echo "bench-scale: failed: $*" >&2
        cat "$work/err" >&2
        exit 1
    }
    cat "$work/time"
}

echo "bench-scale: $total launches from $threads threads ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
read -r rss_none wall_none < <(measure env LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1 \
    "$app" --launches "$per_thread" --threads "$threads")
read -r rss_shim wall_shim < <(measure env LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1 LD_PRELOAD="$preload" \
    OBS_OUTPUT="$work/scale" OBS_PHASES=off OBS_JSON=0 OBS_SUMMARY=0 \
    "$app" --launches "$per_thread" --threads "$threads")
trace=$work/scale.obs
trace_bytes=$(stat -c %s "$trace")
# what it takes on the disk: a thread that ended before the others leaves
# its last window's unused slots as a hole (a PAD chunk whose blocks were
# given back, docs/shim.md), which the size counts and the disk does not
trace_disk=$(stat -c '%b %B' "$trace" | awk '{ print $1 * $2 }')

# Records and records lost, from the summary's first line.
"$report" summary "$trace" >"$work/summary" 2>&1 || { cat "$work/summary" >&2; exit 1; }
read -r records lost < <(awk 'NR == 1 {
    for (i = 1; i < NF; i++) { if ($(i + 1) == "records,") r = $i; if ($(i + 1) == "records" && $(i + 2) == "lost") l = $i }
    print r, l; exit }' "$work/summary")
launch_rows=$(grep -c '^ *[0-9.]\+ .* _Z12bench_kernelPfi$' "$work/summary")

# Conversions: csv to /dev/null and to a file, json to /dev/null and to a
# file. Each is run SCALE_REPEATS times (default 3) after a sync, so that
# none is timed against the writeback of the trace or of the previous
# output; the median time and the largest peak RSS are kept. The output
# file is removed between runs.
repeats=${SCALE_REPEATS:-3}
seconds() {
    local out=$1 i
    shift
    : >"$work/times"
    for ((i = 0; i < repeats; i++)); do
        sync
        /usr/bin/time -f '%e %M' -o "$work/time" "$@" -o "$out" 2>"$work/err" >/dev/null || {
            echo "bench-scale: failed: $* -o $out" >&2
            cat "$work/err" >&2
            exit 1
        }
        cat "$work/time" >>"$work/times"
        [ "$out" = /dev/null ] || [ $i -eq $((repeats - 1)) ] || rm -f "$out"
    done
    sort -n "$work/times" | awk '{ t[NR] = $1; if ($2 > m) m = $2 } END { print t[int((NR + 1) / 2)], m }'
}
read -r csv_null_s _ < <(seconds /dev/null "$report" csv "$trace")
read -r csv_file_s csv_file_rss < <(seconds "$work/out.csv" "$report" csv "$trace")
csv_rows=$(($(wc -l <"$work/out.csv") - 1))
csv_bytes=$(stat -c %s "$work/out.csv")
rm -f "$work/out.csv"
read -r json_null_s _ < <(seconds /dev/null "$report" json "$trace")
read -r json_file_s json_file_rss < <(seconds "$work/out.json" "$report" json "$trace")
json_bytes=$(stat -c %s "$work/out.json")
rm -f "$work/out.json"

awk -v total="$total" -v rn="$rss_none" -v rs="$rss_shim" -v wn="$wall_none" -v ws="$wall_shim" \
    -v tb="$trace_bytes" -v td="$trace_disk" -v rec="$records" -v lost="$lost" -v rows="$csv_rows" \
    -v cn="$csv_null_s" -v cf="$csv_file_s" -v cb="$csv_bytes" -v jn="$json_null_s" -v jf="$json_file_s" \
    -v csv="$csv" -v jb="$json_bytes" -v jr="$json_file_rss" -v cr="$csv_file_rss" '
function row(name, value, unit, target, verdict) {
    printf "%s,%s,%s,%s,%s\n", name, value, unit, target, verdict >> csv
    printf "  %-34s %14s %-10s %-12s %s\n", name, value, unit, target, verdict
}
function rate(n, s) { return s > 0 ? n / s / 1e6 : 0 }
BEGIN {

    print "metric,value,unit,target,verdict" > csv
    growth = (rs - rn) / 1024
    row("launches", total, "", "", "")
    row("wall without shim", sprintf("%.2f", wn), "s", "", "")
    row("wall with shim (record)", sprintf("%.2f", ws), "s", "", "")
    row("peak RSS without shim", sprintf("%.1f", rn / 1024), "MiB", "", "")
    row("peak RSS with shim", sprintf("%.1f", rs / 1024), "MiB", "", "")
    row("peak RSS growth", sprintf("%.1f", growth), "MiB", "<= 64", growth <= 64 ? "PASS" : "FAIL")
    row("records in trace", rec, "", "", "")
    row("records lost", lost, "", "0", lost == 0 && rec >= total ? "PASS" : "FAIL")
    row("trace bytes (its size)", tb, "B", "", "")
    row("trace bytes on disk", td, "B", "", "")
    # 48-byte records; the file header, chunk headers, the PAD before each
    # window and its unused last slots add ~0.01 B per launch on disk; the
    # size counts the holes of the threads that ended first too
    row("trace size per launch", sprintf("%.4f", tb / total), "B", "", "")
    bpl = sprintf("%.2f", td / total)
    row("trace bytes on disk per launch", sprintf("%.4f", td / total), "B", "<= 48", bpl + 0 <= 48 ? "PASS" : "FAIL")
    row("csv rows", rows, "", "", "")
    row("csv to /dev/null", sprintf("%.2f", rate(rows, cn)), "M rec/s", ">= 5", rate(rows, cn) >= 5 ? "PASS" : "FAIL")
    row("csv to a file", sprintf("%.2f", rate(rows, cf)), "M rec/s", ">= 5", rate(rows, cf) >= 5 ? "PASS" : "FAIL")
    row("csv file size", sprintf("%.0f", cb / 1048576), "MiB", "", "")
    row("csv peak RSS", sprintf("%.1f", cr / 1024), "MiB", "", "")
    row("json to /dev/null", sprintf("%.2f", jn), "s", "<= 10", jn <= 10 ? "PASS" : "FAIL")
    row("json to a file", sprintf("%.2f", jf), "s", "<= 10", jf <= 10 ? "PASS" : "FAIL")
    row("json file size", sprintf("%.0f", jb / 1048576), "MiB", "", "")
    row("json peak RSS", sprintf("%.1f", jr / 1024), "MiB", "", "")
}' </dev/null
echo "  (record mode: OBS_PHASES=off, OBS_JSON=0, OBS_SUMMARY=0; $launch_rows kernel row in the summary;"
echo "   conversions: median of $repeats runs, each after a sync)"
echo "  results: $csv"
exit 0
