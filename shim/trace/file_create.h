/* How libobstrace creates the files it writes, so that a name someone else
 * prepared (a symbolic or hard link planted at it, a directory in the way)
 * is never opened, followed or replaced: profilers run as root and in
 * directories other users can write to (a cluster's /scratch, /tmp with a
 * guessable %p), where writing through a planted link would overwrite a
 * file of the attacker's choosing. docs/shim.md, "Security notes". */
#ifndef OBS_FILE_CREATE_H
#define OBS_FILE_CREATE_H

#include <stddef.h>
#include <sys/types.h>

/* A new, empty file beside path (same directory, so that it can be linked
 * or renamed into place), named "<path>.tmp.<pid>.<8 random hex digits>",
 * created with O_CREAT | O_EXCL | O_NOFOLLOW (never an existing entry:
 * another random name is tried, up to 100) and mode (less the umask).
 * Returns the descriptor (close-on-exec) with the name in tmp, or -errno. */
int obs_file_create_temp(const char *path, mode_t mode, char *tmp, size_t tmplen);

/* Give the finished temporary tmp the name path only where nothing has that
 * name: link(2), which fails with EEXIST on any existing entry (a symbolic
 * link, dangling or not, a hard link, a directory, a file) and never
 * follows or replaces it; where the file system has no hard links (vfat,
 * some FUSE), the name is claimed with O_CREAT | O_EXCL | O_NOFOLLOW and
 * tmp renamed over that claim of ours. tmp is removed in every case.
 * Returns 0, or -errno (-EEXIST: the name was taken, nothing written). */
int obs_file_publish_new(const char *tmp, const char *path);

/* A FIFO or character device the user named on purpose (/dev/null to
 * discard, a FIFO read by another program): opened for writing as it is
 * (links in the name followed: the user chose it), never created or
 * truncated, and only when it is a FIFO or a character device (checked
 * before and after the open); a FIFO must already have a reader (O_NONBLOCK:
 * an exiting program never waits for one). Returns the descriptor
 * (blocking, close-on-exec), or -1 with a reason in why. */
int obs_file_open_device(const char *path, char *why, size_t whylen);

/* What is at path, for a message: "a symbolic link", "a directory", "a
 * file with 2 links", "a file", "a FIFO", "a device", "something". */
const char *obs_file_describe(const char *path, char *buf, size_t buflen);

#endif
