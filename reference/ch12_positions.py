"""Chapter 12: order, positions and rotary position embeddings (PyTorch reference).

Sources:
  * self-attention without a mask treats its input as a set: permuting the
    tokens permutes the outputs the same way (seed 000's SelfAttention_v2 on
    its six tokens, manual_seed(789) as in chapter 5); a causal mask breaks
    that symmetry (seed 000's CausalAttention, manual_seed(123)).
  * sinusoidal position encodings of Vaswani et al., "Attention Is All You
    Need" (2017), section 3.5, written with the same frequencies as RoPE:
    inv_freq = 1 / 10000 ** (arange(0, d, 2) / d), sin on the even features
    and cos on the odd ones.
  * learned position embeddings as GPT-2 and Raschka's book add them:
    tok_emb(ids) + pos_emb(arange(n)).
  * rotary position embeddings (RoPE; Su et al., "RoFormer", 2021) applied to
    x = randn(1, 2, 6, 8) (batch, heads, tokens, head_dim), positions 0 to 5,
    base 10000, in the two conventions found in the wild: half-split pairs
    (rotate_half, Hugging Face's Llama and GPT-NeoX) and interleaved pairs
    (complex numbers, Meta's Llama code).

`--fixture PATH` writes the bits of the two RoPE outputs for a few seeds as
JSON (the chapter's test `rope_bits` compares them with ours) and prints
nothing else.

Gradients are switched off for the whole script (the same as running it inside
`with torch.no_grad():`), so tensors print without `grad_fn=...`: the Rust side
tracks no gradients. Each step prints a `## ...` heading, its output and one
empty line.
"""
import argparse
import json

import torch
import torch.nn as nn

torch.set_grad_enabled(False)  # same effect as wrapping everything in torch.no_grad()

# `--seed S` seeds every torch.manual_seed call below with S instead of the chapter's
# seeds (the chapter binary takes the same flag), so the two can be compared on any seed.
def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call instead of the chapter's seeds")
parser.add_argument("--fixture", metavar="PATH",
                    help="write the RoPE outputs' bits for a few seeds to PATH as JSON")
ARGS = parser.parse_args()
SEED = ARGS.seed


def seed_or(default_seed):
    """The seed where the chapter uses `default_seed`: S if --seed S was given."""
    return default_seed if SEED is None else SEED


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


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
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

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


# ---------------------------------------------------------------------------
# RoPE, the two conventions
# ---------------------------------------------------------------------------
def rope_inv_freq(head_dim, base=10000):
    """theta_i = 1 / base^(2i / head_dim), one frequency per pair of features."""
    return 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))


def rope_angles(num_tokens, head_dim, base=10000):
    """m * theta_i for positions m = 0 .. num_tokens - 1: (num_tokens, head_dim / 2)."""
    t = torch.arange(num_tokens).float()
    return torch.outer(t, rope_inv_freq(head_dim, base))


def rotate_half(x):
    """(x1, x2) -> (-x2, x1) on the two halves of the last dim (Hugging Face)."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rope_half_split(x, base=10000):
    """Feature i pairs with feature i + head_dim / 2 (Hugging Face's Llama, GPT-NeoX)."""
    freqs = rope_angles(x.shape[-2], x.shape[-1], base)
    emb = torch.cat((freqs, freqs), dim=-1)
    # cos and sin in float64, rounded once to float32: float32 torch.cos/sin come from a CPU
    # library whose last bit depends on the processor, and x1*cos - x2*sin can cancel and
    # show that bit in a printed digit (see the appendix on matching PyTorch).
    cos, sin = emb.double().cos().float(), emb.double().sin().float()
    return (x * cos) + (rotate_half(x) * sin)


def rope_interleaved(x, base=10000):
    """Feature 2i pairs with feature 2i + 1, as a complex number (Meta's Llama)."""
    freqs = rope_angles(x.shape[-2], x.shape[-1], base)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(3)


def bits(t):
    """The float32 bit patterns of t, in row-major order."""
    return t.contiguous().view(torch.int32).flatten().tolist()


if ARGS.fixture:
    cases = []
    for seed in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 123, 2026]:
        torch.manual_seed(seed)
        x = torch.randn(1, 2, 6, 8)
        cases.append({
            "seed": seed,
            "x": bits(x),
            "half_split": bits(rope_half_split(x)),
            "interleaved": bits(rope_interleaved(x)),
        })
    with open(ARGS.fixture, "w") as f:
        json.dump({"torch": torch.__version__, "shape": [1, 2, 6, 8], "cases": cases}, f)
        f.write("\n")
    raise SystemExit(0)


print("# Chapter 12: Positions and RoPE")
print()

# ---------------------------------------------------------------------------
# Attention ignores order
# ---------------------------------------------------------------------------
torch.manual_seed(seed_or(789))
sa_v2 = SelfAttention_v2(d_in, d_out)
print(f"## Self-attention on the six tokens (SelfAttention_v2, manual_seed({seed_or(789)}))")
out = sa_v2(inputs)
print(out)
print()

print("## The same tokens in another order")
order = torch.tensor([5, 2, 0, 4, 1, 3])
print("order:", order)
out_permuted = sa_v2(inputs[order])
print(out_permuted)
print("allclose with the outputs in that order:", torch.allclose(out_permuted, out[order]))
print()

print(f"## With a causal mask the order matters (CausalAttention, manual_seed({seed_or(123)}))")
torch.manual_seed(seed_or(123))
ca = CausalAttention(d_in, d_out, 6, 0.0)
causal = ca(inputs.unsqueeze(0))[0]
causal_permuted = ca(inputs[order].unsqueeze(0))[0]
print(causal_permuted)
print("allclose with the outputs in that order:", torch.allclose(causal_permuted, causal[order]))
print()

# ---------------------------------------------------------------------------
# Sinusoidal and learned positions
# ---------------------------------------------------------------------------
# sin and cos in float64, rounded once to float32, as for RoPE's tables below.
print("## Sinusoidal position encodings (6 positions, d = 6)")
d_pe = 6
positions = torch.arange(6).float()
inv_freq = 1.0 / (10000 ** (torch.arange(0, d_pe, 2).float() / d_pe))
angles = torch.outer(positions, inv_freq)
pe = torch.zeros(6, d_pe)
pe[:, 0::2] = torch.sin(angles.double()).float()
pe[:, 1::2] = torch.cos(angles.double()).float()
print("inv_freq:", inv_freq)
print(pe)
print()

print(f"## Learned position embeddings (manual_seed({seed_or(123)}))")
torch.manual_seed(seed_or(123))
vocab_size, context_length, d_model = 6, 6, 8
tok_emb = nn.Embedding(vocab_size, d_model)
pos_emb = nn.Embedding(context_length, d_model)
token_ids = torch.tensor([5, 3, 4, 5])  # step with one step
tokens = tok_emb(token_ids)
x_pos = tokens + pos_emb(torch.arange(len(token_ids)))
print(x_pos)
print("same token vector for both 'step':", torch.equal(tokens[0], tokens[3]))
print("same input vector for both 'step':", torch.equal(x_pos[0], x_pos[3]))
print()

# ---------------------------------------------------------------------------
# RoPE
# ---------------------------------------------------------------------------
print(f"## Queries for RoPE: randn(1, 2, 6, 8) (manual_seed({seed_or(123)}))")
torch.manual_seed(seed_or(123))
x = torch.randn(1, 2, 6, 8)
print(x)
print()

print("## Angles m * theta_i (6 positions, 4 pairs)")
print(rope_angles(6, 8))
print()

print("## RoPE, half-split pairs (Hugging Face's Llama, GPT-NeoX)")
half_split = rope_half_split(x)
print(half_split)
print()

print("## RoPE, interleaved pairs (Meta's Llama)")
interleaved = rope_interleaved(x)
print(interleaved)
print("allclose with half-split:", torch.allclose(interleaved, half_split))
print()

print("## Interleaved = half-split on permuted features")
features = torch.tensor([0, 2, 4, 6, 1, 3, 5, 7])
back = torch.argsort(features)
print("features:", features)
print("back:", back)
through_half_split = rope_half_split(x[..., features])[..., back]
# atol: where a rotation cancels (1.4 - 1.4 = 0.0012) the rounding error is relative to
# the terms, not to the small result, so the default atol=1e-8 would be too strict.
print("allclose with interleaved (atol=1e-6):",
      torch.allclose(through_half_split, interleaved, atol=1e-6))
print()

print("## Scores depend only on the distance")
q = x[0, 0, 0]  # one query vector
k = x[0, 1, 0]  # one key vector
q_at = rope_interleaved(q.repeat(1, 1, 6, 1))[0, 0]  # q placed at positions 0..5
k_at = rope_interleaved(k.repeat(1, 1, 6, 1))[0, 0]  # k placed at positions 0..5
scores = q_at @ k_at.T  # scores[m, n] = q at m . k at n
print(scores)
print()
