"""Ground truth of LLM inference loops run by real frameworks (Hugging Face
generate(), hand-written PyTorch decoders, transformers' continuous
batching), written from the Python side into the simulator's log
(OBS_SIM_LOG), in true order with the simulated driver's own lines, in the
format tests/apps/llm_replay writes and tests/phase_compare.c reads
(docs/scenarios.md, "Ground truth"; this format: docs/frameworks.md):

    fwtruthRangePush<TAB>range<TAB>NAME<TAB>-<TAB>-<TAB>depth[<TAB>tid]
    fwtruthRangePop<TAB>range<TAB>-<TAB>-<TAB>-<TAB>depth[<TAB>tid]
    fwtruthMark<TAB>range<TAB>NAME<TAB>-<TAB>-<TAB>depth[<TAB>tid]
    fwtruthGeneration<TAB>timing<TAB>gen=G steps=S ttft_ns=T steady_ns=D t0_ns=A marks=P,F,R,S,L ttft=read|forward prompt_end_ns=E last_forward_end_ns=Z first_step_ns=D tokens_ns=...<TAB>-<TAB>-<TAB>0[<TAB>tid]
    fwtruthRequest<TAB>request<TAB>req=ID prompt=N tokens=M first_ns=R last_ns=L first_iteration=K last_iteration=J<TAB>-<TAB>-<TAB>0[<TAB>tid]

Each line is one write(2) on an O_APPEND descriptor, so it sits exactly
between the driver calls before and after it (the simulator writes its
lines the same way). The tid column (threading.get_native_id(), the
thread's gettid()) is there when OBS_SIM_LOG_TID=1, as in the driver's.

Forwards. Everything here comes from the programs' own hooks: a forward
pre-hook and a forward hook on the top-level model (the CausalLM module)
and on each decoder layer. The model's pre-hook reads, from the forward's
own inputs, what is known on the host without touching the device: the
tokens it carries (input_ids' or inputs_embeds' last shape dimension, per
sequence) and, for a serving loop, the batch its scheduler packed. A
generation (one prompt, or one batch of prompts, and its decode steps) is
bounded by the program's generate function: Hugging Face's generate()
call, or a hand-written loop's own function (Generation.begin() .. end()
around it; the detokeniser's work after it, a torch.cat of the tokens and
their read, is outside). It starts from an empty KV cache (generate()
makes a new one; a loop resets its static cache inside its function), so
the tokens the cache holds before a forward ("past") are the tokens the
generation's earlier forwards fed, counted on the host (where the cache is
a DynamicCache its own length, a shape, is checked against that count).
The prompt is prompt_tokens wide (generate()'s input_ids' width, left
padding included; a loop: its prompt's length; unset: the generation's
first forward). A forward with past + tokens <= prompt_tokens is the
prompt's (one forward, or one per chunk with prefill_chunk_size: every
chunk is the same PREFILL); every later forward is a decode step.
No device value is read, no token read is needed: the truth is the same
whether the loop reads a token per step (a streamer, .item()) or none.

Ranges, per thread and generation:
  GENERATION      the program's generate function (generate() call, loop)
    PREFILL       from its start to the pre-hook of its first decode
                  forward: input preparation, the prompt's forward(s), the
                  sampling of the first token (the prompt's: real
                  frameworks take it from the prompt's logits) and the work
                  after it up to the next forward (stop check, token read)
    DECODE/STEP_0 the first decode forward's pre-hook to the next one's
    DECODE/STEADY around DECODE/STEP_1 .. (as llm_replay)
  A launch after forward k and before forward k+1 belongs to the range of
  forward k. A CUDA graph replayed for a decode step runs no hook: the loop
  says where it begins, right before graph.replay() (Generation.replayed(),
  after the inputs' copies into the graph); so does a loop whose
  forwards run compiled, with no hook (Generation.unhooked_forward():
  torch.compile, fw_compiled.py).
  ITERATION/k     a serving loop (Serving, transformers' generate_batch):
                  each forward of the loop's thread is one iteration, from
                  its pre-hook to the next one's (the last: the loop's end
                  on that thread); k counts from 0 per generate_batch call,
                  a new one of which is a new generation of that thread
Marks:
  FORWARD       every forward of the model a thread runs, in a generation
                or not (a warm-up's too), not while it is captured into a
                CUDA graph; a graph replayed for a step counts as one (the
                test scores live ranges from a thread's second forward on:
                its first teaches the engine the template)
  LAYER/i       each decoder layer's forward begins (i from 0, a forward
                pre-hook), in a generation, an iteration or a capture
  LAYER_END     it returned (a forward hook: the launches between the two
                are that layer's; also while a forward is captured into a
                CUDA graph, whose captured launches are the graph's kernel
                nodes)
  FORWARD_END   the end of each forward of the model (not while capturing)
  PROMPT_END    the end of the prompt's last forward (its forward hook):
                where TTFT ends when the generation reads no token (below)
  EMBED, HEAD   the parts outside the layers (docs/layers.md, "Reports": a
                prompt's or step's calls before its first layer and after
                its last), as tests/apps/llm_replay marks them: EMBED right
                after PREFILL is pushed (generate()'s own input preparation
                before the first forward is the prompt's, before its first
                layer) and at each forward of the model (its pre-hook,
                after the range it opens: the embedding, positions,
                masks; a chunk's forward begins the next chunk's EMBED),
                HEAD right after the last decoder layer's LAYER_END (the
                final norm, the LM head, and the loop's work after the
                forward up to the next one: logits processing, sampling,
                the token read, the stop check, cache updates). Not while
                capturing.
  ITERATION     right after ITERATION/k is pushed: "kind=prompt|decode|mixed
                tokens=T requests=R prompts=A decodes=B sampled=S": the
                tokens the forward carries (input_ids' shape [1, T]), the
                requests packed (R: A still in their prompt, B decoding) and
                the sampled ones (logits_indices' shape)
Timing, host CLOCK_MONOTONIC (time.monotonic_ns):
  marks  P just before the prompt's ids are copied to the device (the
         caller's mark_prompt()), F just before the generate function is
         called, R just after the first token's read returned (a
         streamer's put(), a loop's .item()), S just after the second
         token's (step 0's), L just after the last one's (0: none)
  E      prompt_end_ns: the PROMPT_END mark's time
  Z      last_forward_end_ns: the end of the generation's last forward (its
         forward hook; 0: none)
  D      first_step_ns: the begin of its first decode forward (step 0's
         pre-hook, or the loop's mark before an unhooked forward; 0: none)
  ttft   "read" where the generation reads its first token before it ends
         (ttft_ns = R - F), "forward" where it reads none (no streamer, or
         tokens kept on the device: ttft_ns = E - F, the end of the
         prompt's forward on the host; the test then ends TTFT at the next
         delimiter after it, and tokens/s at the one after Z; no TTFT when
         a launch at or after D comes before that delimiter: no delimiter
         bounds the prompt's forward alone, docs/frameworks.md)
  steps = decode forwards, steady_ns = L - S (steps 1 .. S-1: tokens/s =
  (S - 1) / steady_ns, as llm_replay's; -1 without reads), tokens_ns the
  times between successive token reads (the first: R - F), comma
  separated; gen counts per thread.
  A serving loop writes one timing line per generate_batch call on its
  loop's thread (P: the call; F: its first iteration's forward begins, the
  loop's set-up before it being no iteration; R, S, L: the first, second
  and last iteration whose read brought a request a token; steps: the
  iterations after the first such one) and a request line per request (its prompt's
  length, tokens, the times its first and last token were read and their
  iterations).
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
        self.serving = None  # the Serving whose loop runs now (its forwards run on a thread of its own)

    def _state(self):
        st = self.local
        if not hasattr(st, "depth"):
            st.depth = 0
            st.generations = 0
            st.active = None
            st.capturing = None
            st.iteration = None  # the serving loop's state on this thread (Serving)
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

    def request(self, text):
        self._write("Request", "request", text, 0)

    def active(self):
        return self._state().active

    def capturing(self):
        """The generation whose forward is being captured into a CUDA graph
        (Generation.suspended), or None."""
        return self._state().capturing

    def capture(self):
        """A context around a CUDA graph's capture outside any generation
        (a decode step captured before the first prompt): the layer marks
        fire, nothing else does."""
        return _Capture(self)

    def in_forwards(self):
        """Whether this thread's forwards are a generation's or a serving
        loop's (their layers are marked)."""
        st = self._state()
        return st.active is not None or st.iteration is not None


def _timing_line(gen, steps, ttft_kind, f, p, reads, e, z, d=0):
    R = reads[0] if reads else 0
    S = reads[1] if len(reads) > 1 else 0
    L = reads[-1] if len(reads) > 1 else 0
    if ttft_kind == "read":
        ttft = R - f
    else:
        ttft = e - f if e else -1
    steady = L - S if len(reads) > 2 else -1
    deltas = [R - f] + [b - a for a, b in zip(reads, reads[1:])] if reads else []
    return ("gen=%d steps=%d ttft_ns=%d steady_ns=%d t0_ns=%d marks=%d,%d,%d,%d,%d ttft=%s prompt_end_ns=%d "
            "last_forward_end_ns=%d first_step_ns=%d tokens_ns=%s"
            % (gen, steps, ttft, steady, f, p, f, R, S, L, ttft_kind, e, z, d,
               ",".join(str(x) for x in deltas) or "-"))


class Generation:
    """One call of the program's generate function on this thread: its
    ranges and its clock. Use: g = Generation(truth, prompt_tokens);
    g.mark_prompt(); ids = ids.to(dev); g.begin(); model.generate(...) (or
    the loop's forwards); g.end(). prompt_tokens: the prompt's width
    (None: the generation's first forward's tokens)."""

    def __init__(self, truth, prompt_tokens=None):
        self.truth = truth
        self.prompt_tokens = prompt_tokens
        self.p = self.f = self.e = self.z = self.d = 0
        self.fed = 0             # tokens the generation's forwards fed the cache so far, per sequence
        self.decode_forwards = 0
        self.in_prompt = False   # the forward under way is the prompt's
        self.reads = []          # time of each token read (the streamer's puts after the prompt's, .item())
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

    # The model's forward pre-hook: the boundary between steps, decided by
    # the tokens the forward feeds and those the cache already holds.
    def forward_begins(self, tokens, cache_length=None):
        past = self.fed
        if cache_length is not None and cache_length != past:
            raise RuntimeError("fw_truth: the cache holds %d tokens, the generation's forwards fed %d"
                               % (cache_length, past))
        if self.prompt_tokens is None:
            self.prompt_tokens = tokens
        self.fed += tokens
        self.in_prompt = past + tokens <= self.prompt_tokens
        if self.in_prompt:
            return
        k = self.decode_forwards
        self.decode_forwards += 1
        if k == 0:
            self.d = time.monotonic_ns()
        self.truth.pop()                 # PREFILL or the previous step
        self.open -= 1
        if k == 1:
            self.truth.push("DECODE/STEADY")
            self.open += 1
        self.truth.push("DECODE/STEP_%d" % k)
        self.open += 1

    def unhooked_forward(self, tokens=1):
        """A forward no hook sees begins (the loop calls it right before the
        forward's first launch, its inputs made): what the model's pre-hook
        writes, its FORWARD mark and the step boundary by its tokens, with
        no EMBED (no layer is marked in it either)."""
        self.truth.mark("FORWARD")
        self.forward_begins(tokens)

    def replayed(self, tokens=1):
        """A decode step replayed from a CUDA graph begins: no hook runs.
        Called right before graph.replay(), after the step's inputs were
        copied into the graph's static tensors (the work before a forward
        is the previous forward's, as with the hooks)."""
        self.unhooked_forward(tokens)

    def suspended(self):
        """A context in which the hooks do not see this generation (a
        CUDA graph's capture: its forward is not a step)."""
        return _Suspended(self)

    def forward_ends(self):
        self.truth.mark("FORWARD_END")
        self.z = time.monotonic_ns()
        if self.in_prompt and self.fed >= self.prompt_tokens:
            self.truth.mark("PROMPT_END")
            self.e = time.monotonic_ns()
        self.in_prompt = False

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
        self.truth.timing(_timing_line(gen, self.decode_forwards, "read" if self.reads else "forward", self.f,
                                       self.p, self.reads, self.e, self.z, self.d))
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


class _Capture:
    def __init__(self, truth):
        self.truth = truth

    def __enter__(self):
        self.truth._state().capturing = self

    def __exit__(self, *exc):
        self.truth._state().capturing = None
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


class Serving:
    """One serving session (transformers' generate_batch call): its loop runs
    on a thread of its own, each forward there one ITERATION/k. The script
    tells it what its scheduler packed (batch_packed, from the loop's
    thread, before the forward), where each iteration's sampled ids were
    read back (ids_read) and when the loop's thread ends (loop_ends)."""

    def __init__(self, truth):
        self.truth = truth
        self.f = 0
        self.lock = threading.Lock()
        self.requests = {}  # id -> [prompt, tokens, first_ns, last_ns, first_iteration, last_iteration]

    def begin(self):
        self.f = time.monotonic_ns()
        self.truth.serving = self

    def end(self):
        self.truth.serving = None

    def _thread(self):
        st = self.truth._state()
        if st.iteration is None:
            st.iteration = {"k": 0, "open": 0, "packed": None, "reads": [], "f": 0}
        return st.iteration

    def batch_packed(self, prompts, decodes):
        """The scheduler's next batch: requests still in their prompt, decoding."""
        self._thread()["packed"] = (prompts, decodes)

    def forward_begins(self, tokens, sampled):
        it = self._thread()
        if it["open"]:
            self.truth.pop()
            it["open"] = 0
        prompts, decodes = it["packed"] or (0, 0)
        if it["k"] == 0:
            it["f"] = time.monotonic_ns()
        kind = "prompt" if decodes == 0 else "decode" if prompts == 0 else "mixed"
        self.truth.push("ITERATION/%d" % it["k"])
        it["open"] = 1
        self.truth.mark("ITERATION kind=%s tokens=%d requests=%d prompts=%d decodes=%d sampled=%d"
                        % (kind, tokens, prompts + decodes, prompts, decodes, sampled))
        it["k"] += 1

    def ids_read(self, tokens_for):
        """The iteration's sampled ids came back: tokens_for, the requests
        (id, prompt length) that got a token from them."""
        it = self._thread()
        now = time.monotonic_ns()
        if tokens_for:
            it["reads"].append(now)
        with self.lock:
            for rid, prompt in tokens_for:
                r = self.requests.setdefault(rid, [prompt, 0, now, now, it["k"] - 1, it["k"] - 1])
                r[1] += 1
                r[3] = now
                r[5] = it["k"] - 1

    def loop_ends(self):
        """On the loop's thread, as its loop returns."""
        st = self.truth._state()
        it = st.iteration
        if it is None:
            return
        if it["open"]:
            self.truth.pop()
        reads = it["reads"]
        self.truth.timing(_timing_line(st.generations, max(len(reads) - 1, 0), "read", it["f"], self.f, reads, 0, 0))
        st.generations += 1
        with self.lock:
            for rid in sorted(self.requests):
                prompt, tokens, first, last, k0, k1 = self.requests[rid]
                self.truth.request("req=%s prompt=%d tokens=%d first_ns=%d last_ns=%d first_iteration=%d "
                                   "last_iteration=%d" % (rid, prompt, tokens, first, last, k0, k1))
        st.iteration = None


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


def forward_tokens(args, kwargs):
    """The tokens a forward carries per sequence, and its batch, from the
    shapes of its inputs (host metadata: no device value is read)."""
    ids = kwargs.get("input_ids", args[0] if args else None)
    if ids is not None:
        return ids.shape[-1], ids.shape[0] if ids.dim() > 1 else 1
    embeds = kwargs["inputs_embeds"]
    return embeds.shape[1], embeds.shape[0]


def dynamic_cache_length(kwargs):
    """A DynamicCache's own length (its keys' shape), or None: another cache
    (a StaticCache keeps its length on the device) or none."""
    import transformers
    cache = kwargs.get("cache", kwargs.get("past_key_values"))
    if isinstance(cache, transformers.DynamicCache):
        return cache.get_seq_length()
    return None


def attach(truth, model):
    """Forward hooks: FORWARD, step boundaries and EMBED on the model,
    LAYER/i, LAYER_END (and HEAD after the last) on its decoder layers.
    The step boundaries and parts act only while a Generation is active on
    the calling thread (a model may be called outside generate(): a
    warm-up), or a Serving's loop runs there."""

    def model_pre(module, args, kwargs):
        st = truth._state()
        g = st.active
        if st.capturing is None:
            truth.mark("FORWARD")
        if g is not None:
            tokens, _ = forward_tokens(args, kwargs)
            g.forward_begins(tokens, dynamic_cache_length(kwargs))
            truth.mark("EMBED")
        elif truth.serving is not None and st.capturing is None:
            tokens, _ = forward_tokens(args, kwargs)
            sampled = kwargs.get("logits_indices")
            truth.serving.forward_begins(tokens, sampled.shape[0] if sampled is not None else 0)
            truth.mark("EMBED")

    def model_post(module, args, kwargs, output):
        g = truth.active()
        if g is not None:
            g.forward_ends()
        elif truth._state().iteration is not None:
            truth.mark("FORWARD_END")

    # The layer marks fire during a CUDA graph's capture too (no step
    # boundary does): the captured launches between them are the graph's
    # kernel nodes of that layer (docs/layers.md, "Graphs").
    def layer_pre(index):
        def hook(module, args):
            if truth.in_forwards() or truth.capturing() is not None:
                truth.mark("LAYER/%d" % index)
        return hook

    def layer_post(last):
        def hook(module, args, output):
            if truth.in_forwards() or truth.capturing() is not None:
                truth.mark("LAYER_END")
            if last and truth.in_forwards():
                truth.mark("HEAD")
        return hook

    layers = decoder_layers(model)
    handles = [model.register_forward_pre_hook(model_pre, with_kwargs=True),
               model.register_forward_hook(model_post, with_kwargs=True)]
    for i, layer in enumerate(layers):
        handles.append(layer.register_forward_pre_hook(layer_pre(i)))
        handles.append(layer.register_forward_hook(layer_post(i == len(layers) - 1)))
    return handles
