#!/usr/bin/env python3
"""Check a .pftrace written by obs-report perfetto against the same trace's
`obs-report csv`, reading the .pftrace only through protoc --decode with
Perfetto's own messages (tests/perfetto/perfetto_trace.proto): nothing of
our writer is used to read it back.

usage: perfetto_check.py [--stream] PROTOC PROTO_DIR FILE.pftrace FILE.csv
(--stream: for millions of calls, in bounded memory, fewer checks: see
main_stream)

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
    thread's phase track whose name starts with that phase;
  - graph launches: a host slice carries debug annotations only when it is
    a graph launch's (node_layers: printed, "node_layers seq=N VALUE", for
    the caller to compare);
  - iterations (a serving loop's, trace_serving.h): on each thread's
    "iterations: <thread>" track, slices that do not nest, each named after
    a kind (decode, mixed, prompt, unknown) with an "iteration" annotation
    ("ITERATION/k ..."), beginning at the host begin of a call of its
    thread labelled ITERATION and ending at the host end of one, every call
    of the thread inside it labelled ITERATION (the counts printed:
    iteration_slices, and gpu_iteration_slices of the "iterations on the
    GPU: <thread>" tracks, whose slices are only checked not to nest);
  - layers: each call with a layer (the CSV's layer column) lies inside a
    LAYER/k slice of its thread's phase track, k its layer;
  - EMBED and HEAD: in each prompt or step with layers (a run of a thread's
    calls with one step, PREFILL or not), the calls before its first layered
    call lie in an EMBED slice, those after its last in a HEAD slice (those
    between two passes, whose layers restart from 0, in either); every call
    inside an EMBED slice has no layer and is followed in its prompt or step
    by a call of LAYER/0, every call inside a HEAD slice has no layer and
    follows a layered call of its prompt or step, with none or LAYER/0 next
    (a call in no slice of its phase, counted by the phase check, is not
    looked at, unless it is before its prompt's or step's last layer).
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


def check_embed_head(by_tid, thread_names, phase_tracks, slices, outside_seqs):
    """EMBED and HEAD slices against the CSV's calls (module docstring).
    Returns (EMBED slices, calls in them, HEAD slices, calls in them)."""
    import bisect
    n_embed = n_head = c_embed = c_head = 0
    for tid, rs in by_tid.items():
        track = next((u for u, n in phase_tracks.items() if n == "phases: " + thread_names.get(tid, "")), None)
        if track is None:
            continue
        sl = slices.get(track, [])
        parts = [s for s in sl if s[2] in ("EMBED", "HEAD")]
        n_embed += sum(1 for s in parts if s[2] == "EMBED")
        n_head += sum(1 for s in parts if s[2] == "HEAD")
        rs = sorted((r for r in rs if r["phase"]), key=lambda r: int(r["seq"]))
        # instances: runs of calls with one step, PREFILL or not
        inst, key = [], None
        for r in rs:
            k = (r["phase"] == "PREFILL", r["step"])
            if k != key:
                inst.append([])
                key = k
            inst[-1].append(r)
        starts = [s[0] for s in parts]
        for calls in inst:
            lay = [i for i, r in enumerate(calls) if r["layer"]]
            last_part = None  # the part of the last call outside layers since a layered call
            for i, r in enumerate(calls):
                b, e = int(r["host_begin_ns"]), int(r["host_end_ns"])
                j = bisect.bisect_right(starts, b)
                inside = [s[2] for s in parts[max(0, j - 2):j] if s[0] <= b and s[1] >= e]
                where = "%s seq %s" % (tid, r["seq"])
                if r["layer"]:
                    last_part = None
                if r["seq"] in outside_seqs:
                    # only calls after the last layer (an app's calls at exit, after its last step's sync) may lie
                    # past their phase slice: an EMBED or HEAD slice must not cut a phase slice short
                    if lay and i < lay[-1]:
                        error("EMBED/HEAD: tid %s: before its step's last layer, in no slice of its phase" % where)
                    continue
                if not lay:
                    if inside:
                        error("EMBED/HEAD: tid %s: in %s, in a prompt or step with no layer" % (where, inside[0]))
                    continue
                nxt = next((int(calls[x]["layer"]) for x in lay if x > i), None)
                prv = any(x < i for x in lay)
                if r["layer"]:
                    if inside:
                        error("EMBED/HEAD: tid %s: layer %s, in %s" % (where, r["layer"], inside[0]))
                    continue
                if i < lay[0]:
                    want = {"EMBED"}
                elif i > lay[-1]:
                    want = {"HEAD"}
                else:
                    want = {"EMBED", "HEAD"}
                if len(inside) != 1 or inside[0] not in want:
                    error("EMBED/HEAD: tid %s: outside layers, in %r, want one of %r" % (where, inside, sorted(want)))
                    continue
                if inside[0] == "EMBED":
                    c_embed += 1
                    if nxt != 0:
                        error("EMBED/HEAD: tid %s: in EMBED, the next layered call of its step is in %r, not LAYER/0"
                              % (where, nxt))
                else:
                    c_head += 1
                    if not prv or nxt not in (None, 0) or last_part == "EMBED":
                        error("EMBED/HEAD: tid %s: in HEAD, a layered call before it: %r, the next in %r, after an "
                              "EMBED call: %r" % (where, prv, nxt, last_part == "EMBED"))
                last_part = inside[0]
    return n_embed, c_embed, n_head, c_head


KINDS = ("decode", "mixed", "prompt", "unknown")


def check_iterations(by_tid, thread_names, iter_tracks, slices, annotations):
    """The iterations tracks against the CSV's calls (module docstring).
    Returns the number of iteration slices."""
    n = 0
    tid_of_name = {name: tid for tid, name in thread_names.items()}
    for uuid, tname in iter_tracks.items():
        tid = tid_of_name.get(tname)
        if tid is None:
            error("iterations track %r: no such thread" % tname)
            continue
        rs = sorted(by_tid.get(tid, []), key=lambda r: int(r["host_begin_ns"]))
        begins = {int(r["host_begin_ns"]) for r in rs if r["phase"] == "ITERATION"}
        ends = {int(r["host_end_ns"]) for r in rs if r["phase"] == "ITERATION"}
        for b, e, name, _, _, depth in slices.get(uuid, []):
            n += 1
            where = "iterations of tid %d at %d" % (tid, b)
            if depth != 0:
                error("%s: nested in another" % where)
            if name not in KINDS:
                error("%s: named %r, not a kind" % (where, name))
            if not annotations.get((uuid, b, name), {}).get("iteration", "").startswith("ITERATION/"):
                error("%s: no iteration annotation" % where)
            if b not in begins or e not in ends:
                error("%s: does not begin and end at calls labelled ITERATION" % where)
            inside = [r for r in rs if int(r["host_begin_ns"]) >= b and int(r["host_end_ns"]) <= e]
            if not inside or any(r["phase"] != "ITERATION" for r in inside):
                error("%s: holds calls not labelled ITERATION (or none)" % where)
    return n


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
    annotations = {}  # (track uuid, ts, name) of a BEGIN -> its debug annotations {name: string value}
    node_layers = []  # (seq, node_layers) of the graph launches' host slices
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
        for da in te.get("debug_annotations", []):
            annotations.setdefault((track, s["ts"], name), {})[unquote(one(da, "name", '""')).decode()] = \
                unquote(one(da, "string_value", '""')).decode()

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
    phase_tracks = {}  # uuid -> track name
    iter_tracks = {}  # uuid -> thread name
    gpu_iter_tracks = {}  # uuid -> track name
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
            elif name.startswith("iterations: "):
                iter_tracks[uuid] = name[len("iterations: "):]
            elif name.startswith("iterations on the GPU: "):
                gpu_iter_tracks[uuid] = name
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
            args = annotations.get((uuid, sl[0], sl[2]), {})
            if r["kind"] == "graph" and "node_layers" in args:
                node_layers.append((int(r["seq"]), args["node_layers"]))
            elif args:
                error("tid %d seq %s: annotations %r on a slice that is no graph launch with layers"
                      % (tid, r["seq"], sorted(args)))
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

    # GPU tracks of streams no call has GPU time on: range spans (OBS_GPU_TIME=steps)
    range_slices = sum(len(slices.get(u, [])) for st, u in streams.items() if st not in gpu_rows)

    # phases: a labelled call lies in a phase slice named after its phase
    phase_slices = sum(len(slices.get(u, [])) for u in phase_tracks)
    outside = layers_outside = layered = 0
    outside_seqs = set()
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
                outside_seqs.add(r["seq"])
            if r.get("layer"):
                layered += 1
                want = "LAYER/" + r["layer"]
                if not any(s[0] <= b and s[1] >= e and s[2] == want for s in sl[max(0, i - 64):i]):
                    layers_outside += 1
    iteration_slices = check_iterations(by_tid, thread_names, iter_tracks, slices, annotations)
    gpu_iteration_slices = 0
    for uuid in gpu_iter_tracks:
        gpu_iteration_slices += len(slices.get(uuid, []))
        if any(s[5] != 0 for s in slices.get(uuid, [])):
            error("%s: iteration slices nest" % gpu_iter_tracks[uuid])
    parts = check_embed_head(by_tid, thread_names, phase_tracks, slices, outside_seqs)
    if outside:
        error("%d labelled calls lie in no phase slice of their phase" % outside)
    if layers_outside:
        error("%d calls with a layer lie in no LAYER/k slice of their layer" % layers_outside)

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
    print("range_slices=%d" % range_slices)
    print("flows=%d" % flows_ended)
    print("phase_slices=%d" % phase_slices)
    print("layered_calls=%d" % layered)
    print("iteration_slices=%d" % iteration_slices)
    print("gpu_iteration_slices=%d" % gpu_iteration_slices)
    for key, value in zip(("embed_slices", "embed_calls", "head_slices", "head_calls"), parts):
        print("%s=%d" % (key, value))
    print("counters=%d" % counters)
    print("graph_node_layers=%d" % len(node_layers))
    for seq, value in sorted(node_layers):
        print("node_layers seq=%d %s" % (seq, value))
    print("rows=%d" % len(rows))
    return 1 if errors else 0


def top_level(data):
    """(field, payload) of each Trace.packet, without decoding it: only to
    find the compressed_packets runs (a 2-byte tag 0x92 0x03 + length)."""
    def varint(b, i):
        r = s = 0
        while True:
            c = b[i]
            i += 1
            r |= (c & 0x7F) << s
            s += 7
            if c < 0x80:
                return r, i
    i = 0
    while i < len(data):
        start = i
        _, i = varint(data, i)
        n, i = varint(data, i)
        yield data[start:i + n], data[i:i + n]
        i += n


def main_stream(protoc, proto_dir, pf_path, csv_path):
    """--stream: for traces of millions of calls, in bounded memory: every
    packet still goes through protoc --decode (a run at a time); checked:
    per track BEGIN/END balanced, nested, times never going back; slice
    counts per thread and per stream against the CSV; each flow id leaves
    one host slice and ends on one device slice, exactly for the rows with
    GPU time (id = seq + 1). Names and times per slice: the full check."""
    per_tid, per_stream, labelled = {}, {}, 0
    with open(csv_path, newline="") as f:
        rows = csv.reader(f)
        head = next(rows)
        col = {k: i for i, k in enumerate(head)}
        gpu = bytearray()
        for r in rows:
            seq = int(r[col["seq"]])
            tid = int(r[col["tid"]])
            per_tid[tid] = per_tid.get(tid, 0) + 1
            if r[col["gpu_begin_ns"]]:
                st = int(r[col["stream"]])
                per_stream[st] = per_stream.get(st, 0) + 1
                if seq + 2 > len(gpu):
                    gpu.extend(bytes(seq + 2 - len(gpu) + (1 << 20)))
                gpu[seq + 1] = 1
            if r[col["phase"]]:
                labelled += 1
    started, ended = bytearray(len(gpu)), bytearray(len(gpu))
    seqs = {}  # id -> [default track, ts]
    tracks = {}  # uuid -> ("thread", tid) | ("stream", id) | ("phases", name) | ("other", name)
    state = {}  # track uuid -> [stack of begin ts, last ts, slices]
    counts = {"packets": 0, "compressed_runs": 0, "counters": 0}

    def flush(pk):
        counts["packets"] += 1
        sid = pk.get("trusted_packet_sequence_id", 0)
        sq = seqs.setdefault(sid, [None, None])
        if "default_track" in pk:
            sq[0] = pk["default_track"]
        if "clock64" in pk:
            sq[1] = pk["clock64"]
        if "uuid" in pk:
            if "tid" in pk:
                tracks[pk["uuid"]] = ("thread", pk["tid"])
            elif pk.get("name", "").startswith("GPU stream "):
                tracks[pk["uuid"]] = ("stream", int(pk["name"][11:]))
            elif pk.get("name", "").startswith("phases: "):
                tracks[pk["uuid"]] = ("phases", pk["name"])
            else:
                tracks[pk["uuid"]] = ("other", pk.get("name", ""))
        kind = pk.get("type")
        if kind is None:
            return
        if kind == "TYPE_COUNTER":
            counts["counters"] += 1
            return
        if sq[1] is None:
            error("sequence %d: a track event before its clock" % sid)
            return
        sq[1] += pk.get("timestamp", 0)
        ts = sq[1]
        track = pk.get("track_uuid", sq[0])
        t = state.setdefault(track, [[], 0, 0])
        if ts < t[1]:
            error("track %d: time goes back at %d" % (track, ts))
        t[1] = ts
        if kind == "TYPE_SLICE_BEGIN":
            t[0].append(ts)
            if "name_iid" not in pk:
                error("track %d: a slice without a name at %d" % (track, ts))
            for fid in pk.get("flows", ()):
                if fid >= len(started) or started[fid]:
                    error("flow %d leaves twice or is out of range" % fid)
                else:
                    started[fid] = 1
            for fid in pk.get("terms", ()):
                if fid >= len(ended) or ended[fid] or not started[fid]:
                    error("flow %d ends twice, before it leaves, or is out of range" % fid)
                else:
                    ended[fid] = 1
        elif kind == "TYPE_SLICE_END":
            if not t[0]:
                error("track %d: END with nothing open at %d" % (track, ts))
            else:
                t[0].pop()
                t[2] += 1
        else:
            error("track %d: unexpected event type %s" % (track, kind))

    def scan(text):
        pk, path = None, []
        for line in text.splitlines():
            line = line.strip()
            if line.endswith("{"):
                name = line[:-1].strip()
                if not path and name == "packet":
                    pk = {}
                path.append(name)
                continue
            if line == "}":
                path.pop()
                if not path:
                    flush(pk)
                continue
            key, _, value = line.partition(": ")
            where = path[-1] if path else ""
            if where == "packet":
                if key in ("timestamp", "trusted_packet_sequence_id"):
                    pk[key] = int(value)
            elif where == "track_event":
                if key == "type":
                    pk["type"] = value
                elif key == "name_iid":
                    pk["name_iid"] = int(value)
                elif key == "track_uuid":
                    pk["track_uuid"] = int(value)
                elif key in ("flow_ids_old", "flow_ids"):
                    pk.setdefault("flows", []).append(int(value))
                elif key in ("terminating_flow_ids_old", "terminating_flow_ids"):
                    pk.setdefault("terms", []).append(int(value))
            elif where == "track_event_defaults" and key == "track_uuid":
                pk["default_track"] = int(value)
            elif where == "clocks":
                if key == "clock_id":
                    pk["_clock"] = int(value)
                elif key == "timestamp" and pk.get("_clock") == 64:
                    pk["clock64"] = int(value)
            elif where == "track_descriptor":
                if key == "uuid":
                    pk["uuid"] = int(value)
                elif key == "name":
                    pk["name"] = unquote(value).decode()
            elif where == "thread" and key == "tid":
                pk["tid"] = int(value)

    with open(pf_path, "rb") as f:
        data = f.read()
    plain = bytearray()
    for whole, payload in top_level(data):
        if payload[:2] == b"\x92\x03":  # field 50, bytes: decode it with protoc, to be sure
            if plain:
                scan(decode(protoc, proto_dir, bytes(plain)))
                plain = bytearray()
            packet = parse_text(decode(protoc, proto_dir, whole))["packet"][0]
            if "compressed_packets" not in packet:
                error("a packet starting like compressed_packets is not one")
                continue
            counts["compressed_runs"] += 1
            scan(decode(protoc, proto_dir, zlib.decompress(unquote(one(packet, "compressed_packets")))))
        else:
            plain += whole
    if plain:
        scan(decode(protoc, proto_dir, bytes(plain)))

    got_tid, got_stream, phase_slices = {}, {}, 0
    for uuid, (kind, what) in tracks.items():
        t = state.get(uuid, [[], 0, 0])
        if t[0]:
            error("track %d: %d slices never end" % (uuid, len(t[0])))
        if kind == "thread":
            got_tid[what] = t[2]
        elif kind == "stream":
            got_stream[what] = t[2]
        elif kind == "phases":
            phase_slices += t[2]
    for tid, n in per_tid.items():
        if got_tid.get(tid, 0) != n:
            error("tid %d: %d host slices, %d rows" % (tid, got_tid.get(tid, 0), n))
    for st, n in per_stream.items():
        if got_stream.get(st, 0) != n:
            error("stream %d: %d device slices, %d rows with GPU time" % (st, got_stream.get(st, 0), n))
    if started != gpu[:len(started)] or ended != gpu[:len(ended)]:
        error("flows: %d leave and %d end, %d rows have GPU time" % (sum(started), sum(ended), sum(gpu)))
    if labelled and not phase_slices:
        error("%d labelled calls and no phase slice" % labelled)
    for e in errors:
        print("error: " + e, file=sys.stderr)
    print("packets=%d" % counts["packets"])
    print("compressed_runs=%d" % counts["compressed_runs"])
    print("tracks=%d" % len(tracks))
    print("host_slices=%d" % sum(got_tid.values()))
    print("gpu_slices=%d" % sum(got_stream.values()))
    print("flows=%d" % sum(ended))
    print("phase_slices=%d" % phase_slices)
    print("counters=%d" % counts["counters"])
    print("rows=%d" % sum(per_tid.values()))
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--stream":
        sys.exit(main_stream(*sys.argv[2:]))
    sys.exit(main())
