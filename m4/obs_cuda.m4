# OBS_CHECK_CUDA: --with-cuda[=DIR] (probe / no / required) and --with-cuda-arch.
# Sets NVCC, CUDA_CPPFLAGS, CUDA_LDFLAGS, CUDA_LIBS, NVCC_ARCH_FLAGS and the
# HAVE_CUDA conditional. The shim itself never needs CUDA.
AC_DEFUN([OBS_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [CUDA toolkit for the reference workload (default: probe /usr/local/cuda and nvcc on PATH; "no" to skip)])],
    [], [with_cuda=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST],
      [comma-separated SM numbers for device code (default: 80,90: sm_80 and sm_90 code plus compute_90 PTX)])],
    [], [with_cuda_arch=80,90])

  obs_have_cuda=no
  obs_cuda_summary="not used"
  NVCC=""
  CUDA_HOME=""
  AS_CASE([$with_cuda],
    [no], [obs_cuda_summary="disabled (--with-cuda=no)"],
    [check|yes], [
      AS_IF([test -x /usr/local/cuda/bin/nvcc], [CUDA_HOME=/usr/local/cuda],
        [AC_PATH_PROG([obs_nvcc_on_path], [nvcc], [])
         AS_IF([test -n "$obs_nvcc_on_path"], [CUDA_HOME=`dirname "$obs_nvcc_on_path"`; CUDA_HOME=`dirname "$CUDA_HOME"`])])
      AS_IF([test -z "$CUDA_HOME"],
        [AS_IF([test "x$with_cuda" = xyes], [AC_MSG_ERROR([--with-cuda: no nvcc found in /usr/local/cuda/bin or on PATH])])
         obs_cuda_summary="not found (no nvcc in /usr/local/cuda/bin or on PATH)"])],
    [
      AS_IF([test ! -d "$with_cuda"], [AC_MSG_ERROR([--with-cuda=$with_cuda: no such directory])])
      AS_IF([test ! -x "$with_cuda/bin/nvcc"], [AC_MSG_ERROR([--with-cuda=$with_cuda: $with_cuda/bin/nvcc is missing or not executable])])
      CUDA_HOME=$with_cuda])

  AS_IF([test -n "$CUDA_HOME"], [
    NVCC="$CUDA_HOME/bin/nvcc"
    AS_IF([test ! -f "$CUDA_HOME/include/nvtx3/nvToolsExt.h"],
      [AS_IF([test "x$with_cuda" != xcheck], [AC_MSG_ERROR([CUDA at $CUDA_HOME has no include/nvtx3/nvToolsExt.h (NVTX3 is required)])])
       obs_cuda_summary="unusable at $CUDA_HOME (no NVTX3 headers)"; NVCC=""])])

  AS_IF([test -n "$NVCC"], [
    AC_MSG_CHECKING([whether $NVCC compiles and links a kernel])
    cat > conftest.cu <<_OBSEOF
__global__ void k(int *p) { p@<:@0@:>@ = 1; }
int main() { k<<<1, 1>>>(0); return 0; }
_OBSEOF
    AS_IF([$NVCC -cudart shared -o conftest.cuda conftest.cu >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes]); obs_have_cuda=yes
       obs_cuda_version=`$NVCC --version | sed -n 's/.*release \(@<:@0-9.@:>@*\).*/\1/p'`
       obs_cuda_summary="$CUDA_HOME (nvcc $obs_cuda_version)"],
      [AC_MSG_RESULT([no])
       AS_IF([test "x$with_cuda" != xcheck], [AC_MSG_ERROR([$NVCC cannot build a CUDA program; see config.log])])
       obs_cuda_summary="unusable at $CUDA_HOME (nvcc failed; see config.log)"])
    rm -f conftest.cu conftest.cuda])

  NVCC_ARCH_FLAGS=""
  obs_last_sm=""
  for obs_sm in `echo "$with_cuda_arch" | tr ',' ' '`; do
    AS_CASE([$obs_sm], [*@<:@!0-9@:>@*|""], [AC_MSG_ERROR([--with-cuda-arch: "$obs_sm" is not an SM number (e.g. 80,90)])])
    NVCC_ARCH_FLAGS="$NVCC_ARCH_FLAGS -gencode arch=compute_$obs_sm,code=sm_$obs_sm"
    obs_last_sm=$obs_sm
  done
  AS_IF([test -z "$obs_last_sm"], [AC_MSG_ERROR([--with-cuda-arch: empty list])])
  NVCC_ARCH_FLAGS="$NVCC_ARCH_FLAGS -gencode arch=compute_$obs_last_sm,code=compute_$obs_last_sm"

  CUDA_CPPFLAGS=""; CUDA_LDFLAGS=""; CUDA_LIBS=""
  AS_IF([test "x$obs_have_cuda" = xyes], [
    CUDA_CPPFLAGS="-I$CUDA_HOME/include"
    CUDA_LDFLAGS="-L$CUDA_HOME/lib64"
    CUDA_LIBS="-lcudart"
    obs_cuda_build="yes (sm: $with_cuda_arch + PTX)"], [obs_cuda_build=no])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_HOME])
  AC_SUBST([NVCC_ARCH_FLAGS])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$obs_have_cuda" = xyes])
])
