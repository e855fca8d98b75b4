#!/bin/sh
# make demo: run the reference workload under obsshim, on the GPU when there
# is one, on the simulated runtime otherwise, and say which and where the
# trace went. Called by `make demo` with OBS_BUILDDIR and OBS_SRCDIR set.
set -u
build=${OBS_BUILDDIR:-.}
out="$build/demo-out"
mkdir -p "$out"

have_gpu=no
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    have_gpu=nvidia
elif [ -e /dev/kfd ] && command -v rocminfo >/dev/null 2>&1 && rocminfo >/dev/null 2>&1; then
    have_gpu=amd
fi

workload=""
case $have_gpu in
    nvidia) [ -x "$build/workload/obs_cuda" ] && workload="$build/workload/obs_cuda" ;;
    amd) [ -x "$build/workload/obs_hip" ] && workload="$build/workload/obs_hip" ;;
esac
if [ -z "$workload" ]; then
    have_gpu=no
    for w in obs_cuda obs_hip; do
        if [ -x "$build/workload/$w" ]; then workload="$build/workload/$w"; break; fi
    done
fi
if [ -z "$workload" ]; then
    echo "demo: no workload binary was built (configure found neither nvcc nor hipcc)." >&2
    echo "demo: install the CUDA toolkit or hipcc, re-run configure, then make demo." >&2
    exit 1
fi

if [ "$have_gpu" = no ]; then
    echo "demo: no GPU here: running $(basename "$workload") on obsshim's SIMULATED runtime"
    echo "demo: (tests/sim: kernels are not executed; times come from its cost model, docs/architecture.md)"
    LD_LIBRARY_PATH="$build/tests/sim/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
else
    echo "demo: running $(basename "$workload") on the $have_gpu GPU"
fi

shim=""
for s in "$build/shim/.libs/libobsshim.so" "$build/.libs/libobsshim.so"; do
    if [ -f "$s" ]; then shim=$s; break; fi
done

set -- "$workload" --batch=1 --ctx=1024 --hidden=4096 --decode=128 --repeat=20
if [ -n "$shim" ] && [ -x "$build/contrib/obs-run" ]; then
    echo "demo: under obsshim: obs-run --gpu-time -o $out/demo-%p -- $*"
    OBS_SHIM_LIB="$shim" "$build/contrib/obs-run" --gpu-time -o "$out/demo-%p" -- "$@"
    status=$?
    echo "demo: files written:"
    ls -1 "$out"/demo-* 2>/dev/null | sed 's/^/  /'
else
    echo "demo: libobsshim.so is not built yet: running the workload alone"
    "$@"
    status=$?
fi
exit $status
