"""Chapter 13: the transformer block (PyTorch reference).

Where attention sits in a model, as GPT-2 builds it:
  * a pre-norm block, `x = x + attn(ln_1(x))` then `x = x + mlp(ln_2(x))`,
    with chapter 7's (Raschka's) causal MultiHeadAttention (qkv_bias=True, as
    GPT-2 has), nn.LayerNorm, and an MLP Linear(d, 4d) -> GELU -> Linear(4d, d)
    whose GELU is the tanh form (GPT-2's "gelu_new"). Dropout 0. The example is
    ours: d_model = 8, two heads, a batch of two sequences of 6 tokens drawn
    with randn right after manual_seed(123) and before the block (the articles'
    3-d embeddings are too narrow for a 4x MLP and two heads of width 2);
  * the three uses of attention in the original Transformer, each with the
    mask it needs (True = hidden), on a small padded batch, one head, no
    projections (q = k = v = the token vectors), so that only the masks
    decide what changes;
  * what a fully masked row gives (NaN with -inf) and two fixes;
  * parameter counts, up to GPT-2 small.

With `--bits PATH` the script also writes the bits of the block's input, its
intermediate tensors and its output as JSON (the chapter's full-precision test).

Gradients are switched off for the whole script (the same as running it inside
`with torch.no_grad():`), so tensors print without `grad_fn=...`: the Rust side
tracks no gradients. Each step prints a `## ...` heading, its output and one
empty line.
"""
import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_grad_enabled(False)  # same effect as wrapping everything in torch.no_grad()

# `--seed S` seeds every torch.manual_seed call below with S instead of the
# default seed (the chapter binary takes the same flag), so the two can be
# compared on any seed.
def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call instead of the default seed")
parser.add_argument("--bits", metavar="PATH",
                    help="also write the block's tensors, as float32 bits, to PATH (JSON)")
ARGS = parser.parse_args()
SEED = ARGS.seed


def seed_or(default_seed):
    """The seed where the chapter uses `default_seed`: S if --seed S was given."""
    return default_seed if SEED is None else SEED


print("# Chapter 13: The transformer block")
print()


# Chapter 7's MultiHeadAttention (seed 000, Raschka's, with its typos fixed).
class MultiHeadAttention(nn.Module):
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
            torch.triu(torch.ones(context_length, context_length),
            diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, -1)
        return self.out_proj(context_vec)


class MLP(nn.Module):
    """GPT-2's feed-forward network: widen 4x, GELU (tanh form), narrow back."""
    def __init__(self, d_model):
        super().__init__()
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.gelu = nn.GELU(approximate='tanh')  # GPT-2's "gelu_new"
        self.c_proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class TransformerBlock(nn.Module):
    """A pre-norm block as GPT-2 builds it (dropout 0)."""
    def __init__(self, d_model, n_heads, context_length):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, d_model, context_length, 0.0, n_heads,
                                       qkv_bias=True)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


# ---------------------------------------------------------------------------
# The block, one step at a time
# ---------------------------------------------------------------------------
print(f"## A batch of token vectors (manual_seed({seed_or(123)}), randn)")
torch.manual_seed(seed_or(123))
x = torch.randn(2, 6, 8)  # (batch, tokens, d_model)
print("x.shape:", x.shape)
print("x:", x)
print()

print("## A GPT-2 block: d_model = 8, two heads, MLP 8 -> 32 -> 8")
block = TransformerBlock(d_model=8, n_heads=2, context_length=6)
for name, p in block.named_parameters():
    print(f"{name}: {list(p.shape)}")
print()

print("## ln_1: every token's vector normalised")
h = block.ln_1(x)
print("ln_1(x).shape:", h.shape)
print("ln_1(x):", h)
print()

print("## Causal attention on the normalised tokens")
a = block.attn(h)
print("attn(ln_1(x)).shape:", a.shape)
print("attn(ln_1(x)):")
print(a)
print()

print("## First residual: x + attn(ln_1(x))")
x1 = x + a
print(x1)
print()

print("## ln_2 and the MLP: Linear(8, 32), GELU (tanh), Linear(32, 8)")
h2 = block.ln_2(x1)
up = block.mlp.c_fc(h2)
act = block.mlp.gelu(up)
m = block.mlp.c_proj(act)
print("ln_2(x).shape:", h2.shape)
print("c_fc(...).shape:", up.shape)
print("gelu(...).shape:", act.shape)
print("c_proj(...).shape:", m.shape)
print("mlp(ln_2(x)):", m)
print()

print("## Second residual: the block's output")
out = x1 + m
print("out.shape:", out.shape)
print("out:", out)
print("same as block(x):", torch.equal(block(x), out))
print()

print("## Token 5's residual stream: in, after attention, after the MLP")
print(torch.stack((x[0, 5], x1[0, 5], out[0, 5])))
print()

print("## GELU, exact and tanh form, on -2.5 to 2.34375")
z = torch.arange(-2.5, 2.5, 0.15625)
print("gelu:")
print(F.gelu(z))
print("gelu_tanh:")
print(F.gelu(z, approximate='tanh'))
print()

# The original Transformer normalised after each residual addition (post-norm).
print("## Post-norm (the original Transformer) with the same weights")
post = block.ln_1(x + block.attn(x))
post = block.ln_2(post + block.mlp(post))
print(post)
print()

if ARGS.bits:
    def bits(t):
        return t.contiguous().numpy().view(np.uint32).reshape(-1).tolist()

    def stages(x, block):
        """The block's input, every intermediate tensor and its output, as bits."""
        h = block.ln_1(x)
        a = block.attn(h)
        x1 = x + a
        up = block.mlp.c_fc(block.ln_2(x1))
        act = block.mlp.gelu(up)
        m = block.mlp.c_proj(act)
        return {"shape": list(x.shape), "x": bits(x), "ln_1": bits(h), "attn": bits(a),
                "c_fc": bits(up), "gelu": bits(act), "mlp": bits(m), "out": bits(x1 + m)}

    # The chapter's block, and a wider one (d_model = 64, 4 heads, 16 tokens) whose
    # products sum 64 or 256 terms, each made right after manual_seed, input first.
    torch.manual_seed(seed_or(123))
    wide_x = torch.randn(2, 16, 64)
    wide = TransformerBlock(d_model=64, n_heads=4, context_length=16)
    with open(ARGS.bits, "w") as f:
        json.dump({"seed": seed_or(123),
                   "chapter": {"d_model": 8, "n_heads": 2, **stages(x, block)},
                   "wide": {"d_model": 64, "n_heads": 4, **stages(wide_x, wide)}}, f)
        f.write("\n")

# ---------------------------------------------------------------------------
# The three uses of attention, and their masks (True = hidden)
# ---------------------------------------------------------------------------
def attention_weights(q, k, hidden, fill=float('-inf')):
    """softmax(q·kᵀ/√d) with `fill` where `hidden` is True."""
    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
    return torch.softmax(scores.masked_fill(hidden, fill), dim=-1)


print(f"## A padded batch (manual_seed({seed_or(123)}), randn)")
torch.manual_seed(seed_or(123))
src = torch.randn(2, 4, 4)  # encoder input: 4 tokens, the second sequence has 2
tgt = torch.randn(2, 3, 4)  # decoder input: 3 tokens, the second sequence has 2
src_lengths = torch.tensor([4, 2])
tgt_lengths = torch.tensor([3, 2])
src_pad = torch.arange(4)[None, :] >= src_lengths[:, None]
tgt_pad = torch.arange(3)[None, :] >= tgt_lengths[:, None]
print("src.shape:", src.shape)
print("tgt.shape:", tgt.shape)
print("src_pad:", src_pad)
print("tgt_pad:", tgt_pad)
print()

# One head and no projections: q = k = v = the tokens, shaped (b, 1, tokens, d).
src_h = src[:, None]
tgt_h = tgt[:, None]

print("## Encoder self-attention: padding mask only, (b, 1, 1, k)")
enc_hidden = src_pad[:, None, None, :]
print("enc_hidden.shape:", enc_hidden.shape)
print("weights:", attention_weights(src_h, src_h, enc_hidden))
print()

print("## Masked decoder self-attention: causal | padding")
causal = torch.triu(torch.ones(3, 3), diagonal=1).bool()[None, None]
dec_hidden = causal | tgt_pad[:, None, None, :]
print("causal.shape:", causal.shape)
print("dec_hidden.shape:", dec_hidden.shape)
print("dec_hidden:", dec_hidden)
print("weights:", attention_weights(tgt_h, tgt_h, dec_hidden))
print()

print("## Cross-attention: decoder queries, encoder padding")
cross_hidden = src_pad[:, None, None, :]
cross = attention_weights(tgt_h, src_h, cross_hidden)
print("cross_hidden.shape:", cross_hidden.shape)
print("weights.shape:", cross.shape)
print("weights:", cross)
print()

# Batched generation pads on the left, so that every sequence ends at the
# same place; then the first query of the short sequence sees no real key.
print("## A fully masked row: the decoder batch padded on the left")
left_pad = torch.arange(3)[None, :] < (3 - tgt_lengths)[:, None]
left_hidden = causal | left_pad[:, None, None, :]
print("left_pad:", left_pad)
print("left_hidden[1, 0]:", left_hidden[1, 0])
weights = attention_weights(tgt_h, tgt_h, left_hidden)
print("weights[1, 0] with -inf:", weights[1, 0])
print()

print("## Two fixes: a finite fill value, or zeros after the softmax")
finite = attention_weights(tgt_h, tgt_h, left_hidden, torch.finfo(torch.float32).min)
print("fill finfo(float32).min:", finite[1, 0])
zeroed = weights.masked_fill(weights.isnan(), 0.0)
print("-inf, then NaN -> 0:", zeroed[1, 0])
print("same elsewhere:", torch.equal(finite[:, :, 1:], weights[:, :, 1:]),
      torch.equal(zeroed[0], weights[0]))
print()

# ---------------------------------------------------------------------------
# Parameter counts
# ---------------------------------------------------------------------------
def count(module):
    return sum(p.numel() for p in module.parameters())


print("## Parameter counts")
print("our block:", count(block))
print("  ln_1 + ln_2:", count(block.ln_1) + count(block.ln_2))
print("  attn:", count(block.attn))
print("  mlp:", count(block.mlp))
gpt2_block = TransformerBlock(d_model=768, n_heads=12, context_length=1024)
print("GPT-2 small attention layer:", count(gpt2_block.attn))
print("GPT-2 small block:", count(gpt2_block))
print("GPT-2 small, 12 blocks:", 12 * count(gpt2_block))
print()
