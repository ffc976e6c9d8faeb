#!/usr/bin/env python3
"""Times chapter 20's model against llama.cpp and transformers, in turns (see
perf/scripts/bench-llamacpp.sh).

Each round runs, for 1 and 2 threads, each engine in a fresh process: llama.cpp's
`llama-bench` on the Q4_1 file and on its float32 copy (a prefill of 128 tokens, then 128
decoding steps after a 128-token context), transformers (float32, eager attention, the KV
cache: bench_real_model.py's child), and chapter 20's `speed_real_model` example on its
float32 and its quantised path (the same prefill and steps; the quantised one-row products by
perf's version 2, and by the chapter's listing). The medians over the rounds are
reported in tokens per second (chapter 20's float32 path with its weights packed once at
load, and also packing them again for each prompt, `--pack-each-prompt`), with the ratios the chapter's goals name, and the bound that
the memory bandwidth, measured in the same run, sets on decoding for each weight format.

Then one chat question answered greedily by transformers and by llama.cpp on both files,
with transformers' float32 logits of the answer's first token: the margin between the first
two says how close a near tie is, which llama.cpp's Q4_1 product (activations rounded to 8
bits a block) can turn.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from bench_real_model import CHILD, bandwidth

PROMPT = 128
NEW = 128
# Bytes read a token: every float32 weight (134,515,008 numbers), or the file's blocks.
F32_BYTES = 134_515_008 * 4


def llama_cpp(bench, model, threads):
    """llama-bench's prefill and decoding speeds (tokens/s) for `model` on `threads`."""
    speeds = {}
    runs = ((["-p", str(PROMPT), "-n", "0"], "prefill"),
            (["-p", "0", "-n", str(NEW), "-d", str(PROMPT)], "decode"))
    for args, key in runs:
        r = subprocess.run([bench, "-m", model, "-t", str(threads), "-r", "1", "-o", "json", *args],
                           capture_output=True, text=True, check=True)
        speeds[key] = json.loads(r.stdout)[0]["avg_ts"]
    return speeds


def transformers(model, threads, env):
    out = subprocess.run([sys.executable, "-c", CHILD, model, str(threads), str(PROMPT), str(NEW)],
                         capture_output=True, text=True, env=env, check=True)
    x = json.loads(out.stdout.strip().splitlines()[-1])
    return {"prefill": PROMPT / x["prefill_s"], "decode": NEW / x["decode_s"]}


def ours(binary, model, weights, env, *extra):
    out = subprocess.run([binary, "--prompt-tokens", str(PROMPT), "--new-tokens", str(NEW),
                          "--decode-at", "none", "--weights", weights, *extra],
                         capture_output=True, text=True, env=dict(env, ATTN_MODEL=model), check=True)
    x = json.loads(out.stdout.strip().splitlines()[-1])
    return {"prefill": PROMPT / x["prefill_s"], "decode": NEW / x["decode_s"]}


QUESTION = "What is the capital of France?"

ANSWER_CHILD = r'''
import json, os, sys
os.environ["HF_HUB_OFFLINE"] = "1"
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
torch.set_grad_enabled(False)
folder, name = os.path.split(os.path.abspath(sys.argv[1]))
tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
m = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
m.set_attn_implementation("eager")
prompt = tok.apply_chat_template([{"role": "user", "content": sys.argv[2]}], tokenize=False,
                                 add_generation_prompt=True)
ids = tok(prompt, return_tensors="pt").input_ids
top = m(ids).logits[0, -1].topk(3)
out = m.generate(ids, max_new_tokens=12, do_sample=False)
print(json.dumps({"prompt": prompt, "answer": tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True),
                  "top": [[tok.decode([int(i)]), float(v)] for v, i in zip(top.values, top.indices)]}))
'''


def answers(completion, model, model_f32):
    """Each engine's greedy answer to QUESTION, and transformers' top three first tokens."""
    out = subprocess.run([sys.executable, "-c", ANSWER_CHILD, model, QUESTION],
                         capture_output=True, text=True, check=True)
    theirs = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"greedy answers to {QUESTION!r} (the chat template, 12 tokens at most):")
    print(f"  transformers float32: {theirs['answer']!r}")
    for name, file in (("llama.cpp F32", model_f32), ("llama.cpp Q4_1", model)):
        # `-p` with `-e`: the template's newlines as escapes (a prompt from a file loses its
        # last newline); `--no-display-prompt` leaves only the answer on stdout.
        text = subprocess.run([completion, "-m", file, "-p", theirs["prompt"].encode("unicode_escape").decode(),
                               "-e", "-n", "12", "--temp", "0", "-t", "1", "--no-display-prompt", "-no-cnv"],
                              capture_output=True, text=True, check=True).stdout
        print(f"  {name}: {text.replace('[end of text]', '').strip()!r}")
    (first, a), (second, b), (third, c) = theirs["top"]
    print(f"transformers' logits for the answer's first token: {first!r} {a:.4f}, {second!r} {b:.4f}, "
          f"{third!r} {c:.4f} (margin {a - b:.4f})")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--llama-bench", required=True)
    p.add_argument("--llama-completion", required=True)
    p.add_argument("--model", required=True, help="the Q4_1 GGUF file")
    p.add_argument("--model-f32", required=True, help="the same weights as float32 (llama-quantize F32)")
    p.add_argument("--ours", required=True)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    print(f"load average before: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    engines = {
        "llama.cpp Q4_1": lambda t, env: llama_cpp(a.llama_bench, a.model, t),
        "llama.cpp F32": lambda t, env: llama_cpp(a.llama_bench, a.model_f32, t),
        "transformers float32": lambda t, env: transformers(a.model, t, env),
        "chapter 20 float32": lambda t, env: ours(a.ours, a.model, "float32", env),
        # Without the weights packed at load: each prefill packs them again, for half the
        # memory.
        "chapter 20 float32, packing each prompt": lambda t, env: ours(a.ours, a.model, "float32", env,
                                                                       "--pack-each-prompt"),
        # Its one-row products by perf's version 2 (the same bits), and by the chapter's
        # listing.
        "chapter 20 quantised": lambda t, env: ours(a.ours, a.model, "quantised", env),
        "chapter 20 quantised, the listing": lambda t, env: ours(a.ours, a.model, "quantised-listing",
                                                                 env),
    }
    if a.rounds > 0:
        timings(a, engines)
    answers(a.llama_completion, a.model, a.model_f32)


def timings(a, engines):
    """The rounds in turns, then the tables of medians and ratios."""
    runs = {}
    for r in range(a.rounds):
        for threads in (1, 2):
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), RAYON_NUM_THREADS=str(threads))
            for name, run in engines.items():
                runs.setdefault((name, threads), []).append(run(threads, env))
            print(f"round {r + 1}, {threads} thread(s) done", file=sys.stderr)
    print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    bw = bandwidth()
    q_bytes = os.path.getsize(a.model)
    print(f"memory bandwidth (numpy copy, read + write): {bw / 1e9:.1f} GB/s; bound on decoding: "
          f"float32 weights ({F32_BYTES / 1e6:.0f} MB a token) {bw / F32_BYTES:.1f} tokens/s, "
          f"the Q4_1 file ({q_bytes / 1e6:.0f} MB) {bw / q_bytes:.1f} tokens/s\n")
    med = lambda name, t, key: statistics.median(x[key] for x in runs[(name, t)])
    print(f"| engine | threads | prefill {PROMPT} tokens, tokens/s | decode after {PROMPT}, tokens/s |")
    print("|---|---|---|---|")
    for t in (1, 2):
        for name in engines:
            print(f"| {name} | {t} | {med(name, t, 'prefill'):.0f} | {med(name, t, 'decode'):.1f} |")
    print()
    print("| threads | decode: ours float32 / llama.cpp F32 | ours quantised / llama.cpp Q4_1 "
          "| ours float32 / float32 bound | prefill: ours float32 / transformers |")
    print("|---|---|---|---|---|")
    for t in (1, 2):
        print(f"| {t} | {med('chapter 20 float32', t, 'decode') / med('llama.cpp F32', t, 'decode'):.2f} "
              f"| {med('chapter 20 quantised', t, 'decode') / med('llama.cpp Q4_1', t, 'decode'):.2f} "
              f"| {med('chapter 20 float32', t, 'decode') / (bw / F32_BYTES):.2f} "
              f"| {med('chapter 20 float32', t, 'prefill') / med('transformers float32', t, 'prefill'):.2f} |")
    print()


if __name__ == "__main__":
    main()
