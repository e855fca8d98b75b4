"""A serving loop: transformers' continuous batching (generate_batch), for
tests/t_frameworks (docs/frameworks.md). Usage:

    python fw_serving.py serving [--new-tokens N]

The model: fw_generate.build("llama") (LlamaForCausalLM from a config, 4
layers, hidden 256, fp16). One call of

    model.generate_batch(prompts, generation_config=GenerationConfig(
        max_new_tokens=N, do_sample=False, eos_token_id=EOS, pad_token_id=PAD),
        continuous_batching_config=ContinuousBatchingConfig(page_size=16,
        num_blocks=64, max_batch_tokens=64, max_requests_per_batch=4))

over 8 requests of 5, 40, 1, 17, 9, 70, 3 and 2 tokens (N = 8 by default):
transformers' serving loop on a thread of its own, a paged KV cache (the
sizes above: on the simulated driver it would size its cache from the
device's free memory and ask for tens of GB), each iteration one forward
over a packed batch (input_ids of shape [1, tokens], logits_indices one
entry per request that samples), at most 64 tokens and 4 requests: the
first four prompts share the first iteration, the 70-token one is
prefilled in two chunks, requests join as others finish, so iterations
carry prompts, decode tokens or both. With the attention implementation
it picks here (an attention mask is needed) transformers turns CUDA graphs
and its asynchronous batching off: one forward, one read of the sampled
ids and one sync per iteration.

Host-side answers (kernels do not run on the simulated driver: device
memory holds stale values):
  - End of sequence. update_and_check_completion() tests each token read
    back against the EOS id; the read runs as written, and host_eos()
    gives the test's answer: request i ends after a number of tokens drawn
    once from random.Random(34), 1 to N (the token passed on is the EOS id
    there, else the value read, or PAD where that stale value happens to
    be the EOS id). So requests leave at different iterations, as on a GPU
    with an EOS.
  - Arrival. generate_batch adds its requests one by one to a queue the
    loop drains at each iteration; add_requests() is made atomic against
    that drain (a lock around both), so all requests arrive at one
    iteration in every run, with and without the shim (the loop's thread
    would otherwise see the first few alone now and then). Nothing on the
    device depends on it.

Prints one line, "tokens serving main 0 [[ids], ...]" (the requests in
order), and "done serving generations 1"; exit 0. Ground truth:
fw_truth.py's Serving (each forward of the loop's thread one ITERATION/k,
with its kind, tokens and requests from the scheduler's batch; the time of
each iteration's read of the sampled ids)."""
import json
import random
import sys
import threading

import torch
from transformers import ContinuousBatchingConfig, GenerationConfig
from transformers.generation.continuous_batching import continuous_api, input_outputs, requests

import fw_generate
import fw_truth

LENGTHS = (5, 40, 1, 17, 9, 70, 3, 2)
CB_CONFIG = dict(page_size=16, num_blocks=64, max_batch_tokens=64, max_requests_per_batch=4)
EOS, PAD = fw_generate.EOS, fw_generate.PAD

_arrival = threading.Lock()
_lengths = {}
_eos_rng = random.Random(34)


def host_eos(state, new_tokens):
    """The number of tokens request state ends after (drawn once per request)."""
    if state.request_id not in _lengths:
        _lengths[state.request_id] = _eos_rng.randint(1, new_tokens)
    return state.generated_len() + 1 >= _lengths[state.request_id]


def install(truth, new_tokens):
    """The truth's hooks into the serving loop and the host-side answers
    (above); each wrapper calls the original."""
    serving = fw_truth.Serving(truth)
    check = requests.RequestState.update_and_check_completion
    pack = input_outputs.ContinuousBatchingIOs.prepare_batch_tensors
    read = input_outputs.ContinuousBatchingIOs.prepare_batch_update
    drain = continuous_api.ContinuousBatchProcessor._update_tp_group_state
    add = continuous_api.ContinuousBatchingManager.add_requests
    loop = continuous_api.ContinuousBatchingManager._run_generation_loop

    def eos_on_host(self, token_id, logprob):
        if self.status == requests.RequestStatus.DECODING:
            if host_eos(self, new_tokens):
                token_id = EOS
            elif token_id in self._eos_token_ids:
                token_id = PAD
        return check(self, token_id, logprob)

    def packed(self, requests_in_batch, *args, **kwargs):
        prompts = sum(1 for f in requests_in_batch if f.state.generated_len() == 0)  # no token yet: in its prompt
        serving.batch_packed(prompts, len(requests_in_batch) - prompts)
        return pack(self, requests_in_batch, *args, **kwargs)

    def ids_read(self):
        out = read(self)
        serving.ids_read([(f.state.request_id, len(f.state.initial_tokens)) for f in out[0] if f.has_new_token])
        return out

    def drained(self):
        with _arrival:
            return drain(self)

    def added(self, *args, **kwargs):
        with _arrival:
            return add(self, *args, **kwargs)

    def loop_thread(self, *args, **kwargs):
        try:
            return loop(self, *args, **kwargs)
        finally:
            serving.loop_ends()

    requests.RequestState.update_and_check_completion = eos_on_host
    input_outputs.ContinuousBatchingIOs.prepare_batch_tensors = packed
    input_outputs.ContinuousBatchingIOs.prepare_batch_update = ids_read
    continuous_api.ContinuousBatchProcessor._update_tp_group_state = drained
    continuous_api.ContinuousBatchingManager.add_requests = added
    continuous_api.ContinuousBatchingManager._run_generation_loop = loop_thread
    return serving



def main():
    setup = fw_generate.llama_case(("serving",), 8)
    if setup is None:
        return 2
    _, new_tokens, truth, model = setup
    serving = install(truth, new_tokens)
    config = GenerationConfig(max_new_tokens=new_tokens, do_sample=False, eos_token_id=EOS, pad_token_id=PAD)
    prompts = fw_generate.prompts(7, LENGTHS)
    with torch.no_grad():
        serving.begin()
        out = model.generate_batch(prompts, generation_config=config,
                                   continuous_batching_config=ContinuousBatchingConfig(**CB_CONFIG))
        serving.end()
    ids = [out[k].generated_tokens for k in sorted(out, key=lambda k: int(k.split("_")[1]))]
    print("tokens serving main 0 %s" % json.dumps(ids), flush=True)
    torch.cuda.synchronize()
    print("done serving generations 1", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
