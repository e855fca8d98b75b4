"""PyTorch loops that time themselves, for contrib/bench/fw_cost.sh (make
bench-fw): the same program is run with and without the shim over the
simulated driver (kernels are not executed), and the difference of its own
figures is what the shim adds inside a real framework, where the
interpreter and PyTorch run for microseconds between two launches.
Usage:

    python fw_cost.py CASE [--units N] [--repeat R] [--warmup W]

CASE:
  add        a PyTorch eager loop of x.add_(1) on a 1024-float tensor: one
             launch per op, torch.cuda.synchronize() every 100 ops; the unit
             is one op (N ops timed, default 20000, after W untimed,
             --warmup, default 1000)
  loop-item  a decoder written by hand in plain PyTorch (the corpus's
             fw_loops.py loop-item): transformers' Llama modules (4 layers,
             hidden 256, fp16, tests/frameworks/fw_generate.py's config)
             over a StaticCache, each token read with .item(), fed back on
             the device; the unit is one generated token
  generate   Hugging Face generate() on the same Llama (fw_generate.py's
             llama case: greedy, batch 1, min_new_tokens = max_new_tokens,
             a streamer that takes each step's tokens); the unit is a token
  neox       generate() on a GPT-NeoX from a config (4 layers, hidden 256,
             fp16), as generate; the unit is a token

loop-item, generate and neox run fw_generate.py's six prompts (3, 1, 9, 4,
2 and 17 tokens) back to back, each for N new tokens (--units, default 24),
R times (--repeat, default 2), after one untimed pass over the prompts
(the first pass pays cuBLAS's and the shim's one-time work: names, handles).

Timed inside the program: CLOCK_MONOTONIC (wall) and the thread's CPU time
around the timed part. Prints:
  unit NAME          op or token
  units N            units timed
  ns_per_unit X      wall-clock ns per unit
  cpu_ns_per_unit Y  the thread's CPU ns per unit (what other processes on
                     a shared machine move least)
  t0_mono A, t1_mono B   CLOCK_MONOTONIC ns at the timed part's start and
                     end: the shim's records carry the same clock, so the
                     calls recorded between them are the timed part's
  t1_real C          CLOCK_REALTIME ns at the end (the script times the
                     process's exit from there: the shim's exit work)
FW_COST_PERF_CTL=FIFO: perf record's control FIFO, enabled for the timed
part alone (see perf_control below).
exit 0."""
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "frameworks"))


_perf_ctl = os.environ.get("FW_COST_PERF_CTL")


def perf_control(command):
    """FW_COST_PERF_CTL=FIFO: "enable" at the timed part's start and
    "disable" at its end, written to perf record's control FIFO (perf record
    -D -1 --control=fifo:FIFO), so that a profile holds the timed part alone."""
    if _perf_ctl:
        with open(_perf_ctl, "w") as f:
            f.write(command + "\n")


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC), time.thread_time_ns(), time.time_ns()


def start():
    t = now()
    perf_control("enable")
    return t


def stop():
    perf_control("disable")
    return now()


def report(unit, units, t0, t1):
    print("unit %s" % unit)
    print("units %d" % units)
    print("ns_per_unit %.1f" % ((t1[0] - t0[0]) / units))
    print("cpu_ns_per_unit %.1f" % ((t1[1] - t0[1]) / units))
    print("t0_mono %d" % t0[0])
    print("t1_mono %d" % t1[0])
    print("t1_real %d" % t1[2], flush=True)


def run_add(n, warmup):
    x = torch.zeros(1024, device="cuda")
    for i in range(warmup):
        x.add_(1)
        if i % 100 == 99:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    t0 = start()
    for i in range(n):
        x.add_(1)
        if i % 100 == 99:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    t1 = stop()
    report("op", n, t0, t1)


class Streamer:
    """What a streamer costs a generate() loop, and nothing more: generate()
    reads each step's tokens back (.cpu()) to hand them to put()."""

    def put(self, value):
        pass

    def end(self):
        pass


def build(case):
    import fw_generate
    import transformers
    if case != "neox":
        return fw_generate.build("llama")
    torch.manual_seed(0)
    cfg = transformers.GPTNeoXConfig(vocab_size=fw_generate.VOCAB, hidden_size=256, intermediate_size=512,
                                     num_hidden_layers=4, num_attention_heads=4, max_position_embeddings=256,
                                     bos_token_id=fw_generate.BOS, eos_token_id=fw_generate.EOS,
                                     pad_token_id=fw_generate.PAD)
    return transformers.GPTNeoXForCausalLM(cfg).to(device="cuda", dtype=torch.float16).eval()


def generate_pass(model, prompts, new_tokens):
    import fw_generate
    for p in prompts:
        ids = torch.tensor([p]).to("cuda")
        mask = torch.ones(1, len(p), dtype=torch.long).to("cuda")
        fw_generate._stop.length = len(p) + new_tokens
        model.generate(ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                       do_sample=False, pad_token_id=fw_generate.PAD, streamer=Streamer())
    return len(prompts) * new_tokens


def loop_item_pass(model, cache, prompts, new_tokens):
    """fw_loops.py's loop-item: the prompt's forward, argmax, then one
    forward per token fed back on the device; each token read with .item()
    for the loop's end-of-sequence test (answered on the host: kernels do not
    run, the value is stale), the detokeniser's torch.cat and .tolist()."""
    tokens_made = 0
    for p in prompts:
        ids = torch.tensor([p]).to("cuda")
        cache.reset()
        pos = torch.arange(len(p), device="cuda").unsqueeze(0)
        logits = model(input_ids=ids, position_ids=pos, cache=cache, use_cache=True).logits
        token = logits[:, -1].argmax(-1)
        tokens = [token]
        while True:
            token.item()  # the end-of-sequence test's read; the answer: no end before new_tokens
            if len(tokens) >= new_tokens:
                break
            past = len(p) + len(tokens) - 1
            pos = torch.full((1, 1), past, dtype=torch.long, device="cuda")
            logits = model(input_ids=token.view(1, 1), position_ids=pos, cache=cache, use_cache=True).logits
            token = logits[:, -1].argmax(-1)
            tokens.append(token)
        torch.cat(tokens).tolist()
        tokens_made += len(tokens)
    return tokens_made


def run_decode(case, new_tokens, repeat):
    import fw_generate
    import transformers
    fw_generate.host_stop()
    torch.backends.cuda.enable_cudnn_sdp(False)
    model = build(case)
    prompts = fw_generate.prompts(7, fw_generate.PROMPT_LENGTHS)
    cache = None
    if case == "loop-item":
        cache = transformers.StaticCache(config=model.config,
                                         max_cache_len=max(len(p) for p in prompts) + new_tokens + 1)
    with torch.no_grad():
        run = (lambda: loop_item_pass(model, cache, prompts, new_tokens)) if cache is not None else \
            (lambda: generate_pass(model, prompts, new_tokens))
        run()  # untimed: the first pass's one-time work
        torch.cuda.synchronize()
        t0 = start()
        made = sum(run() for _ in range(repeat))
        torch.cuda.synchronize()
        t1 = stop()
    report("token", made, t0, t1)


def main():
    args = sys.argv[1:]
    if not args or args[0] not in ("add", "loop-item", "generate", "neox"):
        print(__doc__, file=sys.stderr)
        return 2
    case = args[0]
    units = int(args[args.index("--units") + 1]) if "--units" in args else (20000 if case == "add" else 24)
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 2
    if case == "add":
        run_add(units, int(args[args.index("--warmup") + 1]) if "--warmup" in args else 1000)
    else:
        run_decode(case, units, repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
