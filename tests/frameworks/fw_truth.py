"""Ground truth of a Hugging Face generate() loop, written from the Python
side into the simulator's log (OBS_SIM_LOG), in true order with the
simulated driver's own lines, in the format tests/apps/llm_replay writes
and tests/phase_compare.c reads (docs/scenarios.md, "Ground truth";
this format: docs/frameworks.md):

    fwtruthRangePush<TAB>range<TAB>NAME<TAB>-<TAB>-<TAB>depth[<TAB>tid]
    fwtruthRangePop<TAB>range<TAB>-<TAB>-<TAB>-<TAB>depth[<TAB>tid]
    fwtruthMark<TAB>range<TAB>NAME<TAB>-<TAB>-<TAB>depth[<TAB>tid]
    fwtruthGeneration<TAB>timing<TAB>gen=G steps=S ttft_ns=T steady_ns=D t0_ns=A marks=P,F,R,S,L tokens_ns=...<TAB>-<TAB>-<TAB>0[<TAB>tid]

Each line is one write(2) on an O_APPEND descriptor, so it sits exactly
between the driver calls before and after it (the simulator writes its
lines the same way). The tid column (threading.get_native_id(), the
thread's gettid()) is there when OBS_SIM_LOG_TID=1, as in the driver's.

Ranges, per thread and generation (one generate() call):
  GENERATION      the whole generate() call
    PREFILL       from generate()'s start to the first forward of the model
                  after the first token's read (the streamer's first put
                  after the prompt's): input preparation, the prompt's
                  forward (or its chunks' forwards, prefill_chunk_size:
                  no token is read between them), the sampling of the
                  first token (the prefill's: TTFT ends when it is read)
                  and the stop check
    DECODE/STEP_0 the next forward and its sampling, stop check
    DECODE/STEADY around DECODE/STEP_1 .. (as llm_replay)
  A launch after forward k and before forward k+1 belongs to the range of
  forward k. Marks: LAYER/i at each decoder layer's forward (i from 0, a
  forward pre-hook), LAYER_END when it returned (a forward hook: the
  launches between the two are that layer's; also while a forward is
  captured into a CUDA graph, whose captured launches are the graph's
  kernel nodes), FORWARD_END at the end of each forward of the model
  (not while capturing). The parts outside the layers (docs/layers.md,
  "Reports": a prompt's or step's calls before its first layer and after
  its last), as tests/apps/llm_replay marks them: EMBED right after
  PREFILL is pushed (generate()'s own input preparation before the first
  forward is the prompt's, before its first layer) and at each forward of
  the model (its pre-hook on the top-level CausalLM module, after the step
  range it opens: the embedding, positions, masks; a chunk's forward
  begins the next chunk's EMBED), HEAD right after the last decoder
  layer's LAYER_END (the final norm, the LM head, and generate()'s work
  after the forward up to the next one: logits processing, sampling, the
  token read, the stop check, cache updates: all after that forward's
  last layer, in the range of that forward). Not while capturing.
Timing, host CLOCK_MONOTONIC (time.monotonic_ns), from the streamer (its
put() runs right after generate() read the tokens back):
  marks  P just before the prompt's ids are copied to the device (the
         caller's mark_prompt()), F just before generate() is called,
         R just after the first token's read returned, S just after the
         second token's (step 0's), L just after the last one's (0: none)
  ttft_ns = R - F (the prefill's token), steady_ns = L - S (steps 1 ..
  S-1: tokens/s = (S - 1) / steady_ns, as llm_replay's), tokens_ns the
  times between successive token reads (the first: R - F), comma
  separated; steps = decode steps (tokens - 1); gen counts per thread.
"""
import os
import threading
import time


class Truth:
    """The log writer; per-thread state lives in a threading.local."""

    def __init__(self):
        path = os.environ.get("OBS_SIM_LOG")
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else -1
        self.tid_column = os.environ.get("OBS_SIM_LOG_TID") == "1"
        self.local = threading.local()

    def _state(self):
        st = self.local
        if not hasattr(st, "depth"):
            st.depth = 0
            st.generations = 0
            st.active = None
            st.capturing = None
        return st

    def _write(self, api, kind, name, value):
        if self.fd < 0:
            return
        line = "fwtruth%s\t%s\t%s\t-\t-\t%d" % (api, kind, name, value)
        if self.tid_column:
            line += "\t%d" % threading.get_native_id()
        os.write(self.fd, (line + "\n").encode())

    def push(self, name):
        st = self._state()
        st.depth += 1
        self._write("RangePush", "range", name, st.depth)

    def pop(self):
        st = self._state()
        st.depth -= 1
        self._write("RangePop", "range", "-", st.depth)

    def mark(self, name):
        self._write("Mark", "range", name, self._state().depth)

    def timing(self, text):
        self._write("Generation", "timing", text, 0)

    def active(self):
        return self._state().active

    def capturing(self):
        """The generation whose forward is being captured into a CUDA graph
        (Generation.suspended), or None."""
        return self._state().capturing


class Generation:
    """One generate() call on this thread: its ranges and its clock.
    Use: g = Generation(truth); g.mark_prompt(); ids = ids.to(dev);
    g.begin(); model.generate(..., streamer=g.streamer()); g.end()."""

    def __init__(self, truth):
        self.truth = truth
        self.p = self.f = 0
        self.decode_forwards = 0  # forwards after the first token's read
        self.reads = []          # time of each token read (the streamer's puts after the prompt's)
        self.prompt_seen = False
        self.open = 0            # ranges this generation pushed and has not popped

    def mark_prompt(self):
        self.p = time.monotonic_ns()

    def begin(self):
        st = self.truth._state()
        st.active = self
        self.truth.push("GENERATION")
        self.truth.push("PREFILL")
        self.truth.mark("EMBED")
        self.open = 2
        self.f = time.monotonic_ns()
        if self.p == 0:
            self.p = self.f

    # The model's forward pre-hook: the boundary between steps. Until the
    # prefill's token is read every forward is the prompt's (one, or one
    # per chunk with prefill_chunk_size); each one after it opens a step.
    def forward_begins(self):
        if not self.reads:
            return
        k = self.decode_forwards
        self.decode_forwards += 1
        self.truth.pop()                 # PREFILL or the previous step
        self.open -= 1
        if k == 1:
            self.truth.push("DECODE/STEADY")
            self.open += 1
        self.truth.push("DECODE/STEP_%d" % k)
        self.open += 1

    def suspended(self):
        """A context in which the hooks do not see this generation (a
        CUDA graph's capture: its forward is not a step)."""
        return _Suspended(self)

    def forward_ends(self):
        self.truth.mark("FORWARD_END")

    def token_read(self):
        self.reads.append(time.monotonic_ns())

    def streamer(self):
        return _Streamer(self)

    def end(self):
        while self.open > 0:
            self.truth.pop()
            self.open -= 1
        st = self.truth._state()
        st.active = None
        gen = st.generations
        st.generations += 1
        r = self.reads
        steps = max(len(r) - 1, 0)
        R = r[0] if r else 0
        S = r[1] if len(r) > 1 else 0
        L = r[-1] if len(r) > 1 else 0
        ttft = R - self.f if r else -1
        steady = L - S if len(r) > 2 else -1
        deltas = [R - self.f] + [b - a for a, b in zip(r, r[1:])] if r else []
        self.truth.timing("gen=%d steps=%d ttft_ns=%d steady_ns=%d t0_ns=%d marks=%d,%d,%d,%d,%d tokens_ns=%s"
                          % (gen, steps, ttft, steady, self.f, self.p, self.f, R, S, L,
                             ",".join(str(d) for d in deltas) or "-"))
        return gen


class _Suspended:
    def __init__(self, generation):
        self.g = generation

    def __enter__(self):
        st = self.g.truth._state()
        st.active = None
        st.capturing = self.g

    def __exit__(self, *exc):
        st = self.g.truth._state()
        st.active = self.g
        st.capturing = None
        return False


class _Streamer:
    """A transformers streamer (put/end): generate() hands it the prompt
    first, then each step's tokens right after reading them back."""

    def __init__(self, generation):
        self.g = generation

    def put(self, value):
        if not self.g.prompt_seen:
            self.g.prompt_seen = True
            return
        self.g.token_read()

    def end(self):
        pass


def decoder_layers(model):
    """The decoder layers of the models used here (Llama: model.layers,
    GPT-2: transformer.h)."""
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "layers"):
        return list(inner.layers)
    inner = getattr(model, "transformer", None)
    if inner is not None and hasattr(inner, "h"):
        return list(inner.h)
    raise ValueError("no decoder layers found in %s" % type(model).__name__)


def attach(truth, model):
    """Forward hooks: step boundaries and EMBED on the model, LAYER/i,
    LAYER_END (and HEAD after the last) on its decoder layers. They act only while a Generation is active on the
    calling thread (a model may be called outside generate())."""

    def model_pre(module, args):
        g = truth.active()
        if g is not None:
            g.forward_begins()
            truth.mark("EMBED")

    def model_post(module, args, output):
        g = truth.active()
        if g is not None:
            g.forward_ends()

    # The layer marks fire during a CUDA graph's capture too (no step
    # boundary does): the captured launches between them are the graph's
    # kernel nodes of that layer (docs/layers.md, "Graphs").
    def layer_pre(index):
        def hook(module, args):
            if truth.active() is not None or truth.capturing() is not None:
                truth.mark("LAYER/%d" % index)
        return hook

    def layer_post(last):
        def hook(module, args, output):
            if truth.active() is not None or truth.capturing() is not None:
                truth.mark("LAYER_END")
            if last and truth.active() is not None:
                truth.mark("HEAD")
        return hook

    layers = decoder_layers(model)
    handles = [model.register_forward_pre_hook(model_pre), model.register_forward_hook(model_post)]
    for i, layer in enumerate(layers):
        handles.append(layer.register_forward_pre_hook(layer_pre(i)))
        handles.append(layer.register_forward_hook(layer_post(i == len(layers) - 1)))
    return handles
