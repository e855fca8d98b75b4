/* The fixture trace: see trace_fixture.h. */
#include "trace_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace_format.h"
#include "trace/trace_writer.h"

#define API(x) OBS_API_##x
#define NOK 0, 1, 1, 0, 0, 0 /* grid x,y,z and block x,y,z of a call that is not a launch */
#define PREFILL_D "prefill_kernel(float const*, float*, int)"
#define PREFILL_M "_Z14prefill_kernelPKfPfi"

/* In expected sequence order: sorted by (t_begin, tid, per-thread index). */
const struct fix_call fixture_calls[] = {
    {100, 1, API(cudaMalloc), 0, "", "", 0, NOK, 0, 1048576, OBS_DIR_NONE, 0, 1000, 500, 0, -1, -1, "", -1},
    {100, 2, API(cudaMemcpyAsync), 0, "", "", 1, NOK, 0, 1048576, OBS_DIR_HTOD, 0, 2000, 300, 0, 2500, 45443,
     "PREFILL", -1},
    {100, 3, API(__cudaLaunchKernel), 1, PREFILL_D, PREFILL_M, 1, 16384, 1, 1, 256, 1, 1, 0, 0, OBS_DIR_NONE, 0,
     3000, 200, 0, 45443, 112979, "PREFILL", -1},
    /* same t_begin as the launch above: the lower tid comes first */
    {101, 0, API(cudaMemcpyAsync), 0, "", "", 2, NOK, 0, 65536, OBS_DIR_DTOD, 0, 3000, 250, 0, -1, -1, "PREFILL",
     -1},
    {100, 5, API(cudaLaunchKernel), 2, "decode_kernel()", "_Z13decode_kernelv", 2, 16, 2, 3, 128, 2, 1, 4096, 0,
     OBS_DIR_NONE, 0, 5000, 150, 0, 5500, 7564, "PREFILL", -1},
    {100, 6, API(cudaMemsetAsync), 0, "", "", 2, NOK, 0, 4096, OBS_DIR_NONE, 0, 6000, 100, 0, 7564, 8568,
     "PREFILL", -1},
    {100, 7, API(cudaStreamSynchronize), 0, "", "", 1, NOK, 0, 0, OBS_DIR_NONE, 0, 7000, 90000, 0, -1, -1,
     "PREFILL", -1},
    /* begins when PREFILL ends and DECODE/STEP_0 begins: in DECODE */
    {101, 1, API(cudaLaunchKernel_ptsz), 1, PREFILL_D, PREFILL_M, 3, 64, 1, 1, 256, 1, 1, 0, 0, OBS_DIR_NONE, 0,
     8000, 180, 0, 8500, 10500, "DECODE", 0},
    {101, 2, API(cudaLaunchKernelExC), 3, "triton_gemm_0", "triton_gemm_0", 3, 8, 8, 1, 64, 1, 1, 1024, 0,
     OBS_DIR_NONE, 0, 9000, 170, 0, 10000, 12000, "DECODE", 0},
    {100, 9, API(cudaMemcpy), 0, "", "", 0, NOK, 0, 8192, OBS_DIR_DTOH, 0, 100000, 5000, 0, 101000, 102327,
     "DECODE", 0},
    {100, 10, API(cudaLaunchKernel), 7, "", "", 0, 1, 1, 1, 32, 1, 1, 0, 0, OBS_DIR_NONE, 0, 110000, 100, 98,
     -1, -1, "DECODE", 0},
    {100, 11, API(cudaGraphLaunch), 0, "", "", 1, NOK, 0, 12, OBS_DIR_NONE, 0, 120000, 400, 0, 121000, 131000,
     "DECODE", 0},
    /* thread 102: the nested copy (index 0) was recorded before the call it
     * was made in (index 1), but begins after it */
    {102, 1, API(cudaMemcpyToSymbol), 0, "", "", 0, NOK, 0, 256, OBS_DIR_HTOD, 0, 200000, 2000, 0, -1, -1, "",
     -1},
    {102, 0, API(cudaMemcpy), 0, "", "", 0, NOK, 0, 16, OBS_DIR_HTOH, OBS_CALL_NESTED, 200500, 100, 0, -1, -1,
     "", -1},
    {102, 2, API(cudaDeviceSynchronize), 0, "", "", 0, NOK, 0, 0, OBS_DIR_NONE, 0, 210000, 5000000000ull, 0, -1,
     -1, "", -1},
    {102, 7, API(cudaFree), 0, "", "", 0, NOK, 0, 0, OBS_DIR_NONE, 0, 5000211000ull, 400, 0, -1, -1, "", -1},
};
const size_t fixture_ncalls = sizeof fixture_calls / sizeof fixture_calls[0];

/* A record at a (tid, per-thread index) slot. */
struct slot {
    uint32_t tid;
    uint64_t index;
    union obs_record rec;
};

static void encode_call(const struct fix_call *f, union obs_record *r)
{
    struct obs_rec_call *c = &r->call;
    memset(r, 0, sizeof *r);
    c->type = OBS_REC_CALL;
    c->flags = (uint8_t)(f->direction | f->flags);
    c->api = (uint16_t)f->api;
    c->status = f->status;
    c->t_begin = FIX_T0 + f->t_begin;
    if (f->dur > UINT32_MAX) {
        c->flags |= OBS_CALL_DUR_US;
        c->t_dur = (uint32_t)(f->dur / 1000);
    } else {
        c->t_dur = (uint32_t)f->dur;
    }
    c->name = f->kernel_id;
    c->stream = f->stream;
    c->shmem = f->shmem;
    if (f->kernel_id || f->api == OBS_API_cudaLaunchKernel) {
        c->u.grid.x = f->grid_x;
        c->u.grid.y = f->grid_y;
        c->u.grid.z = f->grid_z;
    } else {
        c->u.bytes = f->bytes;
    }
    c->block_x = f->block_x;
    c->block_y = f->block_y;
    c->block_z = f->block_z;
}

static union obs_record span(uint32_t tid, uint64_t index, uint64_t b, uint64_t e, uint32_t stream)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.gpu_span.type = OBS_REC_GPU_SPAN;
    r.gpu_span.tid = tid;
    r.gpu_span.call_index = index;
    r.gpu_span.gpu_begin = FIX_T0 + b;
    r.gpu_span.gpu_end = FIX_T0 + e;
    r.gpu_span.stream = stream;
    return r;
}

static union obs_record stream_rec(uint32_t id, uint64_t handle)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.stream.type = OBS_REC_STREAM;
    r.stream.id = id;
    r.stream.handle = handle;
    return r;
}

static union obs_record self_cost(uint32_t tid, uint64_t calls, uint64_t ns)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.self_cost.type = OBS_REC_SELF_COST;
    r.self_cost.tid = tid;
    r.self_cost.calls = calls;
    r.self_cost.shim_ns = ns;
    return r;
}

static union obs_record lost(uint32_t tid, uint8_t reason, uint64_t count, uint64_t t0, uint64_t t1)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.lost.type = OBS_REC_LOST;
    r.lost.reason = reason;
    r.lost.tid = tid;
    r.lost.count = count;
    r.lost.t_first = FIX_T0 + t0;
    r.lost.t_last = FIX_T0 + t1;
    return r;
}

static union obs_record phase(uint8_t event, uint16_t ph, uint32_t name, uint32_t step, uint32_t gen, uint64_t t)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.phase.type = OBS_REC_PHASE;
    r.phase.event = event;
    r.phase.phase = ph;
    r.phase.name = name;
    r.phase.step = step;
    r.phase.generation = gen;
    r.phase.t = FIX_T0 + t;
    return r;
}

static union obs_record relabel(uint16_t ph, uint32_t name, uint32_t step, uint32_t gen, uint64_t t,
                                 uint64_t first, uint64_t last)
{
    union obs_record r = phase(OBS_PHASE_RELABEL, ph, name, step, gen, t);
    r.phase.first_index = first;
    r.phase.last_index = last;
    return r;
}

static union obs_record graph(void)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.graph.type = OBS_REC_GRAPH;
    r.graph.id = 1;
    r.graph.handle = 0xabc;
    r.graph.node_count = 12;
    r.graph.kernel_count = 10;
    return r;
}

static int write_chunk_of(int fd, const struct slot *slots, size_t nslots, uint32_t tid, uint64_t first,
                          uint32_t count)
{
    union obs_record recs[16];
    uint32_t i;
    size_t k;
    for (i = 0; i < count; i++) {
        int found = 0;
        for (k = 0; k < nslots; k++)
            if (slots[k].tid == tid && slots[k].index == first + i) {
                recs[i] = slots[k].rec;
                found = 1;
            }
        if (!found)
            return -EINVAL;
    }
    return obs_trace_write_records(fd, tid, first, recs, count);
}

static int write_str(int fd, uint32_t id, uint32_t kind, const char *text)
{
    return obs_trace_write_string(fd, id, kind, text, (uint32_t)strlen(text));
}

int fixture_write(const char *path, unsigned options)
{
    struct slot slots[64];
    size_t n = 0, i;
    struct obs_file_header h;
    int gpu = !(options & FIX_NO_GPU);
    int fd, rc = 0;
    static const char meta[] = "exe=" FIX_EXE "\ncmdline=" FIX_CMDLINE "\nhost=testhost\n";

#define SLOT(t, i, r)          \
    do {                       \
        slots[n].tid = (t);    \
        slots[n].index = (i);  \
        slots[n].rec = (r);    \
        n++;                   \
    } while (0)
/* Without GPU time, a span's slot holds a record that changes nothing. */
#define SPAN(t, i, r) SLOT(t, i, gpu ? (r) : self_cost(100, 1, 1))

    for (i = 0; i < fixture_ncalls; i++) {
        slots[n].tid = fixture_calls[i].tid;
        slots[n].index = fixture_calls[i].index;
        encode_call(&fixture_calls[i], &slots[n].rec);
        n++;
    }
    SLOT(100, 0, stream_rec(1, 0x7f0000001000ull));
    SLOT(100, 4, stream_rec(2, 0x7f0000002000ull));
    SPAN(100, 8, span(101, 2, 10000, 12000, 3));
    SLOT(100, 12, self_cost(100, 5, 150));
    SLOT(100, 13, self_cost(100, 8, 240));
    SLOT(100, 14, graph());
    SLOT(101, 3, lost(101, OBS_LOST_BUFFER_FULL, 7, 9500, 9900));
    SLOT(101, 4, self_cost(101, 4, 100));
    SPAN(101, 5, span(101, 1, 8500, 10500, 3));
    {
        union obs_record unknown;
        memset(&unknown, 0, sizeof unknown);
        unknown.type = 200;
        SLOT(101, 6, unknown);
    }
    SPAN(103, 0, span(100, 3, 45443, 112979, 1)); /* out of call order: sorted by the reader */
    SPAN(103, 1, span(100, 2, 2500, 45443, 1));
    SPAN(103, 2, span(100, 5, 5500, 7564, 2));
    SPAN(103, 3, span(100, 6, 7564, 8568, 2));
    SPAN(103, 4, span(100, 11, 121000, 131000, 1));
    SPAN(103, 5, span(999, 0, 1, 2, 0));       /* orphan: unknown thread */
    SPAN(103, 6, span(100, 50, 3000, 4000, 1)); /* orphan: no such call */
    SLOT(103, 7, lost(102, OBS_LOST_WRITE_FAILED, 3, 300000, 300500));
    SPAN(103, 8, span(100, 9, 101000, 102327, 0));
    /* Threads 100 and 101 label their calls after the fact (RELABEL);
     * thread 102's BEGIN/END ranges hold none of its calls. */
    SLOT(100, 15, relabel(10, 10, UINT32_MAX, 1, 7500, 2, 7));
    SLOT(100, 16, relabel(11, 12, 0, 2, 120500, 9, 11));
    SLOT(101, 7, relabel(10, 10, UINT32_MAX, 1, 3300, 0, 0));
    SLOT(101, 8, relabel(11, 12, 0, 2, 9200, 1, 2));
    SLOT(102, 3, phase(1, 10, 10, UINT32_MAX, 1, 1500));
    SLOT(102, 4, phase(2, 10, 10, UINT32_MAX, 1, 8000));
    SLOT(102, 5, phase(1, 11, 12, 0, 2, 8000));
    SLOT(102, 6, phase(2, 11, 12, 0, 2, 200000));
#undef SLOT
#undef SPAN

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -errno;
    obs_trace_init_header(&h, FIX_PID, gpu ? OBS_FILE_GPU_TIME : 0, FIX_T0, FIX_REAL0);
#define TRY(x)             \
    do {                   \
        if (rc == 0)       \
            rc = (x);      \
    } while (0)
    TRY(obs_trace_write_header(fd, &h));
    TRY(obs_trace_write_meta(fd, meta, sizeof meta - 1));
    TRY(write_str(fd, 1, OBS_STR_KERNEL_MANGLED, PREFILL_M));
    TRY(write_str(fd, 1, OBS_STR_KERNEL_DEMANGLED, PREFILL_D));
    TRY(write_str(fd, 2, OBS_STR_KERNEL_DEMANGLED, "old_name()"));
    TRY(write_str(fd, 100, OBS_STR_THREAD_NAME, "main"));
    TRY(write_chunk_of(fd, slots, n, 102, 3, 5));
    TRY(write_chunk_of(fd, slots, n, 100, 0, 5));
    TRY(write_str(fd, 2, OBS_STR_KERNEL_MANGLED, "_Z13decode_kernelv"));
    TRY(write_str(fd, 2, OBS_STR_KERNEL_DEMANGLED, "decode_kernel()"));
    TRY(write_str(fd, 3, OBS_STR_KERNEL_MANGLED, "triton_gemm_0"));
    TRY(write_str(fd, 101, OBS_STR_THREAD_NAME, FIX_THREAD101_NAME));
    TRY(write_str(fd, 10, OBS_STR_RANGE_NAME, "PREFILL"));
    TRY(write_str(fd, 11, OBS_STR_RANGE_NAME, "DECODE"));
    TRY(write_str(fd, 12, OBS_STR_RANGE_NAME, "DECODE/STEP_0"));
    TRY(write_str(fd, 5, 99, "a string kind from the future"));
    if (rc == 0) { /* a chunk type from the future: skipped by readers */
        struct obs_chunk_header ch;
        char payload[16] = "future chunk...";
        memset(&ch, 0, sizeof ch);
        ch.magic = OBS_CHUNK_MAGIC;
        ch.type = 77;
        ch.payload_bytes = sizeof payload;
        if (write(fd, &ch, sizeof ch) != (ssize_t)sizeof ch || write(fd, payload, sizeof payload) != sizeof payload)
            rc = -EIO;
    }
    TRY(write_chunk_of(fd, slots, n, 101, 0, 9));
    TRY(write_chunk_of(fd, slots, n, 103, 0, 9));
    TRY(write_chunk_of(fd, slots, n, 100, 5, 12));
    TRY(write_chunk_of(fd, slots, n, 102, 0, 3));
#undef TRY
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* ---- large synthetic traces --------------------------------------------------- */

static const char *const big_kernels[] = {
    "void flash_attn_fwd<128, true>(float const*, float const*, float const*, float*, int)",
    "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int, int, int)",
    "rms_norm_kernel(float*, float const*, float, int)",
    "void rotary_embedding<float>(float*, float const*, int, int)",
    "kv_gather_kernel(float const*, int const*, float*, int)",
    "silu_mul_kernel(float const*, float*, int)",
    "softmax_kernel(float*, int)",
    "decode_attention(float const*, float const*, float*, int, int)",
};

struct big_thread {
    union obs_record buf[4096];
    uint32_t n;
    uint64_t next_index;
};

static int big_flush(int fd, uint32_t tid, struct big_thread *b)
{
    int rc = obs_trace_write_records(fd, tid, b->next_index - b->n, b->buf, b->n);
    b->n = 0;
    return rc;
}

static int big_put(int fd, uint32_t tid, struct big_thread *b, const union obs_record *r)
{
    b->buf[b->n++] = *r;
    b->next_index++;
    return b->n == 4096 ? big_flush(fd, tid, b) : 0;
}

int fixture_write_big(const char *path, uint64_t n, unsigned nthreads, int gpu)
{
    struct obs_file_header h;
    struct big_thread *th;
    uint64_t i, gpu_tail = 0;
    unsigned k;
    int fd, rc = 0;
    static const char meta[] = "exe=/opt/app/bench\ncmdline=bench\n";

    if (nthreads == 0)
        nthreads = 1;
    th = calloc(nthreads, sizeof *th);
    if (th == NULL)
        return -ENOMEM;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        free(th);
        return -errno;
    }
    obs_trace_init_header(&h, 777, gpu ? OBS_FILE_GPU_TIME : 0, FIX_T0, FIX_REAL0);
    rc = obs_trace_write_header(fd, &h);
    if (rc == 0)
        rc = obs_trace_write_meta(fd, meta, sizeof meta - 1);
    for (k = 0; rc == 0 && k < sizeof big_kernels / sizeof big_kernels[0]; k++) {
        char mangled[64];
        snprintf(mangled, sizeof mangled, "_Z%ukernel_%uv", 8 + (k >= 10), k);
        rc = obs_trace_write_string(fd, k + 1, OBS_STR_KERNEL_MANGLED, mangled, (uint32_t)strlen(mangled));
        if (rc == 0)
            rc = obs_trace_write_string(fd, k + 1, OBS_STR_KERNEL_DEMANGLED, big_kernels[k],
                                        (uint32_t)strlen(big_kernels[k]));
    }
    for (i = 0; rc == 0 && i < n; i++) {
        unsigned t = (unsigned)(i % nthreads), what = (unsigned)(i % 10);
        uint32_t tid = 5000 + t;
        union obs_record r;
        struct obs_rec_call *c = &r.call;
        uint64_t call_index = th[t].next_index;

        memset(&r, 0, sizeof r);
        c->type = OBS_REC_CALL;
        c->t_begin = FIX_T0 + i * 400;
        c->t_dur = 1000 + (uint32_t)(i % 2000);
        c->stream = 1 + t;
        if (what < 7) {
            c->api = OBS_API_cudaLaunchKernel;
            c->name = 1 + (uint32_t)((i / 10 * 7 + what) % 8);
            c->u.grid.x = 1024;
            c->u.grid.y = 1;
            c->u.grid.z = 1;
            c->block_x = 256;
            c->block_y = c->block_z = 1;
        } else if (what < 9) {
            c->api = OBS_API_cudaMemcpyAsync;
            c->flags = what == 7 ? OBS_DIR_HTOD : OBS_DIR_DTOH;
            c->u.bytes = 1u << 20;
        } else {
            c->api = OBS_API_cudaStreamSynchronize;
        }
        rc = big_put(fd, tid, &th[t], &r);
        if (rc == 0 && gpu && what < 9) {
            union obs_record s;
            uint64_t b = c->t_begin + 500 > gpu_tail ? c->t_begin + 500 : gpu_tail;
            memset(&s, 0, sizeof s);
            s.gpu_span.type = OBS_REC_GPU_SPAN;
            s.gpu_span.tid = tid;
            s.gpu_span.call_index = call_index;
            s.gpu_span.gpu_begin = b;
            s.gpu_span.gpu_end = b + 300 + (i % 700);
            s.gpu_span.stream = c->stream;
            gpu_tail = s.gpu_span.gpu_end;
            rc = big_put(fd, tid, &th[t], &s);
        }
    }
    for (k = 0; rc == 0 && k < nthreads; k++)
        if (th[k].n)
            rc = big_flush(fd, 5000 + k, &th[k]);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    free(th);
    return rc;
}
