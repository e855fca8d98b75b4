#!/bin/sh
# contrib/sql on Spark in local mode, each query's rows equal to DuckDB's
# (tests/spark_check.py, docs/parquet.md "Dialect"). Needs the Spark
# environment (contrib/install-deps --spark: $OBS_SPARK_ENV, default
# $HOME/.cache/obsshim/spark; Java) and DuckDB's (--duckdb: $OBS_DUCKDB_ENV)
# to export; skipped, saying why, without them.
if [ -n "${OBS_PRELOAD_FIRST:-}" ]; then
    echo "1..0 # SKIP under a sanitizer: this checks the SQL's dialect, not the shim (make check runs it)"
    exit 0
fi
spark_dir=${OBS_SPARK_ENV:-${HOME:-/root}/.cache/obsshim/spark}
duck_dir=${OBS_DUCKDB_ENV:-${HOME:-/root}/.cache/obsshim/duckdb}
if [ ! -x "$spark_dir/bin/python" ] || ! "$spark_dir/bin/python" -c "import pyspark" 2>/dev/null; then
    echo "1..0 # SKIP no Spark environment at $spark_dir (contrib/install-deps --spark makes it)"
    exit 0
fi
if ! command -v java >/dev/null 2>&1; then
    echo "1..0 # SKIP no java on PATH (contrib/install-deps --spark installs openjdk-17-jre-headless)"
    exit 0
fi
if [ ! -x "$duck_dir/bin/python" ] || ! "$duck_dir/bin/python" -c "import duckdb" 2>/dev/null; then
    echo "1..0 # SKIP no DuckDB environment at $duck_dir to export with (contrib/install-deps --duckdb)"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/t_parquet_spark.XXXXXX") || exit 1
"$spark_dir/bin/python" "${OBS_SRCDIR:-.}/tests/spark_check.py" "${OBS_BUILDDIR:-.}" "${OBS_SRCDIR:-.}" "$work" \
    "$duck_dir/bin/python" 2>"$work/spark.log"
status=$?
[ $status -eq 0 ] || sed 's/^/# /' "$work/spark.log" | tail -n 40
rm -rf "$work"
exit $status
