#!/usr/bin/env python3
"""Times chapter 20's model against transformers, in turns (see perf/scripts/bench-real-model.sh).

Each round runs, for 1 and 2 threads: transformers (float32, eager attention, greedy, the
KV cache) in a fresh process, then ours (the `speed_real_model` example of perf, its weights
packed for the prompts' products once, at load) in a fresh process, each doing a prefill of 128 tokens and 128 decoding steps (ours also decodes after prefills of 40 and of
2000 tokens, for the cost of a long cache). The medians over the rounds are reported as
ratios; the memory bandwidth is measured in the same run (a numpy copy of 1 GB), and with it
the bound on decoding set by reading every float32 weight once per token.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

CHILD = r'''
import json, os, resource, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
import torch
from transformers import AutoModelForCausalLM
torch.set_num_threads(int(sys.argv[2])); torch.set_grad_enabled(False)
folder, name = os.path.split(os.path.abspath(sys.argv[1]))
t0 = time.perf_counter()
m = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
m.set_attn_implementation("eager")
load = time.perf_counter() - t0
ids = torch.arange(1000, 1000 + int(sys.argv[3]))[None]
t0 = time.perf_counter()
out = m(ids, use_cache=True)
nxt = out.logits[0, -1].argmax().view(1, 1)
prefill = time.perf_counter() - t0
cache = out.past_key_values
t0 = time.perf_counter()
for step in range(int(sys.argv[4])):
    out = m(nxt, past_key_values=cache, use_cache=True)
    cache = out.past_key_values
    nxt = out.logits[0, -1].argmax().view(1, 1)
decode = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"load_s": load, "prefill_s": prefill, "decode_s": decode, "peak_rss": peak}))
'''


def bandwidth():
    import numpy as np

    a = np.ones(1 << 28, dtype=np.float32)  # 1 GiB
    b = np.empty_like(a)
    best = 0.0
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(b, a)
        dt = time.perf_counter() - t0
        best = max(best, 2 * a.nbytes / dt)  # read and write
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ours", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--prompt-tokens", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=128)
    a = p.parse_args()
    runs = {}
    for r in range(a.rounds):
        for threads in (1, 2):
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), RAYON_NUM_THREADS=str(threads))
            theirs = subprocess.run([sys.executable, "-c", CHILD, a.model, str(threads), str(a.prompt_tokens),
                                     str(a.new_tokens)], capture_output=True, text=True, env=env, check=True)
            ours = subprocess.run([a.ours, "--prompt-tokens", str(a.prompt_tokens), "--new-tokens", str(a.new_tokens),
                                   "--decode-at", "40,2000"],
                                  capture_output=True, text=True, env=dict(env, ATTN_MODEL=a.model), check=True)
            for side, out in (("transformers", theirs), ("ours", ours)):
                runs.setdefault((side, threads), []).append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1}, {threads} thread(s) done", file=sys.stderr)
    bw = bandwidth()
    weights = 134_515_008 * 4
    bound = bw / weights
    med = lambda side, t, key: statistics.median(x[key] for x in runs[(side, t)])
    print(f"memory bandwidth (numpy copy, read + write): {bw / 1e9:.1f} GB/s; "
          f"bound on decoding (538 MB of float32 weights a token): {bound:.1f} tokens/s\n")
    print("| threads | prefill 128 tokens: transformers | ours | ratio | decode: transformers tokens/s | ours | ratio | ours / bound |")
    print("|---|---|---|---|---|---|---|---|")
    for t in (1, 2):
        tp, op = med("transformers", t, "prefill_s"), med("ours", t, "prefill_s")
        td = a.new_tokens / med("transformers", t, "decode_s")
        od = a.new_tokens / med("ours", t, "decode_s")
        print(f"| {t} | {tp:.3f} s | {op:.3f} s | {tp / op:.2f} | {td:.1f} | {od:.1f} | {od / td:.2f} | {od / bound:.2f} |")
    print()
    # Ours only: decoding after a prefill of 40 and of 2000 tokens, the cache's cost.
    print("| threads | ours: decode after 40 cached tokens, tokens/s | after 2000 | 2000 / 40 |")
    print("|---|---|---|---|")
    for t in (1, 2):
        short, long = (statistics.median(x["decode_at"][n] for x in runs[("ours", t)]) for n in ("40", "2000"))
        print(f"| {t} | {short:.1f} | {long:.1f} | {long / short:.2f} |")
    print()
    for side in ("transformers", "ours"):
        peak = max(x["peak_rss"] for t in (1, 2) for x in runs[(side, t)])
        print(f"peak resident memory, {side}: {peak / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
