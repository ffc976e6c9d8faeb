"""Chapter 4: self-attention with trainable weights (PyTorch reference).

Sources:
  * seed 000: W_query/W_key/W_value drawn with randn after manual_seed(123)
    (d_in = 3, d_out = 2), step by step for x(2); then SelfAttentionv1, which
    draws its weights by *continuing* the same generator (the article does not
    re-seed), and SelfAttention_v2 with nn.Linear after manual_seed(789).
  * seed 004: d_q = d_k = 24, d_v = 28, weights by rand after manual_seed(123),
    the x @ W^T convention written as W.matmul(x).
  * seed 001: one head with rand 16x16 weights right after the seed-0
    Embedding(10, 16), again the W.matmul(x) convention.

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


print("# Chapter 4: Self-attention with trainable weights")
print()

# ---------------------------------------------------------------------------
# Seed 000: scaled dot-product attention step by step
# ---------------------------------------------------------------------------
inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)

x_2 = inputs[1]
d_in = inputs.shape[1] # the input embedding size
d_out = 2  # the output embedding size

torch.manual_seed(seed_or(123))

# intialize the weight matrices
W_query = torch.nn.Parameter(torch.randn(d_in, d_out), requires_grad=False)
W_key = torch.nn.Parameter(torch.randn(d_in, d_out), requires_grad=False)
W_value = torch.nn.Parameter(torch.randn(d_in, d_out), requires_grad=False)

print(f"## Query of x(2) (randn weights, manual_seed({seed_or(123)}))")
# compute the query, key, and value vectors for the second input token
query_2 = x_2 @ W_query
key_2 = x_2 @ W_key
value_2 = x_2 @ W_value

print(f"Query vector: {query_2}")
print()

print("## Keys and values of all inputs")
keys = inputs @ W_key
values = inputs @ W_value
print(f"Keys shape: {keys.shape}")
print(f"Values shape: {values.shape}")
print()

print("## Attention score omega_22")
keys_2 = keys[1]
attn_scores_22 = query_2.dot(keys_2)
print(attn_scores_22)
print()

print("## Attention scores omega_2")
attn_scores_2 = query_2 @ keys.T
print(attn_scores_2)
print()

print("## Scaled softmax")
d_k = keys.shape[-1]
attn_weights_2 = torch.softmax(attn_scores_2 / (d_k ** 0.5), dim=-1)
print(attn_weights_2)
print()

print("## Context vector z(2)")
context_vec_2 = attn_weights_2 @ values
print(context_vec_2)
print()


class SelfAttentionv1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.randn(d_in, d_out))
        self.W_key = nn.Parameter(torch.randn(d_in, d_out))
        self.W_value = nn.Parameter(torch.randn(d_in, d_out))

    def forward(self, x):
        keys = x @ self.W_key
        values = x @ self.W_value
        queries = x @ self.W_query

        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / (keys.shape[-1] ** 0.5), dim=-1)
        context_vecs = attn_weights @ values
        return context_vecs


print("## SelfAttentionv1 (the generator continues, no re-seed)")
sa_v1 = SelfAttentionv1(d_in, d_out)
print(sa_v1(inputs))
print()


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


print(f"## SelfAttention_v2 with nn.Linear (manual_seed({seed_or(789)}))")
torch.manual_seed(seed_or(789))
sa_v2 = SelfAttention_v2(d_in, d_out)
print(sa_v2(inputs))
print()

# ---------------------------------------------------------------------------
# Seed 004: d_q = d_k = 24, d_v = 28
# ---------------------------------------------------------------------------
sentence = 'Life is short, eat dessert first'
dc = {s:i for i,s in enumerate(sorted(sentence.replace(',', '').split()))}
sentence_int = torch.tensor([dc[s] for s in sentence.replace(',', '').split()])
torch.manual_seed(seed_or(123))
embed = torch.nn.Embedding(6, 16)
embedded_sentence = embed(sentence_int).detach()

torch.manual_seed(seed_or(123))

d = embedded_sentence.shape[1]

d_q, d_k, d_v = 24, 24, 28

W_query = torch.nn.Parameter(torch.rand(d_q, d))
W_key = torch.nn.Parameter(torch.rand(d_k, d))
W_value = torch.nn.Parameter(torch.rand(d_v, d))

print(f"## Query, key and value of x(2) (rand weights, manual_seed({seed_or(123)}))")
x_2 = embedded_sentence[1]
query_2 = W_query.matmul(x_2)
key_2 = W_key.matmul(x_2)
value_2 = W_value.matmul(x_2)

print(query_2.shape)
print(key_2.shape)
print(value_2.shape)
print()

print("## Keys and values of all inputs (d_k = 24, d_v = 28)")
keys = W_key.matmul(embedded_sentence.T).T
values = W_value.matmul(embedded_sentence.T).T

print("keys.shape:", keys.shape)
print("values.shape:", values.shape)
print()

print("## Unnormalized attention weight omega_24")
omega_24 = query_2.dot(keys[4])
print(omega_24)
print()

print("## Unnormalized attention weights omega_2")
omega_2 = query_2.matmul(keys.T)
print(omega_2)
print()

print("## Attention weights (softmax of omega_2 / sqrt(d_k))")
attention_weights_2 = F.softmax(omega_2 / d_k**0.5, dim=0)
print(attention_weights_2)
print()

print("## Context vector z(2) (d_v = 28)")
context_vector_2 = attention_weights_2.matmul(values)

print(context_vector_2.shape)
print(context_vector_2)
print()

# ---------------------------------------------------------------------------
# Seed 001: one head, W.matmul(x) convention (k = W_k x)
# ---------------------------------------------------------------------------
tokenized_sentence = torch.tensor([2, 6, 8, 3, 1])
torch.manual_seed(seed_or(0)) # set a fixed seed for reproducibility
embed = torch.nn.Embedding(10, 16)
sentence_embed = embed(tokenized_sentence).detach()

d = sentence_embed.shape[1] # let's base our matrix on a shape (16,16)

# drawn right after the embedding, in this order: key, query, value
w_key = torch.rand(d,d)
w_query = torch.rand(d,d)
w_value = torch.rand(d,d)

print("## Key, query and value of token 1 (rand 16x16 weights)")
token1_embed = sentence_embed[0]

#compute the tre vector associated to token1 vector : q,k,v
key_1 = w_key.matmul(token1_embed)
query_1 = w_query.matmul(token1_embed)
value_1 = w_value.matmul(token1_embed)

# The export shows "...: n": the backslash of "\n" was lost.
print("key vector for token1:\n", key_1)
print("query vector for token1:\n", query_1)
print("value vector for token1:\n", value_1)
print()

print("## Keys of all tokens (keys[0] is token 1's key)")
keys = sentence_embed.matmul(w_key.T)
print(keys[0])
print()

print("## Values of all tokens (values[0] is token 1's value)")
values = sentence_embed.matmul(w_value.T)
print(values[0])
print()

print("## Attention weights of token 1")
# the following are the attention weights of the first tokens to all the others
a1 = F.softmax(query_1.matmul(keys.T)/d**0.5, dim = 0)
print(a1)
print()

print("## Context vector z1 of token 1")
z1 = a1.matmul(values)
print(z1)
print()
