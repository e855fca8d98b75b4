/* The simulated libraries in the test's process: see sim_dl.h. */
#include "sim_dl.h"

#include <dlfcn.h>
#include <stdlib.h>

#include "tap/basic.h"
#include "tap/process.h"

void *sim, *nvml;
char log_path[4200];

void *sym_in(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (p == NULL)
        bail("the simulated library does not export %s", name);
    return p;
}

size_t log_lines_with(const char *needle)
{
    char *text = test_read_file(log_path, NULL);
    size_t n = text ? count_lines_with(text, needle) : 0;
    free(text);
    return n;
}
