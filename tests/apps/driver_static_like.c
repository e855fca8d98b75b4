/* driver_static_like: reaches the CUDA driver exactly as nvcc's static
 * cudart does: dlopen("libcuda.so.1"), dlsym "cuGetProcAddress_v2" (or,
 * when absent or with --proc-v1, the CUDA 11.3 "cuGetProcAddress"), then
 * every entry point through it by (base name, CUDA version, flags), flags 0
 * for the legacy-stream variants and 2 (PER_THREAD_DEFAULT_STREAM) for the
 * _ptsz/_ptds ones. It links no CUDA library. Then the call sequence of
 * driver_calls.c through the pointers it was given.
 *
 * Output, in order (each "api status" line is one call into the driver):
 *   1. One line "cuGetProcAddress_v2 0" per row of
 *      OBS_CUDA_DRIVER_PROC_VERSIONS: each row asked with its own version
 *      and flags 0 (2 for the per-thread rows), as CUDA 13's static cudart
 *      asks (measured: cuLaunchKernel 4000/0 and 7000/2, cuMemcpyHtoD
 *      3020/0 and 7000/2, cuLaunchKernelEx 11060/0 and 11060/2 ...); so
 *      cuMemcpyHtoD at 2000 gives the 32-bit cuMemcpyHtoD.
 *   2. DRV_PROBES lookups with expected failures or variants, each an
 *      "api status" line and a line
 *      "= probe NAME VERSION FLAGS rc RC status S symbol SYM", SYM being the
 *      expected symbol when the pointer equals dlsym(libcuda, expected),
 *      "-" when NULL, "other" otherwise.
 *   3. the sequence (DRV_CALLS_SEQUENCE calls, driver_calls.c).
 *   4. "calls N failed F". Exit 0 when F is 0. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "driver_calls.h"

static void *libcuda;
static obs_fn_cuGetProcAddress_v2 get_proc_v2;
static obs_fn_cuGetProcAddress get_proc_v1;

/* One lookup, through whichever cuGetProcAddress we have; prints its line. */
static int get_proc(const char *name, void **pfn, int version, unsigned long long flags,
                    obs_CUdriverProcAddressQueryResult *status, int use_v1)
{
    int rc;
    *status = -1;
    if (use_v1 || get_proc_v2 == NULL) {
        rc = get_proc_v1(name, pfn, version, flags);
        printf("cuGetProcAddress %d\n", rc);
    } else {
        rc = get_proc_v2(name, pfn, version, flags, status);
        printf("cuGetProcAddress_v2 %d\n", rc);
    }
    return rc;
}

struct proc_row {
    const char *base;
    int version, per_thread;
    void **slot;
};

static unsigned long fetch_failures;

static void fetch_all(struct drv_api *api, int use_v1)
{
#define ROW(base, version, per_thread, symbol) {#base, version, per_thread, (void **)&api->symbol},
    const struct proc_row rows[] = {OBS_CUDA_DRIVER_PROC_VERSIONS(ROW)};
#undef ROW
    size_t i, n = sizeof rows / sizeof rows[0];

    for (i = 0; i < n; i++) {
        obs_CUdriverProcAddressQueryResult status;
        void *fn = NULL;
        int rc = get_proc(rows[i].base, &fn, rows[i].version, rows[i].per_thread ? 2 : 0, &status, use_v1);
        if (rc != 0 || fn == NULL) {
            fetch_failures++;
            fprintf(stderr, "driver_static_like: cuGetProcAddress(%s, %d) failed: %d\n", rows[i].base,
                    rows[i].version, rc);
        }
        *rows[i].slot = fn;
    }
    printf("= proc_rows %zu\n", n);
}

struct probe {
    const char *name;
    int version;
    unsigned long long flags;
    int use_v1;
    int want_rc, want_status;
    const char *want_symbol; /* NULL: pfn must be NULL */
};

static const struct probe probes[] = {
    {"cuNoSuchEntry", 13000, 0, 0, 500, 1, NULL},
    {"cudnnSimFakeEntry", 13000, 0, 0, 500, 1, NULL},
    {"cuLaunchKernelEx", 11050, 0, 0, 500, 2, NULL},
    {"cuLaunchKernel", 13000, 4, 0, 1, 1, NULL},
    {"cuLaunchKernel", 13010, 0, 0, 1, 1, NULL},
    {"cuMemcpyHtoD", 13000, 0, 0, 0, 0, "cuMemcpyHtoD_v2"},
    {"cuMemcpyHtoD", 13000, 2, 0, 0, 0, "cuMemcpyHtoD_v2_ptds"},
    {"cuMemcpyHtoD", 3000, 0, 0, 0, 0, "cuMemcpyHtoD"},
    {"cuMemcpyHtoD", 6050, 2, 0, 0, 0, "cuMemcpyHtoD_v2"},
    {"cuEventSynchronize", 13000, 2, 0, 0, 0, "cuEventSynchronize"},
    {"cuCtxSynchronize", 12090, 0, 0, 0, 0, "cuCtxSynchronize"},
    {"cuCtxSynchronize", 13000, 0, 0, 0, 0, "cuCtxSynchronize_v2"},
    {"cuLaunchKernel", 13000, 1, 0, 0, 0, "cuLaunchKernel"},
    {"cuGraphLaunch", 13000, 2, 0, 0, 0, "cuGraphLaunch_ptsz"},
    {"cuGetProcAddress", 11030, 0, 0, 0, 0, "cuGetProcAddress"},
    {"cuLaunchKernel", 12000, 2, 1, 0, -1, "cuLaunchKernel_ptsz"},
    {"cuNoSuchEntry", 12000, 0, 1, 500, -1, NULL},
};
#define DRV_PROBES (sizeof probes / sizeof probes[0])

static void run_probes(void)
{
    size_t i;
    for (i = 0; i < DRV_PROBES; i++) {
        const struct probe *p = &probes[i];
        obs_CUdriverProcAddressQueryResult status;
        void *fn = (void *)&status; /* must be overwritten */
        const char *sym;
        int rc = get_proc(p->name, &fn, p->version, p->flags, &status, p->use_v1);
        if (fn == NULL)
            sym = "-";
        else if (p->want_symbol && fn == dlsym(libcuda, p->want_symbol))
            sym = p->want_symbol;
        else
            sym = "other";
        printf("= probe %s %d %llu rc %d status %d symbol %s\n", p->name, p->version, p->flags, rc,
               (int)status, sym);
        if (rc != p->want_rc || (p->want_status >= 0 && (int)status != p->want_status) ||
            (p->want_symbol == NULL) != (fn == NULL)) {
            fetch_failures++;
            fprintf(stderr, "driver_static_like: probe %s %d %llu: rc %d status %d\n", p->name, p->version,
                    p->flags, rc, (int)status);
        }
    }
}

int main(int argc, char **argv)
{
    static struct drv_api api;
    int use_v1 = argc > 1 && strcmp(argv[1], "--proc-v1") == 0;

    if (argc > 1 && !use_v1) {
        fprintf(stderr, "usage: driver_static_like [--proc-v1]\n");
        return 2;
    }
    libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (libcuda == NULL) {
        fprintf(stderr, "driver_static_like: %s\n", dlerror());
        return 1;
    }
    get_proc_v2 = (obs_fn_cuGetProcAddress_v2)dlsym(libcuda, "cuGetProcAddress_v2");
    get_proc_v1 = (obs_fn_cuGetProcAddress)dlsym(libcuda, "cuGetProcAddress");
    if (get_proc_v2 == NULL && get_proc_v1 == NULL) {
        fprintf(stderr, "driver_static_like: no cuGetProcAddress in libcuda.so.1\n");
        return 1;
    }
    if (use_v1 && get_proc_v1 == NULL) {
        fprintf(stderr, "driver_static_like: no cuGetProcAddress (4 arguments) in libcuda.so.1\n");
        return 1;
    }
    fetch_all(&api, use_v1);
    run_probes();
    /* Not a driver entry point: found with dlsym only. */
    api.cudnnSimFakeEntry = (int (*)(void))dlsym(libcuda, "cudnnSimFakeEntry");
    drv_run_calls(&api);
    if (fetch_failures)
        fprintf(stderr, "driver_static_like: %lu lookups failed\n", fetch_failures);
    return drv_finish_report() || fetch_failures ? 1 : 0;
}
