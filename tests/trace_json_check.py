#!/usr/bin/env python3
"""Check a Chrome trace JSON written by obsshim (obs-report json, or the
shim at exit) with a real JSON parser, and print what it holds.

usage: trace_json_check.py FILE.json

Exit status 0 when the structure is right; otherwise one line per problem
on stderr ("error: ...") and status 1. On stdout, key=value lines the C test
compares with what it expects:
  events, host_slices, gpu_slices, phase_slices, flows, counters,
  counter_max, process_name, thread.<tid>=<name>, gpu_tracks,
  seq.<n>=<ts_ns>,<dur_ns>,<tid>,<name>   (host slices, by args.seq)
  gpu.<n>=<ts_ns>,<dur_ns>,<tid>           (device slices, by args.seq)
  phase.<tid>.<i>=<depth>,<name>,<ts_ns>,<dur_ns>  (phase slices of a phase
                                           track in time order, outer first;
                                           depth: how many slices enclose it)
"""
import json
import sys

GPU_TID_BASE = 1000000000
PHASE_TID_BASE = 900000000  # + thread index: a thread's phase track

errors = []


def error(msg):
    errors.append(msg)


def ns(us):
    """Microseconds (a JSON number with 3 decimals) to integer ns."""
    return int(round(us * 1000))


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        raw = f.read()
    try:
        doc = json.loads(raw.decode("utf-8"))  # strict: invalid UTF-8 fails here
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        error("not valid JSON: %s" % e)
        return report({})

    if not isinstance(doc, dict):
        error("top level is not an object")
        return report({})
    for key in ("traceEvents", "displayTimeUnit", "otherData"):
        if key not in doc:
            error("missing top-level key %s" % key)
    if doc.get("displayTimeUnit") != "ns":
        error("displayTimeUnit is not ns")
    events = doc.get("traceEvents", [])
    if not isinstance(events, list):
        error("traceEvents is not a list")
        events = []

    out = {"events": len(events), "host_slices": 0, "gpu_slices": 0, "phase_slices": 0,
           "flows": 0, "counters": 0, "counter_max": 0, "gpu_tracks": 0}
    tracks = {}       # (pid, tid) -> [(b, e, event)]
    named = {}        # tid -> thread name
    flow_s, flow_f = {}, {}
    pids = set()

    for ev in events:
        if not isinstance(ev, dict) or "ph" not in ev:
            error("event without ph: %r" % (ev,))
            continue
        ph = ev["ph"]
        if ph != "M" or ev.get("name") != "process_sort_index":
            pass
        if "pid" not in ev or not isinstance(ev["pid"], int):
            error("event without an integer pid: %r" % (ev,))
            continue
        pids.add(ev["pid"])
        if ph in ("X", "s", "f", "C"):
            if not isinstance(ev.get("ts"), (int, float)) or ev["ts"] < 0:
                error("event without a numeric ts >= 0: %r" % (ev,))
                continue
        if ph == "M":
            args = ev.get("args", {})
            if ev.get("name") == "process_name":
                out["process_name"] = args.get("name")
            elif ev.get("name") == "thread_name":
                named[ev.get("tid")] = args.get("name")
        elif ph == "X":
            dur = ev.get("dur")
            if not isinstance(dur, (int, float)) or dur < 0:
                error("X event without a numeric dur >= 0: %r" % (ev,))
                continue
            if not isinstance(ev.get("tid"), int):
                error("X event without an integer tid: %r" % (ev,))
                continue
            if not isinstance(ev.get("name"), str) or not ev["name"]:
                error("X event without a name: %r" % (ev,))
            b = ns(ev["ts"])
            tracks.setdefault((ev["pid"], ev["tid"]), []).append((b, b + ns(dur), ev))
            tid = ev["tid"]
            seq = ev.get("args", {}).get("seq")
            if PHASE_TID_BASE <= tid < GPU_TID_BASE:
                out["phase_slices"] += 1
            elif tid >= GPU_TID_BASE:
                out["gpu_slices"] += 1
                if seq is not None:
                    out["gpu.%d" % seq] = "%d,%d,%d" % (b, ns(dur), tid)
            else:
                out["host_slices"] += 1
                if seq is not None:
                    out["seq.%d" % seq] = "%d,%d,%d,%s" % (b, ns(dur), tid, ev["name"])
        elif ph in ("s", "f"):
            key = (ev.get("id"), ev.get("cat"), ev.get("name"))
            if ev.get("id") is None:
                error("flow event without id: %r" % (ev,))
            if ph == "f" and ev.get("bp") != "e":
                error("flow end without \"bp\":\"e\": %r" % (ev,))
            table = flow_s if ph == "s" else flow_f
            if key in table:
                error("flow %s event repeated for id %r" % (ph, key))
            table[key] = ev
        elif ph == "C":
            args = ev.get("args")
            if not isinstance(args, dict) or not args:
                error("counter without args: %r" % (ev,))
                continue
            for v in args.values():
                if not isinstance(v, (int, float)):
                    error("counter value is not a number: %r" % (ev,))
                else:
                    out["counter_max"] = max(out["counter_max"], v)
            out["counters"] += 1

    # Slices on one track must nest (a stack of enclosing slices).
    phase_count = {}
    for key, slices in tracks.items():
        slices.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for b, e, ev in slices:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and e > stack[-1][1]:
                error("slices overlap without nesting on track %r: %r and %r" % (key, stack[-1][2], ev))
            if PHASE_TID_BASE <= key[1] < GPU_TID_BASE:
                n = phase_count.get(key[1], 0)
                phase_count[key[1]] = n + 1
                out["phase.%d.%d" % (key[1], n)] = "%d,%s,%d,%d" % (len(stack), ev["name"], b, e - b)
            stack.append((b, e, ev))
        if key[1] not in named:
            error("track %r has no thread_name" % (key,))

    # Each flow: one s and one f, each inside a slice of its own track.
    def inside(ev):
        t = ns(ev["ts"])
        for b, e, _ in tracks.get((ev["pid"], ev.get("tid")), []):
            if b <= t <= e:
                return True
        return False

    for key, s in flow_s.items():
        f = flow_f.get(key)
        if f is None:
            error("flow start without end: %r" % (s,))
            continue
        if not inside(s):
            error("flow start outside any slice of its track: %r" % (s,))
        if not inside(f):
            error("flow end outside any slice of its track: %r" % (f,))
        if f.get("tid", 0) < GPU_TID_BASE:
            error("flow end not on a GPU track: %r" % (f,))
        out["flows"] += 1
    for key, f in flow_f.items():
        if key not in flow_s:
            error("flow end without start: %r" % (f,))

    if "process_name" not in out:
        error("no process_name metadata event")
    if len(pids) != 1:
        error("events of %d pids, expected one" % len(pids))
    for tid, name in named.items():
        out["thread.%s" % tid] = name
        if isinstance(tid, int) and tid >= GPU_TID_BASE:
            out["gpu_tracks"] += 1
    other = doc.get("otherData", {})
    for key in ("records", "records_lost", "pid"):
        if key in other:
            out["other.%s" % key] = other[key]
    return report(out)


def report(out):
    for k in sorted(out):
        print("%s=%s" % (k, out[k]))
    for e in errors:
        print("error: %s" % e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
