# OBS_COMPILER_WARNINGS: warning flags for our own code, kept in OBS_WARN_CFLAGS
# so that the user's CFLAGS are never edited.
AC_DEFUN([OBS_COMPILER_WARNINGS], [
  OBS_WARN_CFLAGS=""
  AC_LANG_PUSH([C])
  for obs_flag in -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes; do
    obs_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $obs_flag"
    AC_MSG_CHECKING([whether $CC accepts $obs_flag])
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AC_MSG_RESULT([yes]); OBS_WARN_CFLAGS="$OBS_WARN_CFLAGS $obs_flag"],
      [AC_MSG_RESULT([no])])
    CFLAGS=$obs_save_CFLAGS
  done
  AC_LANG_POP([C])
  AC_SUBST([OBS_WARN_CFLAGS])
])
