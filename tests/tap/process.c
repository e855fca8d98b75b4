/* Run a program under test and capture its output: see process.h. */
#include "process.h"
#include "basic.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct growbuf {
    char *data;
    size_t len, cap;
};

static void grow_append(struct growbuf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->data = realloc(b->data, cap);
        if (b->data == NULL)
            bail("out of memory");
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* OBS_PRELOAD_FIRST (make check-sanitize sets it to the ASan runtime):
 * libraries put first in the LD_PRELOAD of a child that may load our
 * instrumented libraries, since a sanitizer's runtime must be the first
 * library loaded: one given LD_PRELOAD (the shim), or one whose
 * LD_LIBRARY_PATH the test sets (uses_libs: nvcc's workload on the
 * simulated runtime). Other children (sh, groff, chromium) run as they are:
 * they were not built with it. env has room for one more entry. A static
 * buffer: run_program is not reentrant, and nothing is left to leak. */
static void preload_first(char **env, int uses_libs)
{
    static char var[16384];
    const char *first = getenv("OBS_PRELOAD_FIRST");
    size_t i, fl;
    if (first == NULL || first[0] == '\0')
        return;
    fl = strlen(first);
    for (i = 0; env[i] != NULL; i++) {
        const char *v;
        if (strncmp(env[i], "LD_PRELOAD=", strlen("LD_PRELOAD=")) != 0)
            continue;
        v = env[i] + strlen("LD_PRELOAD=");
        if ((v[0] == '\0' && !uses_libs) || (strncmp(v, first, fl) == 0 && (v[fl] == ':' || v[fl] == '\0')))
            return;
        if ((size_t)snprintf(var, sizeof var, "LD_PRELOAD=%s%s%s", first, v[0] ? ":" : "", v) >= sizeof var)
            bail("LD_PRELOAD with OBS_PRELOAD_FIRST is too long");
        env[i] = var;
        return;
    }
    if (!uses_libs)
        return;
    if ((size_t)snprintf(var, sizeof var, "LD_PRELOAD=%s", first) >= sizeof var)
        bail("OBS_PRELOAD_FIRST is too long");
    env[i] = var;
    env[i + 1] = NULL;
}

static char **build_env(const char *const env_set[])
{
    size_t n = 0, m = 0, i, j;
    int sets_libs = 0;
    char **env;
    while (environ[n])
        n++;
    while (env_set && env_set[m])
        m++;
    env = calloc(n + m + 2, sizeof *env); /* + preload_first's */
    if (env == NULL)
        bail("out of memory");
    for (i = 0; i < n; i++)
        env[i] = environ[i];
    for (j = 0; j < m; j++) {
        const char *eq = strchr(env_set[j], '=');
        size_t key = eq ? (size_t)(eq - env_set[j]) : strlen(env_set[j]);
        size_t k, found = (size_t)-1;
        for (k = 0; k < n; k++)
            if (env[k] && strncmp(env[k], env_set[j], key) == 0 && env[k][key] == '=') {
                found = k;
                break;
            }
        if (eq == NULL) {
            if (found != (size_t)-1)
                env[found] = NULL;
        } else if (found != (size_t)-1) {
            env[found] = (char *)env_set[j];
        } else {
            env[n++] = (char *)env_set[j];
        }
    }
    /* Compact out removed entries. */
    for (i = 0, j = 0; i < n; i++)
        if (env[i])
            env[j++] = env[i];
    env[j] = NULL;
    for (j = 0; j < m; j++)
        sets_libs |= strncmp(env_set[j], "LD_LIBRARY_PATH=", strlen("LD_LIBRARY_PATH=")) == 0;
    preload_first(env, sets_libs);
    return env;
}

/* Run argv; when send_ms >= 0, send it signal send_sig send_ms ms after it
 * started (once). */
static int run_core(const char *const argv[], const char *const env_set[], int timeout_s, long send_ms,
                    int send_sig, struct run_result *res)
{
    int outp[2], errp[2];
    pid_t pid;
    struct growbuf out = {0}, err = {0};
    char **env;
    int status = 0, open_fds = 2;
    struct timespec start, now;

    memset(res, 0, sizeof *res);
    if (pipe(outp) != 0 || pipe(errp) != 0)
        return -1;
    env = build_env(env_set);
    pid = fork();
    if (pid < 0) {
        free(env);
        return -1;
    }
    if (pid == 0) {
        sigset_t none;
        dup2(outp[1], 1);
        dup2(errp[1], 2);
        close(outp[0]);
        close(errp[0]);
        close(outp[1]);
        close(errp[1]);
        /* The program under test starts with default signal dispositions and
         * none blocked, however the suite was started: a shell without job
         * control starts background commands with SIGINT and SIGQUIT
         * ignored, and a test of "dies of SIGINT" must not depend on that. */
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(argv[0], (char *const *)argv, env);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    free(env);
    close(outp[1]);
    close(errp[1]);
    clock_gettime(CLOCK_MONOTONIC, &start);
    grow_append(&out, "", 0);
    grow_append(&err, "", 0);
    while (open_fds > 0) {
        struct pollfd fds[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
        char buf[65536];
        int k, r, wait_ms = 200;
        if (send_ms >= 0) { /* wake up in time to send it */
            long elapsed;
            clock_gettime(CLOCK_MONOTONIC, &now);
            elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
            if (elapsed >= send_ms) {
                kill(pid, send_sig);
                send_ms = -1;
            } else if (send_ms - elapsed < wait_ms) {
                wait_ms = (int)(send_ms - elapsed);
            }
        }
        r = poll(fds, 2, wait_ms);
        if (r < 0 && errno != EINTR)
            break;
        for (k = 0; k < 2; k++) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t got = read(fds[k].fd, buf, sizeof buf);
            if (got > 0) {
                grow_append(k == 0 ? &out : &err, buf, (size_t)got);
            } else if (got == 0 || (got < 0 && errno != EINTR)) {
                close(fds[k].fd);
                if (k == 0)
                    outp[0] = -1;
                else
                    errp[0] = -1;
                open_fds--;
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (timeout_s > 0 && now.tv_sec - start.tv_sec > timeout_s) {
            diag("killing %s after %d s", argv[0], timeout_s);
            kill(pid, SIGKILL);
            break;
        }
    }
    if (outp[0] >= 0)
        close(outp[0]);
    if (errp[0] >= 0)
        close(errp[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    res->exited = WIFEXITED(status);
    res->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    res->out = out.data;
    res->out_len = out.len;
    res->err = err.data;
    res->err_len = err.len;
    return 0;
}

int run_program(const char *const argv[], const char *const env_set[], int timeout_s,
                struct run_result *res)
{
    return run_core(argv, env_set, timeout_s, -1, 0, res);
}

int run_program_signal(const char *const argv[], const char *const env_set[], int timeout_s, long after_ms,
                       int sig, struct run_result *res)
{
    return run_core(argv, env_set, timeout_s, after_ms < 0 ? 0 : after_ms, sig, res);
}

void run_result_free(struct run_result *res)
{
    free(res->out);
    free(res->err);
    memset(res, 0, sizeof *res);
}

const char *test_builddir(void)
{
    const char *d = getenv("OBS_BUILDDIR");
    return d && *d ? d : ".";
}

const char *test_srcdir(void)
{
    const char *d = getenv("OBS_SRCDIR");
    return d && *d ? d : ".";
}

const char *test_path(const char *dir, const char *rel)
{
    static char slots[8][4096];
    static unsigned next;
    char *p = slots[next++ % 8];
    snprintf(p, sizeof slots[0], "%s/%s", dir, rel);
    return p;
}

int test_executable(const char *path)
{
    return access(path, X_OK) == 0;
}

static char tmpdir_path[4096];

static void remove_tmpdir(void)
{
    char cmd[4200];
    if (tmpdir_path[0] && getenv("OBS_KEEP_TMP") == NULL) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir_path);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmpdir_path);
    }
}

const char *test_tmpdir(void)
{
    if (!tmpdir_path[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir_path, sizeof tmpdir_path, "%s/obstest.XXXXXX", base && *base ? base : "/tmp");
        if (mkdtemp(tmpdir_path) == NULL)
            bail("mkdtemp: %s", strerror(errno));
        atexit(remove_tmpdir);
    }
    return tmpdir_path;
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct growbuf b = {0};
    char buf[65536];
    size_t n;
    if (f == NULL)
        return NULL;
    grow_append(&b, "", 0);
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        grow_append(&b, buf, n);
    fclose(f);
    if (len)
        *len = b.len;
    return b.data;
}

void test_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len)
        bail("cannot write %s", path);
    close(fd);
}

const char *test_key_value(const char *text, const char *key)
{
    static char buf[1024];
    size_t n = strlen(key);
    const char *p = text;
    buf[0] = '\0';
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > n && strncmp(p, key, n) == 0 && p[n] == '=') {
            snprintf(buf, sizeof buf, "%.*s", (int)(len - n - 1), p + n + 1);
            break;
        }
        p = nl ? nl + 1 : NULL;
    }
    return buf;
}

size_t test_csv_split(char *line, char **fields, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (n < max) {
        char *w = p;
        fields[n++] = p;
        if (*p == '"') {
            p++;
            while (*p != '\0') {
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            while (*p && *p != ',') /* text after the closing quote: ignored */
                p++;
        } else {
            while (*p && *p != ',')
                *w++ = *p++;
        }
        if (*p != ',') {
            *w = '\0';
            break;
        }
        *w = '\0';
        p++;
    }
    return n;
}

int run_exited_with(const struct run_result *res, int status)
{
    return res->exited && res->status == status;
}

const char *test_on_path(const char *name, char *found, size_t foundlen)
{
    const char *path = getenv("PATH");
    while (path != NULL && *path != '\0') {
        size_t len = strcspn(path, ":");
        snprintf(found, foundlen, "%.*s/%s", (int)len, path, name);
        if (len > 0 && access(found, X_OK) == 0)
            return found;
        path += len + (path[len] == ':');
    }
    return NULL;
}

size_t count_lines_with(const char *text, const char *needle)
{
    size_t count = 0;
    const char *p = text;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *hit = memmem(p, n, needle, strlen(needle));
        if (hit)
            count++;
        p += n + (nl ? 1 : 0);
    }
    return count;
}
