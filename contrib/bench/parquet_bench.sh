#!/bin/bash
# make bench-parquet: PQ_RANKS (1,024) ranks of tests/apps/tp_decode, each a
# process under the shim on the simulated runtime with GPU time
# (OBS_GPU_TIME=events), PQ_LAYERS (16) layers with two all-reduces each,
# PQ_STEPS (32) decode steps after one prompt; then the traces exported to
# Parquet (contrib/parquet/obs-parquet -j PQ_JOBS, default 2), every query
# of contrib/sql run over all ranks' files, and obs-report merge of the same
# traces for comparison. Prints one line per measure and writes
# bench/results/parquet-<UTC time>.csv. Needs DuckDB's environment
# (contrib/install-deps --duckdb; OBS_DUCKDB_ENV). The traces live in a
# temporary directory (PQ_DIR, default $TMPDIR or /tmp) removed at the end.
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
srcdir=${OBS_SRCDIR:-$builddir}
ranks=${PQ_RANKS:-1024}
layers=${PQ_LAYERS:-16}
steps=${PQ_STEPS:-32}
jobs=${PQ_JOBS:-2}
results=${BENCH_RESULTS:-$builddir/bench/results}
duck=${OBS_DUCKDB_ENV:-${HOME:-/root}/.cache/obsshim/duckdb}
py=$duck/bin/python
app=$builddir/tests/apps/tp_decode
shim=$builddir/shim/.libs/libobsshim.so
report=$builddir/obs-report
for f in "$app" "$shim" "$report" "$py"; do
    if [ ! -e "$f" ]; then
        echo "bench-parquet: $f is missing (DuckDB: contrib/install-deps --duckdb)" >&2
        exit 1
    fi
done

work=$(mktemp -d "${PQ_DIR:-${TMPDIR:-/tmp}}/obs-parquet-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$results" "$work/traces" || exit 1
csv=$results/parquet-$(date -u +%Y%m%dT%H%M%SZ).csv
echo "measure,value,unit" >"$csv"
now() { date +%s.%N; }
say() { # MEASURE VALUE UNIT
    printf '%-44s %14s %s\n' "$1" "$2" "$3"
    echo "$1,$2,$3" >>"$csv"
}

echo "bench-parquet: $ranks ranks x ($layers layers, 1 prompt + $steps steps), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(now)
export LD_LIBRARY_PATH=$builddir/tests/apps/.libs:$builddir/sim/.libs
seq 0 $((ranks - 1)) | OBS_BENCH_APP=$app OBS_BENCH_SHIM=$shim OBS_BENCH_DIR=$work/traces \
    OBS_BENCH_ARGS="$ranks 7 --layers $layers --steps $steps" \
    xargs -P "$jobs" -I{} sh -c 'LD_PRELOAD=$OBS_BENCH_SHIM OBS_GPU_TIME=events OBS_SUMMARY=0 OBS_PERFETTO=0 \
        OBS_OUTPUT=$OBS_BENCH_DIR/rank{} $OBS_BENCH_APP {} $OBS_BENCH_ARGS >/dev/null 2>&1' || {
    echo "bench-parquet: a rank failed" >&2
    exit 1
}
t1=$(now)
n=$(ls "$work/traces" | grep -c '\.obs$')
obs_bytes=$(cat "$work"/traces/*.obs | wc -c)
calls=$("$report" summary --format csv "$work/traces/rank0.obs" | awk -F, '/^# trace/{getline; getline; print $5; exit}')
say "traces generated" "$n" "ranks"
say "generation wall time" "$(echo "$t1 - $t0" | bc)" "s"
say "calls per rank (rank 0)" "$calls" "calls"
say ".obs bytes, all ranks" "$obs_bytes" "bytes"

t0=$(now)
"$py" "$srcdir/contrib/parquet/obs-parquet" -v -j "$jobs" -o "$work/parquet" "$work"/traces/*.obs 2>"$work/export.log" || {
    cat "$work/export.log" >&2
    exit 1
}
t1=$(now)
cat "$work/export.log"
total_calls=$(sed -n 's/.* \([0-9]*\) calls, .*/\1/p' "$work/export.log")
pq_bytes=$(du -cb "$work"/parquet/*/*.parquet | tail -n 1 | cut -f1)
calls_bytes=$(du -cb "$work"/parquet/*/calls.parquet | tail -n 1 | cut -f1)
say "export wall time (obs-parquet -j $jobs)" "$(echo "$t1 - $t0" | bc)" "s"
say "calls, all ranks" "$total_calls" "calls"
say "Parquet bytes, all tables" "$pq_bytes" "bytes"
say "Parquet bytes per call (all tables)" "$(echo "scale=1; $pq_bytes / $total_calls" | bc)" "bytes"
say "Parquet bytes per call (calls.parquet)" "$(echo "scale=1; $calls_bytes / $total_calls" | bc)" "bytes"

for q in "$srcdir"/contrib/sql/*.sql; do
    t0=$(now)
    rows=$("$py" "$srcdir/contrib/parquet/obs-parquet" --query "$q" --format csv "$work/parquet" | tail -n +2 | wc -l)
    t1=$(now)
    say "query $(basename "$q") ($rows rows)" "$(echo "$t1 - $t0" | bc)" "s"
done

t0=$(now)
/usr/bin/time -f '%M' -o "$work/merge.rss" "$report" merge --no-args -o "$work/merged.json" "$work"/traces/*.obs \
    2>"$work/merge.log" || { cat "$work/merge.log" >&2; exit 1; }
t1=$(now)
say "obs-report merge --no-args wall time" "$(echo "$t1 - $t0" | bc)" "s"
say "obs-report merge peak RSS" "$(tail -n 1 "$work/merge.rss")" "KiB"
say "merged JSON bytes" "$(wc -c <"$work/merged.json")" "bytes"
echo "bench-parquet: wrote $csv"
