/* The phase engine's ids that its files and its public header share: the
 * range name ids of PHASE records and the engine's modes (phase_engine.h
 * is the face other folders include; the engine's own files include this,
 * so that none of them needs the face and the modules stay acyclic). */
#ifndef OBS_PHASE_IDS_H
#define OBS_PHASE_IDS_H

/* RANGE_NAME string ids of PHASE records: the phase ids of phase_rules.h
 * (1 PREFILL, 2 DECODE, 3 KV_GATHER), 4 "DECODE/STEADY", 5 "ITERATION"
 * (the phase of a serving loop's iterations), OBS_PHASE_STEP_NAME_BASE + k
 * for "DECODE/STEP_k" and OBS_PHASE_ITER_NAME_BASE + k for "ITERATION/k". */
#define OBS_PHASE_NAME_STEADY 4u
#define OBS_PHASE_ITERATION 5u
#define OBS_PHASE_STEP_NAME_BASE 16u
#define OBS_PHASE_ITER_NAME_BASE 0x80000000u


enum obs_phase_mode { OBS_PHASES_OFF = 0, OBS_PHASES_AUTO = 1, OBS_PHASES_RULES = 2 };

#endif
