// obsshim's reference workload (after seed 000): a compute-leaning prefill,
// a strided KV gather and a latency-bound decode loop, timed with GPU events.
// One source for CUDA (nvcc) and HIP (hipcc -x hip -D__HIP_PLATFORM_AMD__).
//
// Ground-truth ranges (default domain), per timed repetition:
//   PREFILL                       the prefill kernel
//   DECODE/STEP_0                 the first decode step (outside STEADY, as TTFT counts it)
//     KV_GATHER                   its KV gather
//   DECODE/STEADY                 steps 1 .. decode-1
//     DECODE/STEP_k
//       KV_GATHER
// The untimed warm-up is a generation of one decode step with the same
// ranges (PREFILL, DECODE/STEP_0, KV_GATHER), so that every launch has a
// ground-truth phase. With --graphs, GRAPH_CAPTURE surrounds the one-time
// capture of steps 1 .. decode-1 (each in its DECODE/STEP_k range), and each
// repetition's DECODE/STEADY holds the graph launch.
#include <algorithm>
#include <cstdio>

#include "workload_args.h"
#include "workload_gpu.h"
#include "workload_ranges.h"

__global__ void prefill_kernel(float *__restrict__ out, const float *__restrict__ in, int n_elems,
                               int rounds)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int i = idx; i < n_elems; i += stride) {
        float v = in[i];
        // Compute-leaning: many dependent FMAs per element, like a GEMM epilogue.
#pragma unroll 4
        for (int r = 0; r < rounds; ++r)
            v = fmaf(v, 1.0009765625f, 0.000244140625f);
        out[i] = v;
    }
}

__global__ void kv_gather_kernel(float *__restrict__ dst, const float *__restrict__ kv, int n_elems,
                                 int stride)
{
    // Memory-leaning: strided loads over the whole cache, like gathering KV
    // entries along the time dimension. 64-bit product: i * stride overflows int.
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = idx; i < n_elems; i += blockDim.x * gridDim.x) {
        int src = (int)(((long long)i * stride) % n_elems);
        dst[i] = kv[src];
    }
}

__global__ void decode_kernel(float *__restrict__ out, const float *__restrict__ in, int n_elems,
                              int rounds)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int i = idx; i < n_elems; i += stride) {
        float v = in[i];
#pragma unroll 1
        for (int r = 0; r < rounds; ++r)
            v = fmaf(v, 0.99951171875f, 0.0001220703125f);
        out[i] = v;
    }
}

static int next_pow2(int x)
{
    int p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

struct Buffers {
    float *in = nullptr, *out = nullptr, *kv = nullptr, *tmp = nullptr;
};

struct Shapes {
    int n_elems, n_elems_decode, grid_prefill, grid_decode, grid_kv;
    static const int block = 256;
};

// One decode step: the KV gather (inside its own range) then the decode kernel.
static void decode_step(const WorkloadArgs &a, const Shapes &s, const Buffers &b, gpuStream_t stream,
                        int step, int rounds)
{
    char name[48];
    std::snprintf(name, sizeof name, "DECODE/STEP_%d", step);
    range_push(a.ranges, name);
    range_push(a.ranges, "KV_GATHER");
    GPU_LAUNCH(kv_gather_kernel, s.grid_kv, Shapes::block, stream, b.tmp, b.kv, s.n_elems, a.hidden);
    range_pop(a.ranges);
    GPU_LAUNCH(decode_kernel, s.grid_decode, Shapes::block, stream, b.out, b.out, s.n_elems_decode, rounds);
    range_pop(a.ranges);
}

int main(int argc, char **argv)
{
    WorkloadArgs a;
    switch (workload_parse_args(argc, argv, &a)) {
    case 0:
        break;
    case 1:
        return 0;
    default:
        return 2;
    }

    Shapes s;
    s.n_elems = a.batch * a.ctx * a.hidden;
    s.n_elems_decode = a.batch * a.hidden;
    s.grid_prefill = next_pow2((s.n_elems + Shapes::block - 1) / Shapes::block);
    s.grid_decode = next_pow2((s.n_elems_decode + Shapes::block - 1) / Shapes::block);
    s.grid_kv = next_pow2((s.n_elems + Shapes::block - 1) / Shapes::block);
    const size_t bytes = size_t(s.n_elems) * sizeof(float);

    gpuStream_t stream;
    GPU_CHECK(gpuStreamCreate(&stream));
    Buffers b;
    GPU_CHECK(gpuMalloc((void **)&b.in, bytes));
    GPU_CHECK(gpuMalloc((void **)&b.out, bytes));
    GPU_CHECK(gpuMalloc((void **)&b.kv, bytes));
    GPU_CHECK(gpuMalloc((void **)&b.tmp, bytes));
    GPU_CHECK(gpuMemset(b.in, 0, bytes));
    GPU_CHECK(gpuMemset(b.out, 0, bytes));
    GPU_CHECK(gpuMemset(b.kv, 0, bytes));
    GPU_CHECK(gpuMemset(b.tmp, 0, bytes));

    gpuEvent_t e_start, e_after_prefill, e_after_first, e_end;
    GPU_CHECK(gpuEventCreate(&e_start));
    GPU_CHECK(gpuEventCreate(&e_after_prefill));
    GPU_CHECK(gpuEventCreate(&e_after_first));
    GPU_CHECK(gpuEventCreate(&e_end));

    // Warm-up: a short generation (light rounds, one decode step), untimed.
    range_push(a.ranges, "PREFILL");
    GPU_LAUNCH(prefill_kernel, s.grid_prefill, Shapes::block, stream, b.out, b.in, s.n_elems, 2);
    range_pop(a.ranges);
    decode_step(a, s, b, stream, 0, 2);
    GPU_CHECK(gpuStreamSynchronize(stream));

    // --graphs: capture steps 1 .. decode-1 once, replay them every repetition.
    const bool use_graph = a.graphs && a.decode > 1;
    gpuGraph_t graph = nullptr;
    gpuGraphExec_t graph_exec = nullptr;
    if (use_graph) {
        range_push(a.ranges, "GRAPH_CAPTURE");
        GPU_CHECK(gpuStreamBeginCapture(stream));
        for (int t = 1; t < a.decode; ++t)
            decode_step(a, s, b, stream, t, a.decode_rounds);
        GPU_CHECK(gpuStreamEndCapture(stream, &graph));
        GPU_CHECK(gpuGraphInstantiate(&graph_exec, graph));
        range_pop(a.ranges);
    }

    float best_ttft_ms = 1e30f;
    float best_tokens_per_s = 0.f;
    for (int rep = 0; rep < a.repeat; ++rep) {
        GPU_CHECK(gpuEventRecord(e_start, stream));

        range_push(a.ranges, "PREFILL");
        GPU_LAUNCH(prefill_kernel, s.grid_prefill, Shapes::block, stream, b.out, b.in, s.n_elems,
                   a.prefill_rounds);
        range_pop(a.ranges);
        GPU_CHECK(gpuEventRecord(e_after_prefill, stream));

        decode_step(a, s, b, stream, 0, a.decode_rounds);
        GPU_CHECK(gpuEventRecord(e_after_first, stream));

        range_push(a.ranges, "DECODE/STEADY");
        if (use_graph) {
            GPU_CHECK(gpuGraphLaunch(graph_exec, stream));
        } else {
            for (int t = 1; t < a.decode; ++t)
                decode_step(a, s, b, stream, t, a.decode_rounds);
        }
        range_pop(a.ranges);

        GPU_CHECK(gpuEventRecord(e_end, stream));
        GPU_CHECK(gpuStreamSynchronize(stream));

        float t_prefill_ms = 0.f, t_first_ms = 0.f, t_total_ms = 0.f;
        GPU_CHECK(gpuEventElapsedTime(&t_prefill_ms, e_start, e_after_prefill));
        GPU_CHECK(gpuEventElapsedTime(&t_first_ms, e_after_prefill, e_after_first));
        GPU_CHECK(gpuEventElapsedTime(&t_total_ms, e_start, e_end));

        const float ttft_ms = t_prefill_ms + t_first_ms;
        const float steady_tokens = (float)std::max(0, a.decode - 1);
        const float t_steady_ms = t_total_ms - ttft_ms;
        const float tokens_per_s = t_steady_ms > 0.f ? 1000.f * steady_tokens / t_steady_ms : 0.f;
        best_ttft_ms = std::min(best_ttft_ms, ttft_ms);
        best_tokens_per_s = std::max(best_tokens_per_s, tokens_per_s);
    }

    std::printf("TTFT_ms=%.3f tokens_per_s=%.2f (best of %d reps)\n", best_ttft_ms, best_tokens_per_s,
                a.repeat);

    if (use_graph) {
        GPU_CHECK(gpuGraphExecDestroy(graph_exec));
        GPU_CHECK(gpuGraphDestroy(graph));
    }
    GPU_CHECK(gpuEventDestroy(e_start));
    GPU_CHECK(gpuEventDestroy(e_after_prefill));
    GPU_CHECK(gpuEventDestroy(e_after_first));
    GPU_CHECK(gpuEventDestroy(e_end));
    GPU_CHECK(gpuFree(b.in));
    GPU_CHECK(gpuFree(b.out));
    GPU_CHECK(gpuFree(b.kv));
    GPU_CHECK(gpuFree(b.tmp));
    GPU_CHECK(gpuStreamDestroy(stream));
    return 0;
}
