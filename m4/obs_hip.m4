# OBS_CHECK_HIP: --with-hip[=DIR] (probe / no / required) and --with-hip-arch.
# Sets HIPCC, HIP_CPPFLAGS, HIP_LDFLAGS, HIP_LIBS, HIP_ARCH_FLAGS and the
# HAVE_HIP conditional. The shim itself never needs HIP.
AC_DEFUN([OBS_CHECK_HIP], [
  AC_ARG_WITH([hip],
    [AS_HELP_STRING([--with-hip@<:@=DIR@:>@],
      [HIP toolkit for the reference workload (default: probe hipcc on PATH, then /opt/rocm; "no" to skip)])],
    [], [with_hip=check])
  AC_ARG_WITH([hip-arch],
    [AS_HELP_STRING([--with-hip-arch=LIST], [comma-separated offload archs (default: gfx90a)])],
    [], [with_hip_arch=gfx90a])

  obs_have_hip=no
  obs_hip_summary="not used"
  HIPCC=""
  AS_CASE([$with_hip],
    [no], [obs_hip_summary="disabled (--with-hip=no)"],
    [check|yes], [
      AC_PATH_PROG([obs_hipcc_on_path], [hipcc], [])
      AS_IF([test -n "$obs_hipcc_on_path"], [HIPCC=$obs_hipcc_on_path],
            [test -x /opt/rocm/bin/hipcc], [HIPCC=/opt/rocm/bin/hipcc])
      AS_IF([test -z "$HIPCC"],
        [AS_IF([test "x$with_hip" = xyes], [AC_MSG_ERROR([--with-hip: no hipcc on PATH or in /opt/rocm/bin])])
         obs_hip_summary="not found (no hipcc on PATH or in /opt/rocm/bin)"])],
    [
      AS_IF([test ! -d "$with_hip"], [AC_MSG_ERROR([--with-hip=$with_hip: no such directory])])
      AS_IF([test ! -x "$with_hip/bin/hipcc"], [AC_MSG_ERROR([--with-hip=$with_hip: $with_hip/bin/hipcc is missing or not executable])])
      HIPCC="$with_hip/bin/hipcc"])

  HIP_ARCH_FLAGS=""
  for obs_arch in `echo "$with_hip_arch" | tr ',' ' '`; do
    AS_CASE([$obs_arch], [gfx*], [], [AC_MSG_ERROR([--with-hip-arch: "$obs_arch" is not a gfx target (e.g. gfx90a)])])
    HIP_ARCH_FLAGS="$HIP_ARCH_FLAGS --offload-arch=$obs_arch"
  done
  AS_IF([test -z "$HIP_ARCH_FLAGS"], [AC_MSG_ERROR([--with-hip-arch: empty list])])

  AS_IF([test -n "$HIPCC"], [
    AC_MSG_CHECKING([whether $HIPCC compiles and links a kernel])
    cat > conftest.hip.cpp <<_OBSEOF
#include <hip/hip_runtime.h>
__global__ void k(int *p) { p@<:@0@:>@ = 1; }
int main() { k<<<1, 1>>>(0); return 0; }
_OBSEOF
    AS_IF([$HIPCC -D__HIP_PLATFORM_AMD__ $HIP_ARCH_FLAGS -o conftest.hip conftest.hip.cpp >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes]); obs_have_hip=yes
       obs_hip_version=`$HIPCC --version 2>/dev/null | sed -n 's/^HIP version: //p'`
       obs_hip_summary="$HIPCC (HIP $obs_hip_version)"],
      [AC_MSG_RESULT([no])
       AS_IF([test "x$with_hip" != xcheck], [AC_MSG_ERROR([$HIPCC cannot build a HIP program; see config.log])])
       obs_hip_summary="unusable ($HIPCC failed; see config.log)"])
    rm -f conftest.hip.cpp conftest.hip])

  HIP_CPPFLAGS="-D__HIP_PLATFORM_AMD__"
  AS_IF([test "x$obs_have_hip" = xyes], [obs_hip_build="yes ($with_hip_arch)"], [obs_hip_build=no])
  AC_SUBST([HIPCC])
  AC_SUBST([HIP_ARCH_FLAGS])
  AC_SUBST([HIP_CPPFLAGS])
  AM_CONDITIONAL([HAVE_HIP], [test "x$obs_have_hip" = xyes])
])
