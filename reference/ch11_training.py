"""Chapter 11: training: attention learns (PyTorch reference).

A small model learns a task that only attention can solve: at every position
from the third on, output the token two places back. The model is token and
position embeddings, chapter 7's causal MultiHeadAttention (dropout 0, two
heads) and a linear head, trained with cross-entropy (mean over the predicted
positions) and torch.optim.AdamW (lr 1e-2, the other settings default).

Every number comes from the generator after torch.manual_seed(S) (S = 123
unless --seed S), in a fixed order that the Rust chapter follows: the
parameters (token table, position table, W_query, W_key, W_value, out_proj,
head), the sequence shown in the heatmaps, one batch per step, and last the
fresh batch the accuracy is measured on.

Autograd is on (the chapter is about training), but nothing printed carries a
grad_fn: losses are printed through `:.4f` and attention weights through
`:.2f` (row i lists the weights position i gives to positions 0 to i), so a
last-bit difference (see NOTES.md: AdamW's sqrt) cannot show. Each step prints a `## ...` heading, its output
and one empty line.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


def steps_value(text):
    steps = int(text)
    if steps < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of steps")
    return steps


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for the manual_seed call instead of 123")
parser.add_argument("--steps", type=steps_value, metavar="N", default=60,
                    help="train N steps (default 60)")
ARGS = parser.parse_args()
SEED = ARGS.seed


def seed_or(default_seed):
    """The seed where the chapter uses `default_seed`: S if --seed S was given."""
    return default_seed if SEED is None else SEED


VOCAB = 8        # token ids 0..7
TOKENS = 8       # tokens per sequence (the context length)
D_MODEL = 16     # embedding size = attention size
HEADS = 2
BATCH = 16       # sequences per step: 16 * 8 = 128 token rows
SHIFT = 2        # the target at position i is the token at i - SHIFT
LR = 1e-2


class MultiHeadAttention(nn.Module):
    """Chapter 7's causal multi-head attention (Raschka's, with the two typos fixed)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert (d_out % num_heads == 0), "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask",
            torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def weights(self, x):
        """The attention weights, [b, num_heads, num_tokens, num_tokens], and the values."""
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        return self.dropout(attn_weights), values

    def forward(self, x):
        b, num_tokens, _ = x.shape
        attn_weights, values = self.weights(x)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)


class TwoBackModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.pos_emb = nn.Embedding(TOKENS, D_MODEL)
        self.attn = MultiHeadAttention(D_MODEL, D_MODEL, TOKENS, 0.0, HEADS)
        self.head = nn.Linear(D_MODEL, VOCAB)

    def embed(self, ids):
        return self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))

    def forward(self, ids):
        return self.head(self.attn(self.embed(ids)))


def loss_fn(logits, ids):
    """Cross-entropy over the positions that have a token two places back."""
    predicted = logits[:, SHIFT:].reshape(-1, VOCAB)
    wanted = ids[:, :-SHIFT].reshape(-1)
    return F.cross_entropy(predicted, wanted)


def print_heads(model, ids):
    with torch.no_grad():
        weights, _ = model.attn.weights(model.embed(ids))
    # Two decimals, row by row: row i holds what position i attends to (positions
    # 0 to i; the mask hides the rest).
    for h in range(HEADS):
        print(f"head {h}:")
        for i in range(TOKENS):
            row = " ".join(f"{w:.2f}" for w in weights[0, h, i, : i + 1].tolist())
            print(f"  {i}: {row}")


print("# Chapter 11: Training: attention learns")
print()

torch.manual_seed(seed_or(123))
model = TwoBackModel()
shown = torch.randint(0, VOCAB, (1, TOKENS))

print("## The task: the token two places back")
print("tokens: ", shown[0])
print("targets:", shown[0, :-SHIFT], "(for positions 2 to 7)")
print()

print("## The model")
for name, p in model.named_parameters():
    print(f"{name}: {p.shape}")
print("parameters:", sum(p.numel() for p in model.parameters()))
print()

print("## Attention weights before training")
print_heads(model, shown)
print()

optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
print("## Training: the loss at every step")
for step in range(1, ARGS.steps + 1):
    ids = torch.randint(0, VOCAB, (BATCH, TOKENS))
    loss = loss_fn(model(ids), ids)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step:3}: loss {loss.item():.4f}")
print()

print("## Accuracy on a fresh batch")
ids = torch.randint(0, VOCAB, (BATCH, TOKENS))
with torch.no_grad():
    predicted = model(ids)[:, SHIFT:].argmax(-1)
correct = (predicted == ids[:, :-SHIFT]).sum().item()
print(f"correct: {correct}/{predicted.numel()}")
print()

print("## Attention weights after training")
print_heads(model, shown)
print()
