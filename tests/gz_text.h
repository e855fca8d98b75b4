/* A gzip'ed text file read whole: the real programs' call streams of
 * tests/engine_cases (NAME.calls.gz), for the tests that read them
 * (t_phase_engine replays them, t_scenarios and t_serving compare the
 * scenarios that imitate them). */
#ifndef OBS_TESTS_GZ_TEXT_H
#define OBS_TESTS_GZ_TEXT_H

/* 1 when this build reads gzip (configure found zlib), else 0. */
int gz_text_available(void);

/* The file's text, NUL-terminated (free it), or NULL: it cannot be opened,
 * or no zlib. */
char *gz_text_read(const char *path);

#endif
