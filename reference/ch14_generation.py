"""Chapter 14: generation with a KV cache, grouped-query attention and sliding windows (PyTorch reference).

A tiny decoder-only model with random weights (no article has one: the four
articles stop at the attention layer; Wesley Sum's names the KV cache as the next
step): token and position embeddings, one causal attention layer whose
n_heads query heads share n_kv_heads key/value heads (grouped-query attention,
keys and values repeated per group as Hugging Face's `repeat_kv` does), a
residual connection, and a linear head to the vocabulary.

Greedy decoding, first recomputing the whole sequence for every new token, then
with a KV cache (only the new token's query, key and value are computed; keys
and values are appended to the cache). Two ways to compute the products:

  * "batched" (PyTorch's own way): every projection of a sequence is one
    matrix product over all its rows, attention one product per head. A
    many-row product and a one-row product add their terms in different orders
    (MKL's sgemm and its one-row, sgemv-like path), so the cached logits differ
    from the recomputed ones in the last bits;
  * "row by row" (batch-invariant): every product is computed one query row at
    a time, each query attending to the keys it may see (a slice, not a mask),
    so the order of every addition is the same whatever the number of rows; the
    cached logits then equal the recomputed ones bit for bit.

Then a sliding window (query i sees keys j with i - w < j <= i) whose cache
keeps only the last w keys and values, and the cache's size for real models.

Gradients are off for the whole script. Each step prints a `## ...` heading, its
output and one empty line.
"""
import argparse
import math

import torch
import torch.nn as nn

torch.set_grad_enabled(False)


def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 1."""
    seed = int(text)
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for every manual_seed call instead of the chapter's seed")
SEED = parser.parse_args().seed


def seed_or(default_seed):
    return default_seed if SEED is None else SEED


def split_heads(x, n_heads):
    """[b, t, n_heads * head_dim] -> [b, n_heads, t, head_dim]."""
    b, t, d = x.shape
    return x.view(b, t, n_heads, d // n_heads).transpose(1, 2)


def merge_heads(x):
    """[b, n_heads, t, head_dim] -> [b, t, n_heads * head_dim]."""
    b, h, t, hd = x.shape
    return x.transpose(1, 2).contiguous().view(b, t, h * hd)


def repeat_kv(x, n_rep):
    """Hugging Face's repeat_kv: [b, n_kv, t, hd] -> [b, n_kv * n_rep, t, hd], each kv head
    repeated n_rep times in a row (the same as repeat_interleave(n_rep, dim=1))."""
    b, n_kv, t, hd = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, n_kv, n_rep, t, hd).reshape(b, n_kv * n_rep, t, hd)


def hidden_mask(t, window=None):
    """True where query i may not see key j: the future (j > i) and, with a window w,
    the keys w or more tokens back (j <= i - w)."""
    future = torch.ones(t, t).triu(1).bool()
    if window is None:
        return future
    return future | torch.ones(t, t).tril(-window).bool()


def first_visible(i, window):
    """The first key that query i sees."""
    return 0 if window is None else max(0, i - window + 1)


def rows(layer, x):
    """layer(x) computed one row (token) at a time: [b, t, d_in] -> [b, t, d_out]."""
    return torch.cat([layer(x[:, i:i + 1]) for i in range(x.shape[1])], dim=1)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, window=None):
        super().__init__()
        assert d_model % n_heads == 0 and n_heads % n_kv_heads == 0
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = d_model // n_heads
        self.window = window
        self.W_query = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_key = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_value = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.out_proj = nn.Linear(d_model, d_model)

    def attend(self, q, k, v):
        """q: [b, h, tq, hd]; k, v: [b, n_kv, tk, hd]. Returns the scores q·kᵀ [b, h, tq, tk]
        and the values repeated for the query heads [b, h, tk, hd]."""
        n_rep = self.n_heads // self.n_kv_heads
        scores = q @ repeat_kv(k, n_rep).transpose(2, 3)
        return scores, repeat_kv(v, n_rep)

    def forward(self, x, row_by_row=False):
        """The whole sequence, x: [b, t, d]. Returns (output [b, t, d], keys, values)."""
        t = x.shape[1]
        project = (lambda layer: rows(layer, x)) if row_by_row else (lambda layer: layer(x))
        q = split_heads(project(self.W_query), self.n_heads)
        k = split_heads(project(self.W_key), self.n_kv_heads)
        v = split_heads(project(self.W_value), self.n_kv_heads)
        scale = math.sqrt(self.head_dim)
        if row_by_row:
            # One query row at a time, against the keys it may see.
            context = []
            for i in range(t):
                j0 = first_visible(i, self.window)
                scores, values = self.attend(q[:, :, i:i + 1], k[:, :, j0:i + 1], v[:, :, j0:i + 1])
                context.append(torch.softmax(scores / scale, dim=-1) @ values)
            context = torch.cat(context, dim=2)
        else:
            scores, values = self.attend(q, k, v)
            scores.masked_fill_(hidden_mask(t, self.window), -torch.inf)
            context = torch.softmax(scores / scale, dim=-1) @ values
        out = merge_heads(context)
        out = rows(self.out_proj, out) if row_by_row else self.out_proj(out)
        return out, k, v

    def step(self, x_new, cache):
        """One new token, x_new: [b, 1, d], with the cache {"k", "v"} of the earlier tokens.
        Appends its key and value (keeping the last `window` only) and returns the
        output [b, 1, d] and the attention weights [b, h, 1, cached]."""
        q = split_heads(self.W_query(x_new), self.n_heads)
        k = torch.cat([cache["k"], split_heads(self.W_key(x_new), self.n_kv_heads)], dim=2)
        v = torch.cat([cache["v"], split_heads(self.W_value(x_new), self.n_kv_heads)], dim=2)
        if self.window is not None:
            k, v = k[:, :, -self.window:], v[:, :, -self.window:]
        cache["k"], cache["v"] = k, v
        scores, values = self.attend(q, k, v)
        weights = torch.softmax(scores / math.sqrt(self.head_dim), dim=-1)
        return self.out_proj(merge_heads(weights @ values)), weights


class TinyDecoder(nn.Module):
    def __init__(self, vocab_size, context_length, d_model, n_heads, n_kv_heads, window=None):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.attn = GroupedQueryAttention(d_model, n_heads, n_kv_heads, window)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def embed(self, ids, start=0):
        positions = torch.arange(start, start + ids.shape[1])
        return self.tok_emb(ids) + self.pos_emb(positions)

    def forward(self, ids, row_by_row=False):
        """Logits of every position [b, t, vocab], and the keys and values (to fill a cache)."""
        x = self.embed(ids)
        out, k, v = self.attn(x, row_by_row)
        h = x + out
        logits = rows(self.lm_head, h) if row_by_row else self.lm_head(h)
        return logits, {"k": k[:, :, -self.attn.window:] if self.attn.window else k,
                        "v": v[:, :, -self.attn.window:] if self.attn.window else v}

    def step(self, token, position, cache):
        """Logits [b, vocab] of one new token at `position`, and its attention weights."""
        x = self.embed(token, position)
        out, weights = self.attn.step(x, cache)
        return self.lm_head(x + out)[:, -1], weights


def generate_uncached(model, prompt, n_new, row_by_row=False):
    """Greedy decoding, recomputing the whole sequence for every new token."""
    ids, all_logits = prompt, []
    for _ in range(n_new):
        logits = model(ids, row_by_row)[0][:, -1]
        all_logits.append(logits)
        ids = torch.cat([ids, logits.argmax(dim=-1, keepdim=True)], dim=1)
    return ids, torch.cat(all_logits)


def generate_cached(model, prompt, n_new, row_by_row=False):
    """Greedy decoding with a KV cache: the prompt once (prefill), then one token at a time."""
    logits, cache = model(prompt, row_by_row)
    logits = logits[:, -1]
    ids, all_logits = prompt, [logits]
    for _ in range(n_new - 1):
        ids = torch.cat([ids, logits.argmax(dim=-1, keepdim=True)], dim=1)
        logits, _ = model.step(ids[:, -1:], ids.shape[1] - 1, cache)
        all_logits.append(logits)
    ids = torch.cat([ids, logits.argmax(dim=-1, keepdim=True)], dim=1)
    return ids, torch.cat(all_logits), cache


def g(x):
    """A float32 value with all the digits that tell it from its neighbours."""
    return f"{x:.9g}"


def f32_bits(x):
    return torch.tensor([x], dtype=torch.float32).view(torch.int32).item()


VOCAB, CONTEXT, D_MODEL, N_HEADS, N_KV_HEADS = 16, 16, 16, 4, 2
PROMPT = torch.tensor([[0, 6, 12]])
N_NEW = 6
WINDOW = 4

print("# Chapter 14: Generation with a KV cache, GQA and sliding windows")
print()

torch.manual_seed(seed_or(123))
model = TinyDecoder(VOCAB, CONTEXT, D_MODEL, N_HEADS, N_KV_HEADS)
print(f"## A tiny decoder (manual_seed({seed_or(123)}))")
print(f"vocab {VOCAB}, d_model {D_MODEL}, {N_HEADS} query heads, {N_KV_HEADS} key/value heads, "
      f"head_dim {model.attn.head_dim}")
print("W_query.weight.shape:", model.attn.W_query.weight.shape)
print("W_key.weight.shape:", model.attn.W_key.weight.shape)
print("W_value.weight.shape:", model.attn.W_value.weight.shape)
print("prompt:", PROMPT)
print()

ids_plain, logits_plain = generate_uncached(model, PROMPT, N_NEW)
print("## Greedy decoding, recomputing the whole sequence")
print("ids:", ids_plain)
print("logits of each step:")
print(logits_plain)
print()

ids_cached, logits_cached, cache = generate_cached(model, PROMPT, N_NEW)
print("## Greedy decoding with a KV cache")
print("ids:", ids_cached)
print("logits of each step:")
print(logits_cached)
print("cache k.shape:", cache["k"].shape)
print("cache v.shape:", cache["v"].shape)
print()

print("## Cached and recomputed logits, batched products")
print("torch.equal:", torch.equal(logits_cached, logits_plain))
print("first step equal (the prompt, computed the same way):",
      torch.equal(logits_cached[0], logits_plain[0]))
print("max |cached - recomputed| < 1e-5:",
      (logits_cached - logits_plain).abs().max().item() < 1e-5)
print("same ids:", torch.equal(ids_cached, ids_plain))
print()

# Which digits differ depends on the order in which the CPU's matrix library adds each
# product, and that order differs between processors (see reference/NOTES.md). The same
# effect, shown with elementwise operations whose rounding is the same everywhere: one
# logit's dot product added one term after another (the order of a many-row product)
# and in 16 lanes halved (the order of a one-row product).
x0 = model.embed(PROMPT[:, :1])[0, 0]
for j in range(VOCAB):
    terms = x0 * model.lm_head.weight[j]
    in_order = terms[0]
    for t in range(1, len(terms)):
        in_order = in_order + terms[t]
    lanes = terms
    while len(lanes) > 1:
        half = len(lanes) // 2
        lanes = lanes[:half] + lanes[half:]
    if in_order.item() != lanes[0].item():
        break
print("## One dot product, added in two orders")
print(f"x · lm_head.weight[{j}], x = the embedding of token {PROMPT[0, 0].item()} at position 0")
print(f"  one term after another: {g(in_order.item())}")
print(f"  16 lanes, then halves:  {g(lanes[0].item())}")
print(f"  {abs(f32_bits(in_order.item()) - f32_bits(lanes[0].item()))} float32 step(s) apart")
print()

ids_rows, logits_rows = generate_uncached(model, PROMPT, N_NEW, row_by_row=True)
ids_rows_cached, logits_rows_cached, _ = generate_cached(model, PROMPT, N_NEW, row_by_row=True)
print("## Cached and recomputed logits, one query row at a time")
print("ids:", ids_rows)
print("torch.equal:", torch.equal(logits_rows_cached, logits_rows))
print("max |cached - recomputed|:", g((logits_rows_cached - logits_rows).abs().max().item()))
print("equal to the cached batched logits:", torch.equal(logits_rows_cached, logits_cached))
print()

print("## Which key/value head each query head reads")
for n_kv in (4, 2, 1):
    n_rep = N_HEADS // n_kv
    kv_of = repeat_kv(torch.arange(n_kv).view(1, n_kv, 1, 1), n_rep).flatten().tolist()
    name = {4: "multi-head", 2: "grouped-query", 1: "multi-query"}[n_kv]
    print(f"{name} ({n_kv} kv heads): query head -> kv head {kv_of}")
print()

print(f"## A sliding window of {WINDOW}: the hidden keys of 8 tokens")
print(hidden_mask(8, WINDOW).float())
print("a window of 8 hides what the causal mask hides:",
      torch.equal(hidden_mask(8, 8), hidden_mask(8)))
print()

torch.manual_seed(seed_or(123))
windowed = TinyDecoder(VOCAB, CONTEXT, D_MODEL, N_HEADS, N_KV_HEADS, window=WINDOW)
ids_w, logits_w = generate_uncached(windowed, PROMPT, N_NEW, row_by_row=True)
ids_wc, logits_wc, cache_w = generate_cached(windowed, PROMPT, N_NEW, row_by_row=True)
print(f"## Decoding with a window of {WINDOW} and a rolling cache")
print("ids:", ids_wc)
print("logits of each step:")
print(logits_wc)
print("cache k.shape:", cache_w["k"].shape)
print("equal to recomputing with the window, row by row:",
      torch.equal(logits_wc, logits_w))
print("same ids as without a window:", torch.equal(ids_wc, ids_cached))
print()


def cache_bytes(layers, kv_heads, head_dim, tokens, bytes_per_value):
    """Keys and values of every layer, kv head and cached token."""
    return 2 * layers * kv_heads * head_dim * tokens * bytes_per_value


print("## KV cache size (keys and values, all layers)")
MODELS = [
    # name, layers, query heads, kv heads, head_dim, tokens in the context, tokens cached
    ("GPT-2 small", 12, 12, 12, 64, 1024, 1024),
    ("Llama 2 7B", 32, 32, 32, 128, 4096, 4096),
    ("Llama 3 8B", 32, 32, 8, 128, 8192, 8192),
    ("Mistral 7B", 32, 32, 8, 128, 32768, 4096),
]
header = (f"{'model':<11} {'layers':>6} {'heads':>6} {'kv':>3} {'hd':>4} {'tokens':>6} "
          f"{'cached':>6} {'f32/token':>9} {'f16/token':>9} {'f32 MiB':>8} {'f16 MiB':>8}")
print(header)
for name, layers, heads, kv, hd, tokens, cached in MODELS:
    per32 = cache_bytes(layers, kv, hd, 1, 4)
    per16 = cache_bytes(layers, kv, hd, 1, 2)
    mib32 = cache_bytes(layers, kv, hd, cached, 4) / 2**20
    mib16 = cache_bytes(layers, kv, hd, cached, 2) / 2**20
    print(f"{name:<11} {layers:>6} {heads:>6} {kv:>3} {hd:>4} {tokens:>6} {cached:>6} "
          f"{per32:>9} {per16:>9} {mib32:>8.1f} {mib16:>8.1f}")
tiny = cache_bytes(1, N_KV_HEADS, model.attn.head_dim, cache["k"].shape[2], 4)
print(f"this chapter's model: {tiny} bytes for {cache['k'].shape[2]} tokens, "
      f"k and v hold {(cache['k'].numel() + cache['v'].numel()) * 4}")
print()
