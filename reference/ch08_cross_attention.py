"""Chapter 8: cross-attention (PyTorch reference).

Sources:
  * seed 004's "Cross-Attention": re-seed with manual_seed(123), draw the
    single-head weights with rand (d_q = d_k = 24, d_v = 28), then a second
    input sequence rand(8, 16) that continues the same generator. Queries come
    from the first sentence, keys and values from the second. The article
    stops at the shapes; we finish the step for x(2): attention weights over
    the 8 tokens of the second sequence and the 28-d context vector.
  * chapter 7's (seed 003's) multi-head module, which takes separate q, k, v,
    used as cross-attention. The example is ours (see the comments): the
    mask that belongs to cross-attention is a padding mask over the keys,
    not a causal mask, because every query may look at every real token of
    the other sequence.

Gradients are switched off for the whole script (the same as running it inside
`with torch.no_grad():`), so tensors print without `grad_fn=...`: the Rust side
tracks no gradients. Each step prints a `## ...` heading, its output and one
empty line.
"""
import argparse

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


print("# Chapter 8: Cross-attention")
print()

# ---------------------------------------------------------------------------
# Seed 004: cross-attention with a single head
# ---------------------------------------------------------------------------
sentence = 'Life is short, eat dessert first'
dc = {s:i for i,s in enumerate(sorted(sentence.replace(',', '').split()))}
sentence_int = torch.tensor([dc[s] for s in sentence.replace(',', '').split()])
torch.manual_seed(seed_or(123))
embed = torch.nn.Embedding(6, 16)
embedded_sentence = embed(sentence_int).detach()

print(f"## Self-attention recap (manual_seed({seed_or(123)}), rand weights)")
torch.manual_seed(seed_or(123))

d = embedded_sentence.shape[1]
print("embedded_sentence.shape:", embedded_sentence.shape)

d_q, d_k, d_v = 24, 24, 28

W_query = torch.rand(d_q, d)
W_key = torch.rand(d_k, d)
W_value = torch.rand(d_v, d)

x_2 = embedded_sentence[1]
query_2 = W_query.matmul(x_2)
print("query.shape", query_2.shape)

keys = W_key.matmul(embedded_sentence.T).T
values = W_value.matmul(embedded_sentence.T).T

print("keys.shape:", keys.shape)
print("values.shape:", values.shape)
print()

print("## A second input sequence of 8 tokens (rand, the generator continues)")
embedded_sentence_2 = torch.rand(8, 16) # 2nd input sequence
print(embedded_sentence_2)
print()

print("## Keys and values from the second sequence")
keys = W_key.matmul(embedded_sentence_2.T).T
values = W_value.matmul(embedded_sentence_2.T).T

print("keys.shape:", keys.shape)
print("values.shape:", values.shape)
print()

print("## X(2) attends to the second sequence")
omega_2 = query_2.matmul(keys.T)
attention_weights_2 = F.softmax(omega_2 / d_k**0.5, dim=0)
print("attention_weights_2:")
print(attention_weights_2)

print()

print("## Cross-attention context vector z(2)")
context_vector_2 = attention_weights_2.matmul(values)
print(context_vector_2.shape)
print(context_vector_2)
print()

# ---------------------------------------------------------------------------
# Chapter 7's q/k/v multi-head module as cross-attention, with a padding mask
# ---------------------------------------------------------------------------
def scaled_dot_product_attention(
    q: torch.Tensor, # (batch, heads, seq, d_k)
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    d_k = q.size(-1)
    # (batch, heads, seq_q, seq_k)
    scores = torch.matmul(q, k.transpose(-2, -1)) / (d_k ** 0.5)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float('-inf'))
    weights = F.softmax(scores, dim=-1)
    output = torch.matmul(weights, v)
    return output, weights


class MultiHeadAttentionQKV(nn.Module):  # seed 003's MultiHeadAttention, as in chapter 7
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        assert d_model % n_heads == 0
        self.d_k = d_model // n_heads
        self.n_heads = n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, q, k, v, mask=None):
        batch = q.size(0)

        def split_heads(x):
            return x.view(batch, -1, self.n_heads, self.d_k).transpose(1, 2)

        q = split_heads(self.W_q(q))
        k = split_heads(self.W_k(k))
        v = split_heads(self.W_v(v))
        attn_out, _ = scaled_dot_product_attention(q, k, v, mask)
        # Recombine heads
        attn_out = attn_out.transpose(1, 2).contiguous().view(batch, -1, self.n_heads * self.d_k)
        return self.W_o(attn_out)


# Our example, kept small: d_model = 4, two heads of d_k = 2. A batch of two
# "decoder" sequences of 3 tokens (the queries) attends to two "encoder"
# sequences padded to 5 tokens (the keys and values): the first has 5 real
# tokens, the second only 3, so its last 2 rows are padding (zeros).
print(f"## Two sequences of different lengths (manual_seed({seed_or(123)}))")
torch.manual_seed(seed_or(123))
cross_attn = MultiHeadAttentionQKV(d_model=4, n_heads=2)
x_dec = torch.rand(2, 3, 4)   # queries: (batch, 3 tokens, d_model)
x_enc = torch.rand(2, 5, 4)   # keys and values: (batch, 5 tokens, d_model)
x_enc[1, 3:] = 0.0            # the second encoder sequence is only 3 tokens long
print("x_dec.shape:", x_dec.shape)
print("x_enc.shape:", x_enc.shape)
print("x_dec:", x_dec)
print("x_enc:", x_enc)
print()

# 1 = real token, 0 = padding; shaped (batch, 1, 1, seq_k) so it broadcasts
# over the heads and over the 3 queries.
print("## The padding mask over the keys")
key_padding = torch.tensor([[1, 1, 1, 1, 1],
                            [1, 1, 1, 0, 0]])
print("key_padding:", key_padding)
mask = key_padding[:, None, None, :]
print("mask.shape:", mask.shape)
print()

print("## Cross-attention weights per head, (batch, heads, queries, keys)")
def split_heads(x):  # as inside MultiHeadAttentionQKV.forward
    return x.view(x.size(0), -1, cross_attn.n_heads, cross_attn.d_k).transpose(1, 2)

q = split_heads(cross_attn.W_q(x_dec))
k = split_heads(cross_attn.W_k(x_enc))
v = split_heads(cross_attn.W_v(x_enc))
_, weights = scaled_dot_product_attention(q, k, v, mask)
print("weights.shape:", weights.shape)
print("weights:", weights)
print()

print("## Cross-attention output, (batch, queries, d_model)")
out = cross_attn(x_dec, x_enc, x_enc, mask)
print("out.shape:", out.shape)
print("out:", out)
print()

# With the mask, whatever sits in the padded rows cannot leak into the
# output; without it, it does.
print("## Padding cannot leak through the mask")
x_enc_junk = x_enc.clone()
x_enc_junk[1, 3:] = 1.0
out_junk = cross_attn(x_dec, x_enc_junk, x_enc_junk, mask)
print("with mask, same output:", torch.allclose(out, out_junk))
out_nomask = cross_attn(x_dec, x_enc, x_enc)
out_nomask_junk = cross_attn(x_dec, x_enc_junk, x_enc_junk)
print("without mask, same output:", torch.allclose(out_nomask, out_nomask_junk))
print()
