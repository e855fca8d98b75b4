"""torch.compile on the simulated driver, for tests/t_frameworks
(docs/frameworks.md). Usage:

    python fw_compiled.py CASE [--new-tokens N]

CASE:
  compiled-mlp     a three-layer MLP block (Linear, GELU, Linear) compiled
                   with torch.compile's default mode: Inductor fuses the
                   GELU into a Triton kernel (triton_poi_fused_gelu_0) that
                   its static launcher loads from a cubin with cuModuleLoad;
                   called four times, its output read back each time
  compiled-decode  the fw_generate.py Llama over a StaticCache: each
                   prompt's prefill eager, then every decode step through
                   torch.compile(decode_step) (default mode: Triton kernels
                   and cuBLAS GEMMs, launched one by one), its token read
                   with .item(); prompts of 3, 9 and 5 tokens
  compiled-decode-ro  the same with mode="reduce-overhead": Inductor's CUDA
                   graph trees run the compiled step once eagerly (warm-up),
                   then capture it into a CUDA graph and replay that graph
                   for every later step

Inductor and Triton compile into caches under TORCHINDUCTOR_CACHE_DIR and
TRITON_CACHE_DIR (the test gives each run empty ones, so that runs with and
without the shim make the same calls: a warm cache skips compilation and
the autotuning launches that come with it).

Kernels are not executed on the simulated driver: the outputs and tokens
read back are memory contents, printed so that the test compares them with
and without the shim. The ground truth (fw_truth.py) comes from the loop
itself, which marks each generation, its prompt and each decode step: no
forward hook is attached, since a hook inside a compiled region is traced
by Dynamo (a hook that writes the log would break the graph and change the
program); the layers inside a compiled graph have no hook to mark them.
"""
import json
import os
import sys

import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_truth  # noqa: E402
from fw_generate import PROMPT_LENGTHS, build, prompts  # noqa: E402

torch.backends.cuda.enable_cudnn_sdp(False)


def run_mlp():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64))
    block = torch.compile(m.to(device="cuda", dtype=torch.float16))
    x = torch.randn(8, 64, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        for i in range(4):
            y = block(x)
            print("tokens compiled-mlp main %d %s" % (i, json.dumps(y[0, :8].float().cpu().tolist())), flush=True)
    return 0


def decode_step(model, ids, pos, cache):
    logits = model(input_ids=ids, cache_position=pos, past_key_values=cache, use_cache=True).logits
    return logits[:, -1].argmax(-1)


def run_decode(case, truth, new_tokens, seed):
    """Prefill eager, decode compiled; no hook runs (above), so the loop
    marks each forward of the model right before its first launch, its
    inputs made (fw_truth: begin() opens the PREFILL, unhooked_forward()
    tells the prompt's forward from a step by the tokens it feeds,
    forward_ends() after it)."""
    model = build("llama")
    mode = "reduce-overhead" if case == "compiled-decode-ro" else "default"
    step = torch.compile(decode_step, mode=mode)
    cache = transformers.StaticCache(config=model.config, max_cache_len=64)
    results = []
    with torch.no_grad():
        for p in prompts(seed, [PROMPT_LENGTHS[0], PROMPT_LENGTHS[2], 5]):
            g = fw_truth.Generation(truth, len(p))
            cache.reset()
            g.mark_prompt()
            ids = torch.tensor([p]).to("cuda")
            g.begin()
            pos = torch.arange(len(p), device="cuda")
            g.unhooked_forward(len(p))
            token = decode_step(model, ids, pos, cache)
            g.forward_ends()
            toks = [token.item()]
            g.token_read()
            for k in range(1, new_tokens):
                pos = torch.tensor([len(p) + k - 1], device="cuda")
                if mode == "reduce-overhead":
                    torch.compiler.cudagraph_mark_step_begin()
                g.unhooked_forward()
                # a CUDA graph's output is overwritten by its next replay: the token is cloned (as gpt-fast does)
                token = step(model, token.view(1, 1), pos, cache)
                g.forward_ends()
                token = token.clone()
                toks.append(token.item())
                g.token_read()
            g.end()
            results.append([toks])
    for gen, toks in enumerate(results):
        print("tokens %s main %d %s" % (case, gen, json.dumps(toks)), flush=True)
    return len(results)


def main():
    case = sys.argv[1] if len(sys.argv) > 1 else "compiled-mlp"
    new_tokens = int(sys.argv[sys.argv.index("--new-tokens") + 1]) if "--new-tokens" in sys.argv else 6
    if case == "compiled-mlp":
        run_mlp()
    elif case in ("compiled-decode", "compiled-decode-ro"):
        run_decode(case, fw_truth.Truth(), new_tokens, 11)
    else:
        sys.exit("unknown case %s" % case)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
