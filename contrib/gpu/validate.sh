#!/usr/bin/env bash
# obsshim on a real NVIDIA GPU: builds the project, runs seven checks and
# prints one table of PASS / FAIL / SKIP rows with their numbers, to stdout
# and as markdown (--out FILE, what docs/validation.md is made from).
#
#   1  obs_cuda and obs_cuda_static under the shim record exactly the
#      workload's launches per kernel name (21 prefill, 2561 KV gathers,
#      2561 decodes at the defaults; obs-report csv counts)
#   2  OBS_GPU_TIME=events: TTFT and tokens/s from `obs-report phases --csv`
#      (GPU time) agree with the workload's own CUDA event timings
#   3  a PyTorch Llama-style generate (llama_generate.py: cuBLAS, SDPA,
#      32 new tokens): the shim records 100% of the kernel launches that
#      torch.profiler (CUPTI) sees, per kernel name
#   4  a Triton kernel (triton_add.py) is captured, every launch
#   5  `ncu --nvtx --nvtx-include "obsshim@PREFILL/"` profiles only the
#      prefill kernels (the shim's live PREFILL range in its NVTX domain)
#   6  OBS_GPU_TIME=cupti with the toolkit's libcupti: no fallback, every
#      launch has a GPU span, none missing, and TTFT and tokens/s agree with
#      the workload's own CUDA event timings as in check 2
#   7  OBS_CAPTURE=steps:2-5@generation:2 (docs/capture.md): `ncu
#      --profile-from-start off` profiles, and `nsys profile
#      --capture-range=cudaProfilerApi --capture-range-end=stop` records,
#      exactly the 8 kernels of those 4 decode steps, which the shim's own
#      OBS_RECORD=window trace of the same run holds too
#
# A check whose tools are missing (no GPU, no torch, no triton, no ncu)
# prints SKIP with the reason. Exit status: 0 when no check FAILed, 1
# otherwise, 2 on a usage error. Without a GPU nothing is built and every
# row is SKIP (exit 0): tests/t_gpu_validate_nogpu checks that path.
#
# Usage: contrib/gpu/validate.sh [--out FILE.md] [--build-dir DIR]
#                                [--no-build] [--dist obsshim-X.tar.gz] [--jobs N]
# The build is out of tree (default /tmp/obsshim-validate/build). The
# source tree needs `configure` or autotools for ./bootstrap; where
# neither is there, a `make dist` tarball (--dist, or obsshim-*.tar.gz at
# the top of the tree) is unpacked and built instead.
# OBS_VALIDATE_FORCE_NO_GPU=1 behaves as on a machine without a GPU.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
WORK=${OBS_VALIDATE_WORK:-/tmp/obsshim-validate}
BUILD=""
OUT_MD=""
DIST=""
JOBS=16
DO_BUILD=1

usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUT_MD=${2:?--out needs a file}; shift 2 ;;
    --out=*) OUT_MD=${1#--out=}; shift ;;
    --build-dir) BUILD=${2:?--build-dir needs a directory}; shift 2 ;;
    --build-dir=*) BUILD=${1#--build-dir=}; shift ;;
    --dist) DIST=${2:?--dist needs a tarball}; shift 2 ;;
    --dist=*) DIST=${1#--dist=}; shift ;;
    --jobs) JOBS=${2:?--jobs needs a number}; shift 2 ;;
    --jobs=*) JOBS=${1#--jobs=}; shift ;;
    --no-build) DO_BUILD=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "validate.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
BUILD=${BUILD:-$WORK/build}

# ---- the table -------------------------------------------------------------

ROWS=()
FAILS=0
# row ID CHECK RESULT DETAILS: print at once, keep for the markdown.
row() {
    local id=$1 check=$2 result=$3 details=$4
    ROWS+=("$id|$check|$result|$details")
    [ "$result" = FAIL ] && FAILS=$((FAILS + 1))
    printf '%-3s %-44s %-5s %s\n' "$id" "$check" "$result" "$details"
}

# The markdown file: date, device, versions, the table.
write_markdown() {
    local f=$1 r id check result details
    [ -n "$f" ] || return 0
    {
        echo "# GPU validation"
        echo
        echo "Produced by \`contrib/gpu/validate.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
        echo
        echo "| | |"
        echo "| --- | --- |"
        echo "| device | ${DEVICE:-none} |"
        echo "| CUDA compiler | ${NVCC_VERSION:-none} |"
        echo "| PyTorch | ${TORCH_VERSION:-none} |"
        echo "| Triton | ${TRITON_VERSION:-none} |"
        echo "| Nsight Compute | ${NCU_VERSION:-none} |"
        echo "| source | ${SOURCE_DESC:-$SRC} |"
        echo
        echo "| # | check | result | numbers |"
        echo "| --- | --- | --- | --- |"
        for r in "${ROWS[@]}"; do
            IFS='|' read -r id check result details <<<"$r"
            echo "| $id | $check | **$result** | ${details//|//} |"
        done
        echo
        echo "Tolerances: TTFT within max(10%, 5 us) of the workload's own event timing; tokens/s within 10%."
    } >"$f"
}

finish() {
    write_markdown "$OUT_MD"
    echo
    if [ "$FAILS" -gt 0 ]; then
        echo "validate.sh: $FAILS check(s) FAILED"
        exit 1
    fi
    echo "validate.sh: no check failed"
    exit 0
}

skip_all() {
    local reason=$1
    row 0 "build (bootstrap, configure, make -j$JOBS)" SKIP "$reason"
    row 1 "workload launches recorded exactly" SKIP "$reason"
    row 2 "GPU event times = workload's own timings" SKIP "$reason"
    row 3 "PyTorch generate: 100% of CUPTI's launches" SKIP "$reason"
    row 4 "Triton kernel captured" SKIP "$reason"
    row 5 "ncu --nvtx-include obsshim@PREFILL/" SKIP "$reason"
    row 6 "OBS_GPU_TIME=cupti: spans, times = own" SKIP "$reason"
    row 7 "OBS_CAPTURE: nsys and ncu record steps 2-5 only" SKIP "$reason"
    finish
}

echo "obsshim GPU validation: source $SRC"

# ---- what this machine has ---------------------------------------------------

if [ "${OBS_VALIDATE_FORCE_NO_GPU:-0}" = 1 ]; then
    skip_all "no GPU (OBS_VALIDATE_FORCE_NO_GPU=1)"
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
    skip_all "no NVIDIA GPU: nvidia-smi not found"
fi
DEVICE=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)
if [ -z "$DEVICE" ]; then
    skip_all "no NVIDIA GPU: nvidia-smi lists none"
fi
DEVICE="$DEVICE (driver, memory)"
if command -v nvcc >/dev/null 2>&1; then
    NVCC_VERSION=$(nvcc --version | tail -n 1)
fi
PY=${PYTHON:-python3}
TORCH_VERSION=$("$PY" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null)
TRITON_VERSION=$("$PY" -c 'import triton; print(triton.__version__)' 2>/dev/null)
if command -v ncu >/dev/null 2>&1; then
    NCU_VERSION=$(ncu --version 2>/dev/null | tail -n 1)
fi
echo "device: $DEVICE"
mkdir -p "$WORK" || skip_all "cannot create $WORK"
LOGS=$WORK/logs
mkdir -p "$LOGS"

# ---- build -------------------------------------------------------------------

# The tree to configure: the source itself when it has (or can make)
# configure, else an unpacked `make dist` tarball.
configure_tree() {
    local tarball
    if [ -x "$SRC/configure" ]; then
        echo "$SRC"
        return 0
    fi
    if command -v autoreconf >/dev/null 2>&1 && (cd "$SRC" && ./bootstrap) >"$LOGS/bootstrap.log" 2>&1; then
        echo "$SRC"
        return 0
    fi
    tarball=$DIST
    if [ -z "$tarball" ]; then
        for tarball in "$SRC"/obsshim-*.tar.gz; do :; done
    fi
    [ -f "$tarball" ] || return 1
    rm -rf "$WORK/dist" && mkdir -p "$WORK/dist" && tar -xzf "$tarball" -C "$WORK/dist" || return 1
    for tarball in "$WORK"/dist/obsshim-*/configure; do :; done
    [ -x "$tarball" ] || return 1
    dirname "$tarball"
}

if [ "$DO_BUILD" = 1 ]; then
    if ! TREE=$(configure_tree); then
        row 0 "build (bootstrap, configure, make -j$JOBS)" FAIL \
            "no configure: autoreconf missing or ./bootstrap failed ($LOGS/bootstrap.log), and no obsshim-*.tar.gz (--dist)"
        finish
    fi
    SOURCE_DESC=$TREE
    t0=$(date +%s)
    if mkdir -p "$BUILD" && (cd "$BUILD" && "$TREE/configure" --quiet && make -j"$JOBS") >"$LOGS/build.log" 2>&1; then
        row 0 "build (bootstrap, configure, make -j$JOBS)" PASS "$(($(date +%s) - t0)) s, tree $TREE"
    else
        row 0 "build (bootstrap, configure, make -j$JOBS)" FAIL "see $LOGS/build.log: $(tail -n 1 "$LOGS/build.log")"
        finish
    fi
else
    row 0 "build (bootstrap, configure, make -j$JOBS)" SKIP "--no-build: using $BUILD"
fi

SHIM=$BUILD/shim/.libs/libobsshim.so
REPORT=$BUILD/obs-report
OBS_CUDA=$BUILD/workload/obs_cuda
OBS_CUDA_STATIC=$BUILD/workload/obs_cuda_static
OBSRUN=$BUILD/contrib/obs-run
for f in "$SHIM" "$REPORT"; do
    if [ ! -e "$f" ]; then
        row 1 "workload launches recorded exactly" FAIL "$f missing after the build"
        finish
    fi
done

# run_shim PREFIX LOG CMD...: CMD under the shim, trace PREFIX.obs, summary off.
run_shim() {
    local prefix=$1 log=$2
    shift 2
    rm -f "$prefix".obs "$prefix".json
    env LD_PRELOAD="$SHIM" OBS_OUTPUT="$prefix" OBS_SUMMARY=0 OBS_JSON=0 "$@" >"$log" 2>&1
}

# kernel_counts TRACE: "count<TAB>name" per kernel name, from obs-report csv.
kernel_counts() {
    "$REPORT" csv "$1" | "$PY" -c '
import csv, sys, collections
c = collections.Counter(r["name"] for r in csv.DictReader(sys.stdin) if r["kind"] == "kernel")
for name, n in sorted(c.items()):
    print(f"{n}\t{name}")
'
}

# ---- 1: exact launch counts ----------------------------------------------------

check_counts() {
    local bin=$1 label=$2 counts got
    if [ ! -x "$bin" ]; then
        row 1 "$label: launches recorded exactly" FAIL "$bin not built"
        return
    fi
    if ! run_shim "$WORK/$label" "$LOGS/$label.log" "$bin"; then
        row 1 "$label: launches recorded exactly" FAIL "exit status non-zero, see $LOGS/$label.log"
        return
    fi
    counts=$(kernel_counts "$WORK/$label.obs" 2>>"$LOGS/$label.log")
    got=$(printf '%s\n' "$counts" | "$PY" -c '
import sys
want = {"prefill_kernel": 21, "kv_gather_kernel": 2561, "decode_kernel": 2561}
got, other = {}, 0
for line in sys.stdin:
    if not line.strip():
        continue
    n, name = line.rstrip("\n").split("\t", 1)
    base = name.split("(")[0].split()[-1] if name else "(unnamed)"
    if base in want:
        got[base] = got.get(base, 0) + int(n)
    else:
        other += int(n)
ok = all(got.get(k, 0) == v for k, v in want.items()) and other == 0
print(("PASS" if ok else "FAIL") + "|" + " ".join(f"{k}={got.get(k, 0)}/{v}" for k, v in want.items()) + f" other={other}")
')
    row 1 "$label: launches recorded exactly" "${got%%|*}" "${got#*|}"
}
check_counts "$OBS_CUDA" obs_cuda
check_counts "$OBS_CUDA_STATIC" obs_cuda_static

# ---- 2: GPU event times against the workload's own -----------------------------

# check_gpu_time ID TITLE MODE NAME: obs_cuda with OBS_GPU_TIME=MODE; TTFT
# and tokens/s from the trace's GPU spans against the workload's own.
check_gpu_time() {
    local id=$1 title=$2 mode=$3 name=$4 out res spans
    if [ ! -x "$OBS_CUDA" ]; then
        row "$id" "$title" FAIL "$OBS_CUDA not built"
        return
    fi
    rm -f "$WORK/$name.obs"
    if ! env LD_PRELOAD="$SHIM" OBS_OUTPUT="$WORK/$name" OBS_SUMMARY=0 OBS_JSON=0 OBS_GPU_TIME="$mode" \
        "$OBS_CUDA" >"$LOGS/$name.out" 2>"$LOGS/$name.log"; then
        row "$id" "$title" FAIL "exit status non-zero, see $LOGS/$name.log"
        return
    fi
    if [ "$mode" = cupti ]; then
        # No fallback to events, and a span for every launch, none missing.
        if grep -q 'obsshim: warning' "$LOGS/$name.log"; then
            row "$id" "$title" FAIL "$(grep -m1 'obsshim: warning' "$LOGS/$name.log")"
            return
        fi
        spans=$("$REPORT" summary "$WORK/$name.obs" 2>>"$LOGS/$name.log" | grep -m1 '^GPU time: ')
        case $spans in
        "GPU time: cupti; calls with GPU spans: "*"; GPU spans missing: 0"*) ;;
        *) row "$id" "$title" FAIL "summary says: ${spans:-nothing}"; return ;;
        esac
    fi
    out=$(grep -o 'TTFT_ms=[0-9.]* tokens_per_s=[0-9.]*' "$LOGS/$name.out")
    res=$("$REPORT" phases "$WORK/$name.obs" --csv 2>>"$LOGS/$name.log" | OUT="$out" "$PY" -c '
import csv, os, sys
own = dict(kv.split("=") for kv in os.environ["OUT"].split())
own_ttft, own_tps = float(own["TTFT_ms"]), float(own["tokens_per_s"])
rows = [r for r in csv.DictReader(sys.stdin) if r.get("time_base") == "gpu" and int(r["decode_steps"] or 0) > 1]
if not rows:
    print("FAIL|no generation timed on the GPU (time_base gpu)"); sys.exit()
ttft = min(float(r["ttft_ms"]) for r in rows if r["ttft_ms"])
tps = max(float(r["tokens_per_s"]) for r in rows if r["tokens_per_s"])
ok = abs(ttft - own_ttft) <= max(0.10 * own_ttft, 0.005) and abs(tps - own_tps) <= 0.10 * own_tps
print(("PASS" if ok else "FAIL") + f"|TTFT {ttft:.4f} ms vs own {own_ttft:.4f} ms ({100*(ttft-own_ttft)/own_ttft:+.1f}%); "
      f"tokens/s {tps:.0f} vs own {own_tps:.0f} ({100*(tps-own_tps)/own_tps:+.1f}%); best of {len(rows)} generations")
' 2>>"$LOGS/$name.log")
    [ -n "$res" ] || res="FAIL|could not compare: workload printed '$out', see $LOGS/$name.log"
    [ -z "${spans:-}" ] || res="$res; ${spans#GPU time: cupti; }"
    row "$id" "$title" "${res%%|*}" "${res#*|}"
}
check_gpu_time 2 "GPU event times = workload's own timings" events gputime

# ---- 3: PyTorch against torch.profiler (CUPTI) ---------------------------------

check_torch() {
    local res
    if [ -z "${TORCH_VERSION:-}" ]; then
        row 3 "PyTorch generate: 100% of CUPTI's launches" SKIP "PyTorch not importable by $PY"
        return
    fi
    if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
        row 3 "PyTorch generate: 100% of CUPTI's launches" SKIP "torch.cuda.is_available() is False"
        return
    fi
    if ! run_shim "$WORK/torch" "$LOGS/torch-shim.log" "$PY" "$HERE/llama_generate.py"; then
        row 3 "PyTorch generate: 100% of CUPTI's launches" FAIL "under the shim: exit non-zero, see $LOGS/torch-shim.log"
        return
    fi
    if ! "$PY" "$HERE/llama_generate.py" --profile "$WORK/torch-profile.tsv" >"$LOGS/torch-prof.log" 2>&1; then
        row 3 "PyTorch generate: 100% of CUPTI's launches" FAIL "under torch.profiler: exit non-zero, see $LOGS/torch-prof.log"
        return
    fi
    kernel_counts "$WORK/torch.obs" >"$WORK/torch-shim.tsv" 2>>"$LOGS/torch-shim.log"
    res=$("$PY" - "$WORK/torch-shim.tsv" "$WORK/torch-profile.tsv" <<'EOF' 2>>"$LOGS/torch-prof.log"
import re, sys
def norm(name):
    name = re.sub(r"\s+", " ", name.strip())
    return name[5:] if name.startswith("void ") else name
def load(path):
    d = {}
    for line in open(path):
        if line.strip():
            n, name = line.rstrip("\n").split("\t", 1)
            d[norm(name)] = d.get(norm(name), 0) + int(n)
    return d
ours, cupti = load(sys.argv[1]), load(sys.argv[2])
seen = sum(cupti.values())
covered = sum(min(ours.get(k, 0), n) for k, n in cupti.items())
short = sorted(((n - ours.get(k, 0), k) for k, n in cupti.items() if ours.get(k, 0) < n), reverse=True)
extra = sum(max(0, n - cupti.get(k, 0)) for k, n in ours.items())
ok = seen > 0 and covered == seen
msg = f"{covered}/{seen} CUPTI launches ({100.0*covered/max(seen,1):.2f}%) over {len(cupti)} names; shim records {sum(ours.values())} ({extra} beyond CUPTI's)"
if short:
    msg += "; short: " + ", ".join(f"{k[:60]} -{d}" for d, k in short[:3])
print(("PASS" if ok else "FAIL") + "|" + msg)
EOF
)
    [ -n "$res" ] || res="FAIL|comparison failed, see $LOGS/torch-prof.log"
    row 3 "PyTorch generate: 100% of CUPTI's launches" "${res%%|*}" "${res#*|}"
}
check_torch

# ---- 4: Triton ----------------------------------------------------------------

check_triton() {
    local counts n want=10
    if [ -z "${TRITON_VERSION:-}" ]; then
        row 4 "Triton kernel captured" SKIP "triton not importable by $PY"
        return
    fi
    if ! TRITON_CACHE_DIR=$WORK/triton-cache run_shim "$WORK/triton" "$LOGS/triton.log" \
        "$PY" "$HERE/triton_add.py" --launches "$want"; then
        row 4 "Triton kernel captured" FAIL "exit non-zero, see $LOGS/triton.log"
        return
    fi
    counts=$(kernel_counts "$WORK/triton.obs" 2>>"$LOGS/triton.log")
    n=$(printf '%s\n' "$counts" | awk -F'\t' '$2 ~ /add_kernel/ {s += $1} END {print s + 0}')
    if [ "$n" = "$want" ]; then
        row 4 "Triton kernel captured" PASS "add_kernel: $n/$want launches recorded"
    else
        row 4 "Triton kernel captured" FAIL "add_kernel: $n/$want launches recorded; kernels: $(printf '%s' "$counts" | tr '\n\t' '; ' | cut -c1-200)"
    fi
}
check_triton

# ---- 5: ncu on the shim's PREFILL range -----------------------------------------

# ncu_kernels CSV: "name=count;..." of the kernels ncu profiled (--csv --page raw), by base name.
ncu_kernels() {
    "$PY" - "$1" <<'EOF'
import csv, sys, collections
lines = [l for l in open(sys.argv[1]) if l.startswith('"')]
rows = list(csv.DictReader(lines))
names = collections.Counter()
for r in rows:
    if (r.get("ID") or "").isdigit() and r.get("Kernel Name"):
        names[r["Kernel Name"].split("(")[0].split()[-1]] += 1
print(";".join(f"{k}={v}" for k, v in sorted(names.items())))
EOF
}

check_ncu() {
    local res reps=3
    if ! command -v ncu >/dev/null 2>&1; then
        row 5 "ncu --nvtx-include obsshim@PREFILL/" SKIP "ncu (Nsight Compute) not found"
        return
    fi
    if [ ! -x "$OBS_CUDA" ]; then
        row 5 "ncu --nvtx-include obsshim@PREFILL/" FAIL "$OBS_CUDA not built"
        return
    fi
    ncu --help 2>&1 | grep -A6 -- '--nvtx-include' >"$LOGS/ncu-help.txt"
    rm -f "$WORK/ncu.obs"
    # Push/pop ranges end in "/"; "domain@range" names the NVTX domain.
    if ! ncu --nvtx --nvtx-include "obsshim@PREFILL/" --metrics gpu__time_duration.sum --csv --page raw \
        env LD_PRELOAD="$SHIM" OBS_OUTPUT="$WORK/ncu" OBS_SUMMARY=0 OBS_JSON=0 "$OBS_CUDA" --repeat "$reps" \
        >"$WORK/ncu.csv" 2>"$LOGS/ncu.log"; then
        row 5 "ncu --nvtx-include obsshim@PREFILL/" FAIL "ncu exit non-zero, see $LOGS/ncu.log"
        return
    fi
    res=$(ncu_kernels "$WORK/ncu.csv" 2>>"$LOGS/ncu.log")
    local prefill_trace
    prefill_trace=$(kernel_counts "$WORK/ncu.obs" 2>>"$LOGS/ncu.log" | awk -F'\t' '$2 ~ /prefill_kernel/ {s += $1} END {print s + 0}')
    case "$res" in
    "prefill_kernel=$prefill_trace")
        if [ "$prefill_trace" -gt 0 ]; then
            row 5 "ncu --nvtx-include obsshim@PREFILL/" PASS "profiled only prefill_kernel: $prefill_trace of $prefill_trace prefill launches, no other kernel"
        else
            row 5 "ncu --nvtx-include obsshim@PREFILL/" FAIL "no kernel profiled (see $LOGS/ncu.log, $LOGS/ncu-help.txt)"
        fi
        ;;
    *) row 5 "ncu --nvtx-include obsshim@PREFILL/" FAIL "profiled {${res:-none}}; the trace has $prefill_trace prefill launches" ;;
    esac
}
check_ncu

# ---- 6: CUPTI's device times ----------------------------------------------------

check_gpu_time 6 "OBS_GPU_TIME=cupti: spans, times = own" cupti cupti

# ---- 7: capture windows: the profilers record the window only --------------------

# check_capture: the window's kernels as ncu and nsys saw them against the 8 of steps 2..5.
check_capture() {
    local label="OBS_CAPTURE: nsys and ncu record steps 2-5 only" want="decode_kernel=4;kv_gather_kernel=4"
    local ncu_res="no ncu" nsys_res="no nsys" trace_n fail=0
    # obs-run keeps the LD_PRELOAD the profiler gave the program and puts the shim first
    local run=(env OBS_RECORD=window OBS_SUMMARY=0 OBS_JSON=0 OBS_SHIM_LIB="$SHIM")
    if ! command -v ncu >/dev/null 2>&1 && ! command -v nsys >/dev/null 2>&1; then
        row 7 "$label" SKIP "neither ncu nor nsys found"
        return
    fi
    if [ ! -x "$OBS_CUDA" ]; then
        row 7 "$label" FAIL "$OBS_CUDA not built"
        return
    fi
    if command -v ncu >/dev/null 2>&1; then
        rm -f "$WORK/capture-ncu.obs"
        if ncu --profile-from-start off --metrics gpu__time_duration.sum --csv --page raw \
            "${run[@]}" OBS_OUTPUT="$WORK/capture-ncu" "$OBSRUN" --capture steps:2-5@generation:2 -- "$OBS_CUDA" \
            --repeat 3 --decode 16 \
            >"$WORK/capture-ncu.csv" 2>"$LOGS/capture-ncu.log"; then
            ncu_res=$(ncu_kernels "$WORK/capture-ncu.csv" 2>>"$LOGS/capture-ncu.log")
            trace_n=$(kernel_counts "$WORK/capture-ncu.obs" 2>>"$LOGS/capture-ncu.log" |
                awk -F'\t' '{s += $1} END {print s + 0}')
            { [ "$ncu_res" = "$want" ] && [ "$trace_n" = 8 ]; } || fail=1
            ncu_res="ncu {$ncu_res}, the shim's window trace $trace_n kernels"
        else
            ncu_res="ncu exit non-zero ($LOGS/capture-ncu.log)"
            fail=1
        fi
    fi
    if command -v nsys >/dev/null 2>&1; then
        rm -f "$WORK/capture.nsys-rep"
        if nsys profile --capture-range=cudaProfilerApi --capture-range-end=stop --force-overwrite true \
            -o "$WORK/capture" "${run[@]}" OBS_OUTPUT="$WORK/capture-nsys" "$OBSRUN" --capture steps:2-5@generation:2 \
            -- "$OBS_CUDA" --repeat 3 --decode 16 \
            >"$LOGS/capture-nsys.log" 2>&1 &&
            nsys stats -q --report cuda_gpu_kern_sum --format csv --output - "$WORK/capture.nsys-rep" \
                >"$WORK/capture-nsys.csv" 2>>"$LOGS/capture-nsys.log"; then
            nsys_res=$("$PY" - "$WORK/capture-nsys.csv" <<'EOF' 2>>"$LOGS/capture-nsys.log"
import csv, sys
got = {}
for r in csv.DictReader(l for l in open(sys.argv[1]) if l.strip()):
    name = (r.get("Name") or "").split("(")[0].split()
    if name:
        got[name[-1]] = got.get(name[-1], 0) + int(float(r.get("Instances") or 0))
print(";".join(f"{k}={v}" for k, v in sorted(got.items())))
EOF
)
            [ "$nsys_res" = "$want" ] || fail=1
            nsys_res="nsys {$nsys_res}"
        else
            nsys_res="nsys exit non-zero ($LOGS/capture-nsys.log)"
            fail=1
        fi
    fi
    if [ "$fail" = 0 ]; then
        row 7 "$label" PASS "want {$want}: $ncu_res; $nsys_res"
    else
        row 7 "$label" FAIL "want {$want}: $ncu_res; $nsys_res"
    fi
}
check_capture

finish
