#!/usr/bin/env python3
"""Check the .pftrace of `obs-report ranks --perfetto` against `obs-report
ranks --format csv --collectives` of the same traces, reading the .pftrace
only through protoc --decode with Perfetto's own messages
(tests/perfetto/perfetto_trace.proto), decoded as tests/perfetto_check.py
decodes (its functions).

usage: ranks_perfetto_check.py PROTOC PROTO_DIR FILE.pftrace FILE.csv

Checks:
  - one process track per row of the csv's `ranks` table, named "rank R: ...",
    with the csv's pid (or one moved by 10000000s), each with a
    "collectives" and a "steps" child track;
  - every track: BEGIN and END alternate (one slice open at a time), times
    never go back;
  - per row k of the `collectives` table, flow k + 1: one slice per part
    (`parts`) on distinct ranks' collectives tracks, named after the
    operation; flow_ids on all but one, which ends it (terminating); the
    earliest slice begins at first_arrival_ns after the clock snapshot's
    time, the ending one at first_arrival_ns + skew_ns on the straggler's
    track (rows with skew 0 and ties: any of the latest).
Exit 0 with key=value counts on stdout; otherwise one line per problem on
stderr and exit 1.
"""
import csv
import io
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfetto_check import one, packets_of, unquote  # noqa: E402  (the same protoc reading)

errors = []


def error(msg):
    if len(errors) < 50:
        errors.append(msg)


def num(node, key, default=None):
    v = one(node, key)
    return int(v) if v is not None else default


def text(node, key, default=""):
    v = one(node, key)
    return unquote(v).decode("utf-8", "replace") if v is not None else default


def csv_sections(path):
    sections, name, rows = {}, None, []
    with open(path, newline="") as f:
        for line in f.read().split("\n\n"):
            line = line.strip("\n")
            if not line.startswith("# "):
                continue
            head, _, body = line.partition("\n")
            sections[head[2:]] = list(csv.DictReader(io.StringIO(body)))
    return sections


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    protoc, proto_dir, pftrace, csv_path = sys.argv[1:]
    with open(pftrace, "rb") as f:
        packets = packets_of(protoc, proto_dir, f.read(), {"compressed_runs": 0})
    sec = csv_sections(csv_path)
    ranks, colls = sec.get("ranks", []), sec.get("collectives", [])

    axis0 = None
    procs, children = {}, {}  # uuid -> (rank, pid); child uuid -> (parent uuid, name)
    events = []
    for p in packets:
        cs = one(p, "clock_snapshot")
        if cs is not None:
            for c in cs.get("clocks", []):
                if num(c, "clock_id") == 3:
                    axis0 = num(c, "timestamp")
        td = one(p, "track_descriptor")
        if td is not None:
            pr = one(td, "process")
            if pr is not None:
                name = text(pr, "process_name")
                if not name.startswith("rank "):
                    error("process track named %r" % name)
                    continue
                procs[num(td, "uuid")] = (int(name[5:name.index(":")]), num(pr, "pid"))
            else:
                children[num(td, "uuid")] = (num(td, "parent_uuid"), text(td, "name"))
        te = one(p, "track_event")
        if te is not None:
            events.append((num(p, "timestamp"), te))

    if axis0 is None:
        error("no CLOCK_MONOTONIC clock snapshot")
        axis0 = 0
    by_rank = {}
    for uuid, (rank, pid) in procs.items():
        by_rank[rank] = (uuid, pid)
    for row in ranks:
        rank, pid = int(row["rank"]), int(row["pid"])
        if rank not in by_rank:
            error("rank %d: no process track" % rank)
        elif by_rank[rank][1] % 10000000 != pid % 10000000:
            error("rank %d: pid %d, the csv's %d" % (rank, by_rank[rank][1], pid))
    if len(procs) != len(ranks):
        error("%d process tracks for %d ranks" % (len(procs), len(ranks)))
    coll_track_rank = {}
    for uuid, (parent, name) in children.items():
        if parent not in procs:
            error("track %d: parent %s is no rank's process" % (uuid, parent))
        elif name == "collectives":
            coll_track_rank[uuid] = procs[parent][0]
        elif name != "steps":
            error("track %d named %r" % (uuid, name))

    # slices per track: BEGIN/END alternate, time never goes back
    open_at, last_ts, slices = {}, {}, []
    for ts, te in events:
        track, typ = num(te, "track_uuid"), one(te, "type")
        if ts < last_ts.get(track, 0):
            error("track %d: time goes back at %d" % (track, ts))
        last_ts[track] = ts
        if typ == "TYPE_SLICE_BEGIN":
            if track in open_at:
                error("track %d: a slice begins at %d inside another" % (track, ts))
            open_at[track] = (ts, te)
        elif typ == "TYPE_SLICE_END":
            if track not in open_at:
                error("track %d: END at %d with nothing open" % (track, ts))
                continue
            b, bt = open_at.pop(track)
            slices.append((track, b, ts, bt))
    for track in open_at:
        error("track %d: a slice never ends" % track)

    flows = {}
    for track, b, e, te in slices:
        for f in te.get("flow_ids_old", []):
            flows.setdefault(int(f), []).append((b, track, te, False))
        for f in te.get("terminating_flow_ids_old", []):
            flows.setdefault(int(f), []).append((b, track, te, True))
    checked = 0
    for k, row in enumerate(colls):
        parts, first, skew = int(row["parts"]), int(row["first_arrival_ns"]), int(row["skew_ns"])
        got = flows.get(k + 1, [])
        if parts < 2:
            if got:
                error("collective %d: one part, and a flow" % k)
            continue
        ends = [g for g in got if g[3]]
        tracks = {g[1] for g in got}
        if len(got) != parts or len(ends) != 1 or len(tracks) != parts:
            error("collective %d (%s seq %s): %d slices (%d ending) on %d tracks, %d parts" %
                  (k, row["op"], row["seq"], len(got), len(ends), len(tracks), parts))
            continue
        if any(g[1] not in coll_track_rank for g in got) or any(text(g[2], "name") != row["op"] for g in got):
            error("collective %d: a slice not on a collectives track, or not named %s" % (k, row["op"]))
            continue
        if min(g[0] for g in got) - axis0 != first:
            error("collective %d: first slice at %d, first_arrival_ns %d" % (k, min(g[0] for g in got) - axis0, first))
        end = ends[0]
        if end[0] - axis0 != first + skew:
            error("collective %d: the flow ends at %d, the last arrival is %d" % (k, end[0] - axis0, first + skew))
        if coll_track_rank[end[1]] != int(row["straggler"]) and skew > 0:
            error("collective %d: the flow ends on rank %d, the straggler is %s" %
                  (k, coll_track_rank[end[1]], row["straggler"]))
        checked += 1
    for e in errors:
        print(e, file=sys.stderr)
    print("process_tracks=%d slices=%d flows=%d collectives_checked=%d" % (len(procs), len(slices), len(flows), checked))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
