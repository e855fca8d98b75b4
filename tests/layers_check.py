#!/usr/bin/env python3
"""The layering of shim/, checked over the #include lines (docs/architecture.md).

Each folder of shim/ is one layer with a rank; a file may include, besides
the headers of its own folder (by bare name), only the public face of a
folder of lower rank ("record/record.h"). Modules (X.c with X.h) must not
include each other in a cycle, within a folder or across folders.
contrib/obs-report reaches the trace library through its face only.
Prints TAP; exit status 0 even on failures (the TAP driver counts them).
Then checks itself: on a copy of the tree with an upward include, a cycle
and a private header reached from obs-report, each rule must fail.

Usage: layers_check.py SRCDIR
"""
import os
import re
import shutil
import sys
import tempfile

# rank: a folder may include faces of folders of strictly lower rank.
LAYERS = {
    "intercept": 6,  # the exported hooks and the library's lifecycle
    "phases": 5,     # phase engine, rules, live NVTX/roctx ranges
    "gputime": 5,    # GPU time from event pairs
    "record": 4,     # per-thread buffers, clock, names, streams, graphs, output file
    "runtimes": 3,   # the real runtimes' entry points
    "common": 1,     # settings, logging, small containers
    "trace": 1,      # the trace format and libobstrace
    "abi": 1,        # the runtimes' ABI slices (headers only)
}
# The one header of each folder that other folders may include; None: no
# folder may include it; "*": every header is public (abi: plain ABI slices).
FACES = {
    "intercept": None,
    "phases": "phase_engine.h",
    "gputime": "gpu_time.h",
    "record": "record.h",
    "runtimes": "real_symbols.h",
    "common": "common.h",
    "trace": "trace.h",
    "abi": "*",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

results = []
notes = []


def check(ok, what):
    results.append((ok, what))


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def module_of(folder, name):
    return folder + "/" + os.path.splitext(name)[0]


def check_tree(src):
    shim = os.path.join(src, "shim")

    # Every source file of shim/ sits in a known layer folder.
    stray = []
    files = []
    for entry in sorted(os.listdir(shim)):
        full = os.path.join(shim, entry)
        if os.path.isdir(full):
            if entry in (".libs", ".deps"):
                continue
            if entry not in LAYERS:
                stray.append(entry + "/")
                continue
            for name in sorted(os.listdir(full)):
                if name.endswith((".c", ".h")):
                    files.append((entry, name))
        elif entry.endswith((".c", ".h")):
            stray.append(entry)
    check(not stray, "every file of shim/ is in a layer folder %s" % (stray or ""))
    check(len(files) > 40, "found %d source files in the layer folders (the walk works)" % len(files))

    for folder, face in FACES.items():
        if face not in (None, "*"):
            check(os.path.isfile(os.path.join(shim, folder, face)), "%s/ has its face %s" % (folder, face))

    graph = {}
    bad = []
    for folder, name in files:
        mod = module_of(folder, name)
        graph.setdefault(mod, set())
        for inc in includes(os.path.join(shim, folder, name)):
            if "/" not in inc:
                if not os.path.isfile(os.path.join(shim, folder, inc)):
                    bad.append("%s/%s: \"%s\" is not in %s/ (name the folder)" % (folder, name, inc, folder))
                    continue
                target = module_of(folder, inc)
            else:
                tfolder, tname = inc.split("/", 1)
                if tfolder not in LAYERS:
                    bad.append("%s/%s: \"%s\" is outside the layers" % (folder, name, inc))
                    continue
                if tfolder == folder:
                    bad.append("%s/%s: \"%s\": own folder's headers go by bare name" % (folder, name, inc))
                if tfolder != folder and LAYERS[tfolder] >= LAYERS[folder]:
                    bad.append("%s/%s: \"%s\" points up or sideways (%s rank %d -> %s rank %d)" %
                               (folder, name, inc, folder, LAYERS[folder], tfolder, LAYERS[tfolder]))
                face = FACES[tfolder]
                if tfolder != folder and face != "*" and tname != face:
                    bad.append("%s/%s: \"%s\" is private to %s/ (include %s/%s)" %
                               (folder, name, inc, tfolder, tfolder, face))
                target = module_of(tfolder, tname)
            if target != mod:
                graph[mod].add(target)
    check(not bad, "every #include names its own folder's header or a lower layer's face")
    notes.extend(bad)

    cycles = strongly_connected(graph)
    check(not cycles, "no include cycle between modules")
    notes.extend("cycle: " + " <-> ".join(sorted(c)) for c in cycles)

    # obs-report reaches libobstrace through its face.
    report = os.path.join(src, "contrib", "obs-report")
    leaks = []
    for name in sorted(os.listdir(report)):
        if name.endswith((".c", ".h")):
            for inc in includes(os.path.join(report, name)):
                if "/" in inc and inc.split("/", 1)[0] in LAYERS and inc != "trace/trace.h":
                    leaks.append("%s: %s" % (name, inc))
    check(not leaks, "contrib/obs-report includes only trace/trace.h of shim/")
    notes.extend(leaks)


def self_test(src):
    """The rules fail where they must: a copy of the tree with one of each fault."""
    global results, notes
    kept, kept_notes = results, notes
    tmp = tempfile.mkdtemp(prefix="obs-layers-")
    try:
        shutil.copytree(os.path.join(src, "shim"), os.path.join(tmp, "shim"),
                        ignore=shutil.ignore_patterns(".libs", ".deps", "*.o", "*.lo", "*.la"))
        shutil.copytree(os.path.join(src, "contrib", "obs-report"), os.path.join(tmp, "contrib", "obs-report"),
                        ignore=shutil.ignore_patterns(".libs", ".deps", "*.o", "*.lo", "*.la"))
        faults = [("shim/record/output.c", '#include "intercept/init.h"\n'),       # points up
                  ("shim/trace/trace_stats.h", '#include "trace_summary.h"\n'),    # a cycle
                  ("contrib/obs-report/cmd_export.c", '#include "trace/trace_reader.h"\n')]
        for path, line in faults:
            with open(os.path.join(tmp, path), "a") as f:
                f.write(line)
        results, notes = [], []
        check_tree(tmp)
        failed = {what for ok, what in results if not ok}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        results, notes = kept, kept_notes
    for rule in ("every #include names", "no include cycle", "contrib/obs-report includes"):
        check(any(w.startswith(rule) for w in failed), "self-test: '%s...' fails on a tree that breaks it" % rule)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: layers_check.py SRCDIR")
    src = sys.argv[1]
    check_tree(src)
    found = list(notes)
    self_test(src)
    for line in found:
        print("# " + line)
    print("1..%d" % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))


def strongly_connected(graph):
    """Tarjan's algorithm; returns the components with more than one module."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    main()
