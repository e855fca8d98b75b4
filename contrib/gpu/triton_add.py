#!/usr/bin/env python3
"""A Triton vector add, launched N times (default 10): the Triton workload
of contrib/gpu/validate.sh (check 4). Triton compiles the kernel at its
first launch and launches it through the CUDA driver (cuLaunchKernelEx or
cuLaunchKernel), which the shim's driver-level hooks must see, every time,
under the kernel's own name ("add_kernel")."""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=10)
    ap.add_argument("--size", type=int, default=1 << 20)
    args = ap.parse_args()
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(axis=0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    if not torch.cuda.is_available():
        sys.exit("triton_add: no CUDA device")
    torch.manual_seed(0)
    x = torch.rand(args.size, device="cuda")
    y = torch.rand(args.size, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(args.size, 1024),)
    for _ in range(args.launches):
        add_kernel[grid](x, y, out, args.size, BLOCK=1024)
    torch.cuda.synchronize()
    err = (out - (x + y)).abs().max().item()
    print(f"triton_add: {args.launches} launches of add_kernel, max error {err}")
    if err != 0.0:
        sys.exit("triton_add: wrong result")


if __name__ == "__main__":
    main()
