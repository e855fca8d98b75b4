/* Synthetic phase traces: see phase_trace.h.
 *
 * Every call has a GPU span [g, g + d) (times relative to T0) and host
 * times [g - 1000, g - 500). The answers, GPU time:
 *   gen 0: PREFILL [10000, 20000), KV [20000, 22000), DECODE [22000, 23000)
 *          TTFT = 10000 + 3000 ns; 1 decode step: tokens/s undefined
 *   gen 1: HtoD [100000, 101000), PREFILL [101000, 201000): T_prefill 101000
 *          step 0: KV [201000, 211000), DECODE [211000, 216000): 15000
 *          TTFT = 116000 ns = 0.116 ms
 *          step s = 1..3 at 216000 + (s-1) * 10000: KV 6000, DECODE 3000
 *          T_after_first = 245000 - 216000 = 29000: 3 / 29 us = 103448.276/s
 *   gen 2: HtoD [300000, 301000), PREFILL [301000, 381000): 81000
 *          step 0: KV [381000, 389000), DECODE [389000, 393000): 12000
 *          TTFT = 93000 ns; steps 1..3 at 393000 + (s-1) * 15000: KV 8000,
 *          DECODE 4000: T_after_first = 42000: 71428.571/s
 *   phases: PREFILL 192000 ns (3 ranges, 5 calls, 3 kernels, 8192 bytes),
 *           KV_GATHER 2000 + 28000 + 32000 = 62000 (9 ranges),
 *           DECODE 1000 + 14000 + 16000 = 31000 (9 ranges)
 *   best TTFT: gen 2 (0.093 ms); best tokens/s: gen 1 (gen 0 left out).
 * Host time (PT_NO_GPU): each step made by step_ranges ends in a 4-byte
 * synchronous DtoH copy at g + kv + 100 (host end g + kv - 400), the
 * delimiter host wall-clock TTFT and tokens/s are measured to:
 *   gen 0: first PREFILL call's host begin 9000, step 0's copy ends 21600:
 *          TTFT 12600 ns; spans: prefill 500, step 0 [19000, 21600) 2600
 *   gen 1: 99000 .. 210600: TTFT 111600 ns; steady 210600 .. 241600 (the
 *          copy of step 3): 3 / 31 us = 96774.194/s; spans: prefill
 *          [99000, 100500) 1500, step 0 [200000, 210600) 10600, steady
 *          [215000, 241600) 26600
 *   gen 2 (thread 201, no delimiter in its steps): TTFT and tokens/s
 *          undefined, counted in unbounded_steps; spans 1500, 8500, 38500. */
#include "phase_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace_format.h"
#include "trace/trace_writer.h"

#define T0 1000000000ull
#define NREC 256

enum { K_PREFILL = 1, K_KV = 2, K_DECODE = 3 };
enum { S_PREFILL = 1, S_DECODE = 2, S_KV = 3, S_STEADY = 4, S_STEP0 = 10 }; /* RANGE_NAME ids; STEP_k = 10 + k */

struct thread_buf {
    uint32_t tid;
    union obs_record rec[NREC];
    uint32_t n;
};

struct writer {
    struct thread_buf th[3]; /* 200, 201, 202 (spans) */
    int gpu;
};

static uint64_t put(struct thread_buf *b, const union obs_record *r)
{
    b->rec[b->n] = *r;
    return b->n++;
}

static uint64_t call(struct writer *w, struct thread_buf *b, unsigned api, uint32_t kernel, uint64_t bytes,
                     unsigned dir, uint64_t g, uint64_t d)
{
    union obs_record r;
    uint64_t index;
    memset(&r, 0, sizeof r);
    r.call.type = OBS_REC_CALL;
    r.call.api = (uint16_t)api;
    r.call.flags = (uint8_t)dir;
    r.call.t_begin = T0 + g - 1000;
    r.call.t_dur = 500;
    r.call.name = kernel;
    r.call.stream = 1;
    if (kernel) {
        r.call.u.grid.x = 64;
        r.call.u.grid.y = r.call.u.grid.z = 1;
        r.call.block_x = 256;
        r.call.block_y = r.call.block_z = 1;
    } else {
        r.call.u.bytes = bytes;
    }
    index = put(b, &r);
    if (w->gpu && d) {
        memset(&r, 0, sizeof r);
        r.gpu_span.type = OBS_REC_GPU_SPAN;
        r.gpu_span.tid = b->tid;
        r.gpu_span.call_index = index;
        r.gpu_span.gpu_begin = T0 + g;
        r.gpu_span.gpu_end = T0 + g + d;
        r.gpu_span.stream = 1;
        put(&w->th[2], &r);
    }
    return index;
}

static void phase(struct thread_buf *b, uint8_t event, uint16_t ph, uint32_t name, uint32_t step, uint32_t gen,
                  uint64_t t, uint64_t first, uint64_t last)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.phase.type = OBS_REC_PHASE;
    r.phase.event = event;
    r.phase.phase = ph;
    r.phase.name = name;
    r.phase.step = step;
    r.phase.generation = gen;
    r.phase.t = T0 + t;
    r.phase.first_index = first;
    r.phase.last_index = last;
    put(b, &r);
}

#define BEGIN(b, ph, name, step, gen, t) phase(b, OBS_PHASE_BEGIN, ph, name, step, gen, t, 0, 0)
#define END(b, ph, gen, t) phase(b, OBS_PHASE_END, ph, 0, OBS_NO_STEP, gen, t, 0, 0)
#define RELABEL(b, ph, name, step, gen, t, first, last) \
    phase(b, OBS_PHASE_RELABEL, ph, name, step, gen, t, first, last)

/* A decode step with BEGIN/END ranges: KV_GATHER inside DECODE/STEP_k. */
static void step_ranges(struct writer *w, struct thread_buf *b, uint32_t gen, uint32_t step, uint64_t g,
                        uint64_t kv, uint64_t dec)
{
    BEGIN(b, S_DECODE, S_STEP0 + step, step, gen, g - 1100);
    BEGIN(b, S_KV, S_KV, OBS_NO_STEP, gen, g - 1050);
    call(w, b, OBS_API___cudaLaunchKernel, K_KV, 0, 0, g, kv);
    END(b, S_KV, gen, g - 450);
    call(w, b, OBS_API___cudaLaunchKernel, K_DECODE, 0, 0, g + kv, dec);
    if (!w->gpu) /* host time: the step ends in a token read, the delimiter wall-clock needs */
        call(w, b, OBS_API_cudaMemcpy, 0, 4, OBS_DIR_DTOH, g + kv + 100, 0);
    END(b, S_DECODE, gen, g + kv - (w->gpu ? 400 : 300));
}

static int write_strings(int fd)
{
    static const struct {
        uint32_t id, kind;
        const char *text;
    } s[] = {
        {K_PREFILL, OBS_STR_KERNEL_MANGLED, "_Z14prefill_kernelPfPKfii"},
        {K_PREFILL, OBS_STR_KERNEL_DEMANGLED, PT_PREFILL},
        {K_KV, OBS_STR_KERNEL_MANGLED, "_Z16kv_gather_kernelPfPKfii"},
        {K_KV, OBS_STR_KERNEL_DEMANGLED, PT_KV},
        {K_DECODE, OBS_STR_KERNEL_MANGLED, "_Z13decode_kernelPfPKfii"},
        {K_DECODE, OBS_STR_KERNEL_DEMANGLED, PT_DECODE},
        {200, OBS_STR_THREAD_NAME, "main"},
        {201, OBS_STR_THREAD_NAME, "worker"},
        {S_PREFILL, OBS_STR_RANGE_NAME, "PREFILL"},
        {S_DECODE, OBS_STR_RANGE_NAME, "DECODE"},
        {S_KV, OBS_STR_RANGE_NAME, "KV_GATHER"},
        {S_STEADY, OBS_STR_RANGE_NAME, "DECODE/STEADY"},
        {S_STEP0 + 0, OBS_STR_RANGE_NAME, "DECODE/STEP_0"},
        {S_STEP0 + 1, OBS_STR_RANGE_NAME, "DECODE/STEP_1"},
        {S_STEP0 + 2, OBS_STR_RANGE_NAME, "DECODE/STEP_2"},
        {S_STEP0 + 3, OBS_STR_RANGE_NAME, "DECODE/STEP_3"},
    };
    size_t i;
    int rc = 0;
    for (i = 0; rc == 0 && i < sizeof s / sizeof s[0]; i++)
        rc = obs_trace_write_string(fd, s[i].id, s[i].kind, s[i].text, (uint32_t)strlen(s[i].text));
    return rc;
}

static int write_file(const char *path, struct writer *w, int gpu_flag)
{
    struct obs_file_header h;
    static const char meta[] = "exe=/opt/app/phases\ncmdline=phases --decode 4\n";
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc, i;
    if (fd < 0)
        return -errno;
    obs_trace_init_header(&h, 4343, gpu_flag ? OBS_FILE_GPU_TIME : 0, T0, 1700000000000000000ull);
    rc = obs_trace_write_header(fd, &h);
    if (rc == 0)
        rc = obs_trace_write_meta(fd, meta, sizeof meta - 1);
    if (rc == 0)
        rc = write_strings(fd);
    for (i = 0; i < 3 && rc == 0; i++)
        if (w->th[i].n)
            rc = obs_trace_write_records(fd, w->th[i].tid, 0, w->th[i].rec, w->th[i].n);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

int phase_trace_write(const char *path, unsigned options)
{
    static struct writer w;
    struct thread_buf *a = &w.th[0], *b = &w.th[1];
    uint64_t first, i_kv[4], i_dec[4], i_copy, i_prefill;
    uint32_t s;

    memset(&w, 0, sizeof w);
    w.th[0].tid = 200;
    w.th[1].tid = 201;
    w.th[2].tid = 202;
    w.gpu = !(options & PT_NO_GPU);

    /* gen 0, thread 200: the warm-up */
    BEGIN(a, S_PREFILL, S_PREFILL, OBS_NO_STEP, 0, 8900);
    call(&w, a, OBS_API___cudaLaunchKernel, K_PREFILL, 0, 0, 10000, 10000);
    END(a, S_PREFILL, 0, 9600);
    step_ranges(&w, a, 0, 0, 20000, 2000, 1000);

    /* gen 1, thread 200 */
    BEGIN(a, S_PREFILL, S_PREFILL, OBS_NO_STEP, 1, 98900);
    call(&w, a, OBS_API_cudaMemcpyAsync, 0, 4096, OBS_DIR_HTOD, 100000, 1000);
    call(&w, a, OBS_API___cudaLaunchKernel, K_PREFILL, 0, 0, 101000, 100000);
    END(a, S_PREFILL, 1, 100600);
    step_ranges(&w, a, 1, 0, 201000, 10000, 5000);
    BEGIN(a, S_DECODE, S_STEADY, OBS_NO_STEP, 1, 214800);
    for (s = 1; s <= 3; s++)
        step_ranges(&w, a, 1, s, 216000 + (s - 1) * 10000, 6000, 3000);
    END(a, S_DECODE, 1, 241700);

    /* gen 2, thread 201: one wrong BEGIN/END range, then RELABELs (outside-in) */
    BEGIN(b, S_PREFILL, S_PREFILL, OBS_NO_STEP, 2, 298000);
    i_copy = call(&w, b, OBS_API_cudaMemcpyAsync, 0, 4096, OBS_DIR_HTOD, 300000, 1000);
    i_prefill = call(&w, b, OBS_API___cudaLaunchKernel, K_PREFILL, 0, 0, 301000, 80000);
    i_kv[0] = call(&w, b, OBS_API___cudaLaunchKernel, K_KV, 0, 0, 381000, 8000);
    i_dec[0] = call(&w, b, OBS_API___cudaLaunchKernel, K_DECODE, 0, 0, 389000, 4000);
    for (s = 1; s <= 3; s++) {
        uint64_t g = 393000 + (s - 1) * 15000;
        i_kv[s] = call(&w, b, OBS_API___cudaLaunchKernel, K_KV, 0, 0, g, 8000);
        i_dec[s] = call(&w, b, OBS_API___cudaLaunchKernel, K_DECODE, 0, 0, g + 8000, 4000);
    }
    END(b, S_PREFILL, 2, 431000);
    RELABEL(b, S_PREFILL, S_PREFILL, OBS_NO_STEP, 2, 431100, i_copy, i_prefill);
    RELABEL(b, S_DECODE, S_STEP0, 0, 2, 431100, i_kv[0], i_dec[0]);
    RELABEL(b, S_KV, S_KV, OBS_NO_STEP, 2, 431100, i_kv[0], i_kv[0]);
    RELABEL(b, S_DECODE, S_STEADY, OBS_NO_STEP, 2, 431100, i_kv[1], i_dec[3]);
    for (s = 1; s <= 3; s++) {
        RELABEL(b, S_DECODE, S_STEP0 + s, s, 2, 431100, i_kv[s], i_dec[s]);
        RELABEL(b, S_KV, S_KV, OBS_NO_STEP, 2, 431100, i_kv[s], i_kv[s]);
    }

    /* thread 200, while thread 201's wrong PREFILL is open: outside any phase */
    first = call(&w, a, OBS_API_cudaStreamSynchronize, 0, 0, 0, 400000, 0);
    (void)first;
    return write_file(path, &w, w.gpu);
}

int phase_trace_write_damaged(const char *path)
{
    static struct writer w;
    struct thread_buf *a = &w.th[0];
    uint64_t i_memset;

    memset(&w, 0, sizeof w);
    w.th[0].tid = 200;
    w.th[1].tid = 201;
    w.th[2].tid = 202;
    w.gpu = 0;
    END(a, S_PREFILL, 0, 1000);                                 /* nothing open: bad */
    phase(a, 9, S_PREFILL, S_PREFILL, OBS_NO_STEP, 0, 1100, 0, 0); /* unknown event: bad */
    RELABEL(a, S_KV, S_KV, 7, 0, 1200, 5, 4);                   /* first > last: bad */
    BEGIN(a, 99, 98, OBS_NO_STEP, 0, 1300);                     /* ids with no string */
    call(&w, a, OBS_API___cudaLaunchKernel, K_PREFILL, 0, 0, 3000, 1000);
    i_memset = call(&w, a, OBS_API_cudaMemsetAsync, 0, 256, 0, 5000, 100);
    RELABEL(a, S_KV, S_KV, 7, 0, 6000, i_memset, i_memset);
    RELABEL(a, S_DECODE, 12345, 3, 0, 6000, 1000, 2000); /* no such calls, no such name */
    return write_file(path, &w, 0);
}

int phase_trace_write_flat(const char *path)
{
    static struct writer w;
    struct thread_buf *a = &w.th[0];
    uint64_t p, kv[3], dec[3];
    uint32_t s;

    memset(&w, 0, sizeof w);
    w.th[0].tid = 200;
    w.th[1].tid = 201;
    w.th[2].tid = 202;
    w.gpu = 1;
    p = call(&w, a, OBS_API___cudaLaunchKernel, K_PREFILL, 0, 0, 10000, 10000);
    for (s = 0; s < 3; s++) {
        kv[s] = call(&w, a, OBS_API___cudaLaunchKernel, K_KV, 0, 0, 20000 + s * 10000, 4000);
        dec[s] = call(&w, a, OBS_API___cudaLaunchKernel, K_DECODE, 0, 0, 24000 + s * 10000, 2000);
    }
    RELABEL(a, S_PREFILL, S_PREFILL, OBS_NO_STEP, 5, 60000, p, p);
    for (s = 0; s < 3; s++) {
        RELABEL(a, S_KV, S_KV, s, 5, 60000, kv[s], kv[s]);
        RELABEL(a, S_DECODE, S_STEP0 + s, s, 5, 60000, dec[s], dec[s]);
    }
    return write_file(path, &w, 1);
}

int phase_trace_write_relabels(const char *path, unsigned n)
{
    static struct writer w;
    struct thread_buf *a = &w.th[0];
    unsigned i;

    if (n > 100)
        return -EINVAL;
    memset(&w, 0, sizeof w);
    w.th[0].tid = 200;
    w.th[1].tid = 201;
    w.th[2].tid = 202;
    for (i = 0; i < n; i++)
        call(&w, a, OBS_API___cudaLaunchKernel, K_DECODE, 0, 0, 10000 + i * 1000, 500);
    RELABEL(a, S_DECODE, S_STEADY, OBS_NO_STEP, 0, 200000, 0, n - 1);
    for (i = n; i-- > 0;) /* last call first: each one splits the paint */
        RELABEL(a, S_DECODE, S_DECODE, i, 0, 200000, i, i);
    return write_file(path, &w, 0);
}
