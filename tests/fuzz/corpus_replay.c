/* Replaying a kept fuzz corpus: see corpus_replay.h. */
#include "corpus_replay.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole file, malloc'ed (one byte more, NUL); NULL when unreadable. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0, n = 0, got;
    if (f == NULL)
        return NULL;
    do {
        char *bigger;
        if (n + 4096 + 1 > cap) {
            cap = (n + 4096 + 1) * 2;
            if ((bigger = realloc(data, cap)) == NULL) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = bigger;
        }
        got = fread(data + n, 1, 4096, f);
        n += got;
    } while (got > 0);
    fclose(f);
    data[n] = '\0';
    *len = n;
    return data;
}

size_t fuzz_corpus_replay(const char *dir, fuzz_body_fn body, size_t *unreadable)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t files = 0;

    *unreadable = 0;
    if (d == NULL)
        return (size_t)-1;
    while ((e = readdir(d)) != NULL) {
        char file[4600];
        size_t len = 0;
        char *data;
        if (e->d_name[0] == '.')
            continue;
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        data = read_all(file, &len);
        if (data == NULL) {
            (*unreadable)++;
            continue;
        }
        body((const uint8_t *)data, len);
        free(data);
        files++;
    }
    closedir(d);
    return files;
}
