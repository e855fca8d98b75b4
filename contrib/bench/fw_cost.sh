#!/bin/bash
# make bench-fw (docs/performance.md, "Inside real frameworks"): what the
# shim costs inside PyTorch, measured two ways on the same runs.
#   (b) differential: contrib/bench/fw_cost.py CASE times its own loop
#       (wall clock and its thread's CPU time), with no shim and with each
#       shim library named, over the simulated driver (kernels are not
#       executed); the runs of a round are interleaved, their order rotated
#       each round, and what a shim adds is its run minus the no-shim run of
#       the same round: medians over rounds, with min .. max
#   (a) the shim's own figure for the same run: the summary's "Shim cost"
#       (ns per recorded call, from the trace's SELF_COST records)
# The calls the timed part made are counted in the trace (the records whose
# host begin time lies between the program's t0_mono and t1_mono), so (b)
# per call = (b) per unit / calls per unit. The process's exit (from the
# timed part's end to the process's end: the shim's exit work, its trace's
# timeline and summary) is timed apart.
#
# Writes bench/results/fw-cost-<UTC time>.csv (one row per run) and
# fw-cost-<UTC time>-summary.csv.
#
# Environment: OBS_BUILDDIR (required), OBS_SRCDIR (default OBS_BUILDDIR),
# FW_COST_CASES (default: add loop-item generate neox), FW_COST_ROUNDS (7),
# FW_COST_SHIMS ("label=PATH ...", default "defaults=this build's
# library"; every library runs with the shim's defaults), FW_COST_ENV
# (extra VAR=VALUE settings for the shim runs), FW_COST_SUMMARIZE (a raw
# CSV written before: print its tables, run nothing), FW_COST_ARGS_<case>
# (fw_cost.py's options for a case, e.g. FW_COST_ARGS_add="--units
# 40000"), OBS_FRAMEWORKS_ENV (the Python environment with torch and
# transformers, default $HOME/.cache/obsshim/frameworks), BENCH_RESULTS.
set -u

builddir=${OBS_BUILDDIR:?OBS_BUILDDIR must name the build directory}
srcdir=${OBS_SRCDIR:-$builddir}
results=${BENCH_RESULTS:-$builddir/bench/results}
rounds=${FW_COST_ROUNDS:-7}
cases=${FW_COST_CASES:-add loop-item generate neox}
shims=${FW_COST_SHIMS:-defaults=$builddir/shim/.libs/libobsshim.so}
envdir=${OBS_FRAMEWORKS_ENV:-${HOME:-/root}/.cache/obsshim/frameworks}
py=$envdir/bin/python
script=$srcdir/contrib/bench/fw_cost.py
driver=$builddir/sim/driver
report=$builddir/obs-report

if [ ! -x "$py" ] || ! env LD_PRELOAD= "$py" -c 'import torch, transformers' >/dev/null 2>&1; then
    echo "bench fw: skipped: no Python with torch and transformers at $envdir (contrib/install-deps --frameworks)"
    exit 0
fi
for f in "$script" "$driver/libcuda.so.1" "$report" $(for s in $shims; do echo "${s#*=}"; done); do
    [ -e "$f" ] || { echo "bench fw: $f is missing (run make first)" >&2; exit 1; }
done
mkdir -p "$results" || exit 1
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw=$results/fw-cost-$stamp.csv
summary=$results/fw-cost-$stamp-summary.csv
work=$(mktemp -d "${TMPDIR:-/tmp}/obs-fw-cost.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

modes=(none)
for s in $shims; do modes+=("${s%%=*}"); done
lib_of() { # label -> library
    local s
    for s in $shims; do [ "${s%%=*}" = "$1" ] && echo "${s#*=}"; done
}

# The calls recorded between t0 and t1 (host begin time, CLOCK_MONOTONIC ns).
calls_between() { # trace t0 t1
    "$report" csv "$1" 2>/dev/null | env LD_PRELOAD= "$py" -c '
import csv, sys
t0, t1 = int(sys.argv[1]), int(sys.argv[2])
rows = csv.reader(sys.stdin)
col = next(rows).index("host_begin_ns")
print(sum(1 for r in rows if r[col] and t0 <= int(r[col]) <= t1))' "$2" "$3"
}

echo "case,round,mode,load1,units,ns_per_unit,cpu_ns_per_unit,calls_timed,calls_total,shim_ns_per_call,exit_ms,shim_once_ms" >"$raw"

run_one() { # case round mode
    local c=$1 r=$2 m=$3 args_var=FW_COST_ARGS_${1//-/_} out err load end
    local -a cmd=(env LD_LIBRARY_PATH="$driver" OBS_SIM_QUIET=1 PYTHONDONTWRITEBYTECODE=1)
    out=$work/out err=$work/err
    if [ "$m" != none ]; then
        # shellcheck disable=SC2206 # FW_COST_ENV: VAR=VALUE words
        cmd+=(LD_PRELOAD="$(lib_of "$m")" OBS_OUTPUT="$work/run" ${FW_COST_ENV:-})
    fi
    load=$(cut -d' ' -f1 /proc/loadavg)
    # shellcheck disable=SC2086 # the case's options are words
    if ! "${cmd[@]}" "$py" "$script" "$c" ${!args_var:-} >"$out" 2>"$err"; then
        echo "bench fw: $c in mode $m failed:" >&2
        tail -n 20 "$err" >&2
        exit 1
    fi
    end=$(date +%s%N)
    awk -v c="$c" -v r="$r" -v m="$m" -v load="$load" -v end="$end" '
        { v[$1] = $2 }
        END { printf "%s,%s,%s,%s,%s,%s,%s,", c, r, m, load, v["units"], v["ns_per_unit"], v["cpu_ns_per_unit"]
              printf "%.1f", (end - v["t1_real"]) / 1e6 > "/dev/stderr" }' "$out" >"$work/row" 2>"$work/exit_ms"
    if [ "$m" = none ]; then
        echo ",,$(cat "$work/exit_ms")," >>"$work/row"
    else
        local t0 t1 timed cost total once
        t0=$(awk '$1 == "t0_mono" { print $2 }' "$out")
        t1=$(awk '$1 == "t1_mono" { print $2 }' "$out")
        timed=$(calls_between "$work/run.obs" "$t0" "$t1")
        cost=$(sed -n 's/^Shim cost: \([0-9.]*\) ns per recorded call (\([0-9]*\) calls.*/\1 \2/p' "$err")
        total=${cost#* }
        cost=${cost% *}
        once=$(sed -n 's/^Shim cost: .*, and \([0-9.]*\) ms once.*/\1/p' "$err")
        echo "$timed,$total,$cost,$(cat "$work/exit_ms"),$once" >>"$work/row"
    fi
    tr -d '\n' <"$work/row" >>"$raw"
    echo >>"$raw"
    rm -f "$work"/run.*
}

nmodes=${#modes[@]}
if [ -n "${FW_COST_SUMMARIZE:-}" ]; then
    # the tables of a raw CSV written before (its modes in the order they appear, none first)
    rm -f "$raw"
    raw=$FW_COST_SUMMARIZE
    summary=${raw%.csv}-summary.csv
    read -r -a modes <<<"none $(awk -F, 'NR > 1 && $3 != "none" && !($3 in s) { s[$3] = 1; printf "%s ", $3 }' "$raw")"
    rounds=$(awk -F, 'NR > 1 && $2 > n { n = $2 } END { print n }' "$raw")
    echo "bench fw: the tables of $raw"
else
    echo "bench fw: cases: $cases; $rounds rounds of ${modes[*]} ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
    for c in $cases; do
        for ((round = 1; round <= rounds; round++)); do
            for ((k = 0; k < nmodes; k++)); do
                run_one "$c" "$round" "${modes[$(((k + round) % nmodes))]}"
            done
            printf '.' >&2
        done
        echo >&2
    done
fi
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# Per case and shim: medians over rounds, and of the paired differences.
awk -F, -v order="${modes[*]}" '
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lohi(a, n,    i) { lo = a[1]; hi = a[1]; for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] } }
NR == 1 { next }
{ key = $1 SUBSEP $2 SUBSEP $3; wall[key] = $6; cpu[key] = $7; timed[key] = $8; units[key] = $5
  shim[key] = $10; ex[key] = $11; once[key] = $12 == "" ? 0 : $12; seen[$1] = 1; rounds[$2] = 1; if (!($1 in corder)) { corder[$1] = ++nc; cname[nc] = $1 } }
END {
    nm = split(order, m, " ")
    print "case,mode,rounds,units,calls_per_unit,ns_per_unit_none,ns_per_unit,added_ns_per_unit,added_min,added_max,ratio," \
          "cpu_ns_per_unit_none,cpu_ns_per_unit,cpu_added_ns_per_unit,cpu_added_min,cpu_added_max," \
          "b_wall_ns_per_call,b_cpu_ns_per_call,a_shim_ns_per_call,a_min,a_max,exit_added_ms,a_once_ms"
    for (ci = 1; ci <= nc; ci++) for (mi = 2; mi <= nm; mi++) {
        c = cname[ci]; n = 0
        for (r in rounds) {
            k = c SUBSEP r SUBSEP m[mi]; b = c SUBSEP r SUBSEP "none"
            if (!(k in wall) || !(b in wall)) continue
            n++; w[n] = wall[k]; wb[n] = wall[b]; dw[n] = wall[k] - wall[b]
            u[n] = cpu[k]; ub[n] = cpu[b]; du[n] = cpu[k] - cpu[b]
            cpu_[n] = timed[k] / units[k]; s[n] = shim[k]; e[n] = ex[k] - ex[b]; on[n] = once[k]; un = units[k]
        }
        if (n == 0) continue
        mw = median(w, n); mwb = median(wb, n); mdw = median(dw, n); lohi(dw, n); dwlo = lo; dwhi = hi
        mu = median(u, n); mub = median(ub, n); mdu = median(du, n); lohi(du, n); dulo = lo; duhi = hi
        mc = median(cpu_, n); ms = median(s, n); lohi(s, n); slo = lo; shi = hi; me = median(e, n); mon = median(on, n)
        printf "%s,%s,%d,%d,%.2f,%.1f,%.1f,%.1f,%.1f,%.1f,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f\n",
            c, m[mi], n, un, mc, mwb, mw, mdw, dwlo, dwhi, mw / mwb, mub, mu, mdu, dulo, duhi,
            mdw / mc, mdu / mc, ms, slo, shi, me, mon
    }
}' "$raw" >"$summary"

echo
printf '%-10s %-9s %6s %10s %12s %22s %12s %22s %9s %9s %16s %8s %8s\n' case shim calls/u "ns/unit" "added/unit" "min..max" \
    "cpu added" "min..max" "(b) wall" "(b) cpu" "(a) shim: min..max" "(a) once" "exit ms"
awk -F, 'NR > 1 { printf "%-10s %-9s %6.1f %10.0f %12.0f %10.0f..%-11.0f %12.0f %10.0f..%-11.0f %9.1f %9.1f %6.1f: %.0f..%-6.0f %5.1f ms %8.1f\n",
    $1, $2, $5, $6, $8, $9, $10, $14, $15, $16, $17, $18, $19, $20, $21, $23, $22 }' "$summary"
echo
echo "  unit: add: one x.add_(1) (one launch); loop-item, generate, neox: one generated token"
echo "  added: the shim's run minus the no-shim run of the same round (wall clock; cpu: the program thread's CPU time)"
echo "  (b): added per unit / recorded calls per unit (the calls whose begin lies in the timed part)"
echo "  (a): the shim's own figure for the same runs (summary \"Shim cost\", ns per recorded call, the whole run);"
echo "  (a) once: its one-time work (set-up, first uses), apart (libraries before issue 36 count it in the figure)"
echo "  exit ms: from the timed part's end to the process's end, shim minus no shim (its exit work)"
echo "  medians over $rounds interleaved rounds; load at the start and the end: see above and $load_end"
echo "  raw: $raw"
echo "  summary: $summary"
exit 0
