"""Decoders written by hand in plain PyTorch, for tests/t_frameworks
(docs/frameworks.md). Usage:

    python fw_loops.py CASE [--new-tokens N]

CASE:
  loop-item    each token read with .item() for the loop's end-of-sequence
               test, every step
  loop-device  the tokens kept on the device: no host sync between steps,
               the generation's tokens read once, after it
  loop-graph   loop-item with its decode step replayed from one CUDA graph,
               captured once BEFORE the first prompt (three warm-up
               forwards on a side stream, then the capture); each prompt's
               forward eager

The model's modules are transformers' (fw_generate.build("llama"):
LlamaForCausalLM from a config, 4 layers, hidden 256, fp16) over a
transformers StaticCache of 64 positions, reset before each prompt; the
loop is the script's own, plain PyTorch, the shape of a hand-written
decoder: the prompt's ids copied to the device, the cache reset, the
prompt's forward, argmax of the last position's logits (the first token,
from the prompt's logits), the token appended to the generation's list
and fed back, on the device, to the next forward (one token, its position
a one-element tensor made on the device), until N tokens
(--new-tokens, default 6). After each generation the detokeniser's work:
torch.cat of the generation's tokens and .tolist() (its one read in
loop-device). Prompts of 3, 1, 9, 4, 2 and 17 tokens back to back, batch 1.

Device values. Kernels do not run on the simulated driver, so device
memory holds stale values. loop-item and loop-graph read each token with
.item() and test it against the end-of-sequence id, as such loops do; the
read runs as written (its copy and sync), and host_eos() gives the test's
answer: no end of sequence before N tokens (what a GPU answers with
min_new_tokens = N), as fw_generate.py's host_stop() does for generate().
loop-device decides nothing from the device (it stops after N tokens).
The ids printed are the stale values read back (the test compares them
with and without the shim).

A torch.compile'd decode step (issue 34's corpus names it) is
fw_compiled.py's compiled-decode and compiled-decode-ro: the same kind of
loop over the same model and a StaticCache, its step compiled.

Prints one line per generation, "tokens CASE main GEN [[ids]]", and "done
CASE generations G"; exit 0. Ground truth: fw_truth.py (Generation around
each loop's function; the model's forward hooks tell its prompt's forward
from its steps)."""
import json
import sys

import torch
import transformers

import fw_generate
import fw_truth

MAX_LEN = 64
EOS = fw_generate.EOS


def host_eos(value, generated, new_tokens):
    """The loop's end-of-sequence test on a token read back (`value == EOS`),
    answered on the host: the stale value is no model's choice."""
    del value
    return generated >= new_tokens


def position(n):
    """Position n as a [1, 1] tensor made on the device (a fill kernel, no copy)."""
    return torch.full((1, 1), n, dtype=torch.long, device="cuda")


def step_logits(model, cache, token, pos):
    return model(input_ids=token.view(1, 1), position_ids=pos, cache=cache, use_cache=True).logits


def run_loop(case, truth, model, new_tokens, seed):
    """loop-item, loop-device, loop-graph: one generation per prompt."""
    cache = transformers.StaticCache(config=model.config, max_cache_len=MAX_LEN)
    graph = static_ids = static_pos = static_logits = None
    lines = []
    with torch.no_grad():
        if case == "loop-graph":
            static_ids = torch.zeros(1, 1, dtype=torch.long, device="cuda")
            static_pos = torch.zeros(1, 1, dtype=torch.long, device="cuda")
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # PyTorch's recipe: warm up on a side stream, then capture
                for _ in range(3):
                    step_logits(model, cache, static_ids, static_pos)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            truth.push("GRAPH_CAPTURE")
            with truth.capture(), torch.cuda.graph(graph):
                static_logits = step_logits(model, cache, static_ids, static_pos)
            truth.pop()
        for gen, p in enumerate(fw_generate.prompts(seed, fw_generate.PROMPT_LENGTHS)):
            g = fw_truth.Generation(truth, len(p))
            g.mark_prompt()
            ids = torch.tensor([p]).to("cuda")
            g.begin()
            cache.reset()
            pos = torch.arange(len(p), device="cuda").unsqueeze(0)
            logits = model(input_ids=ids, position_ids=pos, cache=cache, use_cache=True).logits
            token = logits[:, -1].argmax(-1)
            tokens = [token]
            while True:
                if case == "loop-device":
                    if len(tokens) >= new_tokens:
                        break
                else:
                    value = token.item()
                    g.token_read()
                    if host_eos(value, len(tokens), new_tokens):
                        break
                past = len(p) + len(tokens) - 1
                if graph is not None:
                    static_ids.copy_(token.view(1, 1))
                    static_pos.fill_(past)
                    g.replayed()  # a replay runs no hook: the step begins at its launch, its inputs' copy before
                    graph.replay()
                    logits = static_logits
                else:
                    logits = step_logits(model, cache, token, position(past))
                token = logits[:, -1].argmax(-1)
                tokens.append(token)
            g.end()
            lines.append("tokens %s main %d %s" % (case, gen, json.dumps([torch.cat(tokens).tolist()])))
    return lines


def main():
    setup = fw_generate.llama_case(("loop-item", "loop-device", "loop-graph"), 6)
    if setup is None:
        return 2
    case, new_tokens, truth, model = setup
    lines = run_loop(case, truth, model, new_tokens, 7)
    for line in lines:
        print(line, flush=True)
    torch.cuda.synchronize()
    print("done %s generations %d" % (case, len(lines)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
