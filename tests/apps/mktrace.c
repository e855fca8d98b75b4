/* mktrace: write synthetic .obs traces with the writer API.
 *   mktrace fixture OUT.obs [--no-gpu]     the test fixture (trace_fixture.h)
 *   mktrace big N OUT.obs [--threads T] [--gpu]
 *                                          N calls for benchmarks: obs-report
 *                                          csv/json throughput
 *   mktrace phased N OUT.obs [--threads T] [--kernels K] [--layers L] [--steps S] [--gpu]
 *                                          at most N calls in LLM-shaped generations
 *                                          with phases (phased_big.h): obs-report
 *                                          phases / suggest-phases run time */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phased_big.h"
#include "trace_fixture.h"

static int usage(void)
{
    fprintf(stderr, "usage: mktrace fixture OUT.obs [--no-gpu]\n"
                    "       mktrace big N OUT.obs [--threads T] [--gpu]\n"
                    "       mktrace phased N OUT.obs [--threads T] [--kernels K] [--layers L] [--steps S] [--gpu]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int rc, i;
    if (argc >= 3 && strcmp(argv[1], "fixture") == 0) {
        unsigned opt = argc > 3 && strcmp(argv[3], "--no-gpu") == 0 ? FIX_NO_GPU : 0;
        rc = fixture_write(argv[2], opt);
    } else if (argc >= 4 && strcmp(argv[1], "big") == 0) {
        unsigned threads = 1;
        int gpu = 0;
        for (i = 4; i < argc; i++) {
            if (strcmp(argv[i], "--gpu") == 0)
                gpu = 1;
            else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
                threads = (unsigned)strtoul(argv[++i], NULL, 10);
            else
                return usage();
        }
        rc = fixture_write_big(argv[3], strtoull(argv[2], NULL, 10), threads, gpu);
    } else if (argc >= 4 && strcmp(argv[1], "phased") == 0) {
        struct phased_big_opts o = {.calls = strtoull(argv[2], NULL, 10), .threads = 1, .kernels = 64,
                                    .layers = 8, .steps = 64, .gpu = 0};
        for (i = 4; i < argc; i++) {
            unsigned *value = strcmp(argv[i], "--threads") == 0   ? &o.threads
                              : strcmp(argv[i], "--kernels") == 0 ? &o.kernels
                              : strcmp(argv[i], "--layers") == 0  ? &o.layers
                              : strcmp(argv[i], "--steps") == 0   ? &o.steps
                                                                  : NULL;
            if (strcmp(argv[i], "--gpu") == 0)
                o.gpu = 1;
            else if (value != NULL && i + 1 < argc)
                *value = (unsigned)strtoul(argv[++i], NULL, 10);
            else
                return usage();
        }
        rc = phased_big_write(argv[3], &o);
    } else {
        return usage();
    }
    if (rc != 0) {
        fprintf(stderr, "mktrace: %s\n", strerror(-rc));
        return 1;
    }
    return 0;
}
