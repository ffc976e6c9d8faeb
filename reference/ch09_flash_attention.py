"""Chapter 9: FlashAttention, attention in tiles (PyTorch reference).

Source: seed 003 ends on "Flash Attention -- rewriting attention to live in
SRAM". None of the articles shows it, so every example here is ours:

  * the online softmax (Milakov and Gimelshein, 2018) on the scores of x(2),
    the query of seeds 000 and 004's "Your journey starts with one step",
    two scores at a time;
  * the context vector of x(2) accumulated block by block, rescaled whenever
    the running maximum grows;
  * FlashAttention's tiled algorithm (Dao et al., 2022; the loop order of
    FlashAttention-2) written with tensor operations, on manual_seed(123)
    rand inputs of shape (1, 2, 10, 5) in blocks of 4, causal;
  * PyTorch's own fused kernel, F.scaled_dot_product_attention(is_causal=True),
    as the reference for the Rust kernel;
  * the memory a materialised score matrix takes at GPT-2 small's size;
  * chapter 7's (Raschka's) MultiHeadAttention with the attention core swapped
    for F.scaled_dot_product_attention.

The Rust kernel adds its products in another order than PyTorch (and uses its
own exp), so its results are printed only through torch.allclose, never digit
by digit; the digits printed come from tensor operations that the Rust side
performs in the same order.

Gradients are off for the whole script, so nothing prints `grad_fn=...`.
Each step prints a `## ...` heading, its output and one empty line.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

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


print("# Chapter 9: FlashAttention, attention in tiles")
print()

inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)
query = inputs[1]  # x(2), "journey"

print("## The scores of x(2) and their softmax, all at once")
scores = inputs @ query
weights = torch.softmax(scores, dim=0)
context = weights @ inputs
print("scores:", scores)
print("weights:", weights)
print("context:", context)
print()

print("## The online softmax, two scores at a time")
m = torch.tensor(float("-inf"))  # running maximum
l = torch.tensor(0.0)            # running sum of exp(score - m)
for start in range(0, 6, 2):
    block = scores[start:start + 2]
    new_m = torch.maximum(m, block.max())
    l = l * torch.exp(m - new_m) + torch.exp(block - new_m).sum()
    m = new_m
    print(f"block {start // 2}: scores {block!s}, max {m!s}, sum {l!s}")

online_weights = torch.exp(scores - m) / l
print("weights:", online_weights)
print("same as the softmax:", torch.allclose(online_weights, weights))
print()

print("## The context vector of x(2), one block of keys at a time")
m = torch.tensor(float("-inf"))
l = torch.tensor(0.0)
o = torch.zeros(3)  # the weighted sum of values so far, relative to m
for start in range(0, 6, 2):
    block = scores[start:start + 2]
    values = inputs[start:start + 2]
    new_m = torch.maximum(m, block.max())
    rescale = torch.exp(m - new_m)
    p = torch.exp(block - new_m)
    l = l * rescale + p.sum()
    o = o * rescale + p @ values
    m = new_m
    print(f"block {start // 2}: rescale {rescale!s}, output so far {o!s}")
print("context:", o / l)
print("same as all at once:", torch.allclose(o / l, context))
print()


def key_block_count(query_end, keys, block, causal):
    visible_keys = min(query_end, keys) if causal else keys
    return -(-visible_keys // block)


def tile_needs_mask(query_start, key_end, causal):
    return causal and key_end > query_start + 1


def tiled_attention(q, k, v, block, causal):
    queries, keys = q.size(-2), k.size(-2)
    scale = math.sqrt(q.size(-1))
    outputs = []
    for q_start in range(0, queries, block):
        q_len = min(block, queries - q_start)
        q_block = q[..., q_start:q_start + q_len, :]
        m = torch.full(q_block.shape[:-1] + (1,), float("-inf"))
        l = torch.zeros(q_block.shape[:-1] + (1,))
        out = torch.zeros(q_block.shape[:-1] + (v.size(-1),))
        for kb in range(key_block_count(q_start + q_len, keys, block, causal)):
            k_start = kb * block
            k_len = min(block, keys - k_start)
            k_block = k[..., k_start:k_start + k_len, :]
            v_block = v[..., k_start:k_start + k_len, :]
            s = q_block @ k_block.transpose(-2, -1) / scale
            if tile_needs_mask(q_start, k_start + k_len, causal):
                future = torch.tensor([[k_start + j > q_start + i for j in range(k_len)]
                                       for i in range(q_len)])
                s = s.masked_fill(future, float("-inf"))
            new_m = torch.maximum(m, s.max(dim=-1, keepdim=True).values)
            w = torch.exp(s - new_m)
            rescale = torch.exp(m - new_m)
            l = rescale * l + w.sum(dim=-1, keepdim=True)
            out = rescale * out + w @ v_block
            m = new_m
        outputs.append(out / l)
    return torch.cat(outputs, dim=-2)


def scaled_dot_product_attention(q, k, v, mask=None):
    """Seed 003's (chapter 7's) materialised attention."""
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / (d_k ** 0.5)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


print(f"## Tiled attention: blocks of 4, causal (manual_seed({seed_or(123)}), shape (1, 2, 10, 5))")
torch.manual_seed(seed_or(123))
q = torch.rand(1, 2, 10, 5)
k = torch.rand(1, 2, 10, 5)
v = torch.rand(1, 2, 10, 5)
block = 4
blocks = -(-10 // block)
computed = sum(key_block_count(min(qs + block, 10), 10, block, True) for qs in range(0, 10, block))
print(f"query blocks: {blocks}, key blocks: {blocks}, tiles computed: {computed} of {blocks * blocks}")
tiled = tiled_attention(q, k, v, block, causal=True)
print("tiled[0, 0]:", tiled[0, 0])
materialised, _ = scaled_dot_product_attention(q, k, v, torch.ones(10, 10).tril())
print("same as chapter 7's materialised attention:", torch.allclose(tiled, materialised))
print()

print("## The fast kernel next to PyTorch's fused scaled_dot_product_attention")
flash = F.scaled_dot_product_attention(q, k, v, is_causal=True)
print("flash.shape:", flash.shape)
print("causal, same as the tiles:", torch.allclose(flash, tiled))
full = F.scaled_dot_product_attention(q, k, v)
print("without the mask, same as chapter 7:", torch.allclose(full, scaled_dot_product_attention(q, k, v)[0]))
print()

print("## What the score matrix costs at GPT-2 small's size (12 heads of 64)")
for n in (1024, 4096):
    scores_floats = 12 * n * n
    output_floats = 12 * n * 64
    print(f"n = {n}: scores {scores_floats} floats ({scores_floats * 4 / 2**20:.0f} MiB), "
          f"output {output_floats} floats ({output_floats * 4 / 2**20:.0f} MiB), ratio {n // 64}")
print()


class MultiHeadAttention(nn.Module):
    """Chapter 7's (Raschka's) MultiHeadAttention, the article's typos fixed."""

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

    def split(self, x):
        b, num_tokens, _ = x.shape
        return x.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.split(self.W_key(x)), self.split(self.W_query(x)), self.split(self.W_value(x))
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1))
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, -1)
        return self.out_proj(context_vec)

    def forward_with_flash_core(self, x):
        b, num_tokens, d_in = x.shape
        keys, queries, values = self.split(self.W_key(x)), self.split(self.W_query(x)), self.split(self.W_value(x))
        context = F.scaled_dot_product_attention(queries, keys, values, is_causal=True)
        return self.out_proj(context.transpose(1, 2).contiguous().view(b, num_tokens, -1))


print(f"## A drop-in core for chapter 7's MultiHeadAttention (manual_seed({seed_or(123)}), d_out = 2, two heads)")
batch = torch.stack((inputs, inputs), dim=0)
torch.manual_seed(seed_or(123))
mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
context_vecs = mha.forward_with_flash_core(batch)
print(context_vecs)
print("same as MultiHeadAttention.forward:", torch.allclose(context_vecs, mha(batch)))
print()
