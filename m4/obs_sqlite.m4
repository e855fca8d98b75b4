# OBS_CHECK_SQLITE: --with-sqlite[=yes|no|check] (default check) for
# `obs-report sqlite`. Sets SQLITE_CFLAGS, SQLITE_LIBS, the HAVE_SQLITE
# conditional and define, and obs_sqlite_summary for configure's summary.
# pkg-config sqlite3 first (run by hand, so bootstrapping needs no pkg.m4);
# without it, or when what it names does not link, sqlite3.h and
# -lsqlite3. obs-report builds either way: without
# SQLite its sqlite command says so and exits 1.
AC_DEFUN([OBS_CHECK_SQLITE], [
  AC_ARG_WITH([sqlite],
    [AS_HELP_STRING([--with-sqlite@<:@=yes|no|check@:>@],
      [libsqlite3 for `obs-report sqlite' (default: check; "yes" fails when it is missing)])],
    [], [with_sqlite=check])
  AS_CASE([$with_sqlite], [yes|no|check], [],
    [AC_MSG_ERROR([--with-sqlite=$with_sqlite: expected yes, no or check])])

  obs_have_sqlite=no
  SQLITE_CFLAGS=""
  SQLITE_LIBS=""
  AS_IF([test "x$with_sqlite" = xno], [obs_sqlite_summary="disabled (--with-sqlite=no)"], [
    dnl pkg-config by hand: PKG_CHECK_MODULES would make pkg.m4 a bootstrap dependency
    AC_PATH_PROG([PKG_CONFIG], [pkg-config], [])
    obs_sqlite_how=""
    AC_MSG_CHECKING([for sqlite3 with pkg-config])
    AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists sqlite3 2>/dev/null],
      [SQLITE_CFLAGS=`$PKG_CONFIG --cflags sqlite3`
       SQLITE_LIBS=`$PKG_CONFIG --libs sqlite3`
       obs_sqlite_save_CPPFLAGS=$CPPFLAGS; obs_sqlite_save_LIBS=$LIBS
       CPPFLAGS="$CPPFLAGS $SQLITE_CFLAGS"; LIBS="$SQLITE_LIBS $LIBS"
       AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <sqlite3.h>]], [[sqlite3 *db; return sqlite3_open_v2("", &db, 0, 0);]])],
         [obs_have_sqlite=yes; obs_sqlite_how="pkg-config"])
       CPPFLAGS=$obs_sqlite_save_CPPFLAGS; LIBS=$obs_sqlite_save_LIBS])
    AC_MSG_RESULT([$obs_have_sqlite])
    AS_IF([test "x$obs_have_sqlite" = xno], [
      SQLITE_CFLAGS=""; SQLITE_LIBS=""
      AC_CHECK_HEADER([sqlite3.h],
        [AC_CHECK_LIB([sqlite3], [sqlite3_open_v2],
          [obs_have_sqlite=yes; obs_sqlite_how="sqlite3.h, -lsqlite3"; SQLITE_LIBS="-lsqlite3"])])])
    AS_IF([test "x$obs_have_sqlite" = xyes],
      [obs_sqlite_version=`test -n "$PKG_CONFIG" && $PKG_CONFIG --modversion sqlite3 2>/dev/null`
       obs_sqlite_summary="yes ($obs_sqlite_how${obs_sqlite_version:+, $obs_sqlite_version})"],
      [AS_IF([test "x$with_sqlite" = xyes],
         [AC_MSG_ERROR([--with-sqlite: libsqlite3 not found (install libsqlite3-dev)])])
       obs_sqlite_summary="no (install libsqlite3-dev for obs-report sqlite)"])])

  AS_IF([test "x$obs_have_sqlite" = xyes],
    [AC_DEFINE([HAVE_SQLITE], [1], [Define to 1 when obs-report is built with libsqlite3.])])
  AC_SUBST([SQLITE_CFLAGS])
  AC_SUBST([SQLITE_LIBS])
  AM_CONDITIONAL([HAVE_SQLITE], [test "x$obs_have_sqlite" = xyes])
])
