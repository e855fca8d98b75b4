"""Multi-GPU inference with PyTorch's NCCL on the simulated driver, one
process per GPU, run by torchrun (tests/t_frameworks_nccl; docs/frameworks.md,
"NCCL"):

  tp-decode  a small Llama-like decoder split over the ranks (tensor
             parallel): embedding replicated; per layer attention with its
             heads split by columns (q, k, v) and its output projection by
             rows, then an all-reduce; the MLP's gate and up projections by
             columns, its down projection by rows, then an all-reduce; the
             LM head split over the vocabulary, its logits gathered with
             all_gather_into_tensor; a prompt's prefill, then greedy decode
             steps over a KV cache, each token read back with .item().
  pipeline   two stages on two ranks: rank 0 the embedding and the first
             half of the layers, rank 1 the second half and the head; per
             forward rank 0 sends its hidden states (dist.send), rank 1
             receives them (dist.recv), reads its token and sends it back.

The truth, from the program: each collective and point-to-point call is
wrapped, and right after it returns one line goes into this rank's
simulator log (OBS_SIM_LOG, its name expanded as the simulator does: %p,
%q{VAR}, %%), one write(2) on an O_APPEND descriptor, in the simulator's
six columns (and the tid with OBS_SIM_LOG_TID=1):

  fwtruthColl<TAB>nccl<TAB>OP count=C elem=E t0=T0 t1=T1 n=K<TAB>-<TAB>BYTES<TAB>0

OP is the torch.distributed call (all_reduce, all_gather_into_tensor,
send, recv, barrier), C the elements of the tensor passed (the input's for
all_gather_into_tensor), E their size, BYTES C x E, T0 and T1
time.monotonic_ns() just before the call and just after it returned (the
trace's clock with OBS_CLOCK=monotonic), K the rank's count of calls.
Step marks, per forward: fwtruthStep<TAB>step<TAB>STEP<TAB>-<TAB>-<TAB>0,
and STEP "end" after the last forward (the barrier follows: in no layer).
Each rank prints "tokens RANK id,id,..." (the ids read back are memory
contents, not a model's choice: no kernel runs; compared with and without
the shim) and "done RANK", each line one write(2) (the ranks share stdout).

Sockets on loopback only: NCCL_SOCKET_IFNAME=lo, GLOO_SOCKET_IFNAME=lo and
the rendezvous on 127.0.0.1, set by the caller; each rank on cuda:LOCAL_RANK
of the simulated machine's OBS_SIM_GPUS GPUs.
"""
import os
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

VOCAB = 512
HIDDEN = 128
HEADS = 4
FFN = 256
LAYERS = 4
PROMPT = [3, 14, 15, 92, 6]
STEPS = 6


def log_name(pattern):
    """OBS_SIM_LOG's name as sim/sim_log_name.c expands it."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("%p", i):
            out.append(str(os.getpid()))
            i += 2
        elif pattern.startswith("%%", i):
            out.append("%")
            i += 2
        elif pattern.startswith("%q{", i) and "}" in pattern[i + 3:]:
            end = pattern.index("}", i + 3)
            out.append(os.environ.get(pattern[i + 3:end], ""))
            i = end + 1
        else:
            out.append(pattern[i])
            i += 1
    return "".join(out)


class Truth:
    def __init__(self):
        path = os.environ.get("OBS_SIM_LOG")
        self.fd = os.open(log_name(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if path else -1
        self.tid = os.environ.get("OBS_SIM_LOG_TID") == "1"
        self.calls = 0

    def line(self, api, kind, name, value_bytes):
        if self.fd < 0:
            return
        cols = [api, kind, name, "-", value_bytes, "0"]
        if self.tid:
            cols.append(str(threading.get_native_id()))
        os.write(self.fd, ("\t".join(cols) + "\n").encode())

    def coll(self, op, tensor, call, *args, **kwargs):
        """Run call(*args) (a torch.distributed call on tensor) between two marks."""
        t0 = time.monotonic_ns()
        result = call(*args, **kwargs)
        t1 = time.monotonic_ns()
        count, elem = tensor.numel(), tensor.element_size()
        self.line("fwtruthColl", "nccl", "%s count=%d elem=%d t0=%d t1=%d n=%d" % (op, count, elem, t0, t1, self.calls),
                  str(count * elem))
        self.calls += 1
        return result

    def step(self, k):
        self.line("fwtruthStep", "step", str(k), "-")


TRUTH = None


def rmsnorm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


class Layer:
    """One decoder layer's shard on this rank: heads [h0, h0 + nh), FFN
    columns [f0, f0 + nf) (tensor parallel), or the whole layer (tp=1)."""

    def __init__(self, gen, tp):
        nh, nf = HEADS // tp, FFN // tp
        d = HIDDEN // HEADS
        r = lambda *shape: torch.randn(*shape, generator=gen).cuda() * 0.02
        self.nh, self.d = nh, d
        self.norm1 = torch.ones(HIDDEN, device="cuda")
        self.norm2 = torch.ones(HIDDEN, device="cuda")
        self.wqkv = r(HIDDEN, 3 * nh * d)  # columns
        self.wo = r(nh * d, HIDDEN)        # rows
        self.wg = r(HIDDEN, nf)            # columns
        self.wu = r(HIDDEN, nf)
        self.wd = r(nf, HIDDEN)            # rows
        self.k = None
        self.v = None

    def attention(self, x):
        t = x.shape[0]
        qkv = rmsnorm(x, self.norm1) @ self.wqkv
        q, k, v = qkv.view(t, 3, self.nh, self.d).unbind(1)
        k, v = k.transpose(0, 1), v.transpose(0, 1)
        self.k = k if self.k is None else torch.cat([self.k, k], dim=1)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=1)
        a = F.scaled_dot_product_attention(q.transpose(0, 1), self.k, self.v, is_causal=self.k.shape[1] == t)
        return a.transpose(0, 1).reshape(t, self.nh * self.d) @ self.wo

    def mlp(self, x):
        h = rmsnorm(x, self.norm2)
        return (F.silu(h @ self.wg) * (h @ self.wu)) @ self.wd

    def forward(self, x, tp_group):
        o = self.attention(x)
        if tp_group:
            TRUTH.coll("all_reduce", o, dist.all_reduce, o)
        x = x + o
        m = self.mlp(x)
        if tp_group:
            TRUTH.coll("all_reduce", m, dist.all_reduce, m)
        return x + m


def tp_decode(rank, world):
    gen = torch.Generator().manual_seed(37)  # the same weights' shapes on every rank; values do not matter
    embed = torch.randn(VOCAB, HIDDEN, generator=gen).cuda() * 0.02
    layers = [Layer(gen, world) for _ in range(LAYERS)]
    final = torch.ones(HIDDEN, device="cuda")
    lm = torch.randn(HIDDEN, VOCAB // world, generator=gen).cuda() * 0.02  # this rank's vocabulary columns
    ids = torch.tensor(PROMPT, device="cuda")
    tokens = []
    for step in range(STEPS + 1):
        TRUTH.step(step)
        x = F.embedding(ids, embed)
        for layer in layers:
            x = layer.forward(x, world > 1)
        shard = rmsnorm(x[-1:], final) @ lm
        logits = torch.empty(world, VOCAB // world, device="cuda")
        TRUTH.coll("all_gather_into_tensor", shard, dist.all_gather_into_tensor, logits, shard)
        ids = (logits.reshape(-1).argmax() % VOCAB).view(1)  # the next input stays on the device
        tokens.append(int(ids.item()))  # the token read (memory contents here)
    return tokens


def pipeline(rank, world):
    assert world == 2, "a two-stage pipeline"
    gen = torch.Generator().manual_seed(37)
    embed = torch.randn(VOCAB, HIDDEN, generator=gen).cuda() * 0.02
    layers = [Layer(gen, 1) for _ in range(LAYERS)]
    final = torch.ones(HIDDEN, device="cuda")
    lm = torch.randn(HIDDEN, VOCAB, generator=gen).cuda() * 0.02
    mine = layers[: LAYERS // 2] if rank == 0 else layers[LAYERS // 2:]
    ids = torch.tensor(PROMPT, device="cuda")
    tokens = []
    for step in range(STEPS + 1):
        TRUTH.step(step)
        t = ids.shape[0]
        if rank == 0:
            x = F.embedding(ids, embed)
            for layer in mine:
                x = layer.forward(x, False)
            TRUTH.coll("send", x, dist.send, x, 1)
            got = torch.empty(1, dtype=torch.int64, device="cuda")
            TRUTH.coll("recv", got, dist.recv, got, 1)
        else:
            x = torch.empty(t, HIDDEN, device="cuda")
            TRUTH.coll("recv", x, dist.recv, x, 0)
            for layer in mine:
                x = layer.forward(x, False)
            logits = rmsnorm(x[-1:], final) @ lm
            got = logits.argmax(-1)
            TRUTH.coll("send", got, dist.send, got, 0)
        ids = (got.view(1) % VOCAB)  # the next input stays on the device
        tokens.append(int(ids.item()))  # the token read
    return tokens


def say(line):
    """One write(2) of a whole line: the ranks share torchrun's stdout."""
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def main():
    global TRUTH
    case = sys.argv[1]
    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    torch.backends.cuda.enable_cudnn_sdp(False)  # as fw_generate.py: cuDNN plans cost seconds a shape here
    TRUTH = Truth()
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
    with torch.no_grad():
        tokens = tp_decode(rank, world) if case == "tp-decode" else pipeline(rank, world)
        torch.cuda.synchronize()
        TRUTH.step("end")
        TRUTH.coll("barrier", torch.empty(1, device="cuda"), dist.barrier)
    say("tokens %d %s" % (rank, ",".join(str(t) for t in tokens)))
    dist.destroy_process_group()
    say("done %d" % rank)


if __name__ == "__main__":
    main()
