/* shim/abi/nccl_abi.h against the toolkit's nccl.h: the unique id's size,
 * the result codes, data types and reductions have the real values, the
 * lists of trace_format.h (type sizes, reduction names) agree with them,
 * and every entry point of the three X-macro lists exists in the real
 * libnccl.so.2 of the toolkit (those NCCL added in 2.28 included: the
 * toolkit's is 2.28). Built with the toolkit's headers when configure found
 * CUDA (OBS_HAVE_CUDA_HEADERS) and the toolkit has nccl.h; otherwise it
 * skips, saying why. */
#include "tap/basic.h"

#if !defined(OBS_HAVE_CUDA_HEADERS) || !__has_include(<nccl.h>)

int main(void)
{
    skip_all("no nccl.h (no CUDA toolkit found by configure, or one without NCCL): nothing to compare with");
}

#else

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* nccl.h declares ncclGroupStart() without (void) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

/* Beside the real prototypes, ours would conflict: types only. */
#define OBS_NCCL_ABI_NO_PROTOTYPES
#define OBS_CUDA_ABI_NO_PROTOTYPES
#include "abi/nccl_abi.h"
#include "trace/trace_format.h"

#define SAME_VALUE(obs, real) is_int((long long)(real), (long long)(obs), #real)

static void test_values(void)
{
    is_int((long long)sizeof(ncclUniqueId), (long long)sizeof(obs_ncclUniqueId), "sizeof(ncclUniqueId)");
    SAME_VALUE(OBS_NCCL_UNIQUE_ID_BYTES, NCCL_UNIQUE_ID_BYTES);
    SAME_VALUE(OBS_NCCL_SPLIT_NOCOLOR, NCCL_SPLIT_NOCOLOR);
    is_int((long long)sizeof(ncclResult_t), (long long)sizeof(obs_ncclResult_t), "sizeof(ncclResult_t)");
    is_int((long long)sizeof(ncclDataType_t), (long long)sizeof(obs_ncclDataType_t), "sizeof(ncclDataType_t)");
    is_int((long long)sizeof(ncclRedOp_t), (long long)sizeof(obs_ncclRedOp_t), "sizeof(ncclRedOp_t)");
    SAME_VALUE(obs_ncclSuccess, ncclSuccess);
    SAME_VALUE(obs_ncclUnhandledCudaError, ncclUnhandledCudaError);
    SAME_VALUE(obs_ncclSystemError, ncclSystemError);
    SAME_VALUE(obs_ncclInternalError, ncclInternalError);
    SAME_VALUE(obs_ncclInvalidArgument, ncclInvalidArgument);
    SAME_VALUE(obs_ncclInvalidUsage, ncclInvalidUsage);
    SAME_VALUE(obs_ncclRemoteError, ncclRemoteError);
    SAME_VALUE(obs_ncclInProgress, ncclInProgress);
#define OBS_T_TYPE(name, value, size, text) SAME_VALUE(obs_##name, name);
    OBS_NCCL_ABI_DATATYPES(OBS_T_TYPE)
#undef OBS_T_TYPE
    SAME_VALUE(obs_ncclNumTypes, ncclNumTypes);
#define OBS_T_REDOP(name, value, text) SAME_VALUE(obs_##name, name);
    OBS_NCCL_ABI_REDOPS(OBS_T_REDOP)
#undef OBS_T_REDOP
    SAME_VALUE(obs_ncclNumOps, ncclNumOps);
}

/* The trace format's own lists (trace/ includes nothing of abi/): the same
 * values, sizes and names as the ABI slice's. */
static void test_trace_lists(void)
{
    static const struct {
        int value;
        const char *name;
        unsigned size;
    } abi[] = {
#define OBS_T_ROW(name, value, size, text) {value, text, size},
        OBS_NCCL_ABI_DATATYPES(OBS_T_ROW)
#undef OBS_T_ROW
    }, fmt[] = {
#define OBS_T_FMT(value, text, size) {value, text, size},
        OBS_NCCL_TYPE_LIST(OBS_T_FMT)
#undef OBS_T_FMT
    };
    static const struct {
        int value;
        const char *name;
    } abi_ops[] = {
#define OBS_T_OP(name, value, text) {value, text},
        OBS_NCCL_ABI_REDOPS(OBS_T_OP)
#undef OBS_T_OP
    }, fmt_ops[] = {
#define OBS_T_FOP(value, text) {value, text},
        OBS_NCCL_REDOP_LIST(OBS_T_FOP)
#undef OBS_T_FOP
    };
    size_t i, bad = 0;
    is_int(OBS_NCCL_TYPES, (long long)(sizeof abi / sizeof abi[0]), "12 data types");
    for (i = 0; i < sizeof abi / sizeof abi[0] && i < sizeof fmt / sizeof fmt[0]; i++)
        bad += abi[i].value != fmt[i].value || abi[i].size != fmt[i].size || strcmp(abi[i].name, fmt[i].name) != 0;
    is_int(0, (long long)bad, "trace_format.h's data types: the ABI's values, sizes and names");
    bad = 0;
    for (i = 0; i < sizeof abi_ops / sizeof abi_ops[0] && i < sizeof fmt_ops / sizeof fmt_ops[0]; i++)
        bad += abi_ops[i].value != fmt_ops[i].value || strcmp(abi_ops[i].name, fmt_ops[i].name) != 0;
    is_int(OBS_NCCL_REDOPS, (long long)(sizeof fmt_ops / sizeof fmt_ops[0]), "5 reductions");
    is_int(0, (long long)bad, "trace_format.h's reductions: the ABI's");
}

/* Every listed entry point in the toolkit's libnccl.so.2. */
static void test_symbols(void)
{
    static const char *const names[] = {
#define OBS_T_NAME(name, ret, params, args) #name,
        OBS_NCCL_COLL_API(OBS_T_NAME) OBS_NCCL_COMM_API(OBS_T_NAME) OBS_NCCL_SUPPORT_API(OBS_T_NAME)
#undef OBS_T_NAME
    };
    void *lib = dlopen(OBS_NCCL_LIBRARY, RTLD_LAZY | RTLD_LOCAL);
    size_t i, missing = 0;
    if (lib == NULL) {
        skip("cannot open %s: %s", OBS_NCCL_LIBRARY, dlerror());
        return;
    }
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (dlsym(lib, names[i]) == NULL) {
            diag("%s lacks %s", OBS_NCCL_LIBRARY, names[i]);
            missing++;
        }
    is_int(0, (long long)missing, "every listed entry point (%zu) is in the toolkit's libnccl.so.2",
           sizeof names / sizeof names[0]);
}

int main(void)
{
    plan_lazy();
    test_values();
    test_trace_lists();
    test_symbols();
    return 0;
}

#endif
