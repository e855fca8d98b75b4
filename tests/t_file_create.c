/* How libobstrace creates files (shim/trace/file_create.c): temporaries
 * that are always new, published only under a free name (a symbolic link,
 * dangling or not, a hard link or a directory at the name: refused, left
 * as it was, the unrelated file untouched), also where the file system has
 * no hard links (this test's own link() says EPERM, as vfat does); a FIFO
 * or character device named on purpose, and nothing else. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"
#include "trace/file_create.h"

#define PRECIOUS "precious\n"

/* link(2) as a file system without hard links answers it, when asked:
 * this definition is the one libobstrace's call reaches. */
static int no_hard_links, link_calls;

int link(const char *from, const char *to)
{
    link_calls++;
    if (no_hard_links) {
        errno = EPERM;
        return -1;
    }
    return linkat(AT_FDCWD, from, AT_FDCWD, to, 0);
}

static const char *dir;

static int has_content(const char *path, const char *want)
{
    size_t len = 0;
    char *text = test_read_file(path, &len);
    int same = text != NULL && len == strlen(want) && memcmp(text, want, len) == 0;
    free(text);
    return same;
}

/* A finished temporary holding text beside path; its name in tmp. */
static int finished_temp(const char *path, const char *text, char *tmp, size_t tmplen)
{
    int fd = obs_file_create_temp(path, 0644, tmp, tmplen);
    if (fd < 0)
        return fd;
    if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        bail("write %s: %s", tmp, strerror(errno));
    close(fd);
    return 0;
}

static void test_temp(void)
{
    char tmp[4200], tmp2[4200], want[4200];
    struct stat st;
    int fd, fd2;
    const char *path = test_path(dir, "t.json");

    fd = obs_file_create_temp(path, 0644, tmp, sizeof tmp);
    snprintf(want, sizeof want, "%s.tmp.%ld.", path, (long)getpid());
    ok(fd >= 0 && strncmp(tmp, want, strlen(want)) == 0 && strlen(tmp) == strlen(want) + 8 &&
           strspn(tmp + strlen(want), "0123456789abcdef") == 8,
       "temp: <path>.tmp.<pid>.<8 hex digits> (%s)", tmp);
    ok(fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 && (st.st_mode & 0777) == 0644 &&
           (fcntl(fd, F_GETFD) & FD_CLOEXEC),
       "temp: a new empty file, mode 0644 (umask 022), close-on-exec");
    fd2 = obs_file_create_temp(path, 0644, tmp2, sizeof tmp2);
    ok(fd2 >= 0 && strcmp(tmp, tmp2) != 0, "temp: a second one gets another name");
    if (fd >= 0) {
        close(fd);
        unlink(tmp);
    }
    if (fd2 >= 0) {
        close(fd2);
        unlink(tmp2);
    }
    is_int(-ENOENT, obs_file_create_temp(test_path(dir, "no/such/dir/x"), 0644, tmp, sizeof tmp),
           "temp: a missing directory gives -ENOENT");
    is_int(-ENAMETOOLONG, obs_file_create_temp(path, 0644, tmp, 20), "temp: a name that does not fit");
}

/* Publishing under a free name, then under each kind of taken one. */
static void test_publish(const char *mode)
{
    char tmp[4200], path[4200], victim[4200], what[64];
    struct stat st, vst;
    int rc;

    snprintf(path, sizeof path, "%s/free-%s.json", dir, mode);
    finished_temp(path, "{}\n", tmp, sizeof tmp);
    rc = obs_file_publish_new(tmp, path);
    ok(rc == 0 && has_content(path, "{}\n") && lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
           access(tmp, F_OK) != 0,
       "publish (%s): a free name gets the file, one link, the temporary gone", mode);

    snprintf(victim, sizeof victim, "%s/victim-%s", dir, mode);
    test_write_file(victim, PRECIOUS, strlen(PRECIOUS));
    stat(victim, &vst);

    snprintf(path, sizeof path, "%s/sym-%s.json", dir, mode);
    if (symlink(victim, path) != 0)
        bail("symlink: %s", strerror(errno));
    finished_temp(path, "{}\n", tmp, sizeof tmp);
    rc = obs_file_publish_new(tmp, path);
    ok(rc == -EEXIST && has_content(victim, PRECIOUS) && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
           access(tmp, F_OK) != 0,
       "publish (%s): a symbolic link at the name: -EEXIST, the linked file untouched, the link kept", mode);
    is_string("a symbolic link", obs_file_describe(path, what, sizeof what), "describe: a symbolic link");

    snprintf(path, sizeof path, "%s/dangling-%s.json", dir, mode);
    if (symlink(test_path(dir, "made-through-a-link"), path) != 0)
        bail("symlink: %s", strerror(errno));
    finished_temp(path, "{}\n", tmp, sizeof tmp);
    rc = obs_file_publish_new(tmp, path);
    ok(rc == -EEXIST && access(test_path(dir, "made-through-a-link"), F_OK) != 0,
       "publish (%s): a dangling link: -EEXIST, nothing created where it points", mode);
    unlink(test_path(dir, "made-through-a-link"));

    snprintf(path, sizeof path, "%s/hard-%s.json", dir, mode);
    if (linkat(AT_FDCWD, victim, AT_FDCWD, path, 0) != 0)
        bail("link: %s", strerror(errno));
    finished_temp(path, "{}\n", tmp, sizeof tmp);
    rc = obs_file_publish_new(tmp, path);
    ok(rc == -EEXIST && has_content(victim, PRECIOUS) && lstat(path, &st) == 0 && st.st_ino == vst.st_ino,
       "publish (%s): a hard link at the name: -EEXIST, the file untouched, the link kept", mode);
    is_string("a file with 2 links", obs_file_describe(path, what, sizeof what), "describe: a hard link");

    snprintf(path, sizeof path, "%s/dir-%s.json", dir, mode);
    if (mkdir(path, 0755) != 0)
        bail("mkdir: %s", strerror(errno));
    finished_temp(path, "{}\n", tmp, sizeof tmp);
    rc = obs_file_publish_new(tmp, path);
    ok(rc == -EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(tmp, F_OK) != 0,
       "publish (%s): a directory at the name: -EEXIST, left as it was", mode);
    is_string("a directory", obs_file_describe(path, what, sizeof what), "describe: a directory");
}

static void test_device(void)
{
    char why[128], fifo[4200], buf[16];
    const char *file = test_path(dir, "plain.txt");
    int fd, reader;

    fd = obs_file_open_device("/dev/null", why, sizeof why);
    ok(fd >= 0 && write(fd, "x", 1) == 1 && !(fcntl(fd, F_GETFL) & O_NONBLOCK), "device: /dev/null, blocking");
    if (fd >= 0)
        close(fd);
    if (symlink("/dev/null", test_path(dir, "null-link")) != 0)
        bail("symlink: %s", strerror(errno));
    fd = obs_file_open_device(test_path(dir, "null-link"), why, sizeof why);
    ok(fd >= 0, "device: a link the user named to /dev/null is followed (%s)", fd < 0 ? why : "");
    if (fd >= 0)
        close(fd);

    test_write_file(file, PRECIOUS, strlen(PRECIOUS));
    fd = obs_file_open_device(file, why, sizeof why);
    ok(fd < 0 && strcmp(why, "not a FIFO or character device (a file)") == 0 && has_content(file, PRECIOUS),
       "device: a regular file is refused, untouched (%s)", why);
    fd = obs_file_open_device(dir, why, sizeof why);
    ok(fd < 0 && strstr(why, "a directory") != NULL, "device: a directory is refused (%s)", why);
    fd = obs_file_open_device(test_path(dir, "missing"), why, sizeof why);
    ok(fd < 0 && strcmp(why, strerror(ENOENT)) == 0 && access(test_path(dir, "missing"), F_OK) != 0,
       "device: a missing name is not created (%s)", why);

    snprintf(fifo, sizeof fifo, "%s/f.fifo", dir);
    if (mkfifo(fifo, 0600) != 0)
        bail("mkfifo: %s", strerror(errno));
    fd = obs_file_open_device(fifo, why, sizeof why);
    ok(fd < 0 && strstr(why, "a FIFO with no reader") != NULL, "device: a FIFO with no reader: refused, no wait (%s)",
       why);
    reader = open(fifo, O_RDONLY | O_NONBLOCK);
    fd = obs_file_open_device(fifo, why, sizeof why);
    ok(fd >= 0 && write(fd, "abc", 3) == 3 && read(reader, buf, sizeof buf) == 3 && memcmp(buf, "abc", 3) == 0,
       "device: a FIFO with a reader gets what is written");
    if (fd >= 0)
        close(fd);
    if (reader >= 0)
        close(reader);
}

int main(void)
{
    plan_lazy();
    umask(022);
    dir = test_tmpdir();
    test_temp();
    test_publish("link");
    no_hard_links = 1; /* claim the name with O_EXCL | O_NOFOLLOW, then rename over the claim */
    link_calls = 0;
    test_publish("no-hard-links");
    ok(link_calls == 5, "no hard links: each publish tried link() first (%d times), then claimed the name", link_calls);
    no_hard_links = 0;
    test_device();
    return 0;
}
