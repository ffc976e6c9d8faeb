"""Chapter 7: multi-head attention with weight splits (PyTorch reference).

Sources:
  * seed 000 (Raschka's book code): MultiHeadAttention with one big
    W_query/W_key/W_value split into heads by view/transpose, plus out_proj.
    The article's listing has two bugs, fixed here:
      values.tranpose(1,2)     -> values.transpose(1, 2)
      self.mask_bool()[...]    -> self.mask.bool()[...]
    The article never runs it; we run it as the book does (manual_seed(123),
    d_in = 3, d_out = 2, two heads, the batch of two).
  * seed 001: the einsum version (h = 4, d_k = 4, rand weights, w_output).
  * seed 003: scaled_dot_product_attention with an optional mask that returns
    output and weights, and a MultiHeadAttention with W_q, W_k, W_v, W_o that
    takes separate q, k, v. Seed 003 calls that class MultiHeadAttention too;
    here it is MultiHeadAttentionQKV so that both classes fit in one file.
    The article gives no inputs, so the examples are ours (see comments).

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


print("# Chapter 7: Multi-head attention with weight splits")
print()

inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)
batch = torch.stack((inputs, inputs), dim = 0)

# ---------------------------------------------------------------------------
# Seed 000: MultiHeadAttention with weight splits (fixed)
# ---------------------------------------------------------------------------
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

        keys = self.W_key(x)        # (b, num_tokens, d_out)
        queries = self.W_query(x)   # (b, num_tokens, d_out)
        values = self.W_value(x)  # (b, num_tokens, d_out)

        # split the matrix by adding a num_heads dimension
        # unroll the last dim: (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        # transpose from (b, num_tokens, num_heads, head_dim) -> (b, num_heads, num_tokens, head_dim)
        keys = keys.transpose(1,2)
        queries = queries.transpose(1,2)
        values = values.transpose(1,2)  # fixed: the article has values.tranpose

        attn_scores = queries @ keys.transpose(2,3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]  # fixed: the article has self.mask_bool()

        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax((
            attn_scores / keys.shape[-1]**0.5), dim=-1)

        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1,2) # (b, num_tokens, n_heads, head_dim)
        context_vec = context_vec.contiguous().view(b, num_tokens, -1)
        context_vec = self.out_proj(context_vec)
        return context_vec


torch.manual_seed(seed_or(123))
batch_size, context_length, d_in = batch.shape
d_out = 2
mha = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)

# The forward pass again, one line at a time with mha's own layers, to show
# the shapes through the reshapes.
print("## Projections, (b, num_tokens, d_out)")
b, num_tokens, d_in = batch.shape
keys = mha.W_key(batch)
queries = mha.W_query(batch)
values = mha.W_value(batch)
print("keys.shape:", keys.shape)
print("queries.shape:", queries.shape)
print("values.shape:", values.shape)
print()

print("## View as (b, num_tokens, num_heads, head_dim)")
keys = keys.view(b, num_tokens, mha.num_heads, mha.head_dim)
values = values.view(b, num_tokens, mha.num_heads, mha.head_dim)
queries = queries.view(b, num_tokens, mha.num_heads, mha.head_dim)
print("keys.shape:", keys.shape)
print("queries.shape:", queries.shape)
print("values.shape:", values.shape)
print()

print("## Transpose to (b, num_heads, num_tokens, head_dim)")
keys = keys.transpose(1, 2)
queries = queries.transpose(1, 2)
values = values.transpose(1, 2)
print("keys.shape:", keys.shape)
print("queries.shape:", queries.shape)
print("values.shape:", values.shape)
print()

print("## Causal attention in every head, (b, num_heads, num_tokens, num_tokens)")
attn_scores = queries @ keys.transpose(2, 3)
mask_bool = mha.mask.bool()[:num_tokens, :num_tokens]
attn_scores.masked_fill_(mask_bool, -torch.inf)
attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
print("attn_scores.shape:", attn_scores.shape)
print("attn_weights.shape:", attn_weights.shape)
print()

print("## Heads back together, (b, num_tokens, d_out)")
context_vec = (attn_weights @ values).transpose(1, 2)
print("(attn_weights @ values).transpose(1, 2).shape:", context_vec.shape)
context_vec = context_vec.contiguous().view(b, num_tokens, -1)
print("context_vec.shape:", context_vec.shape)
context_vec = mha.out_proj(context_vec)
print("out_proj(context_vec).shape:", context_vec.shape)
print()

print(f"## MultiHeadAttention (manual_seed({seed_or(123)}), d_out = 2, two heads)")
context_vecs = mha(batch)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)
print("same as the step-by-step result:", torch.equal(context_vecs, context_vec))
print()

# ---------------------------------------------------------------------------
# The split version equals the wrapper of chapter 6 given the same weights
# ---------------------------------------------------------------------------
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


print(f"## The wrapper of chapter 6 (manual_seed({seed_or(123)}), two heads of d_out = 2)")
torch.manual_seed(seed_or(123))
wrapper = MultiHeadAttentionWrapper(d_in, 2, context_length, 0.0, num_heads=2)
wrapper_out = wrapper(batch)
print(wrapper_out)
print()

# A Linear weight is (d_out, d_in): stacking the heads' weights row-wise gives
# one (4, 3) weight whose rows 0-1 feed head 0 and rows 2-3 feed head 1 after
# the view. With out_proj set to the identity (and zero bias) nothing is mixed.
print("## The split version with the wrapper's weights and out_proj = identity")
mha_split = MultiHeadAttention(d_in, 4, context_length, 0.0, num_heads=2)
mha_split.W_query.weight.copy_(torch.cat([head.W_query.weight for head in wrapper.heads], dim=0))
mha_split.W_key.weight.copy_(torch.cat([head.W_key.weight for head in wrapper.heads], dim=0))
mha_split.W_value.weight.copy_(torch.cat([head.W_value.weight for head in wrapper.heads], dim=0))
mha_split.out_proj.weight.copy_(torch.eye(4))
mha_split.out_proj.bias.zero_()
split_out = mha_split(batch)
print(split_out)
print("allclose(split, wrapper):", torch.allclose(split_out, wrapper_out))
print()

# ---------------------------------------------------------------------------
# Seed 001: multi-head attention with einsum
# ---------------------------------------------------------------------------
torch.manual_seed(seed_or(0)) # fixed seed for reproducibility

# Tokenized sentence (same as yours)
tokenized_sentence = torch.tensor([2, 6, 8, 3, 1])  # [my, name, is, marcello, politi]

# Embedding layer: vocab size = 10, embedding dim = 16
embed = nn.Embedding(10, 16)
sentence_embed = embed(tokenized_sentence).detach()  # Shape: [5, 16] (seq_len, embed_dim)

d = sentence_embed.shape[1]  # embed dimension 16
h = 4  # Number of heads
d_k = d // h  # Dimension per head (16 / 4 = 4)

# Define weight matrices for each head
w_query = torch.rand(h, d, d_k)  # Shape: [4, 16, 4] (one d x d_k matrix per head)
w_key = torch.rand(h, d, d_k)    # Shape: [4, 16, 4]
w_value = torch.rand(h, d, d_k)  # Shape: [4, 16, 4]
w_output = torch.rand(d, d)  # Final linear layer: [16, 16]

print("## Queries, keys and values of every head with einsum")
# Compute Q, K, V for all tokens and all heads
# sentence_embed: [5, 16] -> Q: [4, 5, 4] (h, seq_len, d_k)
queries = torch.einsum('sd,hde->hse', sentence_embed, w_query)  # h heads, seq_len tokens, d dim
keys = torch.einsum('sd,hde->hse', sentence_embed, w_key)       # h heads, seq_len tokens, d dim
values = torch.einsum('sd,hde->hse', sentence_embed, w_value)   # h heads, seq_len tokens, d dim
print("queries.shape:", queries.shape)
print("keys.shape:", keys.shape)
print("values.shape:", values.shape)
print()

print("## Attention scores and weights of every head")
# Compute attention scores
scores = torch.einsum('hse,hek->hsk', queries, keys.transpose(-2, -1)) / (d_k ** 0.5)  # [4, 5, 5]
attention_weights = F.softmax(scores, dim=-1)  # [4, 5, 5]
print("scores.shape:", scores.shape)
print("attention_weights.shape:", attention_weights.shape)
print()

print("## Head outputs")
# Apply attention weights
head_outputs = torch.einsum('hij,hjk->hik', attention_weights, values)  # [4, 5, 4]
print(head_outputs.shape)
print()

print("## Heads concatenated per token")
# Concatenate heads
concat_heads = head_outputs.permute(1, 0, 2).reshape(sentence_embed.shape[0], -1)  # [5, 16]
print(concat_heads.shape)
print()

print("## Output projection, token 1")
multihead_output = concat_heads.matmul(w_output)  # [5, 16] @ [16, 16] -> [5, 16]
# The export shows "...:n": the backslash of "\n" was lost.
print("Multi-head attention output for token1:\n", multihead_output[0])
print()

# ---------------------------------------------------------------------------
# Seed 003: scaled_dot_product_attention and a q/k/v MultiHeadAttention
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


# Our example: seed 000's six tokens as q = k = v, shaped (batch=1, heads=1,
# seq=6, d_k=3), so the numbers can be compared with chapters 2 and 5.
# Without a mask this is chapter 2's attention plus the 1/sqrt(d_k) scaling.
print("## Scaled_dot_product_attention without a mask")
x = inputs.view(1, 1, 6, 3)
output, weights = scaled_dot_product_attention(x, x, x)
print("output.shape:", output.shape)
print("weights.shape:", weights.shape)
print("weights:", weights)
print("output:", output)
print()

# Seed 003's masks keep positions where mask == 1 and hide those where
# mask == 0, so a causal mask is tril (the opposite of chapter 5's triu).
print("## Scaled_dot_product_attention with a causal mask")
causal_mask = torch.tril(torch.ones(6, 6))
output, weights = scaled_dot_product_attention(x, x, x, causal_mask)
print("mask:", causal_mask)
print("weights:", weights)
print("output:", output)
print()


class MultiHeadAttentionQKV(nn.Module):  # seed 003's MultiHeadAttention
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


# Our example: d_model = 4 and two heads of d_k = 2 keep every print small;
# a batch of 2 sequences of 3 tokens drawn with rand, then the module.
print(f"## MultiHeadAttention(d_model=4, n_heads=2), self-attention (manual_seed({seed_or(123)}))")
torch.manual_seed(seed_or(123))
x = torch.rand(2, 3, 4)
mha_qkv = MultiHeadAttentionQKV(d_model=4, n_heads=2)
print("x:", x)
out = mha_qkv(x, x, x)
print("out.shape:", out.shape)
print("out:", out)
print()

print("## The same with a causal mask")
out = mha_qkv(x, x, x, mask=torch.tril(torch.ones(3, 3)))
print("out:", out)
print()
