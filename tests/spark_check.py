"""tests/t_parquet_spark: contrib/sql run unchanged by Spark in local mode
over the Parquet export of 4 ranks of tests/apps/tp_decode (the traces of
tests/parquet_check.py, made the same way), each query's rows equal to
DuckDB's (obs-parquet --query): the files keep to a dialect both run
(docs/parquet.md, "Dialect"). TAP on stdout.
Usage: spark_check.py BUILDDIR SRCDIR WORKDIR DUCKDB_PYTHON (run by the Spark env's python)."""
import csv
import decimal
import glob
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parquet_check as pc  # noqa: E402  (its runner: run_ranks, ok, diag)

duck_python = sys.argv[4]
queries = sorted(glob.glob(os.path.join(pc.sqldir, "*.sql")))
TABLES = ["calls", "collectives", "phases", "layers", "generations", "traces"]


def same(a, b):
    """DuckDB's CSV field a against Spark's value b."""
    if b is None:
        return a == ""
    if isinstance(b, (float, decimal.Decimal)):
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False
        return abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))
    return a == str(b)


def main():
    print(f"1..{3 + len(queries)}", flush=True)
    traces = pc.run_ranks("spark", 4, "events", ["--slow-rank", "2", "--slow-us", "20000"])
    out = os.path.join(pc.work, "spark-parquet")
    r = subprocess.run([duck_python, pc.tool, "--obs-report", pc.obs_report, "-o", out] + traces, stderr=subprocess.PIPE)
    pc.ok(r.returncode == 0, "exported with DuckDB (obs-parquet)") or pc.diag(r.stderr.decode(errors="replace"))

    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("obsshim-sql")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for t in TABLES:
        spark.read.parquet(os.path.join(out, "*", t + ".parquet")).createOrReplaceTempView(t)
    pc.ok(True, f"Spark {spark.version} in local mode, the six tables bound to all ranks' files")
    for q in queries:
        name = os.path.basename(q)
        d = subprocess.run([duck_python, pc.tool, "--query", q, "--format", "csv", out], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        duck = list(csv.reader(io.StringIO(d.stdout.decode())))
        try:
            df = spark.sql(open(q).read())
            rows = df.collect()
            cols = df.columns
        except Exception as e:  # the query did not run: that is the failure shown
            pc.ok(False, f"{name}: runs on Spark unchanged")
            pc.diag(str(e)[:2000])
            continue
        good = d.returncode == 0 and duck and duck[0] == cols and len(duck) - 1 == len(rows) and len(rows) > 0
        bad = []
        for i, row in enumerate(rows):
            if good and not all(same(a, b) for a, b in zip(duck[i + 1], row)):
                bad.append((duck[i + 1], list(row)))
        if not pc.ok(good and not bad, f"{name}: runs on Spark unchanged, {len(rows)} rows, in order, equal to "
                     "DuckDB's"):
            pc.diag(f"columns {cols} vs {duck[:1]}; first differences {bad[:2]}")
    spark.stop()
    return 0 if all(x[0] for x in pc.results) else 1


if __name__ == "__main__":
    sys.exit(main())
