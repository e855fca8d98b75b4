/* Kernel base names, shared by the phase engine (rules match them) and the
 * trace tools (suggest-phases writes rules over them). */
#ifndef OBS_KERNEL_BASE_NAME_H
#define OBS_KERNEL_BASE_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* `void ns::f<int, (anonymous namespace)::X>(float*)` -> `f`. */
void obs_kernel_base_name(const char *name, char *out, size_t outlen);

/* `_Z12embed_tokensPKiPfi` -> `embed_tokens` without a demangler; false
 * when name is not an Itanium-mangled function name it can read. */
bool obs_mangled_base_name(const char *name, char *out, size_t outlen);

/* The rule both sides use: the demangled name's base when there is a
 * demangled form (different from the mangled one), else the mangled name's
 * base, else the name as it is cut by obs_kernel_base_name. */
void obs_kernel_base_name_of(const char *mangled, const char *demangled, char *out, size_t outlen);

#endif
