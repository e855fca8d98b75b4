/* Libraries opened with RTLD_DEEPBIND: give their references to the
 * symbols we hook the binding they would have without it. See
 * deepbind_rebind.c. */
#ifndef OBS_DEEPBIND_REBIND_H
#define OBS_DEEPBIND_REBIND_H

/* When objects were loaded since the last pass (cheap test otherwise):
 * point every GOT slot of a hooked symbol, in every object of the base
 * namespace, that holds the real function (or still its lazy PLT stub) at
 * our wrapper, where the global scope would have chosen ours. errno is
 * kept. Not async-signal-safe; takes the loader's lock. */
void obs_deepbind_rebind(void);

#endif
