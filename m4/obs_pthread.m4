# OBS_PTHREAD: a minimal pthread check (we target Linux/glibc only).
AC_DEFUN([AX_PTHREAD_MIN], [
  AC_CHECK_HEADERS([pthread.h], [], [AC_MSG_ERROR([pthread.h is required])])
  PTHREAD_CFLAGS="-pthread"
  PTHREAD_LIBS="-pthread"
  AC_SUBST([PTHREAD_CFLAGS])
  AC_SUBST([PTHREAD_LIBS])
])
