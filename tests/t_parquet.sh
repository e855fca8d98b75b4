#!/bin/sh
# The Parquet export and the SQL over it (tests/parquet_check.py,
# docs/parquet.md), run by the DuckDB environment's python that
# contrib/install-deps --duckdb makes: $OBS_DUCKDB_ENV, default
# $HOME/.cache/obsshim/duckdb; skipped, saying why, without it.
env_dir=${OBS_DUCKDB_ENV:-${HOME:-/root}/.cache/obsshim/duckdb}
py=$env_dir/bin/python
if [ ! -x "$py" ]; then
    echo "1..0 # SKIP no DuckDB environment at $env_dir (contrib/install-deps --duckdb makes it)"
    exit 0
fi
if ! "$py" -c "import duckdb" 2>/dev/null; then
    echo "1..0 # SKIP $py cannot import duckdb (contrib/install-deps --duckdb)"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/t_parquet.XXXXXX") || exit 1
"$py" "${OBS_SRCDIR:-.}/tests/parquet_check.py" "${OBS_BUILDDIR:-.}" "${OBS_SRCDIR:-.}" "$work"
status=$?
rm -rf "$work"
exit $status
