/* Tensor maps (CUtensorMap, sm_90's TMA descriptors) of the simulated
 * driver. Encoding one is a host-side call that fills a 128-byte opaque
 * object which only kernels read; kernels never run here, so the object
 * holds the global address (what cuTensorMapReplaceAddress changes) and
 * zeros. The arguments are checked as far as the answer depends on them:
 * the object and the address present, the address 16-byte aligned (32 for
 * some interleaves on a GPU; not checked), a rank of 1 to 5 (3 to 5 for
 * im2col). Device attribute 127 (TENSOR_MAP_ACCESS_SUPPORTED) says 1. */
#include "cudrv_sim.h"

#include <string.h>

#define TENSOR_MAP_BYTES 128
#define TENSOR_MAP_ALIGNMENT 16u

static obs_CUresult encode(const char *api, void *map, unsigned rank, unsigned min_rank, void *address)
{
    obs_CUresult err;
    drv_enter();
    err = map && address && ((uintptr_t)address % TENSOR_MAP_ALIGNMENT) == 0 && rank >= min_rank && rank <= 5
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        memset(map, 0, TENSOR_MAP_BYTES);
        memcpy(map, &address, sizeof address);
    }
    return drv_finish(api, DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuTensorMapEncodeTiled(void *tensorMap, int dataType, unsigned tensorRank, void *globalAddress,
                                               const uint64_t *globalDim, const uint64_t *globalStrides,
                                               const unsigned *boxDim, const unsigned *elementStrides, int interleave,
                                               int swizzle, int l2Promotion, int oobFill)
{
    (void)dataType, (void)globalDim, (void)globalStrides, (void)boxDim, (void)elementStrides;
    (void)interleave, (void)swizzle, (void)l2Promotion, (void)oobFill;
    return encode("cuTensorMapEncodeTiled", tensorMap, tensorRank, 1, globalAddress);
}

DRV_EXPORT obs_CUresult cuTensorMapEncodeIm2col(void *tensorMap, int dataType, unsigned tensorRank,
                                                void *globalAddress, const uint64_t *globalDim,
                                                const uint64_t *globalStrides, const int *pixelBoxLowerCorner,
                                                const int *pixelBoxUpperCorner, unsigned channelsPerPixel,
                                                unsigned pixelsPerColumn, const unsigned *elementStrides,
                                                int interleave, int swizzle, int l2Promotion, int oobFill)
{
    (void)dataType, (void)globalDim, (void)globalStrides, (void)pixelBoxLowerCorner, (void)pixelBoxUpperCorner;
    (void)channelsPerPixel, (void)pixelsPerColumn, (void)elementStrides, (void)interleave, (void)swizzle;
    (void)l2Promotion, (void)oobFill;
    return encode("cuTensorMapEncodeIm2col", tensorMap, tensorRank, 3, globalAddress);
}

DRV_EXPORT obs_CUresult cuTensorMapEncodeIm2colWide(void *tensorMap, int dataType, unsigned tensorRank,
                                                    void *globalAddress, const uint64_t *globalDim,
                                                    const uint64_t *globalStrides, int pixelBoxLowerCornerWidth,
                                                    int pixelBoxUpperCornerWidth, unsigned channelsPerPixel,
                                                    unsigned pixelsPerColumn, const unsigned *elementStrides,
                                                    int interleave, int mode, int swizzle, int l2Promotion,
                                                    int oobFill)
{
    (void)dataType, (void)globalDim, (void)globalStrides, (void)pixelBoxLowerCornerWidth;
    (void)pixelBoxUpperCornerWidth, (void)channelsPerPixel, (void)pixelsPerColumn, (void)elementStrides;
    (void)interleave, (void)mode, (void)swizzle, (void)l2Promotion, (void)oobFill;
    return encode("cuTensorMapEncodeIm2colWide", tensorMap, tensorRank, 3, globalAddress);
}

DRV_EXPORT obs_CUresult cuTensorMapReplaceAddress(void *tensorMap, void *globalAddress)
{
    obs_CUresult err;
    drv_enter();
    err = tensorMap && globalAddress && ((uintptr_t)globalAddress % TENSOR_MAP_ALIGNMENT) == 0
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        memcpy(tensorMap, &globalAddress, sizeof globalAddress);
    return drv_finish("cuTensorMapReplaceAddress", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}
