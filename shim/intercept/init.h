/* Start-up and shutdown: the constructor, the one-time initialisation that
 * any wrapper may trigger first, fork handlers, exit and signal handling. */
#ifndef OBS_INIT_H
#define OBS_INIT_H

#include <stdint.h>

/* Idempotent, thread-safe (pthread_once); sets obs_state. */
void obs_init(void);

/* Install the SIGTERM/SIGINT handlers that flush the trace, for each signal
 * whose disposition is still the default (the app installed none). Called
 * when the trace file is created. */
void obs_signals_install(void);

#endif
