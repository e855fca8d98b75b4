"""tests/t_parquet: the Parquet export (contrib/parquet/obs-parquet) and the
SQL of contrib/sql over it, against obs-report's own figures.

Traces: tests/apps/tp_decode, 4 ranks in separate processes under the shim
on the simulated runtime with GPU time (OBS_GPU_TIME=events), 2 prompts,
waiting for each other at every collective (--barrier), rank 2 calling
each collective of layer 0 only after the other ranks' calls of it have
returned, and 20 ms later (the known straggler, and a skew of at least
20 ms); and 2 ranks with host times only (rank 1 late). Per query, the figures over all ranks equal those of
obs-report on each rank's trace, added up (kernels, copies, phases:
exactly), or worked out here from obs-report's CSVs (collectives matched by
communicator and sequence number, skew, straggler, bus bandwidth, the
steps' compute and communication); the straggler and skew of layer 0's
collectives are the known ones. TAP on stdout.
Usage: parquet_check.py BUILDDIR SRCDIR WORKDIR (run by the DuckDB env's python)."""
import csv
import io
import os
import subprocess
import sys

build, src, work = sys.argv[1:4]
obs_report = os.path.join(build, "obs-report")
tool = os.path.join(src, "contrib", "parquet", "obs-parquet")
sqldir = os.path.join(src, "contrib", "sql")
SLOW_RANK, SLOW_US, LAYERS = 2, 20000, 2
results = []


def ok(cond, what):
    results.append((bool(cond), what))
    print(("ok" if cond else "not ok") + f" {len(results)} - {what}", flush=True)
    return cond


def diag(msg):
    for line in str(msg).splitlines():
        print("# " + line)


def run_ranks(tag, nranks, gpu_time, extra):
    d = os.path.join(work, tag)
    os.makedirs(d, exist_ok=True)
    barrier = os.path.join(d, "barrier")
    if os.path.exists(barrier):
        os.unlink(barrier)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "tests/apps/.libs") + ":" +
               os.path.join(build, "sim/.libs"), LD_PRELOAD=":".join(filter(None, [os.environ.get("OBS_PRELOAD_FIRST"),
                                                 os.path.join(build, "shim/.libs/libobsshim.so")])),
               OBS_GPU_TIME=gpu_time, OBS_SUMMARY="0", OBS_PERFETTO="0")
    procs = []
    for r in range(nranks):
        e = dict(env, OBS_OUTPUT=os.path.join(d, f"rank{r}"))
        procs.append(subprocess.Popen([os.path.join(build, "tests/apps/tp_decode"), str(r), str(nranks), "7",
                                       "--layers", str(LAYERS), "--steps", "3", "--prompts", "2",
                                       "--barrier", barrier] + extra, env=e, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE))
    good = True
    for p in procs:
        out, err = p.communicate(timeout=120)
        if p.returncode != 0:
            diag(err.decode(errors="replace"))
            good = False
    ok(good, f"{tag}: {nranks} ranks of tp_decode ran under the shim (exit 0)")
    return [os.path.join(d, f"rank{r}.obs") for r in range(nranks)]


def report(args):
    r = subprocess.run([obs_report] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return r.stdout.decode()


def sections(text):
    """summary --format csv: {section: [row dicts]}."""
    out, name, header = {}, None, None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0].startswith("# "):
            name, header = row[0][2:], None
            out[name] = []
        elif header is None:
            header = row
        else:
            out[name].append(dict(zip(header, row)))
    return out


def query(directory, name):
    r = subprocess.run([sys.executable, tool, "--query", os.path.join(sqldir, name), "--format", "csv",
                        directory], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        diag(r.stderr.decode(errors="replace"))
        return []
    return list(csv.DictReader(io.StringIO(r.stdout.decode())))


def num(v):
    return None if v in ("", None) else int(v)


def check_set(tag, traces, gpu, slow_rank):
    out = os.path.join(work, tag + "-parquet")
    r = subprocess.run([sys.executable, tool, "--obs-report", obs_report, "-v", "-j", "2", "-o", out] + traces,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    diag(r.stderr.decode(errors="replace"))
    nr = len(traces)
    parts = sorted(p for p in os.listdir(out) if not p.startswith("."))
    ok(r.returncode == 0 and parts == [f"rank-{i:05d}" for i in range(nr)],
       f"{tag}: exported, one directory per rank, named by the rank on the world communicator: {parts}")
    ok(all(sorted(os.listdir(os.path.join(out, p))) ==
           ["calls.parquet", "collectives.parquet", "generations.parquet", "layers.parquet", "phases.parquet",
            "traces.parquet"] for p in parts), f"{tag}: each rank has its six files")

    summ = [sections(report(["summary", "--format", "csv", t])) for t in traces]
    callcsv = [list(csv.DictReader(io.StringIO(report(["csv", "-q", t])))) for t in traces]
    collcsv = [list(csv.DictReader(io.StringIO(report(["csv", "-q", "--collectives", t])))) for t in traces]
    gens = [list(csv.DictReader(io.StringIO(report(["phases", "--csv", t])))) for t in traces]
    steps = [list(csv.DictReader(io.StringIO(report(["phases", "--steps", "--csv", t])))) for t in traces]
    ok(all(s["trace"][0]["kernel_time_base"] == ("gpu" if gpu else "host") for s in summ),
       f"{tag}: obs-report's kernel time base is {'gpu' if gpu else 'host'}")

    rows = query(out, "top_kernels.sql")
    want = {}
    for s in summ:
        for k in s["cuda_gpu_kern_sum"]:
            w = want.setdefault(k["name"], [0, 0, None, None])
            w[0] += int(k["instances"])
            w[1] += int(k["total_ns"])
            w[2] = int(k["min_ns"]) if w[2] is None else min(w[2], int(k["min_ns"]))
            w[3] = int(k["max_ns"]) if w[3] is None else max(w[3], int(k["max_ns"]))
    got = {k["name"]: [int(k["instances"]), int(k["total_ns"]), int(k["min_ns"]), int(k["max_ns"])] for k in rows}
    if not ok(got == want and len(got) >= 10, f"{tag}: top_kernels.sql = summary's kernel table over the ranks "
              f"({len(got)} kernels)"):
        diag(f"got {got}\nwant {want}")
    order = [k["name"] for k in rows]
    ok(order == sorted(want, key=lambda n: (-want[n][1], n)), f"{tag}: ... sorted by total time")

    rows = query(out, "copies_by_direction.sql")
    want = {}
    for s in summ:
        for k in s["cuda_gpu_mem_time_sum"]:
            w = want.setdefault(k["operation"], [0, 0])
            w[0] += int(k["count"])
            w[1] += int(k["total_ns"])
    got = {k["operation"]: [int(k["timed_copies"]), int(k["total_ns"])] for k in rows}
    bytes_want = {}
    for c in callcsv:
        for k in c:
            if k["kind"] == "memcpy":
                op = "memcpy " + (k["direction"] or "unknown")
                bytes_want[op] = bytes_want.get(op, 0) + int(k["bytes"])
    if not ok(got == want and set(got) == {"memcpy HtoD", "memcpy DtoH"} and
              {k["operation"]: int(k["bytes"]) for k in rows} == bytes_want,
              f"{tag}: copies_by_direction.sql = summary's copy table over the ranks, bytes = the calls'"):
        diag(f"got {got}\nwant {want} {bytes_want}")

    rows = query(out, "phase_times.sql")
    want = {}
    for s in summ:
        for k in s["phases"]:
            w = want.setdefault(k["phase"], [0, 0, 0, 0])
            for i, key in enumerate(["time_ns", "calls", "launches", "kernels"]):
                w[i] += int(k[key])
    got = {k["phase"]: [int(k["time_ns"]), int(k["calls"]), int(k["launches"]), int(k["kernels"])] for k in rows}
    if not ok(got == want and set(got) == {"PREFILL", "DECODE"},
              f"{tag}: phase_times.sql = summary's phase table (time, calls, launches, kernels) over the ranks"):
        diag(f"got {got}\nwant {want}")

    rows = query(out, "ttft_tokens.sql")
    good = len(rows) == 2
    for k in rows:
        g = [x for gl in gens for x in gl if x["generation"] == k["generation"]]
        ttft = [float(x["ttft_ms"]) for x in g]
        tps = [float(x["tokens_per_s"]) for x in g if x["tokens_per_s"]]
        good &= int(k["ranks"]) == nr and abs(float(k["ttft_max_ms"]) - max(ttft)) < 1e-9 and \
            abs(float(k["ttft_min_ms"]) - min(ttft)) < 1e-9 and abs(float(k["tokens_per_s_min"]) - min(tps)) < 1e-6
    ok(good, f"{tag}: ttft_tokens.sql: per generation, TTFT and tokens/s min/max over the ranks = obs-report phases'")

    # Collectives matched across ranks, worked out here from the CSVs.
    arrivals = {}
    for r, c in enumerate(collcsv):
        kern = [k for k in callcsv[r] if k["kind"] == "kernel" and k["gpu_begin_ns"]]
        for k in c:
            if k["kind"] != "coll" or not k["seq"] or k["api"] in ("ncclGroupStart", "ncclGroupEnd"):
                continue
            b, e = int(k["host_begin_ns"]), int(k["host_end_ns"])
            mine = [x for x in kern if b <= int(x["host_begin_ns"]) <= e and x["tid"] == k["tid"]]
            gb = min((int(x["gpu_begin_ns"]) for x in mine), default=b)
            ge = max((int(x["gpu_end_ns"]) for x in mine), default=e)
            arrivals.setdefault((k["comm"], int(k["seq"])), []).append((b, r, gb, ge, k["api"], int(k["bytes"])))
    rows = query(out, "collectives_matched.sql")
    got = {(k["comm"], int(k["seq"])): k for k in rows}
    ok(set(got) == set(arrivals) and all(int(got[key]["ranks"]) == nr for key in got) and len(got) >= 20,
       f"{tag}: collectives_matched.sql: {len(got)} collectives, each seen on all {nr} ranks")
    bad = []
    for key, a in arrivals.items():
        first, last = min(a)[0], max(x[0] for x in a)
        straggler = min(x[1] for x in a if x[0] == last)
        dur = max(x[3] for x in a) - max(x[2] for x in a)
        factor = {"ncclAllReduce": 2.0 * (nr - 1) / nr, "ncclAllGather": (nr - 1) / nr}.get(a[0][4], 1.0)
        g = got.get(key)
        if g is None or int(g["skew_ns"]) != last - first or int(g["straggler_rank"]) != straggler or \
                int(g["duration_ns"]) != dur or abs(float(g["bus_gb_per_s"]) - a[0][5] / dur * factor) > 1e-9:
            bad.append((key, g, last - first, straggler, dur))
    if not ok(not bad, f"{tag}: skew, straggler, duration and bus bandwidth of each = those worked out from "
              f"obs-report csv --collectives and csv"):
        diag(bad[:3])
    per_iter = 2 * LAYERS + 1
    layer0 = [got[key] for key in got if key[1] % per_iter in (0, 1)]
    if not ok(layer0 and all(int(g["straggler_rank"]) == slow_rank and int(g["skew_ns"]) >= SLOW_US * 1000
                             for g in layer0),
              f"{tag}: layer 0's {len(layer0)} all-reduces: straggler rank {slow_rank}, skew >= {SLOW_US} us"):
        diag([(g["seq"], g["straggler_rank"], g["skew_ns"]) for g in layer0])
    ok(all(g["time_base"] == ("gpu" if gpu else "host") for g in got.values()),
       f"{tag}: durations in {'GPU' if gpu else 'host'} time")

    rows = query(out, "stragglers.sql")
    counts = {}
    for a in arrivals.values():
        last = max(x[0] for x in a)
        s = min(x[1] for x in a if x[0] == last)
        counts[s] = counts.get(s, 0) + 1
    ok({int(k["rank"]): int(k["collectives_last"]) for k in rows} == counts and int(rows[0]["rank"]) == slow_rank,
       f"{tag}: stragglers.sql: last arrivals per rank as worked out, rank {slow_rank} first")

    rows = query(out, "step_compute_comm.sql")
    want_steps = {}
    for r, st in enumerate(steps):
        for k in st:
            want_steps.setdefault((int(k["generation"]), int(k["step"])), []).append(
                (round(float(k["time_ms"]) * 1e6), r))
    comm_want = {}
    for r, c in enumerate(callcsv):
        for k in c:
            if k["kind"] == "kernel" and k["step"]:
                if gpu:
                    d = int(k["gpu_end_ns"]) - int(k["gpu_begin_ns"])
                else:
                    d = int(k["host_end_ns"]) - int(k["host_begin_ns"])
                w = comm_want.setdefault((int(k["generation"]), int(k["step"])), [0, 0])
                w[k["name"].startswith("nccl")] += d
    good = len(rows) == len(want_steps) == 6
    for k in rows:
        key = (int(k["generation"]), int(k["step"]))
        times = want_steps.get(key, [])
        slowest = max(times, key=lambda x: (x[0], -x[1])) if times else (None, None)
        good &= int(k["slowest_step_ns"]) == slowest[0] and int(k["slowest_rank"]) == slowest[1] and \
            [int(k["compute_ns"]), int(k["comm_ns"])] == comm_want.get(key)
    ok(good, f"{tag}: step_compute_comm.sql: each step's slowest time and rank = obs-report phases --steps', "
       "compute and NCCL kernel time = the calls'")

    calls = query(out, "../sql/top_kernels.sql")  # the query path resolves like any file
    ok(calls, f"{tag}: --query takes any path to an SQL file")


def check_edges():
    """No communicator: a pid-P directory; a damaged input: exit 1, its name
    said, nothing left; exporting again replaces a rank's files."""
    out = os.path.join(work, "edges-parquet")
    solo = os.path.join(work, "solo.obs")
    subprocess.run([os.path.join(build, "tests/apps/mktrace"), "phased", "2000", solo, "--gpu"], check=True,
                   stdout=subprocess.DEVNULL)
    pid = sections(report(["summary", "--format", "csv", solo]))["trace"][0]["pid"]
    r = subprocess.run([sys.executable, tool, "--obs-report", obs_report, "-o", out, solo], stderr=subprocess.PIPE)
    parts = sorted(p for p in os.listdir(out) if not p.startswith(".")) if r.returncode == 0 else []
    ok(parts == [f"pid-{pid}"], f"a trace with no NCCL communicator: pid-{pid} ({parts})")
    rows = query(out, "top_kernels.sql")
    want = sections(report(["summary", "--format", "csv", solo]))["cuda_gpu_kern_sum"]
    import duckdb
    ranks = duckdb.sql(f"SELECT DISTINCT rank FROM read_parquet('{out}/*/calls.parquet')").fetchall()
    ok(ranks == [(-1,)] and sorted((k["name"], k["total_ns"], k["instances"]) for k in rows) ==
       sorted((k["name"], k["total_ns"], k["instances"]) for k in want) and rows,
       "... its rank column -1, and the queries run on it (top_kernels.sql = its summary's)")
    bad = os.path.join(work, "damaged.obs")
    with open(bad, "wb") as f:
        f.write(b"not a trace at all, not one byte of it")
    r = subprocess.run([sys.executable, tool, "--obs-report", obs_report, "-o", os.path.join(work, "bad-parquet"), bad], stderr=subprocess.PIPE)
    left = [p for p in os.listdir(os.path.join(work, "bad-parquet"))] if os.path.isdir(
        os.path.join(work, "bad-parquet")) else []
    ok(r.returncode == 1 and bad.encode() in r.stderr and r.stderr.startswith(b"obs-parquet: ") and not left,
       f"a damaged trace: exit 1, one line naming it, nothing left behind ({left})")
    diag(r.stderr.decode(errors="replace").strip())
    before = {f: os.path.getsize(os.path.join(out, parts[0], f)) for f in os.listdir(os.path.join(out, parts[0]))} \
        if parts else {}
    r = subprocess.run([sys.executable, tool, "--obs-report", obs_report, "-o", out, solo], stderr=subprocess.PIPE)
    after = {f: os.path.getsize(os.path.join(out, parts[0], f)) for f in os.listdir(os.path.join(out, parts[0]))} \
        if parts else {}
    ok(r.returncode == 0 and before == after and len(after) == 6 and
       sorted(os.listdir(out)) == parts, "exported again: the rank's six files replaced, nothing else left")


def main():
    print("1..36", flush=True)
    gpu_traces = run_ranks("gpu", 4, "events", ["--slow-rank", str(SLOW_RANK), "--slow-us", str(SLOW_US)])
    check_set("gpu", gpu_traces, True, SLOW_RANK)
    host_traces = run_ranks("host", 2, "off", ["--slow-rank", "1", "--slow-us", str(SLOW_US)])
    check_set("host", host_traces, False, 1)
    check_edges()
    return 0 if all(r[0] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
