/* Start-up and shutdown: the constructor, the one-time initialisation that
 * any wrapper may trigger first, fork handlers, exit and signal handling. */
#ifndef OBS_INIT_H
#define OBS_INIT_H

#include <stdbool.h>
#include <stdint.h>

struct obs_hooked_call;

/* Idempotent, thread-safe (pthread_once); sets obs_state. */
void obs_init(void);

/* A wrapper's call that obs_call_begin refused: starts the library when its
 * constructor has not run yet (and the call is not nested), then asks
 * obs_call_begin again; false otherwise. errno is kept. */
bool obs_hook_begin_slow(struct obs_hooked_call *c) __attribute__((cold, noinline));

/* Install the SIGTERM/SIGINT handlers that flush the trace, for each signal
 * whose disposition is still the default (the app installed none). Called
 * when the trace file is created. */
void obs_signals_install(void);

#endif
