/* The phase engine's thresholds, each with the real case it came from
 * (tests/engine_cases, tests/frameworks, tests/scenarios: docs/phases.md,
 * "Thresholds"). Every number a decision of the structure model compares
 * with lives here; capacities (how much is kept: rings, windows, caches)
 * stay with the structures they size. */
#ifndef OBS_PHASE_PARAMS_H
#define OBS_PHASE_PARAMS_H

/* A read from the device of at least this many bytes after a launch of its
 * iteration reads a token (or sampled ids); a smaller one is a flag.
 * Hugging Face generate() with no streamer reads only its 1-byte stop flag
 * (a bool's .item()) after each forward, a token is an int32 or int64
 * (engine cases hf-plain, pt-loop-item). */
#define TOKEN_READ_MIN 4u

/* "Much larger": a prompt's first launch, or the bytes copied in before it,
 * against a decode step's (and "at least a quarter" the other way). Chosen
 * on the scenario corpus (issue 22: tests/scenarios hf_generate, llamacpp,
 * chunked_prefill), and kept by every real case since (tests/engine_cases:
 * every case of t_phase_engine passes with it); serving: hf-serving's
 * one-forward iterations of 64 and 39 tokens, then one of 4. */
#define PROMPT_RATIO 4u

/* An idle gap (over OBS_GEN_GAP_MS from the last delimiter to the next
 * launch) is one the thread spent blocked: it ran for less than a
 * 1/IDLE_GAP_CPU_SHARE of it. A server waiting for its next request runs
 * for none of it; torch.compile's first call of a decode step is a gap of
 * 6 to 85 s in which the thread compiles, 93 % of it on its own CPU on a
 * quiet machine (tests/frameworks fw_compiled.py compiled-decode,
 * 2026-12-02: 79.4 s of 85.0 s), and Triton's autotuning after it: the
 * step's own work. On a loaded machine the calling thread waits for
 * Inductor's compile workers (other processes) as well: 27 to 32 % of its
 * gaps (compiled-decode-ro beside a CI run and 4 spinning processes on the
 * 2-core VM, 2026-12-04: 3 360 to 3 936 ms of 10 606 to 12 495), 15 to 25 %
 * beside 6 (4 001 ms of a 26 066 ms gap the least), under a tenth in a CI
 * run beside two framework runs (compiled-decode's and compiled-decode-ro's
 * first compiled call read as a new prompt: 755 launches right of 2 359 and
 * of 1 439); a fiftieth keeps such a gap busy and a blocked wait idle. */
#define IDLE_GAP_CPU_SHARE 50u

/* Generations of one forward each in a row, fed from the host and read
 * back, before one a PROMPT_RATIO-th of the largest of them reads as a
 * serving loop (hf-serving: 64 tokens, 39, then 4). */
#define SERVING_SINGLE_RUN 2u

/* A forward has "run" once it has launched as many kernels as its kind's
 * shortest whole forward less a 1/FORWARD_RAN_SHARE: inside a forward,
 * what comes in is its own, not the next prompt's (Gemma 2's
 * sliding-window layers copy 8 bytes in mid-forward: tests/frameworks
 * fw_generate.py gemma2). */
#define FORWARD_RAN_SHARE 4u

/* The layers a forward's stack must show before an embedding lookup after
 * it may begin the next forward, until the thread's forwards taught their
 * own count: the layer finder's least (three repetitions, layer_finder.c). */
#define STACK_LAYERS_MIN 3u

/* Shape (a), the steps of a loop that never copies: the unit must repeat
 * UNIT_MIN_REPEATS times back to back, with UNIT_MIN to UNIT_MAX launches
 * (one kernel repeated is a loop, not a decode step): the reference
 * workload and the scenario corpus' graph loops (tests/scenarios:
 * reference, vllm_graphs). */
#define UNIT_MIN_REPEATS 3u
#define UNIT_MIN 2u
#define UNIT_MAX 64u

#endif
