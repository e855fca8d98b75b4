/* The common layer's public face: what every part of the preload library
 * uses and that depends on nothing of it: settings read once from OBS_*
 * (config.h), output name patterns (output_path.h), logging through
 * write(2) with the obsshim: prefix (log.h), the debug log by domain and
 * level (debug_log.h, its setting's parser debug_spec.h), the
 * lock-free-read pointer map (ptrmap.h) and the export/visibility macros
 * (obs_export.h). */
#ifndef OBS_COMMON_H
#define OBS_COMMON_H

#include "config.h"
#include "debug_log.h"
#include "debug_spec.h"
#include "log.h"
#include "name_hash.h"
#include "obs_export.h"
#include "output_path.h"
#include "ptrmap.h"

#endif
