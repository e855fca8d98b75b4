/* A gzip'ed text file read whole: see gz_text.h. */
#include "gz_text.h"

#include <stdlib.h>

#include "tap/basic.h"

#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

int gz_text_available(void)
{
#ifdef HAVE_ZLIB
    return 1;
#else
    return 0;
#endif
}

char *gz_text_read(const char *path)
{
#ifdef HAVE_ZLIB
    gzFile f = gzopen(path, "rb");
    size_t used = 0, cap = 1 << 20;
    char *text;
    int n;
    if (f == NULL)
        return NULL;
    if ((text = malloc(cap)) == NULL)
        bail("out of memory");
    while ((n = gzread(f, text + used, (unsigned)(cap - used - 1))) > 0) {
        used += (size_t)n;
        if (cap - used < 2) {
            char *more = realloc(text, cap * 2);
            if (more == NULL)
                bail("out of memory");
            text = more;
            cap *= 2;
        }
    }
    gzclose(f);
    text[used] = '\0';
    return text;
#else
    (void)path;
    return NULL;
#endif
}
