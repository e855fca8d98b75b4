"""Real PyTorch on the simulated driver: every feature issue 21 names, and
the others docs/frameworks.md's "What runs on the simulated driver" lists
(NVRTC through jiterator, graphed callables, cuDNN's convolution and SDPA
inside a capture, PyTorch's flash attention, a Triton kernel through
Triton's own launcher), one after another. Kernels are not executed on the simulator, so nothing here
looks at a computed value: each step must only run without an error.
Prints one line per step ("ok <name>" or "FAIL <name>: <error>") and exits
with the number of failed steps (0: all ran)."""
import os
import sys
import traceback

import torch


def step(name, fn, results):
    try:
        fn()
        torch.cuda.synchronize()
        results.append((name, None))
        print("ok", name, flush=True)
    except Exception as e:  # report every failure, then go on
        results.append((name, e))
        print("FAIL %s: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__), flush=True)
        if os.environ.get("OBS_FW_TRACEBACK"):
            traceback.print_exc()


def main():
    results = []
    if not torch.cuda.is_available():
        print("FAIL is_available: torch.cuda.is_available() is False")
        return 1
    print("ok is_available", flush=True)
    dev = torch.device("cuda")

    def properties():
        p = torch.cuda.get_device_properties(0)
        assert p.total_memory > 0 and p.multi_processor_count > 0
        torch.cuda.get_device_name(0)
        torch.cuda.get_device_capability(0)
        torch.cuda.mem_get_info()

    def copies():
        h = torch.arange(4096, dtype=torch.float32)
        d = h.to(dev)                                  # pageable, synchronous
        back = d.cpu()
        assert back.shape == h.shape
        pinned = torch.empty(4096, dtype=torch.float32).pin_memory()
        d2 = pinned.to(dev, non_blocking=True)         # pinned, asynchronous
        out = torch.empty(4096, dtype=torch.float32).pin_memory()
        out.copy_(d2, non_blocking=True)
        d3 = torch.empty_like(d)
        d3.copy_(d)                                    # device to device
        d3.zero_()                                     # memset

    def elementwise():
        a = torch.randn(1024, device=dev)
        b = torch.randn(1024, device=dev)
        c = a * b + a.sin() - b.exp()
        torch.nn.functional.gelu(c)
        torch.nn.functional.silu(c)

    def matmul():
        a = torch.randn(128, 256, device=dev)
        b = torch.randn(256, 64, device=dev)
        a @ b
        lin = torch.nn.Linear(256, 512).to(dev)
        lin(a)
        torch.bmm(torch.randn(4, 32, 64, device=dev), torch.randn(4, 64, 16, device=dev))
        lin16 = torch.nn.Linear(256, 128).to(dev).half()
        lin16(a.half())
        torch.addmm(torch.randn(64, device=dev), a, b)

    def reductions():
        x = torch.randn(8, 2000, device=dev)
        torch.softmax(x, dim=-1)
        torch.argmax(x, dim=-1)
        torch.cat([x, x], dim=0)
        x.sum(), x.mean(dim=1), x.max()

    def attention():
        q, k, v = (torch.randn(1, 4, 16, 64, device=dev, dtype=torch.float16) for _ in range(3))
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)   # cuDNN's backend on sm_90

    def allocator():
        blocks = [torch.empty(1 << s, dtype=torch.uint8, device=dev) for s in range(10, 26)]
        del blocks
        torch.cuda.empty_cache()
        torch.cuda.memory_allocated(), torch.cuda.memory_reserved(), torch.cuda.memory_stats()

    def streams_events():
        s = torch.cuda.Stream()
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        x = torch.randn(1024, device=dev)
        e0.record()
        with torch.cuda.stream(s):
            s.wait_stream(torch.cuda.current_stream())
            y = x * 2
        torch.cuda.current_stream().wait_stream(s)
        e1.record()
        e1.synchronize()
        e0.elapsed_time(e1)
        s.synchronize()
        s.query()
        y.record_stream(s)

    def graphs():
        static_in = torch.randn(64, 64, device=dev)
        lin = torch.nn.Linear(64, 64).to(dev)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):              # warm-up on a side stream, as the docs say
            for _ in range(2):
                lin(static_in).relu()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_out = lin(static_in).relu()
        for _ in range(3):
            static_in.copy_(torch.randn(64, 64, device=dev))
            g.replay()
        static_out.cpu()

    def jiterator():  # NVRTC: the kernel's PTX loaded with cuModuleLoadData, found by its .entry name
        fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T fma_one(T x, T y) { return x * y + T(1); }")
        x = torch.randn(256, device=dev)
        fn(x, x)

    def graphed_callables():
        lin = torch.nn.Linear(32, 32).to(dev)
        x = torch.randn(8, 32, device=dev)
        g = torch.cuda.make_graphed_callables(lin, (x,))
        g(x).sum().backward()

    def cudnn_conv():
        conv = torch.nn.Conv2d(3, 8, 3).to(dev).half()
        conv(torch.randn(2, 3, 32, 32, device=dev, dtype=torch.half))

    def sdpa_in_capture():  # cuDNN asks each captured stream for its green context (cuStreamGetGreenCtx)
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q = torch.randn(1, 4, 1, 64, device=dev, dtype=torch.half)
        kv = torch.randn(1, 4, 16, 64, device=dev, dtype=torch.half)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            torch.nn.functional.scaled_dot_product_attention(q, kv, kv)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=s):
                torch.nn.functional.scaled_dot_product_attention(q, kv, kv)
            g.replay()

    def flash_attention():
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q = torch.randn(1, 4, 16, 64, device=dev, dtype=torch.half)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)

    def triton_kernel():  # Triton's own launcher (built with gcc at first use), its cubin by cuModuleLoadData
        import triton
        import triton.language as tl

        @triton.jit
        def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) + 1, mask=i < n)

        x = torch.randn(1000, device=dev)
        y = torch.empty_like(x)
        add_one[(8,)](x, y, 1000, BLOCK=128)

    for name, fn in [("properties", properties), ("copies", copies), ("elementwise", elementwise),
                     ("matmul", matmul), ("softmax_argmax_cat", reductions), ("sdpa_cudnn", attention), ("allocator", allocator),
                     ("streams_events", streams_events), ("cuda_graph", graphs), ("jiterator", jiterator),
                     ("graphed_callables", graphed_callables), ("cudnn_conv", cudnn_conv),
                     ("sdpa_cudnn_in_capture", sdpa_in_capture), ("flash_attention", flash_attention),
                     ("triton_kernel", triton_kernel)]:
        step(name, fn, results)
    failed = sum(1 for _, e in results if e is not None)
    print("basics: %d steps, %d failed, allocator %s" % (len(results), failed,
          os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default")), flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
