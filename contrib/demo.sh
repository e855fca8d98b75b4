#!/bin/sh
# make demo: run the reference workload under obsshim, on the GPU when there
# is one, on the simulated runtime otherwise, and say which and where the
# trace went. Then obs_cuda_static (nvcc's default static cudart) the same
# way: on the GPU, or NVIDIA's own runtime over the simulated driver
# (the libcuda.so.1 of sim/). Called by `make demo` with OBS_BUILDDIR and
# OBS_SRCDIR set.
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
    echo "demo: (sim/: kernels are not executed; times come from its cost model, docs/architecture.md)"
    LD_LIBRARY_PATH="$build/sim/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
else
    echo "demo: running $(basename "$workload") on the $have_gpu GPU"
fi

shim=""
for s in "$build/shim/.libs/libobsshim.so" "$build/.libs/libobsshim.so"; do
    if [ -f "$s" ]; then shim=$s; break; fi
done

# run_demo PREFIX WORKLOAD: the workload under obs-run, traces at PREFIX-%p.
run_demo() {
    prefix=$1
    shift
    set -- "$@" --batch=1 --ctx=1024 --hidden=4096 --decode=128 --repeat=20
    if [ -n "$shim" ] && [ -x "$build/contrib/obs-run" ]; then
        echo "demo: under obsshim: obs-run --gpu-time -o $prefix-%p -- $*"
        OBS_SHIM_LIB="$shim" "$build/contrib/obs-run" --gpu-time -o "$prefix-%p" -- "$@"
    else
        echo "demo: libobsshim.so is not built yet: running the workload alone"
        "$@"
    fi
}

run_demo "$out/demo" "$workload"
status=$?

# nvcc's default: cudart linked in, the driver found with dlopen. Without a
# GPU its own runtime runs over the simulated libcuda.so.1 (sim/),
# which the library path above already holds.
static="$build/workload/obs_cuda_static"
if [ -x "$static" ] && { [ "$have_gpu" = nvidia ] || [ "$have_gpu" = no ]; }; then
    if [ "$have_gpu" = no ]; then
        LD_LIBRARY_PATH="$build/sim/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        export LD_LIBRARY_PATH
        echo "demo: obs_cuda_static: NVIDIA's static cudart (nvcc's default) over obsshim's SIMULATED driver"
        echo "demo: (the libcuda.so.1 of sim/: kernels are not executed; the same cost model)"
    else
        echo "demo: obs_cuda_static: nvcc's default static cudart on the GPU"
    fi
    run_demo "$out/demo-static" "$static"
    static_status=$?
    [ $status -eq 0 ] && status=$static_status
fi
if [ -n "$shim" ] && [ -x "$build/contrib/obs-run" ]; then
    echo "demo: files written:"
    ls -1 "$out"/demo-* 2>/dev/null | sed 's/^/  /'
fi
exit $status
