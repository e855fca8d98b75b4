#!/usr/bin/env python3
"""A small Llama-style model with random weights generating 32 tokens on the
GPU: the PyTorch workload of contrib/gpu/validate.sh (check 3).

Nothing is downloaded: the model is built from a config (transformers'
LlamaConfig / LlamaForCausalLM when transformers is installed, else a
hand-written mini Llama in plain torch: RMSNorm, rotary embeddings, grouped
query attention through scaled_dot_product_attention, SwiGLU MLP, a KV
cache). Linear layers run on cuBLAS, attention on SDPA. Seeds are fixed and
decoding is greedy, so two runs launch the same kernels.

  llama_generate.py                  run (e.g. under the shim)
  llama_generate.py --profile FILE   the same run under torch.profiler
                                     (CUPTI); writes "count<TAB>kernel name"
                                     per kernel name seen to FILE
"""
import argparse
import collections
import sys

NEW_TOKENS = 32
PROMPT_TOKENS = 16
SEED = 1234


def llama_config():
    return dict(vocab_size=8192, hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=256,
                rms_norm_eps=1e-5, rope_theta=10000.0)


def transformers_model(torch, cfg):
    """LlamaForCausalLM with random weights, or None without transformers."""
    try:
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError:
        return None
    config = LlamaConfig(**cfg, attn_implementation="sdpa", pad_token_id=0, bos_token_id=1, eos_token_id=2)
    model = LlamaForCausalLM(config)
    return model


def mini_llama(torch, cfg):
    """The same architecture in plain torch (no transformers)."""
    nn, F = torch.nn, torch.nn.functional
    hidden, heads, kv_heads = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    head_dim = hidden // heads

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            var = x.float().pow(2).mean(-1, keepdim=True)
            return (x.float() * torch.rsqrt(var + cfg["rms_norm_eps"])).to(x.dtype) * self.weight

    def rotate(x, cos, sin):
        x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(), RMSNorm()
            self.q = nn.Linear(hidden, heads * head_dim, bias=False)
            self.k = nn.Linear(hidden, kv_heads * head_dim, bias=False)
            self.v = nn.Linear(hidden, kv_heads * head_dim, bias=False)
            self.o = nn.Linear(heads * head_dim, hidden, bias=False)
            self.gate = nn.Linear(hidden, cfg["intermediate_size"], bias=False)
            self.up = nn.Linear(hidden, cfg["intermediate_size"], bias=False)
            self.down = nn.Linear(cfg["intermediate_size"], hidden, bias=False)

        def forward(self, x, cos, sin, cache):
            b, t, _ = x.shape
            h = self.norm1(x)
            q = self.q(h).view(b, t, heads, head_dim).transpose(1, 2)
            k = self.k(h).view(b, t, kv_heads, head_dim).transpose(1, 2)
            v = self.v(h).view(b, t, kv_heads, head_dim).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            if cache:
                k, v = torch.cat((cache[0], k), dim=2), torch.cat((cache[1], v), dim=2)
            new_cache = (k, v)
            rep = heads // kv_heads
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
            x = x + self.o(a.transpose(1, 2).reshape(b, t, hidden))
            h = self.norm2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h)), new_cache

    class MiniLlama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(cfg["vocab_size"], hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(cfg["num_hidden_layers"]))
            self.norm = RMSNorm()
            self.head = nn.Linear(hidden, cfg["vocab_size"], bias=False)

        def rope(self, start, t, device, dtype):
            inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
            pos = torch.arange(start, start + t, device=device).float()
            freqs = torch.outer(pos, inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(dtype), emb.sin().to(dtype)

        @torch.no_grad()
        def generate(self, ids, max_new_tokens):
            caches = [None] * len(self.blocks)
            x, start = ids, 0
            out = [ids]
            for _ in range(max_new_tokens):
                h = self.embed(x)
                cos, sin = self.rope(start, x.shape[1], x.device, h.dtype)
                for i, blk in enumerate(self.blocks):
                    h, caches[i] = blk(h, cos, sin, caches[i])
                logits = self.head(self.norm(h[:, -1:, :]))
                start += x.shape[1]
                x = logits.argmax(-1)
                out.append(x)
            return torch.cat(out, dim=1)

    return MiniLlama()


def run(torch):
    torch.manual_seed(SEED)
    torch.cuda.manual_seed_all(SEED)
    cfg = llama_config()
    model = transformers_model(torch, cfg)
    kind = "transformers LlamaForCausalLM"
    if model is None:
        model, kind = mini_llama(torch, cfg), "mini Llama (plain torch)"
    model = model.to(device="cuda", dtype=torch.float16).eval()
    prompt = torch.randint(3, cfg["vocab_size"], (1, PROMPT_TOKENS), device="cuda",
                           generator=torch.Generator(device="cuda").manual_seed(SEED))
    with torch.no_grad():
        if kind.startswith("transformers"):
            out = model.generate(prompt, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False,
                                 eos_token_id=None, pad_token_id=0)
        else:
            out = model.generate(prompt, NEW_TOKENS)
    torch.cuda.synchronize()
    new = out.shape[1] - PROMPT_TOKENS
    print(f"llama_generate: {kind}, {new} new tokens, last ids {out[0, -4:].tolist()}")
    if new != NEW_TOKENS:
        sys.exit(f"llama_generate: generated {new} tokens, not {NEW_TOKENS}")


def kernel_counts(prof):
    """Kernel launches per name from torch.profiler's CUPTI events."""
    counts = collections.Counter()
    for ev in prof.events():
        dev_type = getattr(ev, "device_type", None)
        is_cuda = dev_type is not None and "CUDA" in str(dev_type)
        # kernels are the CUDA-side events; memcpy/memset ones are named so
        if is_cuda and not ev.name.startswith(("Memcpy", "Memset")):
            counts[ev.name] += 1
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", metavar="FILE", help="run under torch.profiler and write per-name kernel counts")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        sys.exit("llama_generate: no CUDA device")
    if args.profile is None:
        run(torch)
        return
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run(torch)
    counts = kernel_counts(prof)
    with open(args.profile, "w") as f:
        for name, n in sorted(counts.items()):
            f.write(f"{n}\t{name}\n")
    print(f"llama_generate: torch.profiler saw {sum(counts.values())} kernel launches, {len(counts)} names")


if __name__ == "__main__":
    main()
