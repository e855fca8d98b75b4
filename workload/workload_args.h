// Command-line options of the reference workload (seed 000), parsed strictly
// and before the device is touched: a bad option prints usage and exits 2.
#ifndef OBS_WORKLOAD_ARGS_H
#define OBS_WORKLOAD_ARGS_H

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct WorkloadArgs {
    int batch = 1;
    int ctx = 1024;           // prompt length
    int hidden = 4096;        // hidden width proxy
    int decode = 128;         // generated tokens
    int prefill_rounds = 32;  // compute rounds per element in prefill
    int decode_rounds = 6;    // compute rounds per element in decode
    int repeat = 20;          // timed repetitions (best is reported)
    bool ranges = true;       // emit the ground-truth NVTX/roctx ranges
    bool graphs = false;      // capture the steady decode loop into a graph
};

static void workload_usage(FILE *out, const char *prog)
{
    std::fprintf(out,
        "usage: %s [--batch N] [--ctx N] [--hidden N] [--decode N]\n"
        "          [--prefill_rounds N] [--decode_rounds N] [--repeat N]\n"
        "          [--no-ranges] [--graphs] [--help]\n"
        "Reference prefill / KV-gather / decode workload. Options take --opt=N or --opt N;\n"
        "every N is a positive integer, and batch*ctx*hidden must fit 32-bit indexing.\n"
        "Prints: TTFT_ms=... tokens_per_s=... (best of N reps)\n"
        "  --no-ranges  do not emit the PREFILL/DECODE/KV_GATHER ranges\n"
        "  --graphs     capture the steady decode loop into a graph and replay it\n",
        prog);
}

// Parses a positive int; returns false on junk, sign, overflow or zero.
static bool workload_parse_positive(const char *text, int *out)
{
    if (text == nullptr || *text == '\0')
        return false;
    for (const char *p = text; *p; ++p)
        if (*p < '0' || *p > '9')
            return false;
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || v <= 0 || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

// Returns 0 on success, 1 when --help was asked (usage printed to stdout),
// 2 on a bad option (message and usage printed to stderr).
static int workload_parse_args(int argc, char **argv, WorkloadArgs *a)
{
    struct { const char *name; int *field; } opts[] = {
        {"--batch", &a->batch},
        {"--ctx", &a->ctx},
        {"--hidden", &a->hidden},
        {"--decode", &a->decode},
        {"--prefill_rounds", &a->prefill_rounds},
        {"--decode_rounds", &a->decode_rounds},
        {"--repeat", &a->repeat},
    };
    const char *prog = argc > 0 ? argv[0] : "obs_workload";
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
            workload_usage(stdout, prog);
            return 1;
        }
        if (std::strcmp(arg, "--no-ranges") == 0) { a->ranges = false; continue; }
        if (std::strcmp(arg, "--graphs") == 0) { a->graphs = true; continue; }
        const char *eq = std::strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : std::strlen(arg);
        int *field = nullptr;
        const char *name = nullptr;
        for (auto &o : opts)
            if (std::strlen(o.name) == name_len && std::strncmp(arg, o.name, name_len) == 0) {
                field = o.field;
                name = o.name;
            }
        if (field == nullptr) {
            std::fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
            workload_usage(stderr, prog);
            return 2;
        }
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : nullptr);
        if (value == nullptr) {
            std::fprintf(stderr, "%s: option %s needs a value\n", prog, name);
            workload_usage(stderr, prog);
            return 2;
        }
        if (!workload_parse_positive(value, field)) {
            std::fprintf(stderr, "%s: %s: '%s' is not a positive integer\n", prog, name, value);
            workload_usage(stderr, prog);
            return 2;
        }
    }
    long long elems = (long long)a->batch * a->ctx * a->hidden;
    if (elems > INT_MAX) {
        std::fprintf(stderr,
                     "%s: batch*ctx*hidden = %lld elements overflows 32-bit indexing (max %d)\n",
                     prog, elems, INT_MAX);
        workload_usage(stderr, prog);
        return 2;
    }
    return 0;
}

#endif
