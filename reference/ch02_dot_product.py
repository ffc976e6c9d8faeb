"""Chapter 2: attention scores as dot products (PyTorch reference).

Source: seed 000, "Calculating the attention scores" and "Computing attention
weights for all input tokens".

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

print("# Chapter 2: Dot-product attention")
print()

inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)

print("## Attention scores of x(2), one dot product at a time")
query = inputs[1]  # the second token, "journey", is the query

attn_scores_2 = torch.empty(inputs.shape[0])
for i, x_i in enumerate(inputs):
    attn_scores_2[i] = torch.dot(query, x_i)

print(attn_scores_2)
print()

print("## Naive normalisation: divide by the sum")
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()
print(f"Attention Weights: {attn_weights_2_tmp}")
print(f"Sum: {attn_weights_2_tmp.sum():.2f}")
print()

# The context vector needs normalised weights; we use torch.softmax here and
# look at softmax itself (naive versus stable) in chapter 3.
print("## Softmax weights of x(2)")
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
print(f"Attention Weights: {attn_weights_2}")
print(f"Sum: {attn_weights_2.sum():.2f}")
print()

print("## Context vector z(2), one weighted sum at a time")
query = inputs[1]
context_vec_2 = torch.zeros(query.shape)

for i, x_i in enumerate(inputs):
    context_vec_2 += attn_weights_2[i] * x_i

print(context_vec_2)
print()

print("## All attention scores in one matmul")
attn_scores = torch.matmul(inputs, inputs.T)
print(attn_scores)
print(attn_scores.shape)
print()

print("## Softmax over dim=-1: every row sums to 1")
attn_weights = torch.softmax(attn_scores, dim=-1)
print(attn_weights)
print("Row sums:", ", ".join(f"{s:.2f}" for s in attn_weights.sum(dim=-1)))
print()

print("## All context vectors in one matmul")
all_context_vecs = torch.matmul(attn_weights, inputs)

print(all_context_vecs)
print()
