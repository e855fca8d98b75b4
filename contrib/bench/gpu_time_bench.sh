#!/bin/bash
# make bench-gpu-time: what each OBS_GPU_TIME mode adds per launch on the
# scenario corpus's realistic loops (tests/scenarios: hf_eager, llamacpp,
# vllm_graphs at their --full sizes), replayed by tests/apps/llm_replay on
# the simulated CUDA runtime (and the simulated libcupti for cupti). Every
# mode of a scenario is run once per round, interleaved round robin (the
# order rotates each round) so that a noisy machine's drift hits every mode
# alike; a run's figures are the replay's own loop time (llm_replay --time:
# no process start or exit) and the CPU time of all its threads meanwhile
# (CUPTI's thread, which matches records off the app's path, included),
# each divided by its launches. Prints a table of medians (and the best run
# of each mode, the least disturbed on a busy machine) and writes
# bench/results/gpu-time-<UTC time>.csv (one row per round, scenario and
# mode) and ...-summary.csv.
#
# Modes: none (no shim), record (automatic phases, OBS_GPU_TIME=off), steps
# (OBS_GPU_TIME=steps), events (OBS_GPU_TIME=events), cupti (OBS_GPU_TIME=cupti),
# cupti_alone (no shim: the simulated libcupti made to record what cupti
# mode asks of it, by tests/apps/libcupti_tool.so with CUPTI_TOOL_API=1:
# the simulator's own CUPTI cost, which is not NVIDIA's; cupti minus it is
# roughly what the shim adds on top). The simulated libcupti writes its
# records on the app's thread under a lock, a graph launch's nodes
# included.
#
# Ends with a verdict per scenario: what steps adds per launch over record
# (CPU time: steps' median added over none minus record's) against a tenth
# of what record adds over none.
#
# BENCH_COUNT=instructions counts instead of timing: each mode of each
# scenario run once at the scenario's default size and once --full under
# valgrind --tool=callgrind, and instructions per launch = (Ir --full - Ir
# default) / (launches --full - launches default), so that start-up and
# exit cancel out; the same table and verdict (a count does not vary with
# the machine's load; cupti_alone is left out).
#
# Environment: OBS_BUILDDIR (required), OBS_SRCDIR (default: the build
# directory), BENCH_ROUNDS (7), BENCH_SCENARIOS ("hf_eager llamacpp
# vllm_graphs"), BENCH_MODES ("none record steps events cupti
# cupti_alone"), BENCH_COUNT (time or instructions), BENCH_RESULTS (default
# $OBS_BUILDDIR/bench/results).
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
srcdir=${OBS_SRCDIR:-$builddir}
rounds=${BENCH_ROUNDS:-7}
read -r -a scenarios <<<"${BENCH_SCENARIOS:-hf_eager llamacpp vllm_graphs}"
read -r -a modes <<<"${BENCH_MODES:-none record steps events cupti cupti_alone}"
results=${BENCH_RESULTS:-$builddir/bench/results}
count=${BENCH_COUNT:-time}
case $count in
time) ;;
instructions)
    command -v valgrind >/dev/null || { echo "bench-gpu-time: BENCH_COUNT=instructions needs valgrind" >&2; exit 1; }
    rounds=1
    read -r -a modes <<<"${BENCH_MODES:-none record steps events cupti}"
    ;;
*) echo "bench-gpu-time: BENCH_COUNT=$count: expected time or instructions" >&2; exit 1 ;;
esac

app=$builddir/tests/apps/llm_replay
shim=$builddir/shim/.libs/libobsshim.so
preload=${OBS_PRELOAD_FIRST:+$OBS_PRELOAD_FIRST:}$shim
sim=$builddir/sim/.libs
tool=$builddir/tests/apps/.libs/libcupti_tool.so
for f in "$app" "$shim" "$sim/libcudart.so.13" "$sim/libcupti.so.13" "$tool"; do
    if [ ! -e "$f" ]; then
        echo "bench-gpu-time: $f is missing (run make and make check first)" >&2
        exit 1
    fi
done

mode_env() {
    case $1 in
    none) echo "-" ;;
    record) echo "OBS_GPU_TIME=off" ;;
    steps) echo "OBS_GPU_TIME=steps" ;;
    events) echo "OBS_GPU_TIME=events" ;;
    cupti) echo "OBS_GPU_TIME=cupti" ;;
    cupti_alone) echo "tool" ;;
    *) echo "bench-gpu-time: unknown mode $1" >&2; exit 1 ;;
    esac
}

work=$(mktemp -d "${TMPDIR:-/tmp}/obs-gpu-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$results" || exit 1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw=$results/gpu-time-$stamp.csv
summary=$results/gpu-time-$stamp-summary.csv
echo "round,scenario,mode,launches,loop_ns,ns_per_launch,untimed,cpu_ns_per_launch" >"$raw"

# One run of a mode; size: --full, or "" for the scenario's default size.
# Prints the replay's output (BENCH_COUNT=instructions: plus "ir N", the
# instructions callgrind counted).
run_once() {
    local scn=$1 mode=$2 size=$3 envs
    envs=$(mode_env "$mode") || exit 1
    local -a cmd=(env LD_LIBRARY_PATH="$sim" OBS_SIM_QUIET=1)
    if [ "$envs" = "tool" ]; then
        cmd+=(LD_PRELOAD="${OBS_PRELOAD_FIRST:+$OBS_PRELOAD_FIRST:}$tool" CUPTI_TOOL_API=1)
    elif [ "$envs" != "-" ]; then
        # shellcheck disable=SC2206 # the mode's variables hold no spaces
        cmd+=(LD_PRELOAD="$preload" OBS_OUTPUT="$work/run-%p" OBS_TRACE=none OBS_SUMMARY=0 $envs)
    fi
    if [ "$count" = instructions ]; then
        "${cmd[@]}" valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$app" ${size:+"$size"} --time \
            "$srcdir/tests/scenarios/$scn.scn" 2>"$work/stderr" || return 1
        echo "ir $(sed -n 's/^totals: //p; s/^summary: //p' "$work/cg.out" | head -n 1)"
        rm -f "$work/cg.out"
    else
        "${cmd[@]}" "$app" ${size:+"$size"} --time "$srcdir/tests/scenarios/$scn.scn" 2>"$work/stderr"
    fi
}

run_mode() {
    local round=$1 scn=$2 mode=$3 out
    if [ "$count" = instructions ]; then
        local small
        if ! small=$(run_once "$scn" "$mode" "") || ! out=$(run_once "$scn" "$mode" --full); then
            echo "bench-gpu-time: $scn in mode $mode failed:" >&2
            cat "$work/stderr" >&2
            exit 1
        fi
        rm -f "$work"/run-*
        # instructions per launch between the two sizes, in the loop_ns and cpu columns
        printf '%s\n%s\n' "$small" "$out" | awk -v r="$round" -v s="$scn" -v m="$mode" '
            $1 == "scenario" { for (i = 1; i < NF; i++) if ($i == "launches") n[++k] = $(i + 1) }
            $1 == "ir" { ir[++j] = $2 }
            END { d = (ir[2] - ir[1]) / (n[2] - n[1])
                  printf "%s,%s,%s,%s,%.0f,%.1f,0,%.1f\n", r, s, m, n[2], ir[2] - ir[1], d, d }' >>"$raw"
        return
    fi
    if ! out=$(run_once "$scn" "$mode" --full); then
        echo "bench-gpu-time: $scn in mode $mode failed:" >&2
        cat "$work/stderr" >&2
        exit 1
    fi
    if grep -q 'obsshim: warning\|cupti_tool: could not' "$work/stderr"; then
        echo "bench-gpu-time: $scn in mode $mode warned:" >&2
        cat "$work/stderr" >&2
        exit 1
    fi
    # Calls the GPU-time mode left untimed (a full queue: cupti's consumer
    # starved of CPU): a run with fewer timed calls did less work.
    local untimed=0 trace
    for trace in "$work"/run-*.obs; do
        [ -e "$trace" ] || continue
        untimed=$(tr '\0' '\n' <"$trace" | sed -n 's/^gpu_time_\(cupti_\|steps_\)\{0,1\}untimed_no_room=//p' | tail -n 1)
    done
    rm -f "$work"/run-*
    echo "$out" | awk -v r="$round" -v s="$scn" -v m="$mode" -v u="${untimed:-0}" '
        $1 == "scenario" { for (i = 1; i < NF; i++) if ($i == "launches") n = $(i + 1) }
        $1 == "loop_ns" { t = $2 }
        $1 == "loop_cpu_ns" { c = $2 }
        END { printf "%s,%s,%s,%s,%s,%.1f,%s,%.1f\n", r, s, m, n, t, t / n, u, c / n }' >>"$raw"
}

nmodes=${#modes[@]}
echo "bench-gpu-time: $rounds rounds x ${#scenarios[@]} scenarios x $nmodes modes" \
     "($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
for ((round = 1; round <= rounds; round++)); do
    for scn in "${scenarios[@]}"; do
        for ((k = 0; k < nmodes; k++)); do
            run_mode "$round" "$scn" "${modes[$(((k + round) % nmodes))]}"
        done
    done
    printf '.' >&2
done
echo >&2

# Per scenario and mode: median ns per launch (wall and CPU); median over
# rounds of (mode - none) and of (mode - record) in the same round; the
# best run (least ns per launch) and its excess over none's best.
awk -F, -v order="${modes[*]}" -v scns="${scenarios[*]}" '
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
NR == 1 { next }
{ v[$1, $2, $3] = $6; c[$1, $2, $3] = $8; n_launch[$2] = $4; rounds[$1] = 1 }
END {
    nm = split(order, m, " "); ns = split(scns, s, " ")
    print "scenario,mode,launches,median_ns_per_launch,added_over_none_ns,added_over_record_ns," \
          "best_ns_per_launch,best_added_over_none_ns,median_cpu_ns_per_launch,cpu_added_over_none_ns,rounds"
    for (si = 1; si <= ns; si++) {
        bnone = ""
        for (r in rounds) if ((r, s[si], "none") in v && (bnone == "" || v[r, s[si], "none"] < bnone))
            bnone = v[r, s[si], "none"]
        for (mi = 1; mi <= nm; mi++) {
            n = 0; nn = 0; nr = 0; best = ""
            for (r in rounds) {
                if (!((r, s[si], m[mi]) in v)) continue
                a[++n] = v[r, s[si], m[mi]]; ca[n] = c[r, s[si], m[mi]]
                if (best == "" || a[n] < best) best = a[n]
                if ((r, s[si], "none") in v) {
                    nn++
                    dn[nn] = v[r, s[si], m[mi]] - v[r, s[si], "none"]
                    cn[nn] = c[r, s[si], m[mi]] - c[r, s[si], "none"]
                }
                if ((r, s[si], "record") in v) dr[++nr] = v[r, s[si], m[mi]] - v[r, s[si], "record"]
            }
            if (n == 0) continue
            printf "%s,%s,%s,%.1f,%s,%s,%.1f,%s,%.1f,%s,%d\n", s[si], m[mi], n_launch[s[si]], median(a, n),
                nn ? sprintf("%.1f", median(dn, nn)) : "", nr ? sprintf("%.1f", median(dr, nr)) : "", best,
                bnone != "" ? sprintf("%.1f", best - bnone) : "", median(ca, n),
                nn ? sprintf("%.1f", median(cn, nn)) : "", n
        }
    }
}' "$raw" >"$summary"

echo
printf '%-12s %-11s %8s %10s %10s %10s %9s %9s %10s\n' scenario mode launches "ns/launch" "+vs none" \
    "+vs record" "best" "best+" "cpu+"
awk -F, 'NR > 1 { printf "%-12s %-11s %8s %10.1f %10s %10s %9.1f %9s %10s\n", $1, $2, $3, $4, $5, $6, $7, $8, $10 }' \
    "$summary"
echo
echo "  none: no shim; record: automatic phases, OBS_GPU_TIME=off;"
echo "  steps / events / cupti: the same with OBS_GPU_TIME=steps / events / cupti (the simulated libcupti);"
echo "  cupti_alone: no shim, the simulated libcupti recording what cupti mode asks of it (its own cost)"
echo "  ns/launch: llm_replay --full --time's loop time / its launches (graph launches count one);"
echo "  medians over $rounds interleaved rounds; '+vs X': the mode minus X in the same round;"
echo "  best: the least ns/launch of the mode's runs, best+: that minus no shim's best;"
echo "  cpu+: the same as +vs none for the CPU time of all the process's threads"
if [ "$count" = instructions ]; then
    echo "  BENCH_COUNT=instructions: every ns column is instructions per launch (callgrind: --full minus the default size"
    echo "  over their launches), one run per mode"
fi
echo "  raw: $raw"
echo "  summary: $summary"
# The target: steps adds at most a tenth of what record adds over none (CPU column, or instructions).
awk -F, 'NR > 1 { c[$1, $2] = $10; seen[$1] = 1; if (!($1 in order)) { order[$1] = ++n; name[n] = $1 } }
END {
    for (i = 1; i <= n; i++) {
        s = name[i]
        if (!((s, "steps") in c) || !((s, "record") in c) || c[s, "record"] == "" || c[s, "steps"] == "") continue
        over = c[s, "steps"] - c[s, "record"]; tenth = c[s, "record"] / 10
        printf "verdict %s: steps adds %.1f per launch over record; a tenth of record over none: %.1f: %s\n", s,
            over, tenth, over <= tenth ? "PASS" : "FAIL"
    }
}' "$summary"
if awk -F, 'NR > 1 && $7 > 0 { bad = 1 } END { exit !bad }' "$raw"; then
    echo "bench-gpu-time: some runs left calls untimed (column untimed of the raw CSV): their figures are low"
fi
exit 0
