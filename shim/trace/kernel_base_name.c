/* Kernel base names: what phase rules (OBS_PHASES globs) match and what
 * `obs-report suggest-phases` writes, defined once so that the two agree. */
#include "kernel_base_name.h"

#include <string.h>

/* `void ns::f<int, (anonymous namespace)::X>(float*)` -> `f`. The name ends at
 * the first '(' outside template brackets (but "(anonymous namespace)" is a
 * scope), template arguments are dropped, and what remains after the last
 * "::" or blank at bracket depth 0 is the base name. */
void obs_kernel_base_name(const char *name, char *out, size_t outlen)
{
    static const char anon[] = "(anonymous namespace)";
    size_t i, start = 0, len = 0;
    int angle = 0;

    if (outlen == 0)
        return;
    out[0] = '\0';
    if (name == NULL)
        return;
    for (i = 0; name[i] != '\0'; i++) {
        char c = name[i];
        if (c == '(' && strncmp(name + i, anon, sizeof anon - 1) == 0) {
            i += sizeof anon - 2;
            continue;
        }
        if (c == '<') {
            angle++;
        } else if (c == '>') {
            if (angle > 0)
                angle--;
        } else if (angle == 0) {
            if (c == '(' && i > 0)
                break;
            if (c == ' ' || (c == ':' && name[i + 1] == ':')) {
                start = c == ' ' ? i + 1 : i + 2;
                len = 0;
                if (c == ':')
                    i++;
                continue;
            }
        }
        if (angle == 0 && c != '>' && i >= start) {
            if (len + 1 < outlen)
                out[len] = c;
            len++;
        }
    }
    out[len + 1 < outlen ? len : outlen - 1] = '\0';
}

/* Itanium-mangled names without a demangler (a C program, no C++ runtime
 * loaded): `_Z<len><id>...` or `_ZN[qualifiers]<len><id>...<len><id>[I...]E...`;
 * the base name is the last identifier before the parameters or template
 * arguments. Anything else is left to obs_kernel_base_name. */
bool obs_mangled_base_name(const char *name, char *out, size_t outlen)
{
    const char *p, *last = NULL;
    size_t last_len = 0;
    bool nested;

    if (name == NULL || outlen == 0 || strncmp(name, "_Z", 2) != 0)
        return false;
    p = name + 2;
    nested = *p == 'N';
    if (nested) {
        p++;
        while (*p == 'K' || *p == 'V' || *p == 'r')
            p++;
    }
    while (*p >= '1' && *p <= '9') {
        size_t len = 0;
        while (*p >= '0' && *p <= '9' && len < 100000)
            len = len * 10 + (size_t)(*p++ - '0');
        if (strnlen(p, len) < len)
            return false;
        last = p;
        last_len = len;
        p += len;
        if (!nested)
            break;
    }
    if (last == NULL)
        return false;
    if (last_len >= outlen)
        last_len = outlen - 1;
    memcpy(out, last, last_len);
    out[last_len] = '\0';
    return true;
}

void obs_kernel_base_name_of(const char *mangled, const char *demangled, char *out, size_t outlen)
{
    if (outlen == 0)
        return;
    out[0] = '\0';
    if (demangled != NULL && *demangled != '\0' && (mangled == NULL || strcmp(demangled, mangled) != 0)) {
        obs_kernel_base_name(demangled, out, outlen);
        return;
    }
    if (mangled == NULL)
        return;
    if (!obs_mangled_base_name(mangled, out, outlen))
        obs_kernel_base_name(mangled, out, outlen);
}
