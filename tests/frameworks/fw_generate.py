"""Real models from configs generating on the CUDA device, for
tests/t_frameworks (docs/frameworks.md). Usage:

    python fw_generate.py CASE [--new-tokens N]

CASE:
  llama        Llama from a small config (4 layers, hidden 256, vocab 2000)
  llama-deep   Llama at a real model's depth (24 layers, hidden 128)
  gpt2         GPT-2 from a config (addmm, GELU, learned positions)
  llama-chunked  the llama model, its prompts prefilled in chunks of 4
               tokens (generate(prefill_chunk_size=4): one forward per
               chunk, no token read between them): prompts of 17, 3 and 9
               tokens, then a batch of 4 left-padded to 11
  llama-graph  prefill eager, then one decode step captured once with
               torch.cuda.CUDAGraph over a static KV cache and replayed
               per token
  llama-graph-cudnn  the same with PyTorch's cuDNN SDPA backend (the only
               one allowed): cuDNN's attention graphs run in the prefills
               and are captured into the decode step's CUDA graph
  threads      two Llama models generating at once on two threads (each
               with its own stream)
  procs        this script run twice at once as two processes (CASE llama
               in each, OBS_SIM_LOG and OBS_OUTPUT suffixed .0 and .1)
  qwen2-moe    Qwen2-MoE from a config: a mixture of experts on every layer
               (8 experts, 2 a token, and a shared expert), 4 layers, hidden
               256, bfloat16, transformers' default experts (grouped_mm)
  moe-alt      Qwen3-MoE, 6 layers, decoder_sparse_step=2: dense and MoE
               layers alternate, no shared expert (bfloat16, grouped_mm)
  moe-first    Qwen3-MoE, 4 layers, mlp_only_layers=[0]: a dense first
               layer, then MoE layers (bfloat16, grouped_mm)
  moe-eager    Qwen3-MoE, 4 layers, its experts by transformers' eager loop,
               routed on the host: the expert kernels vary in number token
               to token (see "Experts" below)
  moe-alt-eager  moe-alt's 6 alternating dense and MoE layers with moe-eager's
               experts: a MoE layer 1.5 to 2.9 times as long as a dense one
  gemma2       Gemma 2, 4 layers, eager attention, float16: sliding-window
               and global attention layers alternate (its layer_types; the
               sliding layers' cache keeps the last 8 positions)
  hf-plain     the llama model, generate() with no streamer (the usual call:
               no token is read back before it returns), greedy, prompts of
               3, 1, 9, 4, 2 and 17 tokens back to back, batch 1
  hf-batch     the same, batches of 3: left-padded with an attention mask
               (5, 2, 11 and 4, 9, 1 tokens) and of equal lengths (6, 6, 6)
  hf-sampled   do_sample=True (torch.manual_seed before each call) with a
               streamer, and return_dict_in_generate=True with output_scores
               or output_logits, with and without a streamer (HF_CALLS)

The generate() cases run several prompts of different lengths back to
back (1 to 4 tokens among them), batch 1, then batch 4 with left padding:
generate(max_new_tokens=N, min_new_tokens=N, do_sample=False), with a
streamer (the truth's token reads: fw_truth.py); the hf-* cases vary
generate()'s options instead (HF_CALLS below). Hand-written loops:
fw_loops.py; transformers' serving loop: fw_serving.py.

Kernels are not executed on the simulated driver, so device values are
whatever memory held: nothing here looks at them, but the token ids read
back are printed (the test compares them with and without the shim). One
consequence needs a hand: generate() decides whether to stop from device
values (unfinished_sequences.max() == 0, read back each step). Its check
still runs as written (the same launches, copy and sync as on a GPU);
host_stop() only replaces the decision with the one a GPU would reach with
min_new_tokens = max_new_tokens = N: stop after N tokens. Sampling
(hf-sampled) draws from whatever the logits' memory holds, its kernels
(softmax, top-k, multinomial) run as written; nothing reads their result
but the caller.

Experts. transformers 5.24 runs a mixture of experts' experts by
"grouped_mm" by default (integrations/moe.py: a sort, histc and cumsum
of the routed ids, then torch's grouped GEMM for all experts at once):
the same kernels whatever the routing, nothing read back, in bfloat16
(qwen2-moe, moe-alt, moe-first; in float16 PyTorch 2.15's grouped GEMM
reads the groups' offsets back first, a 32-byte copy and a sync twice in
each MoE layer, and runs no GEMM for the stale offsets). Its "eager" implementation loops over the
experts hit: expert_hit = ...nonzero() reads the count of experts hit
back from the device (a 4-byte copy and a sync), each expert's
torch.where(expert_mask[e]) reads its token count back the same way, and
each expert runs its own gather, GEMMs, activation and index_add_: the
kernels of a layer vary in number with the routing, token to token. On
the simulated driver those counts are computed by kernels that do not
run, so the reads return stale memory (0 here: no expert would run; a
copy of router values to the device would not change that, the counts
are kernels' output). moe-eager therefore runs that eager loop as
written (host_routed_experts below: every launch, copy and sync of
transformers' code happens) and replaces only the answers of its reads,
as host_stop() does for the stop check: a host router draws each token's
2 experts of 8 from a seeded random.Random, in call order (so the same
with and without the shim), and the loop takes its expert count and
token counts from that routing instead of the stale memory. The tensors
those counts size are allocated as nonzero() allocates its output (their
contents, like every kernel's output here, are not computed). A layer
then runs 94 to 174 launches (2 to 8 experts of 13 launches each): 94 in
a batch-1 decode step (a token's 2 experts), 121 to 160 in the batch of
4's steps, 122 to 174 in the prompts. The count reads inside each MoE
layer look like token reads; the phase engine tells them by the launches
that follow (docs/phases.md, "Reads inside a forward").

Attention runs through PyTorch's SDPA with its cuDNN backend turned off:
on the simulated driver cuDNN's SDPA took 2 to 15 s of host time per
generation (a new shape at each decode step) against 0.2 to 0.8 s for the
memory-efficient kernels (tests/frameworks/torch_basics.py still runs the
cuDNN backend once).

Prints one line per generation, "tokens CASE THREAD GEN [[ids], ...]",
and "done CASE generations G"; exit 0. Ground truth: fw_truth.py."""
import json
import os
import random
import subprocess
import sys
import threading

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import transformers
from transformers.generation import utils as generation_utils
from transformers.integrations import moe as hf_moe

import fw_truth

PROMPT_LENGTHS = (3, 1, 9, 4, 2, 17)   # batch 1, back to back
BATCH_LENGTHS = (5, 2, 11, 7)          # one batch of 4, left-padded
CHUNK = 4                              # llama-chunked: prefill_chunk_size
CHUNKED_LENGTHS = (17, 3, 9)           # 5 chunks (the last of 1 token), 1, 3
VOCAB = 2000
# The generate() calls of the cases on generate()'s own options (the llama
# model): (the prompts' lengths, a batch when several, left-padded to the
# longest; generate()'s options)
HF_CALLS = {
    "hf-plain": [((n,), {"streamer": False}) for n in PROMPT_LENGTHS],
    "hf-batch": [((5, 2, 11), {"streamer": False}), ((6, 6, 6), {"streamer": False}),
                 ((4, 9, 1), {"streamer": False})],
    "hf-sampled": [((3,), {"sample": True}), ((9,), {"sample": True}), ((1,), {"sample": True}),
                   ((4,), {"outputs": "scores"}), ((7,), {"sample": True, "outputs": "logits"}),
                   ((5,), {"streamer": False, "outputs": "scores"}),
                   ((2,), {"streamer": False, "sample": True, "outputs": "logits"})],
}
PAD, BOS, EOS = 0, 1, 2

_stop = threading.local()


def host_stop():
    """generate() stops after the tokens it was asked for (see above)."""
    check = generation_utils.StopCheck.__call__

    def decided_on_host(self, unfinished_sequences, tokens, length):
        check(self, unfinished_sequences, tokens, length)
        return length >= _stop.length

    generation_utils.StopCheck.__call__ = decided_on_host


def prompts(seed, lengths):
    rng = random.Random(seed)
    return [[rng.randrange(3, VOCAB) for _ in range(n)] for n in lengths]


# ---- mixtures of experts, routed on the host (see "Experts" above) ---------------------------------

_router = random.Random(27)


def host_routing(tokens, experts, top_k):
    """Each token's top_k distinct experts, drawn on the host."""
    return [_router.sample(range(experts), top_k) for _ in range(tokens)]


def host_routed_experts(self, hidden_states, top_k_index, top_k_weights):
    """transformers 5.24's eager experts loop (Qwen2MoeExperts.forward,
    Qwen3MoeExperts.forward: the same code), line for line, with the
    answers of its device reads taken from host_routing()."""
    routing = host_routing(hidden_states.shape[0], self.num_experts, top_k_index.shape[-1])
    hit = sorted({e for token in routing for e in token})
    final_hidden_states = torch.zeros_like(hidden_states)
    with torch.no_grad():
        expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=self.num_experts + 1)
        expert_mask = expert_mask.permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()  # its count read back, stale
        expert_hit = expert_hit.new_empty((len(hit), 1))  # sized by the count a GPU reads for this routing

    for expert_idx, expert in zip(expert_hit, hit):
        expert_idx = expert_idx[0]
        bool(expert_idx == self.num_experts)  # "if expert_idx == self.num_experts": read back as written; the
        # answer a GPU reads is False (a routed id is never the sentinel), so the loop goes on
        pairs = sum(token.count(expert) for token in routing)
        where = torch.nonzero(expert_mask[expert_idx])  # torch.where's nonzero: its count read back, stale
        top_k_pos, token_idx = where.new_empty((pairs, 2)).unbind(1)  # sized by the host routing's count
        current_state = hidden_states[token_idx]
        gate, up = torch.nn.functional.linear(current_state, self.gate_up_proj[expert_idx]).chunk(2, dim=-1)
        current_hidden_states = self.act_fn(gate) * up
        current_hidden_states = torch.nn.functional.linear(current_hidden_states, self.down_proj[expert_idx])
        current_hidden_states = current_hidden_states * top_k_weights[token_idx, top_k_pos, None]
        final_hidden_states.index_add_(0, token_idx, current_hidden_states.to(final_hidden_states.dtype))

    return final_hidden_states


hf_moe.ExpertsInterface.register("host_routed_eager", host_routed_experts)

MOE = dict(vocab_size=VOCAB, hidden_size=256, intermediate_size=512, moe_intermediate_size=128, num_attention_heads=4,
           num_key_value_heads=2, num_experts=8, num_experts_per_tok=2, max_position_embeddings=256,
           bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)


def build(case):
    torch.manual_seed(0)
    if case == "qwen2-moe":
        cfg = transformers.Qwen2MoeConfig(num_hidden_layers=4, shared_expert_intermediate_size=256, **MOE)
        model = transformers.Qwen2MoeForCausalLM(cfg)
    elif case in ("moe-alt", "moe-first", "moe-eager", "moe-alt-eager"):
        alt = case in ("moe-alt", "moe-alt-eager")
        cfg = transformers.Qwen3MoeConfig(num_hidden_layers=6 if alt else 4, decoder_sparse_step=2 if alt else 1,
                                          mlp_only_layers=[0] if case == "moe-first" else [], **MOE)
        model = transformers.Qwen3MoeForCausalLM(cfg)
        if case in ("moe-eager", "moe-alt-eager"):
            model.set_experts_implementation("host_routed_eager")
    elif case == "gemma2":
        cfg = transformers.Gemma2Config(vocab_size=VOCAB, hidden_size=256, intermediate_size=512, num_hidden_layers=4,
                                        num_attention_heads=4, num_key_value_heads=2, head_dim=64, sliding_window=8,
                                        max_position_embeddings=256, bos_token_id=BOS, eos_token_id=EOS,
                                        pad_token_id=PAD)
        model = transformers.Gemma2ForCausalLM(cfg)
        model.set_attn_implementation("eager")
    elif case == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=256, n_embd=256, n_layer=4, n_head=4,
                                      bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)
        model = transformers.GPT2LMHeadModel(cfg)
    else:  # llama, llama-deep, llama-chunked
        deep = case == "llama-deep"
        cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=128 if deep else 256,
                                       intermediate_size=256 if deep else 512,
                                       num_hidden_layers=24 if deep else 4, num_attention_heads=4,
                                       num_key_value_heads=2, max_position_embeddings=256,
                                       bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)
        model = transformers.LlamaForCausalLM(cfg)
    return model.to(device="cuda", dtype=torch.bfloat16 if case.startswith(("qwen", "moe")) else torch.float16).eval()


def llama_case(known, default_new_tokens):
    """The command line of fw_loops.py and fw_serving.py (CASE [--new-tokens
    N]) and what they set up: the llama model with the truth's hooks,
    cuDNN's SDPA off (as main() below). Returns (case, new_tokens, truth,
    model), or None for a case not in known (said on stderr)."""
    args = sys.argv[1:]
    case = args[0] if args else known[0]
    new_tokens = int(args[args.index("--new-tokens") + 1]) if "--new-tokens" in args else default_new_tokens
    if case not in known:
        print("unknown case %s" % case, file=sys.stderr)
        return None
    torch.backends.cuda.enable_cudnn_sdp(False)
    truth = fw_truth.Truth()
    model = build("llama")
    fw_truth.attach(truth, model)
    return case, new_tokens, truth, model


def generate(truth, model, ids, mask, new_tokens, chunk=None, streamer=True, sample=False, outputs=None):
    """One generate() call with its ground truth; the ids read back.
    chunk: prefill_chunk_size (None: the prompt in one forward); streamer:
    pass one (its put() is where the truth sees each token read); sample:
    do_sample=True; outputs: None, or "scores" / "logits" for
    return_dict_in_generate=True with output_scores / output_logits."""
    g = fw_truth.Generation(truth, ids.shape[1])
    g.mark_prompt()
    ids = ids.to("cuda")
    mask = mask.to("cuda")
    _stop.length = ids.shape[1] + new_tokens
    extra = {}
    if outputs is not None:
        extra = {"return_dict_in_generate": True, "output_%s" % outputs: True}
    g.begin()
    out = model.generate(ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                         do_sample=sample, pad_token_id=PAD, streamer=g.streamer() if streamer else None,
                         prefill_chunk_size=chunk, **extra)
    g.end()
    if outputs is not None:
        return out.sequences[:, ids.shape[1]:].cpu().tolist()
    return out[:, ids.shape[1]:].cpu().tolist()


def left_padded(batch):
    width = max(len(p) for p in batch)
    ids = torch.tensor([[PAD] * (width - len(p)) + p for p in batch])
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in batch])
    return ids, mask


def run_generate(case, truth, model, new_tokens, seed, label, stream=None):
    """The generations of one model; returns the lines to print (the
    caller prints them: threads must not interleave their lines)."""
    results = []
    chunk = CHUNK if case == "llama-chunked" else None
    with torch.no_grad(), torch.cuda.stream(stream if stream is not None else torch.cuda.current_stream()):
        if case in HF_CALLS:
            for lengths, options in HF_CALLS[case]:
                ids, mask = left_padded(prompts(seed, lengths))
                seed += 1
                if options.get("sample"):
                    torch.manual_seed(seed)
                results.append(generate(truth, model, ids, mask, new_tokens, **options))
        else:
            for p in prompts(seed, CHUNKED_LENGTHS if chunk else PROMPT_LENGTHS):
                results.append(generate(truth, model, torch.tensor([p]), torch.ones(1, len(p), dtype=torch.long),
                                        new_tokens, chunk))
            ids, mask = left_padded(prompts(seed + 1, BATCH_LENGTHS))
            results.append(generate(truth, model, ids, mask, new_tokens, chunk))
    return ["tokens %s %s %d %s" % (case, label, gen, json.dumps(toks)) for gen, toks in enumerate(results)]


# ---- (c) decode by CUDA graph over a static KV cache ----------------------------------------------

def run_graph(truth, model, new_tokens, seed, case):
    """Prefill eager; one decode step captured once (after the first
    prefill's token read, in a GRAPH_CAPTURE range inside that PREFILL)
    and replayed per token. The hooks see the prefill's forward; a replay
    runs none, so this loop marks each decode step's start: right before
    graph.replay(), its inputs copied into the graph's static tensors
    (the work before a forward is the previous forward's, as with the
    hooks)."""
    max_len = 64
    cache = transformers.StaticCache(config=model.config, max_cache_len=max_len)
    static_ids = torch.zeros(1, 1, dtype=torch.long, device="cuda")
    static_pos = torch.zeros(1, dtype=torch.long, device="cuda")
    graph, static_logits = None, None
    stream = torch.cuda.Stream()
    results = []
    with torch.no_grad(), torch.cuda.stream(stream):
        for p in prompts(seed, PROMPT_LENGTHS[:4]):
            g = fw_truth.Generation(truth)
            cache.reset()
            g.mark_prompt()
            ids = torch.tensor([p]).to("cuda")
            g.begin()
            pos = torch.arange(len(p), device="cuda")
            logits = model(input_ids=ids, cache_position=pos, past_key_values=cache, use_cache=True).logits
            token = logits[:, -1].argmax(-1)
            toks = [token.item()]
            g.token_read()
            for k in range(1, new_tokens):
                if graph is None:
                    truth.push("GRAPH_CAPTURE")
                    graph = torch.cuda.CUDAGraph()
                    with g.suspended(), torch.cuda.graph(graph, stream=stream):
                        static_logits = model(input_ids=static_ids, cache_position=static_pos,
                                              past_key_values=cache, use_cache=True).logits
                    truth.pop()
                static_ids.copy_(token.view(1, 1))
                static_pos.fill_(len(p) + k - 1)
                g.replayed()  # a replay runs no hook: the step begins here
                graph.replay()
                token = static_logits[:, -1].argmax(-1)
                toks.append(token.item())
                g.token_read()
            g.end()
            results.append([toks])
    for gen, toks in enumerate(results):
        print("tokens %s main %d %s" % (case, gen, json.dumps(toks)), flush=True)
    return len(results)


# ---- (d) two at once ---------------------------------------------------------------------------------

def run_threads(truth, new_tokens):
    models = [build("llama"), build("llama")]
    for m in models:
        fw_truth.attach(truth, m)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    lines, errors = [[], []], []

    def work(i):
        try:
            lines[i] = run_generate("threads", truth, models[i], new_tokens, 100 + i, "t%d" % i, streams[i])
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    for line in lines[0] + lines[1]:
        print(line, flush=True)
    return len(lines[0]) + len(lines[1])


def run_procs(new_tokens):
    """Two children at once, each its own log and trace (suffix .0, .1)."""
    children = []
    for i in range(2):
        env = dict(os.environ)
        for var in ("OBS_SIM_LOG", "OBS_OUTPUT"):
            if env.get(var):
                env[var] = "%s.%d" % (env[var], i)
        children.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "llama", "--new-tokens",
                                          str(new_tokens), "--label", "p%d" % i], env=env))
    status = [c.wait() for c in children]
    return sum(1 for s in status if s != 0)


def main():
    args = sys.argv[1:]
    case = args[0] if args else "llama"
    new_tokens = int(args[args.index("--new-tokens") + 1]) if "--new-tokens" in args else 6
    label = args[args.index("--label") + 1] if "--label" in args else "main"
    if case == "procs":
        failed = run_procs(new_tokens)
        print("done procs children_failed %d" % failed, flush=True)
        return 1 if failed else 0
    host_stop()
    torch.backends.cuda.enable_cudnn_sdp(False)
    truth = fw_truth.Truth()
    if case == "threads":
        gens = run_threads(truth, new_tokens)
    elif case in ("llama-graph", "llama-graph-cudnn"):
        model = build("llama")
        fw_truth.attach(truth, model)
        if case == "llama-graph-cudnn":
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                gens = run_graph(truth, model, new_tokens, 7, case)
        else:
            gens = run_graph(truth, model, new_tokens, 7, case)
    elif case in ("llama", "llama-deep", "gpt2", "llama-chunked", "qwen2-moe", "moe-alt", "moe-first", "moe-eager",
                  "moe-alt-eager", "gemma2") or case in HF_CALLS:
        model = build(case if case not in HF_CALLS else "llama")
        fw_truth.attach(truth, model)
        lines = run_generate(case, truth, model, new_tokens, 7, label)
        for line in lines:
            print(line, flush=True)
        gens = len(lines)
    else:
        print("unknown case %s" % case, file=sys.stderr)
        return 2
    torch.cuda.synchronize()
    print("done %s generations %d" % (case, gens), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
