"""Chapter 21: attention on the GPU, from one invocation per row to FlashAttention
(PyTorch reference).

The chapter runs attention as WebGPU compute kernels (WGSL, started from Rust through
wgpu): one invocation per query row, one workgroup per row, FlashAttention's forward
pass in tiles, and split-KV decoding (Flash-Decoding). None of the articles shows it, so
every example here is ours:

  * queries, keys and values drawn with torch.randn after manual_seed(123), shape
    (1, 2, 200, 16);
  * PyTorch's F.scaled_dot_product_attention(is_causal=True) and the log-sum-exp of each
    row's scores, the numbers every kernel must give;
  * for each kernel, the same numbers, and the check that they lie within the tolerance
    derived from the inputs (the Rust side compares its GPU result with chapter 9's CPU
    kernel; here PyTorch's fused kernel is compared with the formula written out);
  * the tiles of the FlashAttention kernel for WebGPU's 16 KiB of workgroup memory, and how
    many keys each kernel reads from global memory;
  * split-KV decoding: one query per head over 2000 cached keys in 8 parts, each part's
    log-sum-exp and their merge;
  * torch.exp at a few points, the values the page compares a GPU's exp with.

A GPU rounds in its own order and its exp is not PyTorch's: the chapter's numbers equal
these within one unit of the last printed digit, and all other text exactly.

Gradients are off for the whole script, so nothing prints `grad_fn=...`.
Each step prints a `## ...` heading, its output and one empty line.
"""
import argparse
import math

import torch
import torch.nn.functional as F

torch.set_grad_enabled(False)


def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call instead of the chapter's seed")
SEED = parser.parse_args().seed


def seed_or(article_seed):
    """The seed where the chapter uses `article_seed`: S if --seed S was given."""
    return article_seed if SEED is None else SEED


U = 2.0**-24  # the unit roundoff of float32


def gamma(n):
    return n * U / (1 - n * U)


def tolerance(q, k, v, causal, rescales):
    """The tolerance of every row (outputs, log-sum-exps), as the chapter derives it: see
    chapters/ch21-webgpu/src/tolerance.rs."""
    q, k, v = q.double(), k.double(), v.double()
    d, n, m = q.shape[-1], q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    magnitude = q.abs() @ k.abs().transpose(-2, -1) * scale
    visible = torch.ones(n, m, dtype=torch.bool)
    if causal:
        visible = visible.tril()
    counts = visible.sum(-1).double()
    eta = torch.tensor([gamma(d + 2)], dtype=torch.float64) * magnitude.masked_fill(~visible, 0).amax(-1)
    high = scores.masked_fill(~visible, -math.inf).amax(-1)
    low = scores.masked_fill(~visible, math.inf).amin(-1)
    exp_error = (3 + 2 * (high - low + 2 * eta)) * 2 * U
    a = torch.exp(2 * eta) * (1 + exp_error) ** (rescales + 1) - 1
    sums = counts * U / (1 - counts * U)
    largest_value = (v.abs().amax(-1).unsqueeze(-2) * visible).amax(-1)
    flushed = counts * 2.0**-126
    out = 2 * ((2 * a + 2 * sums + 5 * U) / (1 - a - sums) + flushed) * largest_value
    lse = high + counts.log()
    log_error = 2.0**-21 + 6 * U * counts.log()
    lse_tol = 2 * (2 * eta + (a + sums) / (1 - a - sums) + log_error + 2 * U * lse.abs())
    return out, lse_tol


def attention_written_out(q, k, v, causal):
    """softmax(q·kᵀ/√d)·v and the log-sum-exp of each row, the formula step by step."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n, m = scores.shape[-2:]
        scores = scores.masked_fill(~torch.ones(n, m, dtype=torch.bool).tril(), -math.inf)
    return torch.softmax(scores, -1) @ v, torch.logsumexp(scores, -1)


def fused_attention(q, k, v, causal):
    """PyTorch's fused FlashAttention kernel on the CPU, with its log-sum-exp."""
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal)
    return out, lse


def agrees(q, k, v, causal, rescales):
    """PyTorch's fused kernel against the formula, within the derived tolerance."""
    fused, lse_fused = fused_attention(q, k, v, causal)
    out, lse = attention_written_out(q, k, v, causal)
    out_tol, lse_tol = tolerance(q, k, v, causal, rescales)
    within_out = ((fused - out).abs().double() <= out_tol.unsqueeze(-1)).all()
    within_lse = ((lse_fused - lse).abs().double() <= lse_tol).all()
    return bool(within_out and within_lse)


def largest_tile_k(limit, d, d_v, max_tile_k=64):
    tile_k = 1
    while tile_k * 2 <= max_tile_k and 4 * tile_k * 2 * (d + d_v) <= limit:
        tile_k *= 2
    return tile_k


print("# Chapter 21: Attention on the GPU, from one invocation per row to FlashAttention")
print()

seed = seed_or(123)
heads, n, d = 2, 200, 16
torch.manual_seed(seed)
q = torch.randn(1, heads, n, d)
k = torch.randn(1, heads, n, d)
v = torch.randn(1, heads, n, d)
print(f"## Queries, keys and values: {heads} heads, {n} tokens, {d} features (manual_seed({seed}), randn)")
print("q.shape:", q.shape)
print("q[0, 0, 0, :4]:", q[0, 0, 0, :4])
print()

out, lse = fused_attention(q, k, v, True)
print("## Causal attention on the CPU (chapter 9's kernel; PyTorch's SDPA)")
print("out[0, 1, -1, :4]:", out[0, 1, -1, :4])
print("logsumexp[0, 1, -4:]:", lse[0, 1, -4:])
print()

# Kernel 3 rescales a weight once per later tile of keys: at most once per key.
tile_q, tile_k = 64, largest_tile_k(16384, d, d)
rescales = {"1": 0, "2": 0, "3": n}
titles = {
    "1": "Kernel 1: one invocation per query row, the scores in global memory",
    "2": "Kernel 2: one workgroup per query row, tree reductions",
    "3": "Kernel 3: FlashAttention, tiles of keys and values in workgroup memory",
}
for kernel in ["1", "2", "3"]:
    print(f"## {titles[kernel]}")
    print("out[0, 1, -1, :4]:", out[0, 1, -1, :4])
    print("logsumexp[0, 1, -4:]:", lse[0, 1, -4:])
    print("within the tolerance of the CPU's result:", agrees(q, k, v, True, rescales[kernel]))
    print()

query_tiles, key_tiles = -(-n // tile_q), -(-n // tile_k)
visited = sum(-(-min((t + 1) * tile_q, n) // tile_k) for t in range(query_tiles))
print("## What the tiles save, per head, causal")
print(f"tiles: {tile_q} queries x {tile_k} keys, {visited} of {query_tiles * key_tiles} tiles computed")
row_reads = sum(min(i + 1, n) for i in range(n))
tile_reads = sum(min(-(-min(start + tile_q, n) // tile_k) * tile_k, n) for start in range(0, n, tile_q))
print(f"keys read from global memory by kernel 1 (naive): {row_reads}")
print(f"keys read from global memory by kernel 2 (row per workgroup): {row_reads}")
print(f"keys read from global memory by kernel 3 (flash): {tile_reads}")
print()

full = F.scaled_dot_product_attention(q, k, v)
print("## Kernel 3 without the causal mask")
print("out[0, 1, 0, :4]:", full[0, 1, 0, :4])
print("within the tolerance of the CPU's result:", agrees(q, k, v, False, rescales["3"]))
print()

cache, splits = 2000, 8
torch.manual_seed(seed)
q1 = torch.randn(1, heads, 1, d)
k1 = torch.randn(1, heads, cache, d)
v1 = torch.randn(1, heads, cache, d)
scores = q1 @ k1.transpose(-2, -1) / math.sqrt(d)  # [1, heads, 1, cache]
part_len = -(-cache // splits)
parts = torch.stack([torch.logsumexp(scores[..., p * part_len:(p + 1) * part_len], -1)
                     for p in range(splits)], -1)  # [1, heads, 1, splits]
merged = F.scaled_dot_product_attention(q1, k1, v1)
print(f"## Kernel 4: split-KV decoding, one query over {cache} keys in {splits} parts (manual_seed({seed}))")
print("logsumexp of each part, head 0:")
print(parts[0, 0, 0])
print("merged out[0, 0, 0, :4]:", merged[0, 0, 0, :4])
print("merged logsumexp[0, :, 0]:", torch.logsumexp(scores, -1)[0, :, 0])
print("within the tolerance of the CPU's result:", agrees(q1, k1, v1, False, 1))
print()

x = torch.tensor([-20.0, -5.0, -1.0, 0.5, 1.0, 10.0])
print("## exp in PyTorch, the value a GPU's exp is compared with")
print("x:", x)
for value, e in zip(x.tolist(), torch.exp(x).tolist()):
    print(f"torch.exp({value:.1f}): {e:.8e}")
print()
