#!/bin/sh
# make check-sanitize / make check-tsan: the suite (or the tests named)
# built with a sanitizer, in a directory of its own, the normal build
# untouched (docs/architecture.md, "Sanitizers").
#   check.sh asan|tsan DIR [TEST...]
# The Makefile sets MAKE, CC, OBS_BUILDDIR and OBS_SRCDIR (absolute).
# automake refuses a VPATH build of a source tree configured in place (and
# make would find the in-place objects through VPATH), so DIR/src is a copy
# made by `make distdir`; only files that changed are copied again, so a
# second run rebuilds only what changed.
set -u
mode=$1
dir=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)

case $mode in
asan)
    flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    runtime=libasan.so
    target=check-sanitize
    ;;
tsan)
    flags="-fsanitize=thread"
    runtime=libtsan.so
    target=check-tsan
    ;;
*)
    echo "check.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
first=$($CC -print-file-name=$runtime)
case $first in
/*) ;;
*)
    echo "$target: $CC has no $runtime (Debian: gcc's libasan / libtsan packages)" >&2
    exit 1
    ;;
esac

mkdir -p "$dir" || exit 1
rm -rf "$dir/src.new"
$MAKE -C "$OBS_BUILDDIR" distdir distdir="$dir/src.new" >"$dir/distdir.log" 2>&1 || {
    tail -n 30 "$dir/distdir.log"
    echo "$target: make distdir failed" >&2
    exit 1
}
# The first copy keeps the tree's times. Later, the files copied all get
# one new time: newer than any object built from them before (the tree's
# own times may be older than those, when a file was edited during an
# earlier run), and no generated file (Makefile.in, configure) older than
# its source.
if [ ! -d "$dir/src" ]; then
    mv "$dir/src.new" "$dir/src" || exit 1
else
    stamp=$(date +%s)
    (cd "$dir/src.new" && find . -type f) | while IFS= read -r f; do
        cmp -s "$dir/src.new/$f" "$dir/src/$f" && continue
        mkdir -p "$(dirname "$dir/src/$f")" && cp "$dir/src.new/$f" "$dir/src/$f" &&
            touch -d "@$stamp" "$dir/src/$f" || exit 1
    done || exit 1
    rm -rf "$dir/src.new"
fi

cd "$dir/src" || exit 1
if [ ! -f Makefile ]; then
    echo "$target: configuring $dir/src (CFLAGS=-g -O1 $flags)"
    ./configure CC="$CC" CFLAGS="-g -O1 $flags" LDFLAGS="$flags" >configure.log 2>&1 || {
        tail -n 40 configure.log
        exit 1
    }
fi
# The programs nvcc and hipcc build (the workload, NVIDIA's cudart and
# cuBLAS test apps) get no CFLAGS, so no sanitizer: the normal build's are
# the same programs. Copied once, older than nothing they are built from
# here; a change to their sources rebuilds them here.
for f in workload/obs_cuda workload/obs_cuda_static workload/obs_hip tests/apps/cublas_gemm \
    tests/apps/rt_driver_mix tests/apps/rt_driver_mix_ptsz; do
    if [ -f "$OBS_BUILDDIR/$f" ] && [ ! -f "$f" ]; then
        mkdir -p "$(dirname "$f")" && cp -p "$OBS_BUILDDIR/$f" "$f"
    fi
done
$MAKE >make.log 2>&1 || {
    tail -n 60 make.log
    echo "$target: the build failed ($dir/src/make.log)" >&2
    exit 1
}

# Reports go to files as well as making the program fail: a finding in a
# child whose exit status a test does not look at is still seen.
reports=$dir/reports
rm -rf "$reports"
mkdir -p "$reports"
OBS_PRELOAD_FIRST=$first
OBS_SANITIZE=$mode
export OBS_PRELOAD_FIRST OBS_SANITIZE
if [ "$mode" = asan ]; then
    # detect_leaks: tests/sanitize/lsan.supp says what is suppressed and why.
    # handle_segv=0: t_shim_crash kills programs with SIGSEGV on purpose and
    # checks that they die of it (the shim's handler flushes, then re-raises);
    # ASan's handler would make that an exit(1). A real SIGSEGV still fails
    # its test, with no ASan report.
    # intercept_tls_get_addr=0: up to GCC 13 / LLVM 16 the runtime's
    # __tls_get_addr interceptor takes a dynamic TLS block whose address is
    # 16 bytes past a page boundary for a pre-2.25 glibc one and reads a
    # header that is not there: at exit LeakSanitizer's tracer then dies
    # ("Tracer caught signal 11"), by chance, in programs with threads and
    # dlopen'ed libraries with __thread data (seen once on
    # driver_static_like with OBS_GPU_TIME=cupti; Mudlet/Mudlet#9930 found
    # the mechanism).
    ASAN_OPTIONS="detect_leaks=1:handle_segv=0:halt_on_error=1:intercept_tls_get_addr=0:log_path=$reports/asan:log_exe_name=1"
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan:log_exe_name=1"
    LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
    export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
else
    TSAN_OPTIONS="halt_on_error=0:exitcode=66:handle_segv=0:suppressions=$here/tsan.supp:log_path=$reports/tsan:log_exe_name=1"
    export TSAN_OPTIONS
fi

if [ $# -gt 0 ]; then
    $MAKE check TESTS="$*" >check.log 2>&1
else
    $MAKE check >check.log 2>&1
fi
status=$?
grep -E '^(FAIL|SKIP|XFAIL|XPASS|ERROR):' check.log
sed -n '/^# TOTAL/,/^# ERROR/p' check.log
nreports=0
for r in "$reports"/*; do
    [ -f "$r" ] || continue
    echo "---- $r ----"
    head -n 60 "$r"
    # A report of nothing but LeakSanitizer's "Unable to get registers from
    # thread N." is its tracer failing to stop a thread that was ending while
    # the process exited (t_shim_kill's children are SIGKILLed at random
    # moments, their exit paths racing the kill): the leak check of that
    # process did not run; it is no finding, and said, not counted.
    if ! grep -qv '^==[^=]*==[0-9]*==Unable to get registers from thread [0-9]*\.$' "$r"; then
        echo "$target: $r: LeakSanitizer could not stop an ending thread (its leak check did not run): not counted"
        continue
    fi
    nreports=$((nreports + 1))
done
# UBSan reports land on the program's stderr as well: in the test logs.
for log in tests/*.log; do
    [ -f "$log" ] && grep -q ": runtime error: " "$log" || continue
    nreports=$((nreports + 1))
    echo "---- $log ----"
    grep -A8 ": runtime error: " "$log" | head -n 40
done
if [ $nreports -gt 0 ]; then
    echo "$target: $nreports sanitizer report(s) in $reports"
    status=1
fi
echo "$target: logs in $dir/src (check.log, tests/*.log)"
exit $status
