/* Large synthetic traces with phases: see phased_big.h. */
#include "phased_big.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace_format.h"
#include "trace/trace_writer.h"

#define T0 1000000000ull
#define CHUNK 4096

/* Range name string ids; DECODE/STEP_k is STEP0 + k. */
enum { R_PREFILL = 1, R_DECODE = 2, R_KV = 3, R_STEADY = 4, R_STEP0 = 10 };
/* Kernel groups: kernel k (id k + 1) is in group k % 4. */
enum { G_PREFILL, G_DECODE, G_SHARED, G_KV, NGROUPS };

struct emitter {
    int fd, gpu, rc;
    uint32_t tid;
    union obs_record buf[CHUNK];
    uint32_t n;
    uint64_t next_index; /* per-thread index of the next record */
    uint64_t t;          /* the thread's host clock (ns) */
    unsigned kernels;
};

static void flush(struct emitter *e)
{
    if (e->rc == 0 && e->n)
        e->rc = obs_trace_write_records(e->fd, e->tid, e->next_index - e->n, e->buf, e->n);
    e->n = 0;
}

static uint64_t put(struct emitter *e, const union obs_record *r)
{
    uint64_t index = e->next_index++;
    e->buf[e->n++] = *r;
    if (e->n == CHUNK)
        flush(e);
    return index;
}

static void phase(struct emitter *e, uint8_t event, uint16_t ph, uint32_t name, uint32_t step, uint32_t gen)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.phase.type = OBS_REC_PHASE;
    r.phase.event = event;
    r.phase.phase = ph;
    r.phase.name = name;
    r.phase.step = step;
    r.phase.generation = gen;
    r.phase.t = e->t;
    put(e, &r);
}

/* A call of dur ns at the thread's clock, with its GPU span when asked. */
static void call(struct emitter *e, unsigned api, uint32_t kernel, uint32_t grid, uint64_t bytes, unsigned dir,
                 uint32_t dur)
{
    union obs_record r;
    uint64_t index;
    memset(&r, 0, sizeof r);
    r.call.type = OBS_REC_CALL;
    r.call.api = (uint16_t)api;
    r.call.flags = (uint8_t)dir;
    r.call.t_begin = e->t;
    r.call.t_dur = dur;
    r.call.name = kernel;
    r.call.stream = 1;
    if (kernel) {
        r.call.u.grid.x = grid;
        r.call.u.grid.y = r.call.u.grid.z = 1;
        r.call.block_x = 256;
        r.call.block_y = r.call.block_z = 1;
    } else {
        r.call.u.bytes = bytes;
    }
    index = put(e, &r);
    if (e->gpu) {
        memset(&r, 0, sizeof r);
        r.gpu_span.type = OBS_REC_GPU_SPAN;
        r.gpu_span.tid = e->tid;
        r.gpu_span.call_index = index;
        r.gpu_span.gpu_begin = e->t + 300;
        r.gpu_span.gpu_end = e->t + 300 + dur / 2;
        r.gpu_span.stream = 1;
        put(e, &r);
    }
    e->t += dur + 500;
}

/* The kernel id of member j (mod the group's size) of group g. */
static uint32_t kernel_of(const struct emitter *e, unsigned g, uint64_t j)
{
    unsigned size = (e->kernels - g + NGROUPS - 1) / NGROUPS;
    return (uint32_t)((j % size) * NGROUPS + g + 1);
}

static void launch(struct emitter *e, unsigned g, uint64_t j, uint32_t grid)
{
    call(e, OBS_API___cudaLaunchKernel, kernel_of(e, g, j), grid, 0, 0, 2000);
}

static void generation(struct emitter *e, const struct phased_big_opts *o, uint32_t gen)
{
    unsigned l, s;
    uint32_t dup = e->kernels + 1; /* the two kernels with one base name */
    phase(e, OBS_PHASE_BEGIN, R_PREFILL, R_PREFILL, OBS_NO_STEP, gen);
    call(e, OBS_API_cudaMemcpyAsync, 0, 0, 4096, OBS_DIR_HTOD, 1500);
    for (l = 0; l < o->layers; l++) {
        launch(e, G_PREFILL, (uint64_t)gen + l, 4096);
        launch(e, G_SHARED, (uint64_t)gen + l, 8192);
    }
    call(e, OBS_API_cudaMemcpy, 0, 0, 4, OBS_DIR_DTOH, 20000);
    phase(e, OBS_PHASE_END, R_PREFILL, 0, OBS_NO_STEP, gen);
    for (s = 0; s < o->steps; s++) {
        uint64_t j = (uint64_t)gen + (uint64_t)s * o->layers;
        if (s == 1)
            phase(e, OBS_PHASE_BEGIN, R_DECODE, R_STEADY, OBS_NO_STEP, gen);
        phase(e, OBS_PHASE_BEGIN, R_DECODE, R_STEP0 + s, s, gen);
        phase(e, OBS_PHASE_BEGIN, R_KV, R_KV, OBS_NO_STEP, gen);
        launch(e, G_KV, j, 64);
        phase(e, OBS_PHASE_END, R_KV, 0, OBS_NO_STEP, gen);
        for (l = 0; l < o->layers; l++) {
            launch(e, G_DECODE, j + l, 32);
            launch(e, G_SHARED, j + l, 16);
            call(e, OBS_API___cudaLaunchKernel, dup + (l & 1), 8, 0, 0, 1000);
        }
        call(e, OBS_API_cudaMemcpy, 0, 0, 4, OBS_DIR_DTOH, 5000);
        phase(e, OBS_PHASE_END, R_DECODE, 0, OBS_NO_STEP, gen);
    }
    if (o->steps > 1)
        phase(e, OBS_PHASE_END, R_DECODE, 0, OBS_NO_STEP, gen);
}

static int write_string(int fd, uint32_t id, uint32_t kind, const char *text)
{
    return obs_trace_write_string(fd, id, kind, text, (uint32_t)strlen(text));
}

static int write_strings(int fd, const struct phased_big_opts *o)
{
    static const char *const group_fmt[NGROUPS] = {
        "sm90_xmma_gemm_bf16_tile%u_prefill",
        "sm90_xmma_gemm_bf16_tile%u_decode",
        "void gemm_%u_tile<128, 64>(float const*, float const*, float*, int)",
        "kv_gather_%u(float const*, int const*, float*)",
    };
    char text[128];
    unsigned k;
    int rc = 0;
    for (k = 0; rc == 0 && k < o->kernels; k++) {
        snprintf(text, sizeof text, "_Z8kernel_%uv", k);
        rc = write_string(fd, k + 1, OBS_STR_KERNEL_MANGLED, text);
        snprintf(text, sizeof text, group_fmt[k % NGROUPS], k / NGROUPS);
        if (rc == 0)
            rc = write_string(fd, k + 1, OBS_STR_KERNEL_DEMANGLED, text);
    }
    if (rc == 0)
        rc = write_string(fd, o->kernels + 1, OBS_STR_KERNEL_DEMANGLED, "void rms_norm<float>(float*, int)");
    if (rc == 0)
        rc = write_string(fd, o->kernels + 2, OBS_STR_KERNEL_DEMANGLED, "void rms_norm<__half>(__half*, int)");
    if (rc == 0)
        rc = write_string(fd, R_PREFILL, OBS_STR_RANGE_NAME, "PREFILL");
    if (rc == 0)
        rc = write_string(fd, R_DECODE, OBS_STR_RANGE_NAME, "DECODE");
    if (rc == 0)
        rc = write_string(fd, R_KV, OBS_STR_RANGE_NAME, "KV_GATHER");
    if (rc == 0)
        rc = write_string(fd, R_STEADY, OBS_STR_RANGE_NAME, "DECODE/STEADY");
    for (k = 0; rc == 0 && k < o->steps; k++) {
        snprintf(text, sizeof text, "DECODE/STEP_%u", k);
        rc = write_string(fd, R_STEP0 + k, OBS_STR_RANGE_NAME, text);
    }
    return rc;
}

int phased_big_write(const char *path, const struct phased_big_opts *o)
{
    struct obs_file_header h;
    struct emitter *e;
    static const char meta[] = "exe=/opt/app/llm\ncmdline=llm --phased\n";
    uint64_t per_gen = 2 * (uint64_t)o->layers + 2 + (uint64_t)o->steps * (3 * (uint64_t)o->layers + 2);
    unsigned th;
    int rc;

    if (o->threads == 0 || o->kernels < NGROUPS * 2 || o->layers == 0 || o->steps == 0)
        return -EINVAL;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return -ENOMEM;
    e->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (e->fd < 0) {
        free(e);
        return -errno;
    }
    obs_trace_init_header(&h, 888, o->gpu ? OBS_FILE_GPU_TIME : 0, T0, 1700000000000000000ull);
    rc = obs_trace_write_header(e->fd, &h);
    if (rc == 0)
        rc = obs_trace_write_meta(e->fd, meta, sizeof meta - 1);
    if (rc == 0)
        rc = write_strings(e->fd, o);
    e->rc = rc;
    e->gpu = o->gpu;
    e->kernels = o->kernels;
    for (th = 0; e->rc == 0 && th < o->threads; th++) {
        uint64_t gens = o->calls / o->threads / per_gen, g;
        e->tid = 6000 + th;
        e->n = 0;
        e->next_index = 0;
        e->t = T0 + 1000 * (uint64_t)th;
        for (g = 0; g < gens && e->rc == 0; g++)
            generation(e, o, (uint32_t)g);
        flush(e);
    }
    rc = e->rc;
    if (close(e->fd) != 0 && rc == 0)
        rc = -errno;
    free(e);
    return rc;
}
