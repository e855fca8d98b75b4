/* OBS_SIM_LOG's name: see sim_log_name.h. */
#include "sim_log_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OBS_SIM_LOG's name: %p the process id, %q{VAR} the value of VAR (empty
 * when unset), %% a %; anything else as written. So the processes of one
 * run each get their own log (OBS_SIM_LOG=log.%q{RANK}, torchrun's ranks).
 * False when the name does not fit. */
int sim_log_name_expand(const char *pattern, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[32];
        const char *add = piece;
        size_t len;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(piece, sizeof piece, "%ld", (long)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            piece[0] = '%', piece[1] = '\0';
            p++;
        } else if (p[0] == '%' && p[1] == 'q' && p[2] == '{' && strchr(p + 3, '}') != NULL) {
            char var[256];
            size_t vlen = (size_t)(strchr(p + 3, '}') - (p + 3));
            if (vlen >= sizeof var)
                return 0;
            memcpy(var, p + 3, vlen);
            var[vlen] = '\0';
            add = getenv(var) ? getenv(var) : "";
            p += 3 + vlen;
        } else {
            piece[0] = *p, piece[1] = '\0';
        }
        len = strlen(add);
        if (n + len + 1 > size)
            return 0;
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return 1;
}
