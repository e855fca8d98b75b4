#!/bin/bash
# make bench, layers (docs/layers.md, docs/performance.md): what finding the
# model layers adds to the shim's default cost per launch, on the scenario
# corpus's realistic loops replayed by tests/apps/llm_replay on the simulated
# CUDA runtime. Counted in instructions (valgrind's callgrind: exact and the
# same on a loaded machine, where wall-clock is not), per scenario:
#   none        the replay alone (no shim)
#   layers_off  the shim with its defaults but OBS_LAYER=off
#   defaults    the shim with its defaults (automatic phases and layers)
# and per launch: the defaults' cost = (defaults - none) / launches, the
# layers' = (defaults - layers_off) / launches, and their ratio (target: at
# most 10 %). Writes bench/results/layers-<UTC time>.csv.
#
# Environment: OBS_BUILDDIR (required), OBS_SRCDIR (the source tree,
# default OBS_BUILDDIR), LAYERS_SCENARIOS (default: hf_eager hf_generate
# llamacpp trtllm vllm_graphs chunked_prefill), LAYERS_FULL (1: the
# scenarios' full sizes, llm_replay --full, the default; 0: make check's
# sizes, where the first search of each kind weighs more), BENCH_RESULTS.
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
srcdir=${OBS_SRCDIR:-$builddir}
results=${BENCH_RESULTS:-$builddir/bench/results}
scenarios=${LAYERS_SCENARIOS:-hf_eager hf_generate llamacpp trtllm vllm_graphs chunked_prefill}
full=--full # the scenarios' full sizes (LAYERS_FULL=0: make check's)
[ "${LAYERS_FULL:-1}" = 0 ] && full=
app=$builddir/tests/apps/llm_replay
shim=$builddir/shim/.libs/libobsshim.so
sim=$builddir/sim/.libs
target=10

if ! command -v valgrind >/dev/null 2>&1; then
    echo "bench layers: skipped: valgrind not found (Debian: valgrind)"
    exit 0
fi
for f in "$app" "$shim" "$sim/libcudart.so.13"; do
    if [ ! -e "$f" ]; then
        echo "bench layers: $f is missing (run make first)" >&2
        exit 1
    fi
done
mkdir -p "$results" || exit 1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
csv=$results/layers-$stamp.csv
work=$(mktemp -d "${TMPDIR:-/tmp}/obs-layers-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

# Instructions of one run: callgrind's summary line.
instructions() { # mode scenario
    local mode=$1 scn=$srcdir/tests/scenarios/$2.scn out=$work/cg.$1.$2
    local -a env=(LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1)
    case $mode in
    none) ;;
    layers_off) env+=(LD_PRELOAD="$shim" OBS_LAYER=off OBS_TRACE=none OBS_SUMMARY=0 OBS_OUTPUT="$work/t-$mode") ;;
    defaults) env+=(LD_PRELOAD="$shim" OBS_TRACE=none OBS_SUMMARY=0 OBS_OUTPUT="$work/t-$mode") ;;
    esac
    env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" "$app" $full "$scn" >"$work/out.$mode" 2>/dev/null ||
        return 1
    awk '/^summary:/ { print $2 }' "$out"
}

echo "scenario,launches,ir_none,ir_layers_off,ir_defaults,defaults_per_launch,layers_per_launch,layers_share_percent" >"$csv"
printf '%-18s %9s %14s %14s %10s %10s %8s\n' scenario launches "defaults/launch" "layers/launch" share target verdict
worst=0
for s in $scenarios; do
    none=$(instructions none "$s") || { echo "bench layers: $s: the replay failed" >&2; exit 1; }
    launches=$(awk '/launches/ { for (i = 1; i < NF; i++) if ($i == "launches") print $(i + 1) }' "$work/out.none")
    off=$(instructions layers_off "$s") || exit 1
    def=$(instructions defaults "$s") || exit 1
    line=$(awk -v n="$none" -v o="$off" -v d="$def" -v l="$launches" 'BEGIN {
        dl = (d - n) / l; ll = (d - o) / l; sh = dl > 0 ? 100 * ll / dl : 0
        printf "%.1f %.1f %.1f", dl, ll, sh }')
    read -r dl ll sh <<<"$line"
    echo "$s,$launches,$none,$off,$def,$dl,$ll,$sh" >>"$csv"
    verdict=$(awk -v sh="$sh" -v t="$target" 'BEGIN { print (sh <= t) ? "ok" : "OVER" }')
    printf '%-18s %9s %14s %14s %9s%% %9s%% %8s\n' "$s" "$launches" "$dl" "$ll" "$sh" "$target" "$verdict"
    worst=$(awk -v a="$worst" -v b="$sh" 'BEGIN { print (b > a) ? b : a }')
done
echo "bench layers: instructions per launch (callgrind); worst share ${worst}% (target ${target}%); $csv"
