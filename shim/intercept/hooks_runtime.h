/* Between the runtime hooks (hooks_cudart.c, hooks_hip.c) and the code that
 * hands them out for pointers a program fetches itself: dlsym on a handle
 * of the runtime (ctypes, plugins opened with RTLD_LOCAL) and the symbol
 * references of libraries opened with RTLD_DEEPBIND (hooks_dlsym.c,
 * deepbind_rebind.c). */
#ifndef OBS_HOOKS_RUNTIME_H
#define OBS_HOOKS_RUNTIME_H

/* Our exported wrapper of the CUDA runtime symbol behind index (enum
 * obs_real_cuda_index), or NULL when the shim does not hook it. */
void *obs_cudart_wrapper_of(unsigned index);

/* The same for HIP (enum obs_real_hip_index). */
void *obs_hip_wrapper_of(unsigned index);

/* The same for NCCL (enum obs_real_nccl_index; hooks_nccl.c). */
void *obs_nccl_wrapper_of(unsigned index);

/* From hooks_dlsym.c: our wrapper for the symbol name (a runtime's, or the
 * driver's) and, in *real, the real function that wrapper calls; NULL
 * (and *real untouched) when we hook no such symbol or its real function
 * is not loaded. */
void *obs_runtime_hook_of(const char *name, void **real);
void *obs_driver_hook_of(const char *name, void **real);

#endif
