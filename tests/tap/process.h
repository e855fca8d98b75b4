/* Run a program under test and capture what it did, for TAP tests.
 * The environment changes (LD_PRELOAD, LD_LIBRARY_PATH, OBS_*) are applied
 * only to the child, never to the test itself. */
#ifndef OBS_TAP_PROCESS_H
#define OBS_TAP_PROCESS_H

#include <stddef.h>

struct run_result {
    int exited;        /* 1 if the child exited normally */
    int status;        /* exit status when exited, else -1 */
    int signal;        /* terminating signal, else 0 */
    char *out;         /* captured stdout, NUL-terminated (malloc'ed) */
    char *err;         /* captured stderr, NUL-terminated (malloc'ed) */
    size_t out_len, err_len;
};

/* Run argv (argv[0] is a path) with env_set: a NULL-terminated list of
 * "NAME=value" strings added to (or replacing in) the child's environment,
 * and "NAME" alone to remove it. timeout_s > 0 kills the child when it runs
 * longer. Returns 0 when the child was started, -1 otherwise. */
int run_program(const char *const argv[], const char *const env_set[], int timeout_s,
                struct run_result *res);
/* The same, and the child is sent signal sig (SIGKILL ...) after_ms
 * milliseconds after it was started (if it still runs). */
int run_program_signal(const char *const argv[], const char *const env_set[], int timeout_s, long after_ms,
                       int sig, struct run_result *res);
void run_result_free(struct run_result *res);
/* The child exited normally with this status. */
int run_exited_with(const struct run_result *res, int status);

/* Paths handed to the tests by the Makefile (OBS_BUILDDIR, OBS_SRCDIR). */
const char *test_builddir(void);
const char *test_srcdir(void);
/* Build "<dir>/<rel>" into a static rotating buffer (8 slots). */
const char *test_path(const char *dir, const char *rel);
/* True when the file exists and is executable. */
int test_executable(const char *path);
/* A fresh temporary directory for this test file (removed at exit unless
 * OBS_KEEP_TMP is set). */
const char *test_tmpdir(void);
/* Read a whole file (malloc'ed, NUL-terminated); NULL when unreadable. */
char *test_read_file(const char *path, size_t *len);
/* Write len bytes to path (created or truncated); bails out on failure. */
void test_write_file(const char *path, const void *data, size_t len);
/* Split one CSV line (RFC 4180 quoting, no embedded line breaks) in
 * place: fields[] point into line. Returns the field count (at most max). */
size_t test_csv_split(char *line, char **fields, size_t max);
/* The value of the first "key=value" line of text, in a static buffer
 * (cut at 1023 bytes); "" when there is none. */
const char *test_key_value(const char *text, const char *key);
/* A program found on PATH, written into found; NULL when there is none. */
const char *test_on_path(const char *name, char *found, size_t foundlen);
/* Count lines of text containing needle. */
size_t count_lines_with(const char *text, const char *needle);

#endif
