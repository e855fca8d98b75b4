/* Drives the shim's live-range API (shim/phases/ranges.h) for tests/t_ranges. It is
 * linked against libobsshim_rangestest.so, the shim's ranges code built as a
 * library whose name starts with libobsshim (so that the roctx stand-in
 * attributes its calls to obsshim, as it would for libobsshim.so).
 *
 *   ranges_app DOMAIN [THREADS ITERATIONS]
 *
 * DOMAIN is passed to obs_ranges_init ("" is NVTX's default domain). The app
 * prints "active=A handles=H1,H2,H3 same=S app_nvtx=N", then pushes and pops
 * PREFILL; DECODE/STEP_0 containing KV_GATHER; then an extra pop, push(0) and
 * an unknown handle (all three no-ops). Built with the CUDA toolkit's nvtx3
 * headers (OBS_HAVE_NVTX_HEADERS), it also wraps all of that in an "APP"
 * range of its own through the header-only NVTX3 client: two NVTX clients
 * in one process. With THREADS, that many threads then each push and pop
 * DECODE/STEP_0 > KV_GATHER ITERATIONS times. */
#include "phases/ranges.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef OBS_HAVE_NVTX_HEADERS
#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExt.h>
#define APP_NVTX 1
#else
#define APP_NVTX 0
#endif

#define COLOR_PREFILL 0xff76b900u
#define COLOR_STEP 0xff0071c5u
#define COLOR_GATHER 0xffed1c24u

static uint32_t h_step, h_gather;
static long iterations;

static void *thread_main(void *arg)
{
    (void)arg;
    for (long i = 0; i < iterations; i++) {
        obs_range_push(h_step);
        obs_range_push(h_gather);
        obs_range_pop();
        obs_range_pop();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s DOMAIN [THREADS ITERATIONS]\n", argv[0]);
        return 2;
    }
    bool active = obs_ranges_init(argv[1]);
#if APP_NVTX
    nvtxRangePushA("APP");
#endif
    uint32_t h_prefill = obs_range_handle("PREFILL", COLOR_PREFILL);
    h_step = obs_range_handle("DECODE/STEP_0", COLOR_STEP);
    h_gather = obs_range_handle("KV_GATHER", COLOR_GATHER);
    uint32_t again = obs_range_handle("PREFILL", 0x12345678u);
    printf("active=%d handles=%u,%u,%u same=%d app_nvtx=%d\n", active && obs_ranges_active(),
           h_prefill, h_step, h_gather, again == h_prefill, APP_NVTX);
    fflush(stdout);

    obs_range_push(h_prefill);
    obs_range_pop();
    obs_range_push(h_step);
    obs_range_push(h_gather);
    obs_range_pop();
    obs_range_pop();
    obs_range_pop();       /* nothing of ours open: no-op */
    obs_range_push(0);     /* no handle: no-op */
    obs_range_push(65000); /* never returned: no-op */
#if APP_NVTX
    nvtxRangePop();
#endif

    if (argc == 4) {
        int nthreads = atoi(argv[2]);
        iterations = atol(argv[3]);
        pthread_t tids[64];
        if (nthreads < 1 || nthreads > 64)
            return 2;
        for (int t = 0; t < nthreads; t++)
            if (pthread_create(&tids[t], NULL, thread_main, NULL) != 0)
                return 1;
        for (int t = 0; t < nthreads; t++)
            pthread_join(tids[t], NULL);
    }
    return 0;
}
