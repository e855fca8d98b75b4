/* The shim's exit-time outputs: see trace_postprocess.h. */
#include "trace_postprocess.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_deflate.h"
#include "trace_json.h"
#include "trace_perfetto.h"
#include "trace_reader.h"
#include "trace_summary.h"

static int write_timeline(const struct obs_trace *t, const char *path, enum obs_timeline kind, char *err,
                          size_t errlen)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    FILE *f;
    struct stat st;
    int rc, direct;

    if (tmp == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
        return -1;
    }
    /* A temporary file renamed into place, unless the path is something a
     * rename would replace (/dev/null, a FIFO, a symlink). */
    direct = lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    f = fopen(direct ? path : tmp, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    if (kind == OBS_TIMELINE_PERFETTO) {
        struct obs_perfetto_options opt = {obs_deflate_available() ? obs_deflate : NULL, 0};
        rc = obs_report_perfetto(t, f, &opt, NULL);
    } else {
        rc = obs_report_json(t, f, NULL);
    }
    if (fclose(f) != 0 && rc == 0)
        rc = -1;
    if (rc == 0 && !direct && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
        if (!direct)
            unlink(tmp);
    }
    free(tmp);
    return rc;
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

int obs_trace_postprocess(const char *obs_path, const char *path, enum obs_timeline kind, int summary_fd,
                          int summary_brief, char *err, size_t errlen)
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
        rc = write_timeline(t, path, kind, err, errlen);
    if (summary_fd >= 0 && write_summary(t, summary_fd, summary_brief, rc ? reason : err, rc ? sizeof reason : errlen) != 0)
        rc = -1;
    obs_trace_free(t);
    return rc;
}
