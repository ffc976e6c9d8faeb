"""PyTorch's side of scripts/bench-vs-torch.sh: the same shapes as chapter 9's criterion
bench (batch 1, 12 heads of 64, f32, one thread unless said otherwise), timed the way
criterion times ours: warm up, then 10 samples of equal size, each the mean time of its
iterations; the number reported is the median sample.

    python scripts/bench_torch.py --ns 1024 4096 --groups core_causal --out torch.json

Writes {"group/variant/n": median nanoseconds, ...} and a line per result to stderr.
Needs torch==2.13.0.
"""
import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HEADS, HEAD_DIM = 12, 64
D_MODEL = HEADS * HEAD_DIM
SAMPLES = 10
MEASUREMENT_S = 3.0  # as the criterion bench: 3 s of samples after 0.5 s of warm-up
WARM_UP_S = 0.5


def median_ns(f):
    """Criterion's flat sampling: warm up, pick the iterations per sample, take the median."""
    start = time.perf_counter()
    runs = 0
    while True:
        f()
        runs += 1
        elapsed = time.perf_counter() - start
        if elapsed >= WARM_UP_S:
            break
    per_iter = elapsed / runs
    iters = max(1, math.ceil(MEASUREMENT_S / (SAMPLES * per_iter)))
    samples = []
    for _ in range(SAMPLES):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            f()
        samples.append((time.perf_counter_ns() - t0) / iters)
    return statistics.median(samples)


def qkv(n):
    torch.manual_seed(0)
    return [torch.randn(1, HEADS, n, HEAD_DIM) for _ in range(3)]


def matmul_softmax(q, k, v, causal):
    """The plain path: scores, mask, softmax, weighted sum (chapters 4, 5 and 7 in torch)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if causal:
        n = q.size(-2)
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


class Module(nn.Module):
    """Chapter 7's causal MultiHeadAttention (d_model = 768, 12 heads), with either core."""

    def __init__(self, sdpa):
        super().__init__()
        self.sdpa = sdpa
        self.W_query = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.W_key = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.W_value = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.out_proj = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, x):
        b, n, _ = x.shape
        split = lambda t: t.view(b, n, HEADS, HEAD_DIM).transpose(1, 2)
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        if self.sdpa:
            context = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            context = matmul_softmax(q, k, v, causal=True)
        return self.out_proj(context.transpose(1, 2).contiguous().view(b, n, D_MODEL))


def cases(groups, n):
    q, k, v = qkv(n)
    if "core_causal" in groups:
        yield "core_causal/torch_sdpa", 1, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        yield "core_causal/torch_matmul_softmax", 1, lambda: matmul_softmax(q, k, v, True)
    if "core_full" in groups:
        yield "core_full/torch_sdpa", 1, lambda: F.scaled_dot_product_attention(q, k, v)
        yield "core_full/torch_matmul_softmax", 1, lambda: matmul_softmax(q, k, v, False)
    if "module" in groups:
        torch.manual_seed(0)
        x = torch.randn(1, n, D_MODEL)
        sdpa_module, plain_module = Module(True), Module(False)
        yield "module/torch_sdpa", 1, lambda: sdpa_module(x)
        yield "module/torch_matmul_softmax", 1, lambda: plain_module(x)
    if "threads" in groups:
        for threads in (1, 2):
            yield f"threads/torch_sdpa_{threads}t", threads, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns", type=int, nargs="+", default=[128, 512, 1024, 2048, 4096])
    parser.add_argument("--groups", nargs="+", default=["core_causal", "core_full", "module", "threads"])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not torch.__version__.startswith("2.13.0"):
        sys.exit(f"bench_torch.py: need torch 2.13.0, found {torch.__version__}")
    torch.set_grad_enabled(False)
    results = {}
    for n in args.ns:
        for name, threads, f in cases(args.groups, n):
            torch.set_num_threads(threads)
            results[f"{name}/{n}"] = median_ns(f)
            print(f"{name}/{n}: {results[f'{name}/{n}'] / 1e6:.3f} ms", file=sys.stderr)
    torch.set_num_threads(1)
    with open(args.out, "w") as out:
        json.dump({"torch": torch.__version__, "results": results}, out, indent=1)


if __name__ == "__main__":
    main()
