"""Chapter 5: causal (masked) attention (PyTorch reference).

Source: seed 000, "Masked attention" and "Implementing a compact causal
attention class". The weights come from SelfAttention_v2 after
manual_seed(789), as in the article.

Note: the article's CausalAttention creates W_query, then W_value, then W_key;
that order decides which random numbers each layer gets, so we keep it.

Gradients are switched off for the whole script (the same as running it inside
`with torch.no_grad():`), so tensors print without `grad_fn=...`: the Rust side
tracks no gradients. Each step prints a `## ...` heading, its output and one
empty line.
"""
import argparse

import torch
import torch.nn as nn

torch.set_grad_enabled(False)  # same effect as wrapping everything in torch.no_grad()

# `--seed S` seeds every torch.manual_seed call below with S instead of the article's
# seed (the chapter binary takes the same flag), so the two can be compared on any seed.
def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call instead of the article's seeds")
SEED = parser.parse_args().seed


def seed_or(article_seed):
    """The seed where the article uses `article_seed`: S if --seed S was given."""
    return article_seed if SEED is None else SEED


print("# Chapter 5: Causal attention")
print()

inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)
d_in = inputs.shape[1]
d_out = 2


class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        keys = self.W_key(x)
        values = self.W_value(x)
        queries = self.W_query(x)

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / (keys.shape[-1] ** 0.5), dim=-1)
        context_vecs = attn_weights @ values
        return context_vecs


torch.manual_seed(seed_or(789))
sa_v2 = SelfAttention_v2(d_in, d_out)

print(f"## Attention weights from SelfAttention_v2 (manual_seed({seed_or(789)}))")
queries = sa_v2.W_query(inputs)
keys = sa_v2.W_key(inputs)
values = sa_v2.W_value(inputs)

attn_scores = queries @ keys.T
attn_weights = torch.softmax(attn_scores / (keys.shape[-1] ** 0.5), dim=-1)
print(attn_weights)
print()

print("## A simple mask with tril")
context_length = attn_scores.shape[0]
mask_simple = torch.tril(torch.ones(context_length, context_length))
print(mask_simple)
print()

print("## Masked attention weights")
masked_simple = attn_weights * mask_simple
print(masked_simple)
print()

print("## Renormalised rows")
row_sums = masked_simple.sum(dim=-1, keepdim=True)
masked_simple_norm = masked_simple / row_sums
print(masked_simple_norm)
print()

print("## Masking the scores with -inf above the diagonal")
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
print(masked)
print()

print("## Softmax of the masked scores")
attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=1)
print(attn_weights)
print()

print(f"## Dropout(0.5) after manual_seed({seed_or(123)})")
torch.manual_seed(seed_or(123))

dropout = torch.nn.Dropout(0.5)
print(dropout(attn_weights))
print()

print("## A batch of two inputs")
batch = torch.stack((inputs, inputs), dim = 0)
print(batch.shape) # two inputs with 6 tokens each, each token has emb_dim = 3
print()


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias = qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            'mask', torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x)
        values = self.W_value(x)
        queries = self.W_query(x)

        attn_scores = queries @ keys.transpose(1,2) # tranpose to keep the batch at the first dim
        attn_scores.masked_fill_(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


print(f"## CausalAttention on the batch (manual_seed({seed_or(123)}), dropout 0.0)")
torch.manual_seed(seed_or(123))
context_length = batch.shape[1]
ca = CausalAttention(d_in, d_out, context_length, 0.0)
context_vecs = ca(batch)
print(context_vecs)
print("context_vecs shape: ", context_vecs.shape)
print()
