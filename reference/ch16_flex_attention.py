"""Chapter 16: FlexAttention, every attention variant as a score_mod and a mask_mod (PyTorch reference).

PyTorch's flex_attention (torch.nn.attention.flex_attention, run eagerly on the CPU,
not compiled) takes a score_mod(score, b, h, q_idx, kv_idx) that rewrites every scaled
score and a block mask built by create_block_mask from a mask_mod(b, h, q_idx, kv_idx)
that says which keys a query sees. This script runs the recipes of the chapter through
it, 4 query heads reading 2 key/value heads (enable_gqa=True), and prints for each:

  * the block mask of 4 x 4 tiles (F: every entry visible, P: some, .: none) as
    create_block_mask records it, and the number of tiles of each kind;
  * two rows of the output;
  * the mean magnitude of all its numbers, |out|.mean(), one number for the whole
    output.

Before printing, it checks that eager flex_attention equals the formula written op by
op, softmax(mask(score_mod((q @ k^T) * scale))) @ v, bit for bit (torch.equal) for every
recipe. The softcap's tanh is taken in float64 and rounded once to float32, as in
chapter 15, so its digits do not depend on the CPU routine that computes tanh.

Then the backward pass, for the recipes whose score_mod has a derivative (causal, sliding
window, ALiBi, softcap): one upstream gradient grad_out drawn after v, and for each recipe
two rows of the gradient of k and the mean magnitudes of the gradients of q, k and v, by
autograd. flex_attention has no backward on the CPU in PyTorch 2.13.0, so autograd runs
through the formula op by op, which the forward section checked equals eager
flex_attention bit for bit. Gradients are off elsewhere. Each step prints a `## ...`
heading, its output and one empty line.
"""
import argparse
import math
import warnings

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

torch.set_grad_enabled(False)
# Eager flex_attention warns that it is meant to be compiled; eager is the oracle here.
warnings.filterwarnings("ignore")


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


def seed_or(default_seed):
    return default_seed if SEED is None else SEED


B, H, H_KV, L, D = 1, 4, 2, 16, 8
G = H // H_KV
TILE = 4
SCALE = 1.0 / math.sqrt(D)
WINDOW = 4
DOCUMENTS = [5, 7, 4]
PREFIX = 6
CAP = 2.0
# ALiBi's slopes for 4 heads: 2^(-8 (h + 1) / 4).
SLOPES = torch.tensor([2.0 ** (-8 * (h + 1) / H) for h in range(H)])
DOC_ID = torch.cat([torch.full((n,), i) for i, n in enumerate(DOCUMENTS)])


# ---- mask_mods: which keys query q_idx sees --------------------------------------------

def everything(b, h, q_idx, kv_idx):
    return q_idx >= 0


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() < WINDOW


def causal_window(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx < WINDOW)


def document(b, h, q_idx, kv_idx):
    return (DOC_ID[q_idx] == DOC_ID[kv_idx]) & (q_idx >= kv_idx)


def prefix_lm(b, h, q_idx, kv_idx):
    return (kv_idx < PREFIX) | (q_idx >= kv_idx)


# ---- score_mods: how a visible score changes -------------------------------------------

def unchanged(score, b, h, q_idx, kv_idx):
    return score


def alibi(score, b, h, q_idx, kv_idx):
    return score + SLOPES[h] * (kv_idx - q_idx)


def softcap(score, b, h, q_idx, kv_idx):
    return CAP * torch.tanh((score / CAP).double()).float()


RECIPES = [
    ("no mask", unchanged, everything),
    ("causal", unchanged, causal),
    (f"sliding window: |q - kv| < {WINDOW}", unchanged, sliding_window),
    (f"causal, window of {WINDOW}", unchanged, causal_window),
    (f"document mask: documents of {', '.join(map(str, DOCUMENTS))} tokens, causal", unchanged, document),
    (f"prefix-LM: the first {PREFIX} tokens see each other", unchanged, prefix_lm),
    ("ALiBi, causal", alibi, causal),
    (f"softcap {CAP:g}, causal", softcap, causal),
]


def formula(q, k, v, score_mod, mask_mod):
    """softmax(mask(score_mod((q @ k^T) * scale))) @ v, op by op, each key/value head
    repeated for the query heads that read it."""
    k, v = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)
    scores = (q @ k.transpose(-2, -1)) * SCALE
    b = torch.arange(B)[:, None, None, None]
    h = torch.arange(H)[None, :, None, None]
    q_idx = torch.arange(L)[None, None, :, None]
    kv_idx = torch.arange(L)[None, None, None, :]
    scores = score_mod(scores, b, h, q_idx, kv_idx)
    scores = scores.masked_fill(~mask_mod(b, h, q_idx, kv_idx), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def tiles(block_mask):
    """The tile grid of head 0 as create_block_mask records it: F full, P partial, . empty."""
    rows = []
    for r in range(L // TILE):
        row = ["."] * (L // TILE)
        for i in block_mask.kv_indices[0, 0, r, :block_mask.kv_num_blocks[0, 0, r]].tolist():
            row[i] = "P"
        for i in block_mask.full_kv_indices[0, 0, r, :block_mask.full_kv_num_blocks[0, 0, r]].tolist():
            row[i] = "F"
        rows.append(row)
    return rows


print("# Chapter 16: FlexAttention")
print()

torch.manual_seed(seed_or(16))
q = torch.randn(B, H, L, D)
k = torch.randn(B, H_KV, L, D)
v = torch.randn(B, H_KV, L, D)
print(f"## Queries, keys and values (manual_seed({seed_or(16)}))")
print(f"q.shape: {q.shape}")
print(f"k.shape: {k.shape}")
print(f"v.shape: {v.shape}")
print(f"query heads 0-1 read key/value head 0, heads 2-3 read head 1; tiles of {TILE} x {TILE}")
print()

for name, score_mod, mask_mod in RECIPES:
    block_mask = create_block_mask(mask_mod, None, None, L, L, device="cpu", BLOCK_SIZE=TILE)
    out = flex_attention(q, k, v, score_mod=score_mod, block_mask=block_mask, enable_gqa=True)
    assert torch.equal(out, formula(q, k, v, score_mod, mask_mod)), name
    grid = tiles(block_mask)
    counts = {kind: sum(row.count(kind) for row in grid) for kind in "FP."}
    print(f"## {name}")
    print("tiles (F: full, P: partial, .: empty):")
    for row in grid:
        print(" ".join(row))
    print(f"full {counts['F']}, partial {counts['P']}, empty {counts['.']}")
    print("out[0, 0, [4, 7]] (head 0, queries 4 and 7):")
    print(out[0, 0, [4, 7]])
    print(f"mean |out| over its {out.numel()} numbers: {str(out.abs().mean())}")
    print()


# ---- the backward pass through a score_mod ---------------------------------------------

BACKWARD_RECIPES = [
    ("causal", unchanged, causal),
    (f"sliding window: |q - kv| < {WINDOW}", unchanged, sliding_window),
    ("ALiBi, causal", alibi, causal),
    (f"softcap {CAP:g}, causal", softcap, causal),
]


def gradients(attention, grad_out):
    """The gradients of q, k, v for the upstream gradient grad_out, by autograd.

    flex_attention has no backward on the CPU in PyTorch 2.13.0 ("FlexAttention does not
    support backward on CPU"), so autograd runs through the formula, which the forward
    section checked equals eager flex_attention bit for bit."""
    with torch.enable_grad():
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        attention(*leaves).backward(grad_out)
    return [t.grad for t in leaves]


grad_out = torch.randn(B, H, L, D)
print("## Backward: the gradient of the output")
print(f"grad_out.shape: {grad_out.shape}")
print("the gradient of the output, drawn after v, the same for every recipe")
print()
for name, score_mod, mask_mod in BACKWARD_RECIPES:
    ours = gradients(lambda q, k, v: formula(q, k, v, score_mod, mask_mod), grad_out)
    print(f"## Backward, {name}")
    print("grad_k[0, 0, [4, 7]] (key/value head 0, keys 4 and 7):")
    print(ours[1][0, 0, [4, 7]])
    for label, grad in zip(["q", "k", "v"], ours):
        print(f"mean |grad_{label}|: {str(grad.abs().mean())}")
    print()
