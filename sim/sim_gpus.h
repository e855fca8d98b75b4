/* The simulated machine's GPUs, shared by the simulated driver and NVML
 * (each library compiles its own copy and reads the same environment).
 *
 * OBS_SIM_GPUS=N (1 .. SIM_GPUS_MAX, default 1): the machine has N
 * H100-like GPUs, each with its own PCI location (domain 0, device 0, the
 * bus ids of a DGX H100's eight: 0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba,
 * 0xdb) and UUID (GPU 0's is the one the single-GPU simulator always had;
 * GPU k's differs in its last byte). NVML lists all N, as the real one
 * does whatever CUDA_VISIBLE_DEVICES says. The driver's devices are those
 * CUDA_VISIBLE_DEVICES names, in its order, as the real driver reads it:
 * a comma-separated list of indices or UUIDs ("GPU-" and a unique prefix
 * of the hex digits, dashes optional); the list stops at its first entry
 * that names no GPU or one already listed; unset: all N; empty: none. So
 * several processes of one machine (the ranks of a torchrun) see distinct
 * GPUs, as NCCL requires ("Duplicate GPU detected" otherwise), whether
 * each uses cuda:LOCAL_RANK or is given one GPU by CUDA_VISIBLE_DEVICES. */
#ifndef OBS_SIM_GPUS_H
#define OBS_SIM_GPUS_H

#define SIM_GPUS_MAX 8

/* Read OBS_SIM_GPUS and CUDA_VISIBLE_DEVICES (once; later calls return at
 * once). */
void sim_gpus_init(void);

/* GPUs of the machine (NVML's count). */
unsigned sim_gpus_count(void);
/* Devices the driver shows (CUDA_VISIBLE_DEVICES), and the machine index
 * of device ordinal d (-1 when d is out of range). */
unsigned sim_gpus_visible(void);
int sim_gpus_machine_index(int ordinal);

/* Facts of machine GPU k (0 <= k < sim_gpus_count()). */
unsigned sim_gpu_pci_bus(unsigned k);
void sim_gpu_uuid(unsigned k, unsigned char out[16]);
/* "GPU-6f627373-6869-6d2d-7369-6d2d68313030" (41 bytes with the NUL). */
void sim_gpu_uuid_text(unsigned k, char out[48]);
/* "0000:18:00.0" (the driver's, 13 bytes) and "00000000:18:00.0" (NVML's, 17). */
void sim_gpu_bus_id(unsigned k, char out[16]);
void sim_gpu_bus_id_nvml(unsigned k, char out[32]);

#endif
