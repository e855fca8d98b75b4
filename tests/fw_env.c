/* The frameworks' environment: see fw_env.h. */
#include "fw_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

void fw_env_require(struct fw_env *e)
{
    const char *dir = getenv("OBS_FRAMEWORKS_ENV"), *home = getenv("HOME");
    const char *argv[] = {NULL, "-c",
                          "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, "
                          "'transformers', transformers.__version__)",
                          NULL};
    struct run_result res;

    memset(e, 0, sizeof *e);
    if (getenv("OBS_SANITIZE") != NULL && *getenv("OBS_SANITIZE") != '\0')
        skip_all("not under a sanitizer (PyTorch with the sanitizer's runtime preloaded is another test)");
    if (dir != NULL && *dir != '\0')
        snprintf(e->dir, sizeof e->dir, "%s", dir);
    else if (home != NULL)
        snprintf(e->dir, sizeof e->dir, "%s/.cache/obsshim/frameworks", home);
    snprintf(e->python, sizeof e->python, "%s/bin/python", e->dir);
    if (e->dir[0] == '\0' || !test_executable(e->python))
        skip_all("no frameworks environment at %s (contrib/install-deps --frameworks makes it; "
                 "OBS_FRAMEWORKS_ENV names another)", e->dir[0] ? e->dir : "$HOME/.cache/obsshim/frameworks");
    argv[0] = e->python;
    if (run_program(argv, (const char *const[]){"LD_PRELOAD", "PYTHONDONTWRITEBYTECODE=1", NULL}, 300, &res) != 0 ||
        !res.exited || res.status != 0)
        skip_all("%s cannot import torch and transformers", e->python);
    snprintf(e->versions, sizeof e->versions, "%s", res.out ? strtok(res.out, "\n") : "");
    run_result_free(&res);
    snprintf(e->obs_run, sizeof e->obs_run, "%s", shim_build_path("contrib/obs-run"));
    snprintf(e->driver_dir, sizeof e->driver_dir, "%s", shim_build_path("sim/driver"));
    snprintf(e->scripts, sizeof e->scripts, "%s", test_path(test_srcdir(), "tests/frameworks"));
    if (!test_executable(e->obs_run))
        skip_all("%s not built", e->obs_run);
}
