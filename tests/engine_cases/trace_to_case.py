#!/usr/bin/env python3
"""Turn a real program's trace and its ground truth into a case of
tests/t_phase_engine (tests/engine_cases/README.md):

    trace_to_case.py NAME CALLS.csv SIM.log "what it is" [--no-reads-in-layers] [--todo "why"]
                     [--layers-todo "why"] [--busy-gaps] > NAME.calls

CALLS.csv is `obs-report csv` of the program's trace under the shim, SIM.log
the simulated driver's log of the same run (OBS_SIM_LOG, OBS_SIM_LOG_TID=1)
with the ground truth the program wrote into it (tests/frameworks/fw_truth.py
or tests/apps/llm_replay: RangePush/RangePop lines). Each thread's recorded
calls (launches, copies, memsets, syncs, graph launches) are in the log in
the same order as in the trace, so the truth of the log's n-th such line is
the trace's n-th call's. Written: the kernel names (mangled, as the program
registered them), then the calls in the call language of t_phase_engine
with @gen / @step / @steady / @none / @iter (a serving loop's ITERATION/k)
where the truth changes, @L<k> / @L- where the layer the decoder layers'
forward hooks mark (fw_truth.py's LAYER/k and LAYER_END) changes, @fwd
before the first call of each forward of the model (its FORWARD mark) and
@ttft where each generation's TTFT ends on the program's side (its timing
line: before the first call of the thread that began after its first
token's read returned, R, or, where it read none, after its prompt's
forward returned, E); a launch made while a graph was being captured is
not checked (=~). --no-reads-in-layers leaves out the copies
from the device of 4 bytes or more made inside a decoder layer (their
syncs stay): an expert loop's count reads, which the phase engine takes
for token reads (README.md). --todo WHY marks the case as one the engine
is known to get wrong (a TODO check in t_phase_engine: a "todo WHY" line);
--layers-todo WHY, one whose layers only it gets wrong (a "layers-todo WHY"
line: a TODO test of the layers, the phases checked as ever). --busy-gaps
writes each gap as +Nb, the thread busy through it (a program that never
waits: torch.compile's gaps are its compiling, docs/phases.md "Idle gaps");
without it a gap is +N, the thread blocked."""
import csv
import collections
import sys

RECORDED = {"kernel", "memcpy", "memset", "sync", "graph"}
SYNC_WORDS = {"cudaStreamSynchronize": "sync", "cudaDeviceSynchronize": "devsync",
              "cudaEventSynchronize": "evsync", "cudaStreamWaitEvent": "wait",
              # the driver's, as a program that calls them itself records them (cuBLAS, ggml), _v2/_ptsz cut off
              "cuStreamSynchronize": "sync", "cuCtxSynchronize": "devsync", "cuEventSynchronize": "evsync",
              "cuStreamWaitEvent": "wait"}


def truth_labels(log_path):
    """Per thread id: one (label, layer, forward) per recorded line of the
    log, in order (forward: a FORWARD mark came before it since the last
    recorded line); and per thread id the times where its generations'
    TTFT ends (R, or E where the generation read no token)."""
    per = collections.defaultdict(list)
    ttft = collections.defaultdict(list)
    state = {}
    for line in open(log_path, errors="replace"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 7:
            continue
        st = state.setdefault(f[6], {"stack": [], "gen": -1, "layer": -1, "forward": False})
        truth_line = f[0].startswith(("fwtruth", "llm_replay"))  # not the shim's own live ranges (NVTX tool)
        if truth_line and f[1] == "timing":
            fields = dict(w.split("=", 1) for w in f[2].split() if "=" in w)
            marks = fields.get("marks", "0,0,0,0,0").split(",")
            end = int(fields.get("prompt_end_ns", 0)) if fields.get("ttft") == "forward" else int(marks[2])
            if end:
                ttft[f[6]].append(end)
        elif truth_line and f[0].endswith("Mark") and f[1] == "range":
            if f[2] == "FORWARD":
                st["forward"] = True
            elif f[2].startswith("LAYER/"):
                st["layer"] = int(f[2][6:])
            elif f[2] in ("LAYER_END", "FORWARD_END"):
                st["layer"] = -1
        elif truth_line and f[0].endswith("RangePush") and f[1] == "range":
            if f[2] in ("PREFILL", "ITERATION/0"):
                st["gen"] += 1
            st["stack"].append(f[2])
        elif truth_line and f[0].endswith("RangePop") and f[1] == "range":
            if st["stack"]:
                st["stack"].pop()
        elif f[1] in RECORDED and not f[0].endswith(("Mark", "Generation")):
            stack = [n for n in st["stack"] if n != "GENERATION"]
            label = ("-",)
            if "GRAPH_CAPTURE" in stack:
                label = ("~",)
            elif stack:
                steps = [n for n in stack if n.startswith("DECODE/STEP_")]
                if stack[-1] == "PREFILL":
                    label = ("P", st["gen"])
                elif stack[-1].startswith("ITERATION/"):
                    label = ("I", st["gen"], int(stack[-1].split("/")[1]))
                elif steps:
                    label = ("D", st["gen"], int(steps[-1].split("_")[1]))
                elif stack[-1] == "DECODE/STEADY":
                    label = ("S", st["gen"])
            per[f[6]].append((label, st["layer"] if label[0] != "~" else -1, st["forward"]))
            st["forward"] = False
    return per, ttft


def threads_of(row):
    n = 1
    for c in ("grid_x", "grid_y", "grid_z"):
        n *= int(row[c] or 1)
    b = 1
    for c in ("block_x", "block_y", "block_z"):
        b *= int(row[c] or 1)
    return n, b


def main():
    name, calls_csv, log_path, what = sys.argv[1:5]
    no_reads_in_layers = "--no-reads-in-layers" in sys.argv[5:]
    todo = sys.argv[sys.argv.index("--todo") + 1] if "--todo" in sys.argv[5:-1] else None
    layers_todo = sys.argv[sys.argv.index("--layers-todo") + 1] if "--layers-todo" in sys.argv[5:-1] else None
    busy = "b" if "--busy-gaps" in sys.argv[5:] else ""
    truth, ttft_ends = truth_labels(log_path)
    used = collections.Counter()
    kernels, out = {}, []
    tids, thread_no = {}, None
    state = {}  # tid -> (last label, last time)
    layers = {}  # tid -> the layer last marked
    for row in csv.DictReader(open(calls_csv)):
        kind = row["kind"]
        if kind not in RECORDED:
            continue
        tid = row["tid"]
        if tid not in tids:
            if len(tids) == 4:
                sys.exit("more than 4 threads")
            tids[tid] = len(tids)
        i = used[tid]
        used[tid] += 1
        labels = truth.get(tid, [])
        label, layer, forward = labels[i] if i < len(labels) else (("-",), -1, False)
        words = []
        if thread_no != tids[tid]:
            thread_no = tids[tid]
            words.append("T%d" % thread_no)
        last_label, last_t = state.get(tid, (None, None))
        t = int(row["host_begin_ns"])
        if last_t is not None and t - last_t >= 100_000_000:
            words.append("+%d%s" % ((t - last_t) // 1_000_000, busy))
        ends = ttft_ends.get(tid, [])
        while ends and t > ends[0]:  # the first call of the thread after where a TTFT ended
            ends.pop(0)
            words.append("@ttft")
        if forward:
            words.append("@fwd")
        state[tid] = (last_label, t)
        if (no_reads_in_layers and kind == "memcpy" and row["direction"] == "DtoH" and int(row["bytes"]) >= 4
                and layer >= 0 and label[0] != "~"):
            if words:
                out.append(" ".join(words))
            continue
        if kind in ("kernel", "graph") and label[0] != "~" and label != last_label:
            if label[0] == "P":
                words.append("@gen")
            elif label[0] == "D":
                words.append("@step")
            elif label[0] == "S":
                words.append("@steady")
            elif label[0] == "I":
                words.append("@iter")
            else:
                words.append("@none")
            state[tid] = (label, t)
            layers[tid] = -1  # a phase marker: no layer until one is marked
        if kind in ("kernel", "graph") and label[0] != "~" and layer != layers.get(tid, -1):
            words.append("@L%d" % layer if layer >= 0 else "@L-")
            layers[tid] = layer
        if kind == "kernel":
            k = kernels.setdefault(row["name"], "k%d" % (len(kernels) + 1))
            g, b = threads_of(row)
            word = "%s:%dx%d" % (k, g, b)
        elif kind == "graph":
            word = "graph"
        elif kind == "memcpy":
            d = {"HtoD": "h2d", "DtoH": "d2h", "DtoD": "d2d"}.get(row["direction"])
            if d is None:
                sys.exit("copy direction %s" % row["direction"])
            if "Async" not in row["api"]:
                d = d.upper()
                if d == "D2D":
                    d = "D2Ds"
            word = "%s:%s" % (d, row["bytes"])
        elif kind == "memset":
            word = "memset:%s" % row["bytes"]
        else:
            word = SYNC_WORDS.get(row["api"], SYNC_WORDS.get(row["api"].split("_")[0]))
            if word is None:
                sys.exit("sync api %s" % row["api"])
        if label[0] == "~" and kind in ("kernel", "graph"):
            word += "=~"
        words.append(word)
        out.append(" ".join(words))
    print("# %s" % what)
    print("# made by tests/engine_cases/trace_to_case.py from the trace and the truth of one run")
    print("name %s" % name)
    if todo:
        print("todo %s" % todo)
    if layers_todo:
        print("layers-todo %s" % layers_todo)
    for mangled, k in kernels.items():
        print("kernel %s %s" % (k, mangled))
    print("calls")
    line = ""
    for w in out:
        if len(line) + len(w) + 1 > 120:
            print(line)
            line = w
        else:
            line = (line + " " + w) if line else w
    if line:
        print(line)


if __name__ == "__main__":
    main()
