/* Creating output files without following anything planted: see
 * file_create.h. */
#include "file_create.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OBS_TEMP_TRIES 100

/* A name nobody can prepare in advance. O_EXCL alone keeps us safe with a
 * guessable one; randomness keeps a planted name from blocking us. */
static uint32_t random_u32(void)
{
    static atomic_uint counter;
    uint32_t r;
    struct timespec ts;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (uint32_t)ts.tv_nsec ^ ((uint32_t)ts.tv_sec << 20) ^ ((uint32_t)getpid() << 8);
    return r ^ ((atomic_fetch_add(&counter, 1u) + 1u) * 2654435761u);
}

static int open_new(const char *path, mode_t mode)
{
    int fd;
    do
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
    return fd >= 0 ? fd : -errno;
}

int obs_file_create_temp(const char *path, mode_t mode, char *tmp, size_t tmplen)
{
    int i, fd = -EEXIST;
    for (i = 0; i < OBS_TEMP_TRIES && fd == -EEXIST; i++) {
        int n = snprintf(tmp, tmplen, "%s.tmp.%ld.%08x", path, (long)getpid(), (unsigned)random_u32());
        if (n < 0 || (size_t)n >= tmplen)
            return -ENAMETOOLONG;
        fd = open_new(tmp, mode);
    }
    return fd;
}

/* link(2) errors that mean "this file system has no hard links". */
static int no_hard_links(int err)
{
    return err == EPERM || err == EOPNOTSUPP || err == ENOTSUP || err == ENOSYS;
}

int obs_file_publish_new(const char *tmp, const char *path)
{
    int err, fd;
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    err = errno;
    if (!no_hard_links(err)) {
        unlink(tmp);
        return -err;
    }
    /* Claim the name with an empty file of our own, then replace that
     * claim: a rename replaces a directory entry and never writes through
     * one, so even an entry swapped in meanwhile is not followed. */
    fd = open_new(path, 0600);
    if (fd < 0) {
        unlink(tmp);
        return fd;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        err = errno;
        unlink(tmp);
        return -err;
    }
    return 0;
}

static int is_device(const struct stat *st)
{
    return S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode);
}

int obs_file_open_device(const char *path, char *why, size_t whylen)
{
    struct stat st;
    int fd, flags;
    if (stat(path, &st) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    if (!is_device(&st)) {
        snprintf(why, whylen, "not a FIFO or character device (%s)", S_ISDIR(st.st_mode) ? "a directory" : "a file");
        return -1;
    }
    do
        fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        snprintf(why, whylen, "%s", errno == ENXIO ? "a FIFO with no reader (the shim does not wait for one)"
                                                   : strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !is_device(&st)) { /* swapped since the stat above */
        close(fd);
        snprintf(why, whylen, "not a FIFO or character device");
        return -1;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

const char *obs_file_describe(const char *path, char *buf, size_t buflen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        snprintf(buf, buflen, "something");
    else if (S_ISLNK(st.st_mode))
        snprintf(buf, buflen, "a symbolic link");
    else if (S_ISDIR(st.st_mode))
        snprintf(buf, buflen, "a directory");
    else if (S_ISREG(st.st_mode) && st.st_nlink > 1)
        snprintf(buf, buflen, "a file with %lu links", (unsigned long)st.st_nlink);
    else if (S_ISREG(st.st_mode))
        snprintf(buf, buflen, "a file");
    else if (S_ISFIFO(st.st_mode))
        snprintf(buf, buflen, "a FIFO");
    else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
        snprintf(buf, buflen, "a device");
    else
        snprintf(buf, buflen, "something");
    return buf;
}
