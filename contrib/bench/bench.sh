#!/bin/bash
# make bench: what the shim adds per kernel launch and per memory copy on the
# simulated CUDA runtime, every mode measured in one run, interleaved round
# robin (the order rotates each round), so that a noisy machine's drift hits
# every mode alike. Prints a table with the targets' verdicts and writes
# bench/results/bench-<UTC time>.csv (one row per round and mode) and
# bench/results/bench-<UTC time>-summary.csv.
#
# Environment: OBS_BUILDDIR (required), BENCH_ROUNDS (9), BENCH_LAUNCHES
# (1000000 per run), BENCH_COPIES (200000 per run), BENCH_RESULTS (directory,
# default $OBS_BUILDDIR/bench/results).
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
rounds=${BENCH_ROUNDS:-9}
launches=${BENCH_LAUNCHES:-1000000}
copies=${BENCH_COPIES:-200000}
results=${BENCH_RESULTS:-$builddir/bench/results}

app=$builddir/contrib/bench/bench_loop
shim=$builddir/shim/.libs/libobsshim.so
# OBS_PRELOAD_FIRST (make check-sanitize: the ASan runtime) goes before the shim
preload=${OBS_PRELOAD_FIRST:+$OBS_PRELOAD_FIRST:}$shim
sim=$builddir/sim/.libs
noop_nvtx=$builddir/contrib/bench/.libs/libobsbenchnvtx.so
for f in "$app" "$shim" "$noop_nvtx" "$sim/libcudart.so.13"; do
    if [ ! -e "$f" ]; then
        echo "bench: $f is missing (run make first)" >&2
        exit 1
    fi
done

# Targets (ns added per launch over no shim, medians).
target_record=50
target_nvtx_phases=150

# mode name, then the environment of the run ("-" for no shim at all).
modes=(none off record record_mono nvtx_launch phases_auto phases_rules nvtx_phases gpu_events)
mode_env() {
    case $1 in
    none) echo "-" ;;
    off) echo "OBS_ENABLE=0" ;;
    record) echo "OBS_PHASES=off" ;;
    record_mono) echo "OBS_PHASES=off OBS_CLOCK=monotonic" ;;
    nvtx_launch) echo "OBS_PHASES=auto OBS_NVTX_LAUNCH=1 NVTX_INJECTION64_PATH=$noop_nvtx" ;;
    phases_auto) echo "OBS_PHASES=auto" ;;
    phases_rules) echo "OBS_PHASES=PREFILL=bench_kernel" ;;
    nvtx_phases) echo "OBS_PHASES=PREFILL=bench_kernel OBS_NVTX_LAUNCH=1 NVTX_INJECTION64_PATH=$noop_nvtx" ;;
    gpu_events) echo "OBS_PHASES=off OBS_GPU_TIME=events" ;;
    esac
}
mode_what() {
    case $1 in
    none) echo "no shim" ;;
    off) echo "shim loaded, OBS_ENABLE=0" ;;
    record) echo "record, OBS_PHASES=off (host clock: the TSC where the kernel uses it, OBS_CLOCK=auto)" ;;
    record_mono) echo "record, OBS_PHASES=off OBS_CLOCK=monotonic (clock_gettime timestamps)" ;;
    nvtx_launch) echo "record + automatic phases + NVTX range per launch (no-op tool)" ;;
    phases_auto) echo "record + automatic phases" ;;
    phases_rules) echo "record + phase rules (PREFILL=bench_kernel: classified, no new step)" ;;
    nvtx_phases) echo "record + phase rules + NVTX phase and per-launch ranges (no-op tool)" ;;
    gpu_events) echo "record + OBS_GPU_TIME=events" ;;
    esac
}

work=$(mktemp -d "${TMPDIR:-/tmp}/obs-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$results" || exit 1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw=$results/bench-$stamp.csv
summary=$results/bench-$stamp-summary.csv
echo "round,mode,metric,ns" >"$raw"

# One run of the loops in a mode; appends its rows to the raw CSV.
run_mode() {
    local round=$1 mode=$2 envs out
    envs=$(mode_env "$mode")
    local -a cmd=(env LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1)
    if [ "$envs" != "-" ]; then
        # shellcheck disable=SC2206 # the mode's variables hold no spaces
        cmd+=(LD_PRELOAD="$preload" OBS_OUTPUT="$work/run-%p" OBS_JSON=0 OBS_SUMMARY=0 $envs)
    fi
    if ! out=$("${cmd[@]}" "$app" --launches "$launches" --copies "$copies" 2>"$work/stderr"); then
        echo "bench: mode $mode failed:" >&2
        cat "$work/stderr" >&2
        exit 1
    fi
    rm -f "$work"/run-*
    echo "$out" | awk -v r="$round" -v m="$mode" '
        $1 == "ns_per_launch" { printf "%s,%s,launch,%s\n", r, m, $2 }
        $1 == "ns_per_copy"   { printf "%s,%s,copy,%s\n", r, m, $2 }' >>"$raw"
}

clock_file=$work/clock
nmodes=${#modes[@]}
echo "bench: $rounds rounds x ${#modes[@]} modes, $launches launches + $copies copies per run" \
     "($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for ((round = 1; round <= rounds; round++)); do
    for ((k = 0; k < nmodes; k++)); do
        run_mode "$round" "${modes[$(((k + round) % nmodes))]}"
    done
    env LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1 "$app" --clock 5000000 |
        awk '$1 == "ns_per_clock_gettime" { print $2 }' >>"$clock_file"
    printf '.' >&2
done
echo >&2

# Stats per mode and metric: median of the mode, median / min / max over
# rounds of (mode - no shim in the same round), ratio of medians.
awk -F, -v order="${modes[*]}" -v tr="$target_record" -v tn="$target_nvtx_phases" '
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
NR == 1 { next }
{ v[$1, $2, $3] = $4; rounds[$1] = 1 }
END {
    nm = split(order, m, " ")
    print "mode,metric,median_ns,added_median_ns,added_min_ns,added_max_ns,ratio_to_none,rounds,target_added_ns,verdict"
    for (mi = 1; mi <= nm; mi++) for (w = 1; w <= 2; w++) {
        metric = w == 1 ? "launch" : "copy"
        n = 0; nb = 0
        for (r in rounds) if ((r, m[mi], metric) in v && (r, "none", metric) in v) {
            n++; abs[n] = v[r, m[mi], metric]; base[n] = v[r, "none", metric]
            add[n] = abs[n] - base[n]
        }
        if (n == 0) continue
        lo = add[1]; hi = add[1]
        for (i = 1; i <= n; i++) { if (add[i] < lo) lo = add[i]; if (add[i] > hi) hi = add[i] }
        med = median(abs, n); bmed = median(base, n); amed = median(add, n)
        target = ""; verdict = ""
        if (metric == "launch" && m[mi] == "record") target = tr
        if (metric == "launch" && m[mi] == "nvtx_phases") target = tn
        if (target != "") verdict = amed <= target ? "PASS" : "FAIL"
        printf "%s,%s,%.1f,%.1f,%.1f,%.1f,%.2f,%d,%s,%s\n", m[mi], metric, med, amed, lo, hi, med / bmed, n, target, verdict
    }
}' "$raw" >"$summary"

# The clock the shim chose (the trace's meta "clock"), from one short run.
shim_clock=$(env LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1 LD_PRELOAD="$preload" OBS_OUTPUT="$work/clock-run" \
    OBS_JSON=0 OBS_SUMMARY=0 OBS_PHASES=off "$app" --launches 1 >/dev/null 2>&1 &&
    tr '\0' '\n' <"$work/clock-run.obs" | sed -n 's/^clock=//p' | tail -n 1)
rm -f "$work/clock-run.obs"
clock_med=$(sort -n "$clock_file" | awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
echo
printf '%-13s %-6s %9s %9s %17s %7s  %s\n' mode call "ns/call" "added" "added min..max" ratio "target: verdict"
awk -F, 'NR > 1 {
    tv = $9 != "" ? sprintf("<= %s ns: %s", $9, $10) : ""
    printf "%-13s %-6s %9.1f %9.1f %8.1f..%-8.1f %6.2fx  %s\n", $1, $2, $3, $4, $5, $6, $7, tv
}' "$summary"
echo
for mode in "${modes[@]}"; do
    printf '  %-13s %s\n' "$mode" "$(mode_what "$mode")"
done
echo "  clock_gettime(CLOCK_MONOTONIC): $clock_med ns per call (median of $rounds rounds): record_mono reads it twice per call"
echo "  host clock of the shim here (OBS_CLOCK=auto): $shim_clock"
echo "  medians over $rounds interleaved rounds; 'added' is the mode minus no shim in the same round"
echo "  raw: $raw"
echo "  summary: $summary"
if grep -q ',FAIL$' "$summary"; then
    echo "bench: a target was missed (see docs/performance.md for why)"
fi
exit 0
