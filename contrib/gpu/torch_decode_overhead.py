"""A small PyTorch decode loop for contrib/gpu/overhead.sh: a Llama-like
stack of matmuls, RMS norms and SiLU per token, many small kernel launches
per step (the case where a tracer's per-launch cost shows). Prints
tokens_per_s=X (best of --repeat timed runs after a warm-up).

--profiler: the timed runs happen under torch.profiler (CPU + CUDA activities),
the tracer a user would otherwise pick; the shim is measured by running this
script under LD_PRELOAD instead."""
import argparse
import contextlib
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profiler", action="store_true")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("torch_decode_overhead: no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    torch.manual_seed(0)
    h = args.hidden
    weights = [(torch.randn(h, 3 * h, device=dev, dtype=torch.float16) / h ** 0.5,
                torch.randn(h, h, device=dev, dtype=torch.float16) / h ** 0.5)
               for _ in range(args.layers)]
    x0 = torch.randn(1, h, device=dev, dtype=torch.float16)

    def decode():
        x = x0
        for _ in range(args.tokens):
            for w_in, w_out in weights:
                y = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).half()
                a, b, c = (y @ w_in).chunk(3, dim=-1)
                x = x + (torch.nn.functional.silu(a) * b + c) @ w_out
            x = x / (x.float().norm() + 1e-3).half()
        torch.cuda.synchronize()

    decode()  # warm-up: cuBLAS handles, kernels loaded
    ctx = contextlib.nullcontext()
    if args.profiler:
        from torch.profiler import ProfilerActivity, profile
        ctx = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    best = float("inf")
    with ctx:
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            decode()
            best = min(best, time.perf_counter() - t0)
    print(f"tokens_per_s={args.tokens / best:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
