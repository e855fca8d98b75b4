#!/usr/bin/env python3
"""Check a .pftrace written by obs-report perfetto against the same trace's
`obs-report csv`, reading the .pftrace only through protoc --decode with
Perfetto's own messages (tests/perfetto/perfetto_trace.proto): nothing of
our writer is used to read it back.

usage: perfetto_check.py PROTOC PROTO_DIR FILE.pftrace FILE.csv

compressed_packets (zlib) are inflated and decoded with protoc again. Then:
  - every packet sequence: its defaults (track, incremental clock), its
    clock snapshot, its interned names; absolute times rebuilt from deltas;
  - every track: BEGIN/END balanced and nested, times never going back;
  - host slices: one per CSV row on its thread's track, at host_begin_ns,
    ending at host_end_ns unless clamped into its parent, named after the
    kernel (or the API);
  - device slices: one per CSV row with GPU time on its stream's track, at
    gpu_begin_ns (later only where the stream was still busy);
  - flows: each row with GPU time has one flow id (seq + 1) leaving its
    host slice and ending on its device slice;
  - phases: each call labelled with a phase lies inside a slice of its
    thread's phase track whose name starts with that phase.
Exit 0 when all holds, with key=value counts on stdout; otherwise one line
per problem on stderr and exit 1.
"""
import codecs
import csv
import subprocess
import sys
import zlib

errors = []


def error(msg):
    if len(errors) < 50:
        errors.append(msg)


def decode(protoc, proto_dir, data):
    r = subprocess.run([protoc, "--proto_path=" + proto_dir, "--decode=perfetto.protos.Trace",
                        proto_dir + "/perfetto_trace.proto"], input=data, capture_output=True)
    if r.returncode != 0:
        sys.exit("protoc --decode failed: " + r.stderr.decode(errors="replace"))
    return r.stdout.decode()


def parse_text(text):
    """protoc's text format: nested dicts, every field a list of values."""
    root = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, _, value = line.partition(": ")
            stack[-1].setdefault(key, []).append(value)
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


def unquote(s):
    """A text-format string or bytes literal to bytes."""
    return codecs.escape_decode(s[1:-1].encode("latin-1"))[0]


def packets_of(protoc, proto_dir, data, counts):
    out = []
    for p in parse_text(decode(protoc, proto_dir, data)).get("packet", []):
        if "compressed_packets" in p:
            counts["compressed_runs"] += 1
            out.extend(packets_of(protoc, proto_dir, zlib.decompress(unquote(one(p, "compressed_packets"))), counts))
        else:
            out.append(p)
    return out


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    protoc, proto_dir, pf_path, csv_path = sys.argv[1:]
    counts = {"compressed_runs": 0}
    with open(pf_path, "rb") as f:
        packets = packets_of(protoc, proto_dir, f.read(), counts)
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))

    tracks = {}  # uuid -> descriptor
    seqs = {}  # id -> {"track", "ts", "names"}
    events = {}  # track uuid -> [(ts, type, name, flows, term_flows)]
    counters = 0
    for p in packets:
        sid = int(one(p, "trusted_packet_sequence_id", "0"))
        s = seqs.setdefault(sid, {"track": None, "ts": None, "names": {}, "incremental": False})
        if "trace_packet_defaults" in p:
            d = one(p, "trace_packet_defaults")
            if one(d, "timestamp_clock_id") == "64":
                s["incremental"] = True
            ted = one(d, "track_event_defaults")
            if ted:
                s["track"] = int(one(ted, "track_uuid"))
        if "clock_snapshot" in p:
            for c in one(p, "clock_snapshot").get("clocks", []):
                if one(c, "clock_id") == "64":
                    s["ts"] = int(one(c, "timestamp"))
        if "track_descriptor" in p:
            td = one(p, "track_descriptor")
            tracks[int(one(td, "uuid"))] = td
        for idata in p.get("interned_data", []):
            for en in idata.get("event_names", []):
                s["names"][int(one(en, "iid"))] = unquote(one(en, "name")).decode()
        if "track_event" not in p:
            continue
        te = one(p, "track_event")
        kind = one(te, "type")
        if kind == "TYPE_COUNTER":
            counters += 1
            continue
        if not s["incremental"] or s["ts"] is None:
            error("sequence %d: a track event before its clock" % sid)
            continue
        s["ts"] += int(one(p, "timestamp", "0"))
        track = int(one(te, "track_uuid", s["track"] or 0))
        name = None
        if "name_iid" in te:
            iid = int(one(te, "name_iid"))
            name = s["names"].get(iid)
            if name is None:
                error("sequence %d: name iid %d not interned" % (sid, iid))
        flows = [int(x) for x in te.get("flow_ids_old", []) + te.get("flow_ids", [])]
        terms = [int(x) for x in te.get("terminating_flow_ids_old", []) + te.get("terminating_flow_ids", [])]
        events.setdefault(track, []).append((s["ts"], kind, name, flows, terms))

    # slices per track, nesting checked
    slices = {}  # track -> [(b, e, name, flows, terms, depth)]
    for track, evs in events.items():
        stack, out, last = [], [], 0
        for ts, kind, name, flows, terms in evs:
            if ts < last:
                error("track %d: time goes back at %d" % (track, ts))
            last = ts
            if kind == "TYPE_SLICE_BEGIN":
                stack.append([ts, None, name, flows, terms, len(stack)])
            elif kind == "TYPE_SLICE_END":
                if not stack:
                    error("track %d: END with nothing open at %d" % (track, ts))
                    continue
                sl = stack.pop()
                sl[1] = ts
                out.append(tuple(sl))
            else:
                error("track %d: unexpected event type %s" % (track, kind))
        if stack:
            error("track %d: %d slices never end" % (track, len(stack)))
        slices[track] = sorted(out)

    threads = {}  # tid -> uuid
    streams = {}  # stream id -> uuid
    phase_tracks = {}  # thread name -> uuid
    pid = None
    for uuid, td in tracks.items():
        if "process" in td:
            pid = int(one(one(td, "process"), "pid"))
        elif "thread" in td:
            threads[int(one(one(td, "thread"), "tid"))] = uuid
        else:
            name = unquote(one(td, "name", '""')).decode()
            if name.startswith("GPU stream "):
                streams[int(name[11:])] = uuid
            elif name.startswith("phases: "):
                phase_tracks[uuid] = name
    tid_of_thread_track = {u: t for t, u in threads.items()}

    # host slices against the rows
    by_tid = {}
    for r in rows:
        by_tid.setdefault(int(r["tid"]), []).append(r)
    host_slices = 0
    flow_src = {}
    for tid, rs in by_tid.items():
        uuid = threads.get(tid)
        if uuid is None:
            error("no thread track for tid %d" % tid)
            continue
        got = slices.get(uuid, [])
        host_slices += len(got)
        if len(got) != len(rs):
            error("tid %d: %d host slices, %d rows" % (tid, len(got), len(rs)))
            continue
        want = sorted((int(r["host_begin_ns"]), int(r["seq"]), r) for r in rs)
        clamped = 0
        for (b, _, r), sl in zip(want, got):
            name = r["name"] if r["name"] and r["kind"] != "graph" else r["api"]
            if sl[0] != b or sl[2] != name:
                error("tid %d seq %s: slice at %d named %r, the row at %d named %r"
                      % (tid, r["seq"], sl[0], sl[2], b, name))
            if sl[1] != int(r["host_end_ns"]):
                clamped += 1
                if sl[1] > int(r["host_end_ns"]):
                    error("tid %d seq %s: slice ends after the call" % (tid, r["seq"]))
            want_flow = [int(r["seq"]) + 1] if r["gpu_begin_ns"] else []
            if sl[3] != want_flow:
                error("seq %s: flows %r on the host slice, want %r" % (r["seq"], sl[3], want_flow))
            for f in sl[3]:
                flow_src[f] = r
        counts.setdefault("host_clamped", 0)
        counts["host_clamped"] += clamped

    # device slices
    gpu_rows = {}
    for r in rows:
        if r["gpu_begin_ns"]:
            gpu_rows.setdefault(int(r["stream"]), []).append(r)
    gpu_slices, flows_ended = 0, 0
    for stream, rs in gpu_rows.items():
        uuid = streams.get(stream)
        if uuid is None:
            error("no track for GPU stream %d" % stream)
            continue
        got = slices.get(uuid, [])
        gpu_slices += len(got)
        if len(got) != len(rs):
            error("stream %d: %d device slices, %d rows with GPU time" % (stream, len(got), len(rs)))
            continue
        for sl in got:
            if len(sl[4]) != 1:
                error("stream %d: a device slice with %d terminating flows" % (stream, len(sl[4])))
                continue
            r = flow_src.get(sl[4][0])
            if r is None or int(r["seq"]) + 1 != sl[4][0]:
                error("stream %d: flow %d ends here but leaves no launch" % (stream, sl[4][0]))
                continue
            flows_ended += 1
            if sl[0] < int(r["gpu_begin_ns"]) or int(r["stream"]) != stream:
                error("seq %s: device slice at %d, its GPU begin %s" % (r["seq"], sl[0], r["gpu_begin_ns"]))

    # phases: a labelled call lies in a phase slice named after its phase
    phase_slices = sum(len(slices.get(u, [])) for u in phase_tracks)
    outside = 0
    thread_names = {}
    for uuid, td in tracks.items():
        if "thread" in td:
            thread_names[int(one(one(td, "thread"), "tid"))] = unquote(one(one(td, "thread"), "thread_name")).decode()
    for tid, rs in by_tid.items():
        track = next((u for u, n in phase_tracks.items() if n == "phases: " + thread_names.get(tid, "")), None)
        labelled = [r for r in rs if r["phase"]]
        if not labelled:
            continue
        if track is None:
            error("tid %d: labelled calls but no phase track" % tid)
            continue
        sl = slices.get(track, [])
        starts = [s[0] for s in sl]
        import bisect
        for r in labelled:
            b, e = int(r["host_begin_ns"]), int(r["host_end_ns"])
            i = bisect.bisect_right(starts, b)
            hit = False
            # the enclosing slices start at or before b; look back a little
            for s in reversed(sl[max(0, i - 64):i]):
                if s[0] <= b and s[1] >= e and s[2] and s[2].startswith(r["phase"]):
                    hit = True
                    break
            if not hit:
                outside += 1
    if outside:
        error("%d labelled calls lie in no phase slice of their phase" % outside)

    if pid is None:
        error("no process track")
    if flows_ended != sum(1 for r in rows if r["gpu_begin_ns"]):
        error("%d flows end on device slices, %d rows have GPU time" % (flows_ended,
                                                                        sum(1 for r in rows if r["gpu_begin_ns"])))
    for e in errors:
        print("error: " + e, file=sys.stderr)
    print("packets=%d" % len(packets))
    print("compressed_runs=%d" % counts["compressed_runs"])
    print("tracks=%d" % len(tracks))
    print("host_slices=%d" % host_slices)
    print("host_clamped=%d" % counts.get("host_clamped", 0))
    print("gpu_slices=%d" % gpu_slices)
    print("flows=%d" % flows_ended)
    print("phase_slices=%d" % phase_slices)
    print("counters=%d" % counters)
    print("rows=%d" % len(rows))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
