/* plant_exec: plant something at the names a program under test will write,
 * knowing the pid that program will have (its own: exec keeps the pid, so
 * OBS_OUTPUT=DIR/run-%p names are known before the program starts), then
 * become that program, as another user if asked: what someone with write
 * access to a shared directory does before a profiled run
 * (tests/t_shim_planted.c).
 *
 * Usage: plant_exec [--as USER] [--record FILE] [(--symlink TARGET |
 *                   --hardlink TARGET | --dir) NAME...] -- PROGRAM [ARGS]
 *   NAME               a path; each %p in it is this process's pid
 *   --symlink TARGET   NAME becomes a symbolic link to TARGET
 *   --hardlink TARGET  a hard link to TARGET
 *   --dir              a directory
 *   --record FILE      write "pid N" and each name planted (one a line)
 *                      to FILE, before dropping privileges
 *   --as USER          after planting, drop to USER (supplementary groups,
 *                      gid, uid: needs root), so that PROGRAM runs
 *                      unprivileged
 * Prints nothing of its own; exit 126 when something cannot be planted or
 * the user cannot be taken, 127 when PROGRAM cannot be run. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum how { PLANT_NONE, PLANT_SYMLINK, PLANT_HARDLINK, PLANT_DIR };

/* name with each %p replaced by pid. */
static int expand(const char *name, long pid, char *out, size_t outlen)
{
    size_t o = 0;
    for (; *name; name++) {
        int n;
        if (name[0] == '%' && name[1] == 'p') {
            n = snprintf(out + o, outlen - o, "%ld", pid);
            name++;
        } else {
            n = snprintf(out + o, outlen - o, "%c", *name);
        }
        if (n < 0 || (size_t)n >= outlen - o)
            return -1;
        o += (size_t)n;
    }
    return 0;
}

static int plant(enum how how, const char *target, const char *name)
{
    switch (how) {
    case PLANT_SYMLINK:
        return symlink(target, name);
    case PLANT_HARDLINK:
        return link(target, name);
    case PLANT_DIR:
        return mkdir(name, 0755);
    default:
        errno = EINVAL;
        return -1;
    }
}

static int become(const char *user)
{
    struct passwd *pw = getpwnam(user);
    if (pw == NULL) {
        fprintf(stderr, "plant_exec: no user %s\n", user);
        return -1;
    }
    if (setgroups(0, NULL) != 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
        setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0) {
        fprintf(stderr, "plant_exec: cannot become %s: %s\n", user, strerror(errno));
        return -1;
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: plant_exec [--as USER] [--record FILE] [(--symlink TARGET | --hardlink TARGET | "
                    "--dir) NAME...] -- PROGRAM [ARGS]\n");
    return 126;
}

int main(int argc, char **argv)
{
    const char *user = NULL, *record = NULL, *target = NULL;
    enum how how = PLANT_NONE;
    long pid = (long)getpid();
    FILE *rec = NULL;
    int i;

    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--as") == 0 && next)
            user = argv[++i];
        else if (strcmp(argv[i], "--record") == 0 && next)
            record = argv[++i];
        else if (strcmp(argv[i], "--symlink") == 0 && next)
            how = PLANT_SYMLINK, target = argv[++i];
        else if (strcmp(argv[i], "--hardlink") == 0 && next)
            how = PLANT_HARDLINK, target = argv[++i];
        else if (strcmp(argv[i], "--dir") == 0)
            how = PLANT_DIR;
        else if (argv[i][0] == '-')
            return usage();
        else
            break; /* the names */
    }
    if (how == PLANT_NONE && i < argc && strcmp(argv[i], "--") != 0)
        return usage(); /* names, but nothing to plant at them */
    if (record != NULL && ((rec = fopen(record, "w")) == NULL || fprintf(rec, "pid %ld\n", pid) < 0)) {
        fprintf(stderr, "plant_exec: %s: %s\n", record, strerror(errno));
        return 126;
    }
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        char name[4096];
        if (expand(argv[i], pid, name, sizeof name) != 0 || plant(how, target, name) != 0) {
            fprintf(stderr, "plant_exec: %s: %s\n", argv[i], strerror(errno));
            return 126;
        }
        if (rec != NULL)
            fprintf(rec, "%s\n", name);
    }
    if (rec != NULL && fclose(rec) != 0)
        return 126;
    if (i + 1 >= argc)
        return usage();
    if (user != NULL && become(user) != 0)
        return 126;
    execv(argv[i + 1], argv + i + 1);
    fprintf(stderr, "plant_exec: %s: %s\n", argv[i + 1], strerror(errno));
    return 127;
}
