"""Chapter 3: softmax, naive and stable (PyTorch reference).

Source: seed 000's softmax section (the naive `softmax` and torch.softmax on the
scores of x(2)). The overflow case and the `dim` example are ours: the article
only says the naive version is "numerically unstable" and explains dim=-1 in
words, so we pick tiny inputs whose outputs are exact and easy to check by hand.

Gradients are switched off for the whole script (the same as running it inside
`with torch.no_grad():`), so tensors print without `grad_fn=...`: the Rust side
tracks no gradients. Each step prints a `## ...` heading, its output and one
empty line.
"""
import argparse

import torch

torch.set_grad_enabled(False)  # same effect as wrapping everything in torch.no_grad()

# The chapter binaries all take `--seed S`; this chapter draws no random numbers, so
# the flag is accepted and changes nothing.
def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="accepted as every chapter accepts it; this one draws no random numbers")
parser.parse_args()

print("# Chapter 3: Softmax")
print()

inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)
query = inputs[1]
attn_scores_2 = torch.empty(inputs.shape[0])
for i, x_i in enumerate(inputs):
    attn_scores_2[i] = torch.dot(query, x_i)

print("## The scores of x(2) from chapter 2")
print(attn_scores_2)
print()

# The article's softmax: exponentiate, then normalise.
def softmax(x):
    return torch.exp(x) / torch.exp(x).sum()

# The stable version subtracts the largest score first. Mathematically the
# result is the same (the factor exp(-max) cancels), but exp never sees a
# large positive number, so it cannot overflow.
def softmax_stable(x):
    x = x - x.max()
    return torch.exp(x) / torch.exp(x).sum()

print("## Naive softmax")
attn_weights_2 = softmax(attn_scores_2)
print(f"Attention Weights: {attn_weights_2}")
print(f"Sum: {attn_weights_2.sum():.2f}")
print()

print("## Stable softmax (subtract the max first)")
attn_weights_2 = softmax_stable(attn_scores_2)
print(f"Attention Weights: {attn_weights_2}")
print(f"Sum: {attn_weights_2.sum():.2f}")
print()

print("## torch.softmax")
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
print(f"Attention Weights: {attn_weights_2}")
print(f"Sum: {attn_weights_2.sum():.2f}")
print()

# Our choice: float32 exp overflows to inf above ~88.7, so scores of 10, 100
# and 1000 are enough. inf / inf is nan; exp(10) / inf is 0.
print("## Large scores: the naive softmax overflows")
big_scores = torch.tensor([10.0, 100.0, 1000.0])
print("scores:", big_scores)
print("exp(scores) is inf:", torch.isinf(torch.exp(big_scores)))
print("naive softmax:", softmax(big_scores))
print()

print("## Large scores: the stable softmax does not")
print("scores - max:", big_scores - big_scores.max())
print("stable softmax:", softmax_stable(big_scores))
print("torch.softmax:", torch.softmax(big_scores, dim=0))
print()

# Our choice: a 2x3 example small enough to check by hand; the second row is
# constant so its softmax is exactly 1/3 each.
print("## What dim means on a 2-D tensor")
scores = torch.tensor([[1.0, 2.0, 3.0],
                       [1.0, 1.0, 1.0]])
print(scores)
print(scores.shape)
print()

print("## dim=0 normalises each column (down the rows)")
weights = torch.softmax(scores, dim=0)
print(weights)
print("Column sums:", ", ".join(f"{s:.2f}" for s in weights.sum(dim=0)))
print()

print("## dim=1 (the same as dim=-1 here) normalises each row (across the columns)")
weights = torch.softmax(scores, dim=1)
print(weights)
print("Row sums:", ", ".join(f"{s:.2f}" for s in weights.sum(dim=1)))
print("dim=-1 gives the same:", torch.equal(weights, torch.softmax(scores, dim=-1)))
print()
