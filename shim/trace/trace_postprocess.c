/* The shim's exit-time outputs: see trace_postprocess.h. */
#include "trace_postprocess.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_create.h"
#include "trace_deflate.h"
#include "trace_json.h"
#include "trace_perfetto.h"
#include "trace_reader.h"
#include "trace_summary.h"

/* The timeline into fd (closed here). 0, or -1 with errno set. */
static int write_timeline_to(const struct obs_trace *t, int fd, enum obs_timeline kind)
{
    FILE *f = fdopen(fd, "w");
    int rc;
    if (f == NULL) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    errno = 0;
    if (kind == OBS_TIMELINE_PERFETTO) {
        struct obs_perfetto_options opt = {obs_deflate_available() ? obs_deflate : NULL, 0};
        rc = obs_report_perfetto(t, f, &opt, NULL);
    } else {
        rc = obs_report_json(t, f, NULL);
    }
    if (fclose(f) != 0 && rc == 0)
        rc = -1;
    if (rc != 0 && errno == 0)
        errno = EIO;
    return rc;
}

static int write_timeline(const struct obs_trace *t, const char *path, enum obs_timeline kind, int device,
                          const char *obs_path, char *err, size_t errlen)
{
    size_t n = strlen(path) + 32;
    char *tmp, why[128];
    int fd, rc;

    if (device) { /* a FIFO or device the user named: written as it is */
        fd = obs_file_open_device(path, why, sizeof why);
        if (fd < 0) {
            snprintf(err, errlen, "%s: %s; the timeline was not written", path, why);
            return -1;
        }
        if (write_timeline_to(t, fd, kind) != 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    /* A new temporary beside the path, linked into place only where the
     * name is still free: a reader never sees half of the file, and
     * nothing at the name (a link someone planted) is followed or replaced. */
    tmp = malloc(n);
    if (tmp == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
        return -1;
    }
    fd = obs_file_create_temp(path, 0644, tmp, n);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-fd));
        free(tmp);
        return -1;
    }
    if (write_timeline_to(t, fd, kind) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    rc = obs_file_publish_new(tmp, path);
    free(tmp);
    if (rc == -EEXIST) {
        snprintf(err, errlen, "%s exists (%s) and is never replaced; the timeline was not written (%s %s -o FILE writes it)",
                 path, obs_file_describe(path, why, sizeof why),
                 kind == OBS_TIMELINE_PERFETTO ? "obs-report perfetto" : "obs-report json", obs_path);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        return -1;
    }
    return 0;
}

static int write_summary(const struct obs_trace *t, int fd, int brief, char *err, size_t errlen)
{
    struct obs_summary_options opt = {0, brief};
    int copy = dup(fd);
    FILE *f;
    int rc;

    if (copy < 0 || (f = fdopen(copy, "w")) == NULL) {
        snprintf(err, errlen, "summary: %s", strerror(errno));
        if (copy >= 0)
            close(copy);
        return -1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 16); /* few writes, not one per line */
    rc = obs_report_summary(t, f, &opt);
    if (fclose(f) != 0 && rc == 0)
        rc = -1;
    if (rc != 0)
        snprintf(err, errlen, "summary: %s", strerror(errno ? errno : EIO));
    return rc;
}

int obs_trace_postprocess(const char *obs_path, const char *path, enum obs_timeline kind, int path_is_device,
                          int summary_fd, int summary_brief, char *err, size_t errlen)
{
    struct obs_trace *t;
    char reason[256];
    int rc = 0;

    if (err && errlen)
        err[0] = '\0';
    if (obs_trace_open(obs_path, &t, reason, sizeof reason) != 0) {
        snprintf(err, errlen, "%s: %s", obs_path, reason);
        return -1;
    }
    if (path)
        rc = write_timeline(t, path, kind, path_is_device, obs_path, err, errlen);
    if (summary_fd >= 0 && write_summary(t, summary_fd, summary_brief, rc ? reason : err, rc ? sizeof reason : errlen) != 0)
        rc = -1;
    obs_trace_free(t);
    return rc;
}
