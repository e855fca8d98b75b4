/* Every API obsshim records, defined once: the writer stores the enum value
 * (uint16) in each call record, every reader maps it back to a name and kind.
 * Append only: the numeric values are part of the trace format (OBS_TRACE_VERSION).
 * X(id, "name", kind, family) */
#ifndef OBS_API_LIST_H
#define OBS_API_LIST_H

/* What a call does; the CSV's "kind" column. */
#define OBS_CALL_KIND_LIST(X) \
    X(NONE, "none")           \
    X(KERNEL, "kernel")       \
    X(MEMCPY, "memcpy")       \
    X(MEMSET, "memset")       \
    X(SYNC, "sync")           \
    X(GRAPH, "graph")         \
    X(ALLOC, "alloc")

enum obs_call_kind {
#define OBS_KIND_ENUM(id, name) OBS_KIND_##id,
    OBS_CALL_KIND_LIST(OBS_KIND_ENUM)
#undef OBS_KIND_ENUM
    OBS_KIND_COUNT
};

/* Which library the entry point belongs to. */
enum obs_api_family { OBS_FAMILY_CUDART = 1, OBS_FAMILY_HIP = 2, OBS_FAMILY_CUDA_DRIVER = 3 };

#define OBS_API_LIST(X)                                                                   \
    X(NONE, "none", NONE, CUDART)                                                         \
    /* CUDA runtime: launches */                                                          \
    X(cudaLaunchKernel, "cudaLaunchKernel", KERNEL, CUDART)                               \
    X(cudaLaunchKernel_ptsz, "cudaLaunchKernel_ptsz", KERNEL, CUDART)                     \
    X(__cudaLaunchKernel, "__cudaLaunchKernel", KERNEL, CUDART)                           \
    X(__cudaLaunchKernel_ptsz, "__cudaLaunchKernel_ptsz", KERNEL, CUDART)                 \
    X(cudaLaunchKernelExC, "cudaLaunchKernelExC", KERNEL, CUDART)                         \
    X(cudaLaunchKernelExC_ptsz, "cudaLaunchKernelExC_ptsz", KERNEL, CUDART)               \
    X(cudaLaunchCooperativeKernel, "cudaLaunchCooperativeKernel", KERNEL, CUDART)         \
    X(cudaLaunchCooperativeKernel_ptsz, "cudaLaunchCooperativeKernel_ptsz", KERNEL, CUDART) \
    X(cudaGraphLaunch, "cudaGraphLaunch", GRAPH, CUDART)                                  \
    X(cudaGraphLaunch_ptsz, "cudaGraphLaunch_ptsz", GRAPH, CUDART)                        \
    /* CUDA runtime: copies */                                                            \
    X(cudaMemcpy, "cudaMemcpy", MEMCPY, CUDART)                                           \
    X(cudaMemcpy_ptds, "cudaMemcpy_ptds", MEMCPY, CUDART)                                 \
    X(cudaMemcpyAsync, "cudaMemcpyAsync", MEMCPY, CUDART)                                 \
    X(cudaMemcpyAsync_ptsz, "cudaMemcpyAsync_ptsz", MEMCPY, CUDART)                       \
    X(cudaMemcpy2D, "cudaMemcpy2D", MEMCPY, CUDART)                                       \
    X(cudaMemcpy2D_ptds, "cudaMemcpy2D_ptds", MEMCPY, CUDART)                             \
    X(cudaMemcpy2DAsync, "cudaMemcpy2DAsync", MEMCPY, CUDART)                             \
    X(cudaMemcpy2DAsync_ptsz, "cudaMemcpy2DAsync_ptsz", MEMCPY, CUDART)                   \
    X(cudaMemcpy3D, "cudaMemcpy3D", MEMCPY, CUDART)                                       \
    X(cudaMemcpy3D_ptds, "cudaMemcpy3D_ptds", MEMCPY, CUDART)                             \
    X(cudaMemcpy3DAsync, "cudaMemcpy3DAsync", MEMCPY, CUDART)                             \
    X(cudaMemcpy3DAsync_ptsz, "cudaMemcpy3DAsync_ptsz", MEMCPY, CUDART)                   \
    X(cudaMemcpyPeer, "cudaMemcpyPeer", MEMCPY, CUDART)                                   \
    X(cudaMemcpyPeerAsync, "cudaMemcpyPeerAsync", MEMCPY, CUDART)                         \
    X(cudaMemcpyToSymbol, "cudaMemcpyToSymbol", MEMCPY, CUDART)                           \
    X(cudaMemcpyToSymbol_ptds, "cudaMemcpyToSymbol_ptds", MEMCPY, CUDART)                 \
    X(cudaMemcpyFromSymbol, "cudaMemcpyFromSymbol", MEMCPY, CUDART)                       \
    X(cudaMemcpyFromSymbol_ptds, "cudaMemcpyFromSymbol_ptds", MEMCPY, CUDART)             \
    X(cudaMemcpyToSymbolAsync, "cudaMemcpyToSymbolAsync", MEMCPY, CUDART)                 \
    X(cudaMemcpyToSymbolAsync_ptsz, "cudaMemcpyToSymbolAsync_ptsz", MEMCPY, CUDART)       \
    X(cudaMemcpyFromSymbolAsync, "cudaMemcpyFromSymbolAsync", MEMCPY, CUDART)             \
    X(cudaMemcpyFromSymbolAsync_ptsz, "cudaMemcpyFromSymbolAsync_ptsz", MEMCPY, CUDART)   \
    /* CUDA runtime: memsets */                                                           \
    X(cudaMemset, "cudaMemset", MEMSET, CUDART)                                           \
    X(cudaMemset_ptds, "cudaMemset_ptds", MEMSET, CUDART)                                 \
    X(cudaMemsetAsync, "cudaMemsetAsync", MEMSET, CUDART)                                 \
    X(cudaMemsetAsync_ptsz, "cudaMemsetAsync_ptsz", MEMSET, CUDART)                       \
    X(cudaMemset2D, "cudaMemset2D", MEMSET, CUDART)                                       \
    X(cudaMemset2D_ptds, "cudaMemset2D_ptds", MEMSET, CUDART)                             \
    X(cudaMemset2DAsync, "cudaMemset2DAsync", MEMSET, CUDART)                             \
    X(cudaMemset2DAsync_ptsz, "cudaMemset2DAsync_ptsz", MEMSET, CUDART)                   \
    X(cudaMemset3D, "cudaMemset3D", MEMSET, CUDART)                                       \
    X(cudaMemset3D_ptds, "cudaMemset3D_ptds", MEMSET, CUDART)                             \
    X(cudaMemset3DAsync, "cudaMemset3DAsync", MEMSET, CUDART)                             \
    X(cudaMemset3DAsync_ptsz, "cudaMemset3DAsync_ptsz", MEMSET, CUDART)                   \
    /* CUDA runtime: synchronisation */                                                   \
    X(cudaDeviceSynchronize, "cudaDeviceSynchronize", SYNC, CUDART)                       \
    X(cudaStreamSynchronize, "cudaStreamSynchronize", SYNC, CUDART)                       \
    X(cudaStreamSynchronize_ptsz, "cudaStreamSynchronize_ptsz", SYNC, CUDART)             \
    X(cudaEventSynchronize, "cudaEventSynchronize", SYNC, CUDART)                         \
    X(cudaStreamWaitEvent, "cudaStreamWaitEvent", SYNC, CUDART)                           \
    X(cudaStreamWaitEvent_ptsz, "cudaStreamWaitEvent_ptsz", SYNC, CUDART)                 \
    /* CUDA runtime: allocation */                                                        \
    X(cudaMalloc, "cudaMalloc", ALLOC, CUDART)                                            \
    X(cudaFree, "cudaFree", ALLOC, CUDART)                                                \
    X(cudaMallocAsync, "cudaMallocAsync", ALLOC, CUDART)                                  \
    X(cudaMallocAsync_ptsz, "cudaMallocAsync_ptsz", ALLOC, CUDART)                        \
    X(cudaFreeAsync, "cudaFreeAsync", ALLOC, CUDART)                                      \
    X(cudaFreeAsync_ptsz, "cudaFreeAsync_ptsz", ALLOC, CUDART)                            \
    /* HIP: launches */                                                                   \
    X(hipLaunchKernel, "hipLaunchKernel", KERNEL, HIP)                                    \
    X(hipLaunchKernel_spt, "hipLaunchKernel_spt", KERNEL, HIP)                            \
    X(hipModuleLaunchKernel, "hipModuleLaunchKernel", KERNEL, HIP)                        \
    X(hipExtLaunchKernel, "hipExtLaunchKernel", KERNEL, HIP)                              \
    X(hipExtModuleLaunchKernel, "hipExtModuleLaunchKernel", KERNEL, HIP)                  \
    X(hipLaunchCooperativeKernel, "hipLaunchCooperativeKernel", KERNEL, HIP)              \
    X(hipLaunchCooperativeKernel_spt, "hipLaunchCooperativeKernel_spt", KERNEL, HIP)      \
    X(hipGraphLaunch, "hipGraphLaunch", GRAPH, HIP)                                       \
    X(hipGraphLaunch_spt, "hipGraphLaunch_spt", GRAPH, HIP)                               \
    /* HIP: copies */                                                                     \
    X(hipMemcpy, "hipMemcpy", MEMCPY, HIP)                                                \
    X(hipMemcpy_spt, "hipMemcpy_spt", MEMCPY, HIP)                                        \
    X(hipMemcpyAsync, "hipMemcpyAsync", MEMCPY, HIP)                                      \
    X(hipMemcpyAsync_spt, "hipMemcpyAsync_spt", MEMCPY, HIP)                              \
    X(hipMemcpyHtoD, "hipMemcpyHtoD", MEMCPY, HIP)                                        \
    X(hipMemcpyDtoH, "hipMemcpyDtoH", MEMCPY, HIP)                                        \
    X(hipMemcpyDtoD, "hipMemcpyDtoD", MEMCPY, HIP)                                        \
    X(hipMemcpyHtoDAsync, "hipMemcpyHtoDAsync", MEMCPY, HIP)                              \
    X(hipMemcpyDtoHAsync, "hipMemcpyDtoHAsync", MEMCPY, HIP)                              \
    X(hipMemcpyDtoDAsync, "hipMemcpyDtoDAsync", MEMCPY, HIP)                              \
    X(hipMemcpy2D, "hipMemcpy2D", MEMCPY, HIP)                                            \
    X(hipMemcpy2D_spt, "hipMemcpy2D_spt", MEMCPY, HIP)                                    \
    X(hipMemcpy2DAsync, "hipMemcpy2DAsync", MEMCPY, HIP)                                  \
    X(hipMemcpy2DAsync_spt, "hipMemcpy2DAsync_spt", MEMCPY, HIP)                          \
    X(hipMemcpy3D, "hipMemcpy3D", MEMCPY, HIP)                                            \
    X(hipMemcpy3D_spt, "hipMemcpy3D_spt", MEMCPY, HIP)                                    \
    X(hipMemcpy3DAsync, "hipMemcpy3DAsync", MEMCPY, HIP)                                  \
    X(hipMemcpy3DAsync_spt, "hipMemcpy3DAsync_spt", MEMCPY, HIP)                          \
    X(hipMemcpyPeer, "hipMemcpyPeer", MEMCPY, HIP)                                        \
    X(hipMemcpyPeerAsync, "hipMemcpyPeerAsync", MEMCPY, HIP)                              \
    X(hipMemcpyToSymbol, "hipMemcpyToSymbol", MEMCPY, HIP)                                \
    X(hipMemcpyToSymbol_spt, "hipMemcpyToSymbol_spt", MEMCPY, HIP)                        \
    X(hipMemcpyFromSymbol, "hipMemcpyFromSymbol", MEMCPY, HIP)                            \
    X(hipMemcpyFromSymbol_spt, "hipMemcpyFromSymbol_spt", MEMCPY, HIP)                    \
    X(hipMemcpyToSymbolAsync, "hipMemcpyToSymbolAsync", MEMCPY, HIP)                      \
    X(hipMemcpyToSymbolAsync_spt, "hipMemcpyToSymbolAsync_spt", MEMCPY, HIP)              \
    X(hipMemcpyFromSymbolAsync, "hipMemcpyFromSymbolAsync", MEMCPY, HIP)                  \
    X(hipMemcpyFromSymbolAsync_spt, "hipMemcpyFromSymbolAsync_spt", MEMCPY, HIP)          \
    /* HIP: memsets */                                                                    \
    X(hipMemset, "hipMemset", MEMSET, HIP)                                                \
    X(hipMemset_spt, "hipMemset_spt", MEMSET, HIP)                                        \
    X(hipMemsetAsync, "hipMemsetAsync", MEMSET, HIP)                                      \
    X(hipMemsetAsync_spt, "hipMemsetAsync_spt", MEMSET, HIP)                              \
    X(hipMemsetD8, "hipMemsetD8", MEMSET, HIP)                                            \
    X(hipMemsetD8Async, "hipMemsetD8Async", MEMSET, HIP)                                  \
    X(hipMemsetD16, "hipMemsetD16", MEMSET, HIP)                                          \
    X(hipMemsetD16Async, "hipMemsetD16Async", MEMSET, HIP)                                \
    X(hipMemsetD32, "hipMemsetD32", MEMSET, HIP)                                          \
    X(hipMemsetD32Async, "hipMemsetD32Async", MEMSET, HIP)                                \
    X(hipMemset2D, "hipMemset2D", MEMSET, HIP)                                            \
    X(hipMemset2D_spt, "hipMemset2D_spt", MEMSET, HIP)                                    \
    X(hipMemset2DAsync, "hipMemset2DAsync", MEMSET, HIP)                                  \
    X(hipMemset2DAsync_spt, "hipMemset2DAsync_spt", MEMSET, HIP)                          \
    X(hipMemset3D, "hipMemset3D", MEMSET, HIP)                                            \
    X(hipMemset3D_spt, "hipMemset3D_spt", MEMSET, HIP)                                    \
    X(hipMemset3DAsync, "hipMemset3DAsync", MEMSET, HIP)                                  \
    X(hipMemset3DAsync_spt, "hipMemset3DAsync_spt", MEMSET, HIP)                          \
    /* HIP: synchronisation */                                                            \
    X(hipDeviceSynchronize, "hipDeviceSynchronize", SYNC, HIP)                            \
    X(hipStreamSynchronize, "hipStreamSynchronize", SYNC, HIP)                            \
    X(hipStreamSynchronize_spt, "hipStreamSynchronize_spt", SYNC, HIP)                    \
    X(hipEventSynchronize, "hipEventSynchronize", SYNC, HIP)                              \
    X(hipStreamWaitEvent, "hipStreamWaitEvent", SYNC, HIP)                                \
    X(hipStreamWaitEvent_spt, "hipStreamWaitEvent_spt", SYNC, HIP)                        \
    /* HIP: allocation */                                                                 \
    X(hipMalloc, "hipMalloc", ALLOC, HIP)                                                 \
    X(hipFree, "hipFree", ALLOC, HIP)                                                     \
    X(hipMallocAsync, "hipMallocAsync", ALLOC, HIP)                                       \
    X(hipFreeAsync, "hipFreeAsync", ALLOC, HIP)                                          \
    /* CUDA driver (libcuda.so.1): launches, copies, memsets, synchronisation */ \
    X(cuLaunchKernel, "cuLaunchKernel", KERNEL, CUDA_DRIVER)                             \
    X(cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz", KERNEL, CUDA_DRIVER)                   \
    X(cuLaunchKernelEx, "cuLaunchKernelEx", KERNEL, CUDA_DRIVER)                         \
    X(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz", KERNEL, CUDA_DRIVER)               \
    X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", KERNEL, CUDA_DRIVER)       \
    X(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel_ptsz", KERNEL, CUDA_DRIVER) \
    X(cuGraphLaunch, "cuGraphLaunch", GRAPH, CUDA_DRIVER)                                \
    X(cuGraphLaunch_ptsz, "cuGraphLaunch_ptsz", GRAPH, CUDA_DRIVER)                      \
    X(cuMemcpy, "cuMemcpy", MEMCPY, CUDA_DRIVER)                                         \
    X(cuMemcpy_ptds, "cuMemcpy_ptds", MEMCPY, CUDA_DRIVER)                               \
    X(cuMemcpyAsync, "cuMemcpyAsync", MEMCPY, CUDA_DRIVER)                               \
    X(cuMemcpyAsync_ptsz, "cuMemcpyAsync_ptsz", MEMCPY, CUDA_DRIVER)                     \
    X(cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", MEMCPY, CUDA_DRIVER)                           \
    X(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD_v2_ptds", MEMCPY, CUDA_DRIVER)                 \
    X(cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2", MEMCPY, CUDA_DRIVER)                           \
    X(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH_v2_ptds", MEMCPY, CUDA_DRIVER)                 \
    X(cuMemcpyDtoD_v2, "cuMemcpyDtoD_v2", MEMCPY, CUDA_DRIVER)                           \
    X(cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD_v2_ptds", MEMCPY, CUDA_DRIVER)                 \
    X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", MEMCPY, CUDA_DRIVER)                 \
    X(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync_v2_ptsz", MEMCPY, CUDA_DRIVER)       \
    X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2", MEMCPY, CUDA_DRIVER)                 \
    X(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync_v2_ptsz", MEMCPY, CUDA_DRIVER)       \
    X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2", MEMCPY, CUDA_DRIVER)                 \
    X(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync_v2_ptsz", MEMCPY, CUDA_DRIVER)       \
    X(cuMemcpy2D_v2, "cuMemcpy2D_v2", MEMCPY, CUDA_DRIVER)                               \
    X(cuMemcpy2D_v2_ptds, "cuMemcpy2D_v2_ptds", MEMCPY, CUDA_DRIVER)                     \
    X(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync_v2", MEMCPY, CUDA_DRIVER)                     \
    X(cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync_v2_ptsz", MEMCPY, CUDA_DRIVER)           \
    X(cuMemcpy3D_v2, "cuMemcpy3D_v2", MEMCPY, CUDA_DRIVER)                               \
    X(cuMemcpy3D_v2_ptds, "cuMemcpy3D_v2_ptds", MEMCPY, CUDA_DRIVER)                     \
    X(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync_v2", MEMCPY, CUDA_DRIVER)                     \
    X(cuMemcpy3DAsync_v2_ptsz, "cuMemcpy3DAsync_v2_ptsz", MEMCPY, CUDA_DRIVER)           \
    X(cuMemcpyPeer, "cuMemcpyPeer", MEMCPY, CUDA_DRIVER)                                 \
    X(cuMemcpyPeer_ptds, "cuMemcpyPeer_ptds", MEMCPY, CUDA_DRIVER)                       \
    X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", MEMCPY, CUDA_DRIVER)                       \
    X(cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync_ptsz", MEMCPY, CUDA_DRIVER)             \
    X(cuMemsetD8_v2, "cuMemsetD8_v2", MEMSET, CUDA_DRIVER)                               \
    X(cuMemsetD8_v2_ptds, "cuMemsetD8_v2_ptds", MEMSET, CUDA_DRIVER)                     \
    X(cuMemsetD16_v2, "cuMemsetD16_v2", MEMSET, CUDA_DRIVER)                             \
    X(cuMemsetD16_v2_ptds, "cuMemsetD16_v2_ptds", MEMSET, CUDA_DRIVER)                   \
    X(cuMemsetD32_v2, "cuMemsetD32_v2", MEMSET, CUDA_DRIVER)                             \
    X(cuMemsetD32_v2_ptds, "cuMemsetD32_v2_ptds", MEMSET, CUDA_DRIVER)                   \
    X(cuMemsetD8Async, "cuMemsetD8Async", MEMSET, CUDA_DRIVER)                           \
    X(cuMemsetD8Async_ptsz, "cuMemsetD8Async_ptsz", MEMSET, CUDA_DRIVER)                 \
    X(cuMemsetD16Async, "cuMemsetD16Async", MEMSET, CUDA_DRIVER)                         \
    X(cuMemsetD16Async_ptsz, "cuMemsetD16Async_ptsz", MEMSET, CUDA_DRIVER)               \
    X(cuMemsetD32Async, "cuMemsetD32Async", MEMSET, CUDA_DRIVER)                         \
    X(cuMemsetD32Async_ptsz, "cuMemsetD32Async_ptsz", MEMSET, CUDA_DRIVER)               \
    X(cuMemsetD2D8_v2, "cuMemsetD2D8_v2", MEMSET, CUDA_DRIVER)                           \
    X(cuMemsetD2D8_v2_ptds, "cuMemsetD2D8_v2_ptds", MEMSET, CUDA_DRIVER)                 \
    X(cuMemsetD2D16_v2, "cuMemsetD2D16_v2", MEMSET, CUDA_DRIVER)                         \
    X(cuMemsetD2D16_v2_ptds, "cuMemsetD2D16_v2_ptds", MEMSET, CUDA_DRIVER)               \
    X(cuMemsetD2D32_v2, "cuMemsetD2D32_v2", MEMSET, CUDA_DRIVER)                         \
    X(cuMemsetD2D32_v2_ptds, "cuMemsetD2D32_v2_ptds", MEMSET, CUDA_DRIVER)               \
    X(cuMemsetD2D8Async, "cuMemsetD2D8Async", MEMSET, CUDA_DRIVER)                       \
    X(cuMemsetD2D8Async_ptsz, "cuMemsetD2D8Async_ptsz", MEMSET, CUDA_DRIVER)             \
    X(cuMemsetD2D16Async, "cuMemsetD2D16Async", MEMSET, CUDA_DRIVER)                     \
    X(cuMemsetD2D16Async_ptsz, "cuMemsetD2D16Async_ptsz", MEMSET, CUDA_DRIVER)           \
    X(cuMemsetD2D32Async, "cuMemsetD2D32Async", MEMSET, CUDA_DRIVER)                     \
    X(cuMemsetD2D32Async_ptsz, "cuMemsetD2D32Async_ptsz", MEMSET, CUDA_DRIVER)           \
    X(cuCtxSynchronize, "cuCtxSynchronize", SYNC, CUDA_DRIVER)                           \
    X(cuCtxSynchronize_v2, "cuCtxSynchronize_v2", SYNC, CUDA_DRIVER)                     \
    X(cuStreamSynchronize, "cuStreamSynchronize", SYNC, CUDA_DRIVER)                     \
    X(cuStreamSynchronize_ptsz, "cuStreamSynchronize_ptsz", SYNC, CUDA_DRIVER)           \
    X(cuEventSynchronize, "cuEventSynchronize", SYNC, CUDA_DRIVER)                       \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", SYNC, CUDA_DRIVER)                         \
    X(cuStreamWaitEvent_ptsz, "cuStreamWaitEvent_ptsz", SYNC, CUDA_DRIVER)

enum obs_api {
#define OBS_API_ENUM(id, name, kind, family) OBS_API_##id,
    OBS_API_LIST(OBS_API_ENUM)
#undef OBS_API_ENUM
    OBS_API_COUNT
};

#endif
