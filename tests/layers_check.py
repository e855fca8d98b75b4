#!/usr/bin/env python3
"""The layering of shim/, checked over the #include lines and the calls
(docs/architecture.md).

Each folder of shim/ is one layer with a rank; a file may include, besides
the headers of its own folder (by bare name), only the public face of a
folder of lower rank ("record/record.h"). Modules (X.c with X.h) must not
include each other in a cycle, within a folder or across folders.
contrib/obs-report reaches the trace library through its face only.
A file may call only functions of its own folder or of a folder of lower
rank: a call to a function that only a higher or sibling folder defines
(a declaration written by hand, an extern, or one of the symbols the shim
exports, such as its own dlsym) points up even with no include. Functions
are found from the sources: non-static definitions at the start of a line,
the hook lines (OBS_CUDA_HOOK(name, ...)) and assembly (.globl name).
Prints TAP; exit status 0 even on failures (the TAP driver counts them).
Then checks itself: on a copy of the tree with an upward include, a cycle,
a private header reached from obs-report, a call up to a function of
intercept/ and a call to the shim's exported dlsym from record/, each rule
must fail.

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
    "capture": 5,    # OBS_CAPTURE's windows: the profiler's start and stop, OBS_RECORD=window
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
    "capture": "capture.h",
    "record": "record.h",
    "runtimes": "real_symbols.h",
    "common": "common.h",
    "trace": "trace.h",
    "abi": "*",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Comments, string and character literals: blanked before looking for calls.
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
CALL = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
# A function definition's head at the start of a line (static or not).
DEF_HEAD = re.compile(r'^(static\s+)?(?:[A-Za-z_][\w]*[\s\*]+)+?([A-Za-z_]\w*)\s*\(', re.M)
HOOK_LINE = re.compile(r'^OBS_[A-Z_]*HOOK\s*\(\s*([A-Za-z_]\w*)\s*,', re.M)
ASM_GLOBAL = re.compile(r'\.globl\s+([A-Za-z_]\w*)')
NOT_CALLS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__", "__asm__", "asm",
             "_Static_assert", "_Alignof", "alignof", "typeof", "__typeof__", "_Atomic", "_Generic",
             "__builtin_expect", "offsetof", "va_arg"}

results = []
notes = []


def check(ok, what):
    results.append((ok, what))


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def source_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def function_definitions(text):
    """(name, static) of each function defined in a C text: a head at the
    start of a line whose statement goes on to a '{' before any ';'; the
    hook lines and assembly globals, not static."""
    found = []
    code = NOISE.sub(lambda m: " " * len(m.group(0)) if "\n" not in m.group(0) else "\n" * m.group(0).count("\n"),
                     text)
    for m in DEF_HEAD.finditer(code):
        head = m.group(0).split()
        if head[0] in ("typedef", "extern", "return", "else") or m.group(2) in NOT_CALLS:
            continue
        rest = code[m.end():]
        semi, brace = rest.find(";"), rest.find("{")
        if brace < 0 or (0 <= semi < brace):
            continue
        found.append((m.group(2), m.group(1) is not None))
    found += [(name, False) for name in HOOK_LINE.findall(code)]
    found += [(name, False) for name in ASM_GLOBAL.findall(text)]
    return found


def calls_in(text):
    """Names called in a C text: a name followed by '(', but not the name
    of a declaration's or definition's head at the start of a line."""
    code = NOISE.sub(" ", text)
    code = DEF_HEAD.sub(lambda m: m.group(0)[:m.start(2) - m.start(0)] + " " * len(m.group(2)) +
                        m.group(0)[m.end(2) - m.start(0):], code)
    return {name for name in CALL.findall(code) if name not in NOT_CALLS}


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

    # Calls: each non-static function by the folders that define it.
    defined_in = {}
    own = {}
    for folder, name in files:
        defs = function_definitions(source_text(os.path.join(shim, folder, name)))
        own[(folder, name)] = {n for n, _ in defs}
        for n, static in defs:
            if not static:
                defined_in.setdefault(n, set()).add(folder)
    upward = []
    for folder, name in files:
        for fn in sorted(calls_in(source_text(os.path.join(shim, folder, name)))):
            owners = defined_in.get(fn)
            if not owners or fn in own[(folder, name)] or folder in owners:
                continue
            lowest = min(owners, key=lambda f: LAYERS[f])
            if LAYERS[lowest] >= LAYERS[folder]:
                upward.append("%s/%s: calls %s() of %s/ (%s rank %d -> %s rank %d)" %
                              (folder, name, fn, lowest, folder, LAYERS[folder], lowest, LAYERS[lowest]))
    check(not upward, "every call goes to the own folder's functions or a lower layer's")
    notes.extend(upward)
    check(len(defined_in) > 300, "found %d functions defined in the layer folders (the parse works)" % len(defined_in))

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
                  ("contrib/obs-report/cmd_export.c", '#include "trace/trace_reader.h"\n'),
                  # calls up with no include: a hand-written declaration, and the shim's own dlsym
                  ("shim/record/graph_execs.c", 'void obs_init(void);\n'
                                                'void obs_graph_fault(void) { obs_init(); }\n'),
                  ("shim/record/streams.c", 'void *dlsym(void *, const char *);\n'
                                            'void *obs_streams_fault(void) { return dlsym((void *)0, "x"); }\n')]
        for path, line in faults:
            with open(os.path.join(tmp, path), "a") as f:
                f.write(line)
        results, notes = [], []
        check_tree(tmp)
        failed = {what for ok, what in results if not ok}
        fault_notes = list(notes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        results, notes = kept, kept_notes
    for rule in ("every #include names", "no include cycle", "contrib/obs-report includes", "every call goes"):
        check(any(w.startswith(rule) for w in failed), "self-test: '%s...' fails on a tree that breaks it" % rule)
    for fault in ("record/graph_execs.c: calls obs_init() of intercept/", "record/streams.c: calls dlsym() of intercept/"):
        check(any(n.startswith(fault) for n in fault_notes), "self-test: finds '%s'" % fault)


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
