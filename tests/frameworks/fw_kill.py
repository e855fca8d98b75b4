"""Hugging Face generate() killed with SIGKILL at random moments, for
tests/t_frameworks_kill (docs/shim.md, "How a process ends"). Usage:

    python fw_kill.py KILLS SEED

torch and transformers are imported once, here, with no CUDA call (so
that children may use CUDA: PyTorch refuses a device in a child forked
after the parent used one). Then, KILLS times: a child is forked that
builds fw_generate.py's llama model on the device (its weights copied
in) and runs its generations (fw_generate.run_generate) over and over; it
says when it starts on the device ("i") and when its generations start
("g"). For the first quarter of the kills this process waits for "i",
for the rest for "g" (the moments the issue is about), then a random time
(random.Random(SEED), up to START_S or GENERATE_S), and kills it with
SIGKILL. Each child records its own trace under the shim (obs-run -o
DIR/k-%p: named by its pid), and the simulated driver logs its calls with
their thread ids (OBS_SIM_LOG_TID=1) into the one OBS_SIM_LOG all the
children share, one child after the other: before each fork this process
writes a line there, "fwkillChild<TAB>mark<TAB>K<TAB>-<TAB>-<TAB>0"
(after an empty line: the child before may have died inside a write of
its last line, cut where the kernel stopped it), so that the log's calls
between two such lines are one child's.

Prints, per kill, "kill K pid PID after M delay_ms D status S" (M: the
mark waited for; S: the signal that ended it, 9 for SIGKILL, 0 when it
ended first, which it does after MAX_RUN_S), then "done kills K"; exit 0."""
import os
import random
import signal
import sys
import time

import torch  # noqa: F401 (imported before the fork, once)

import fw_generate
import fw_truth

START_S = 3.0       # after "i": the model built on the host, its weights copied to the device (about 2.5 s here)
GENERATE_S = 2.0    # after "g": its first two generate() runs (about 0.9 s each here)
MAX_RUN_S = 60.0    # a child that was not killed ends on its own


def child(ready_fd):
    """Build the model on the device, say so, generate until killed."""
    fw_generate.host_stop()
    torch.backends.cuda.enable_cudnn_sdp(False)
    torch.cuda.init()
    os.write(ready_fd, b"i")
    model = fw_generate.build("llama")
    truth = fw_truth.Truth()
    os.write(ready_fd, b"g")
    os.close(ready_fd)
    start = time.monotonic()
    seed = 7
    while time.monotonic() - start < MAX_RUN_S:
        fw_generate.run_generate("llama", truth, model, 4, seed, "kill")
        seed += 1
    torch.cuda.synchronize()
    os._exit(0)


def main():
    kills, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    log = os.open(os.environ["OBS_SIM_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for k in range(kills):
        # after a newline of its own: the child before, killed inside a write of its last line (the kernel stops a
        # write to a file at a page boundary once SIGKILL is pending), may have left that line cut, with no newline
        os.write(log, b"\nfwkillChild\tmark\t%d\t-\t-\t0\n" % k)
        mark = b"i" if k < kills // 4 else b"g"
        delay = rng.uniform(0.0, START_S if mark == b"i" else GENERATE_S)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                child(w)
            finally:
                os._exit(3)
        os.close(w)
        while os.read(r, 1) not in (mark, b""):
            pass
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(r)  # only now: the child's "g" must not meet a closed pipe
        print("kill %d pid %d after %s delay_ms %.0f status %d" % (k, pid, mark.decode(), delay * 1000, status & 0x7f),
              flush=True)
    print("done kills %d" % kills, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
