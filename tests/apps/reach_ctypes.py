"""reach_ctypes.py ROUNDS: the CUDA runtime (and HIP when it loads) called
from Python through ctypes, as cuda-python style bindings do: each entry
point is fetched by ctypes with dlsym on the library's handle. For
tests/t_shim_reach (run under contrib/obs-run on the simulated runtimes).
Prints "api status errno" per call (errno set to a marker before each),
then "done"."""
import ctypes
import sys

MARKER = 4242


def call(name, fn, *args):
    ctypes.set_errno(MARKER)
    status = fn(*args)
    print(name, status, ctypes.get_errno())


def cuda(rounds):
    rt = ctypes.CDLL("libcudart.so.13", use_errno=True)
    host = ctypes.create_string_buffer(4096)
    for _ in range(rounds):
        dev = ctypes.c_void_p()
        call("cudaMalloc", rt.cudaMalloc, ctypes.byref(dev), ctypes.c_size_t(4096))
        call("cudaMemcpy", rt.cudaMemcpy, dev, host, ctypes.c_size_t(4096), 1)
        call("cudaMemset", rt.cudaMemset, dev, 0, ctypes.c_size_t(4096))
        call("cudaMemcpy", rt.cudaMemcpy, host, dev, ctypes.c_size_t(4096), 2)
        call("cudaDeviceSynchronize", rt.cudaDeviceSynchronize)
        call("cudaFree", rt.cudaFree, dev)
    # An invalid copy kind: the runtime's error comes back unchanged.
    call("cudaMemcpy", rt.cudaMemcpy, None, host, ctypes.c_size_t(16), 77)


def hip(rounds):
    rt = ctypes.CDLL("libamdhip64.so.5", use_errno=True)
    host = ctypes.create_string_buffer(2048)
    for _ in range(rounds):
        dev = ctypes.c_void_p()
        call("hipMalloc", rt.hipMalloc, ctypes.byref(dev), ctypes.c_size_t(2048))
        call("hipMemcpy", rt.hipMemcpy, dev, host, ctypes.c_size_t(2048), 1)
        call("hipDeviceSynchronize", rt.hipDeviceSynchronize)
        call("hipFree", rt.hipFree, dev)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    cuda(rounds)
    hip(rounds)
    print("done")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
