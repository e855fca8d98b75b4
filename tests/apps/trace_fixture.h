/* A small .obs trace that exercises every record kind and every reader rule,
 * written with the writer API, and what a reader must find in it (the table
 * of calls in expected sequence order, worked out by hand).
 *
 * Threads 100 ("main"), 101 ("worker, \"one\"": a name that needs quoting),
 * 102 (no name; its calls are recorded out of time order because one is
 * nested in another, and one lasts 5 s so its duration is stored in
 * microseconds; its chunks are written in reverse order) and 103 (a thread
 * that writes only GPU spans and a LOST record). Kernel names: id 1 and 2
 * mangled + demangled (id 2's demangled name is written twice, the last
 * wins), id 3 mangled only, id 7 used by a launch but absent from the
 * string table. Phases: threads 100 and 101 label their calls with RELABEL
 * records (PREFILL, then DECODE/STEP_0); thread 102 has two BEGIN/END ranges
 * (PREFILL, DECODE/STEP_0) that hold none of its calls. Two GPU spans
 * name no recorded call (orphans); two GPU slices on stream 3 overlap. Also
 * an unknown string kind, an unknown chunk type and an unknown record kind. */
#ifndef OBS_TRACE_FIXTURE_H
#define OBS_TRACE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#define FIX_PID 4242u
#define FIX_T0 1000000000ull          /* start_mono_ns; call times are relative to it */
#define FIX_REAL0 1700000000000000000ull
#define FIX_NO_GPU 0x1u               /* fixture_write option: no GPU spans */

struct fix_call {
    uint32_t tid;
    uint64_t index;     /* per-thread index */
    unsigned api;       /* enum obs_api */
    uint32_t kernel_id; /* name string id, 0 = none */
    const char *name;   /* the demangled name a reader must give ("" = none) */
    const char *mangled;
    uint32_t stream;
    uint32_t grid_x;
    uint16_t grid_y, grid_z, block_x, block_y, block_z;
    uint32_t shmem;
    uint64_t bytes;
    unsigned direction;
    unsigned flags; /* OBS_CALL_NESTED (the writer adds OBS_CALL_DUR_US itself) */
    uint64_t t_begin, dur; /* ns, t_begin relative to FIX_T0 */
    int32_t status;
    int64_t gpu_begin, gpu_end; /* relative to FIX_T0; -1 = no GPU time */
    const char *phase;          /* "" = none */
    int64_t step;               /* -1 = none */
};

extern const struct fix_call fixture_calls[];
extern const size_t fixture_ncalls;

/* Facts about the fixture the tests check. */
#define FIX_NTHREADS 4
#define FIX_NGPU 8
#define FIX_ORPHAN_SPANS 2
#define FIX_LOST 10          /* 7 buffer full (tid 101) + 3 write failed (tid 102) */
#define FIX_SELF_CALLS 12    /* tid 100: 8 (its larger snapshot), tid 101: 4 */
#define FIX_SELF_NS 340      /* 240 + 100 */
#define FIX_T_LAST 5000211400ull /* relative: the end of the last call */
#define FIX_EXE "/opt/app/obs_cuda"
#define FIX_CMDLINE "obs_cuda --steps 1"
#define FIX_THREAD101_NAME "worker, \"one\""

/* Write the fixture to path (options: FIX_NO_GPU). Returns 0 or -errno. */
int fixture_write(const char *path, unsigned options);

/* Write a trace of n calls from nthreads threads (kernel launches, copies
 * and syncs in a fixed mix, 4096 records per chunk), with a GPU span per
 * launch and copy when gpu is set: for benchmarks. Returns 0 or -errno. */
int fixture_write_big(const char *path, uint64_t n, unsigned nthreads, int gpu);

#endif
