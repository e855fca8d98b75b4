/* For the tests: reads sim/libamdhip64.map, the simulator's version
 * script, into (symbol, version node) pairs, so that the tests can look each
 * symbol up with dlvsym in the simulator and in the real library. */
#ifndef OBS_HIP_SIM_MAP_H
#define OBS_HIP_SIM_MAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hip_map_entry {
    char symbol[160];
    char node[16];
};

/* Fills up to max entries; returns how many, or -1 when the file cannot be read. */
static inline int hip_map_read(const char *path, struct hip_map_entry *entries, int max)
{
    FILE *f = fopen(path, "r");
    char line[512], node[16] = "";
    int n = 0;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        char word[160], brace;
        const char *text = line + strspn(line, " \t");
        if (*text == '*' || *text == '/')
            continue; /* comment */
        if (sscanf(line, "%15s %c", word, &brace) == 2 && brace == '{' &&
            strncmp(word, "hip_", 4) == 0) {
            snprintf(node, sizeof node, "%.15s", word);
            continue;
        }
        if (line[0] == ' ' && sscanf(line, " %159[^; \t\n];", word) == 1 &&
            strchr(line, ';') != NULL && n < max && node[0] != '\0') {
            snprintf(entries[n].symbol, sizeof entries[n].symbol, "%s", word);
            snprintf(entries[n].node, sizeof entries[n].node, "%s", node);
            ++n;
        }
    }
    fclose(f);
    return n;
}

#endif
