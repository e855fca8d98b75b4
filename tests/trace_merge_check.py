#!/usr/bin/env python3
"""Check a merged Chrome trace JSON (obs-report merge) with a real JSON
parser, and print what it holds.

usage: trace_merge_check.py FILE.json

Each process (pid) of the merged file must pass every check of
trace_json_check.py on its own (the same structure as `obs-report json` of
one trace); across processes: flow ids are not reused (the format's flow
ids are global), each process has one process_name and one
process_sort_index, and the sort indexes differ.

Exit status 0 when all is right; otherwise "error: ..." lines on stderr and
status 1. On stdout, key=value lines for the C test:
  events, pids (in process_sort_index order, comma-separated),
  pid.<pid>.<key>=<value>   every line trace_json_check.py prints for the
                            process (events, host_slices, seq.<n>, ...)
  pid.<pid>.sort_index, pid.<pid>.first_ts_ns (earliest X slice),
  other.<key> for otherData's scalar members,
  input.<i>.<key> for otherData.inputs[i]'s members
"""
import contextlib
import importlib.util
import io
import json
import os
import sys

errors = []


def load_single_checker():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_json_check.py")
    spec = importlib.util.spec_from_file_location("trace_json_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_process(single, tmpdir, pid, events, other):
    """Run trace_json_check.py's checks on one process's events."""
    path = os.path.join(tmpdir, "pid-%d.json" % pid)
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}, f)
    del single.errors[:]
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = [saved[0], path]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = single.main()
    finally:
        sys.argv = saved
        os.unlink(path)
    for line in err.getvalue().splitlines():
        errors.append("pid %d: %s" % (pid, line))
    if status != 0 and not err.getvalue():
        errors.append("pid %d: trace_json_check failed (status %r)" % (pid, status))
    values = {}
    for line in out.getvalue().splitlines():
        k, _, v = line.partition("=")
        values[k] = v
    return values


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except ValueError as e:
        errors.append("not valid JSON: %s" % e)
        return report({})
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        errors.append("no traceEvents list")
        return report({})
    if doc.get("displayTimeUnit") != "ns":
        errors.append("displayTimeUnit is not ns")
    other = doc.get("otherData")
    if not isinstance(other, dict):
        errors.append("otherData is not an object")
        other = {}

    events = doc["traceEvents"]
    by_pid, flows = {}, {}
    out = {"events": len(events)}
    for ev in events:
        pid = ev.get("pid") if isinstance(ev, dict) else None
        if not isinstance(pid, int):
            errors.append("event without an integer pid: %r" % (ev,))
            continue
        by_pid.setdefault(pid, []).append(ev)
        if ev.get("ph") in ("s", "f"):
            key = (ev.get("id"), ev.get("cat"), ev.get("name"), ev["ph"])
            if key in flows and flows[key] != pid:
                errors.append("flow id %r used by pids %d and %d" % (ev.get("id"), flows[key], pid))
            flows[key] = pid
    for (fid, cat, name, ph), pid in flows.items():
        if ph == "s" and flows.get((fid, cat, name, "f"), pid) != pid:
            errors.append("flow %r starts in pid %d and ends in another" % (fid, pid))

    single = load_single_checker()
    tmpdir = os.path.dirname(os.path.abspath(sys.argv[1]))
    sort_index = {}
    for pid, evs in by_pid.items():
        values = check_process(single, tmpdir, pid, evs, {})
        for k, v in values.items():
            out["pid.%d.%s" % (pid, k)] = v
        names = [e for e in evs if e.get("ph") == "M" and e.get("name") == "process_name"]
        sorts = [e for e in evs if e.get("ph") == "M" and e.get("name") == "process_sort_index"]
        if len(names) != 1:
            errors.append("pid %d has %d process_name events" % (pid, len(names)))
        if len(sorts) != 1:
            errors.append("pid %d has %d process_sort_index events" % (pid, len(sorts)))
        else:
            sort_index[pid] = sorts[0].get("args", {}).get("sort_index")
            out["pid.%d.sort_index" % pid] = sort_index[pid]
        ts = [e["ts"] for e in evs if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
        if ts:
            out["pid.%d.first_ts_ns" % pid] = int(round(min(ts) * 1000))
    if len(set(sort_index.values())) != len(sort_index):
        errors.append("two processes share a sort index: %r" % (sort_index,))
    out["pids"] = ",".join(str(p) for p in sorted(by_pid, key=lambda p: (sort_index.get(p, 0), p)))
    for k, v in other.items():
        if isinstance(v, (int, float, str)):
            out["other.%s" % k] = v
    for i, inp in enumerate(other.get("inputs", [])):
        for k, v in inp.items():
            out["input.%d.%s" % (i, k)] = v
    return report(out)


def report(out):
    for k in sorted(out):
        print("%s=%s" % (k, out[k]))
    for e in errors:
        print("error: %s" % e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
