"""Chapter 6: multi-head attention by stacking heads (PyTorch reference).

Sources:
  * seed 000: MultiHeadAttentionWrapper, a list of CausalAttention heads whose
    outputs are concatenated (manual_seed(123), two heads, d_out = 2).
  * seed 004: three heads stacked in one tensor, weights by rand, keys and
    values by bmm. The article stops at the shapes and only describes the
    rest ("follow the same steps as previously"); we finish it: per head,
    omega, the scaled softmax and the 28-d context vector of x(2).

Seed 004's multi-head weights are drawn right after the single-head weights
of chapter 4 without re-seeding, so we draw those first to advance the
generator exactly as the article does.

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


print("# Chapter 6: Multi-head attention by stacking heads")
print()

# ---------------------------------------------------------------------------
# Seed 000: a wrapper around several CausalAttention heads
# ---------------------------------------------------------------------------
inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)
batch = torch.stack((inputs, inputs), dim = 0)


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


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(
                d_in, d_out, context_length, dropout, qkv_bias
            )
            for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


print(f"## MultiHeadAttentionWrapper, two heads (manual_seed({seed_or(123)}))")
torch.manual_seed(seed_or(123))

context_length = batch.shape[1] # number of tokens
d_in, d_out = 3,2

mha = MultiHeadAttentionWrapper(
    d_in, d_out, context_length, 0.0, num_heads = 2
)
context_vecs = mha(batch)

print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
print()

# ---------------------------------------------------------------------------
# Seed 004: stacked heads, h = 3
# ---------------------------------------------------------------------------
sentence = 'Life is short, eat dessert first'
dc = {s:i for i,s in enumerate(sorted(sentence.replace(',', '').split()))}
sentence_int = torch.tensor([dc[s] for s in sentence.replace(',', '').split()])
torch.manual_seed(seed_or(123))
embed = torch.nn.Embedding(6, 16)
embedded_sentence = embed(sentence_int).detach()

# The single-head weights of chapter 4; drawn here only to advance the
# generator to where the article draws the multi-head weights.
torch.manual_seed(seed_or(123))
d = embedded_sentence.shape[1]
d_q, d_k, d_v = 24, 24, 28
W_query = torch.nn.Parameter(torch.rand(d_q, d))
W_key = torch.nn.Parameter(torch.rand(d_k, d))
W_value = torch.nn.Parameter(torch.rand(d_v, d))
x_2 = embedded_sentence[1]

print("## Three heads of weights (rand, the generator continues)")
h = 3
multihead_W_query = torch.nn.Parameter(torch.rand(h, d_q, d))
multihead_W_key = torch.nn.Parameter(torch.rand(h, d_k, d))
multihead_W_value = torch.nn.Parameter(torch.rand(h, d_v, d))
print("multihead_W_query.shape:", multihead_W_query.shape)
print("multihead_W_key.shape:", multihead_W_key.shape)
print("multihead_W_value.shape:", multihead_W_value.shape)
print()

print("## The query of x(2) in every head")
multihead_query_2 = multihead_W_query.matmul(x_2)
print(multihead_query_2.shape)
print()

print("## The key and value of x(2) in every head")
multihead_key_2 = multihead_W_key.matmul(x_2)
multihead_value_2 = multihead_W_value.matmul(x_2)
print("multihead_key_2.shape:", multihead_key_2.shape)
print("multihead_value_2.shape:", multihead_value_2.shape)
print()

print("## The inputs stacked once per head")
stacked_inputs = embedded_sentence.T.repeat(3, 1, 1)
print(stacked_inputs.shape)
print()

print("## Keys and values of all inputs (d_k = 24, d_v = 28) with bmm")
multihead_keys = torch.bmm(multihead_W_key, stacked_inputs)
multihead_values = torch.bmm(multihead_W_value, stacked_inputs)
print("multihead_keys.shape:", multihead_keys.shape)
print("multihead_values.shape:", multihead_values.shape)
print()

print("## Permuted to (heads, tokens, dims)")
multihead_keys = multihead_keys.permute(0, 2, 1)
multihead_values = multihead_values.permute(0, 2, 1)
print("multihead_keys.shape:", multihead_keys.shape)
print("multihead_values.shape:", multihead_values.shape)
print()

# "Then, we follow the same steps as previously": the single-head code of
# chapter 4, once per head. Only the context vectors are printed: some of the
# intermediate omegas and weights sit within an ulp or two of a rounding
# boundary of the printed digits (see NOTES.md).
context_vectors_2 = []
for i in range(h):
    print(f"## Head {i}: context vector z(2)")
    omega_2 = multihead_query_2[i].matmul(multihead_keys[i].T)
    attention_weights_2 = F.softmax(omega_2 / d_k**0.5, dim=0)
    context_vector_2 = attention_weights_2.matmul(multihead_values[i])
    context_vectors_2.append(context_vector_2)
    print("context_vector_2.shape:", context_vector_2.shape)
    print("context_vector_2:")
    print(context_vector_2)

    print()

print("## The h x d_v context of x(2)")
multihead_context_vector_2 = torch.stack(context_vectors_2)
print("multihead_context_vector_2.shape:", multihead_context_vector_2.shape)
print()
