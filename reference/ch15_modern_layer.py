"""Chapter 15: the decoder layer of a 2026 open model (PyTorch reference).

A tiny decoder-only model with random weights whose layers hold the pieces that
today's open models combine (Llama 3, Qwen3, Gemma 3, gpt-oss):

  * RMSNorm before attention and before the feed-forward network (pre-norm, no
    biases anywhere);
  * query, key and value projections with grouped-query attention;
  * QK-norm: an RMSNorm over every query and key head (Qwen3, Gemma 3);
  * RoPE on the queries and keys after the head split, with base theta and
    Llama 3.1's frequency scaling; the cos/sin tables are computed in float64
    and rounded once to float32, so their digits do not depend on the CPU
    routine that computes sin and cos;
  * attention-logit softcapping, cap * tanh(scores / cap) (Gemma 2), the tanh
    in float64 rounded once to float32, for the same reason;
  * learned attention sinks, one logit per head appended to every score row
    before the softmax and dropped after it (gpt-oss's order);
  * local (sliding-window) and global layers on a per-layer schedule;
  * StreamingLLM's sink tokens: the first tokens kept beside a local layer's
    window (off by default);
  * Qwen3-Next's output gate, the heads' output times sigmoid(W_g x) before the
    output projection (off by default), the sigmoid in float64 rounded once;
  * an output projection, and a SwiGLU feed-forward network.

Then greedy decoding, recomputing and with a KV cache that stores rotated keys
(a rolling buffer of the last `window` keys on local layers), both with
PyTorch's batched products and one query row at a time (batch-invariant, where
cached equals recomputed bit for bit); what each switch changes; and the logit
transforms that come before sampling (temperature, top-k, top-p, min-p,
repetition penalty), as probabilities; and generations that draw each token with
torch.multinomial from those probabilities, chained (penalty, temperature, then each
filter on what the one before kept), the generator seeded before each.

Last, a mixture of experts (8 SwiGLU experts of width 16 and a shared expert, 2 per
token) routed as Qwen3 routes (softmax, top-k, renormalised) and as DeepSeek-V3 does
(sigmoid scores, top-k of score plus a selection bias, the scores renormalised and scaled
by 2.5), dispatched to the experts and combined (index_add_, experts in order); and two
experts made to tie for one token, then the tie broken by 1e-6 times the token.

Every Linear has no bias; the parameters are drawn in the order the modules are
built, the same whatever the switches. Gradients are off. Each step prints a
`## ...` heading, its output and one empty line.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

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


VOCAB, D_MODEL, N_HEADS, N_KV_HEADS, D_FF, N_LAYERS = 32, 32, 4, 2, 64, 4
HEAD_DIM = D_MODEL // N_HEADS
EPS = 1e-6
PROMPT = [0, 7, 14, 21, 28, 3]
N_NEW = 6
WINDOW = 4
CONTEXT = 16


class Recipe:
    """The switches of the layer; every one on by default."""

    def __init__(self, **changes):
        self.theta = 10000.0
        self.llama31_scaling = False
        self.qk_norm = True
        self.softcap = 5.0
        self.sinks = True
        self.window = WINDOW
        self.sink_tokens = 0  # StreamingLLM: the first tokens stay beside the window
        self.local_per_global = 1  # gpt-oss's alternation: local, global, local, global
        self.output_gate = False  # Qwen3-Next: the heads' output times sigmoid(W_g x)
        for name, value in changes.items():
            setattr(self, name, value)


def layer_is_local(layer, local_per_global):
    """Layer `layer` is local unless it closes a group of local_per_global local layers."""
    if local_per_global is None:
        return False
    return (layer + 1) % (local_per_global + 1) != 0


def schedule(n_layers, local_per_global):
    return "".join("L" if layer_is_local(i, local_per_global) else "G" for i in range(n_layers))


# ---- RoPE ---------------------------------------------------------------------------

def inv_freq(head_dim, theta, llama31_scaling=False):
    """theta_i = theta^(-2i/d), in float64; Llama 3.1's scaling (factor 8, low 1, high 4,
    8192 original tokens): high frequencies kept, low ones divided by 8, a blend between."""
    freqs = [1.0 / theta ** (2 * i / head_dim) for i in range(head_dim // 2)]
    if llama31_scaling:
        factor, low, high, old_context = 8.0, 1.0, 4.0, 8192.0
        low_wavelen, high_wavelen = old_context / low, old_context / high
        scaled = []
        for f in freqs:
            wavelen = 2 * math.pi / f
            if wavelen < high_wavelen:
                scaled.append(f)
            elif wavelen > low_wavelen:
                scaled.append(f / factor)
            else:
                smooth = (old_context / wavelen - low) / (high - low)
                scaled.append((1 - smooth) * f / factor + smooth * f)
        freqs = scaled
    return torch.tensor(freqs, dtype=torch.float64)


def rope_tables(positions, head_dim, theta, llama31_scaling=False):
    """cos and sin of position * theta_i in float64, rounded once to float32, each
    frequency twice (for the two halves): [len(positions), head_dim]."""
    angles = torch.tensor(positions, dtype=torch.float64)[:, None] * inv_freq(head_dim, theta, llama31_scaling)[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().float(), angles.sin().float()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x, cos, sin):
    """x: [b, heads, t, hd]; cos, sin: [t, hd]."""
    return x * cos + rotate_half(x) * sin


# ---- the layer ----------------------------------------------------------------------

def split_heads(x, n_heads):
    b, t, d = x.shape
    return x.view(b, t, n_heads, d // n_heads).transpose(1, 2)


def merge_heads(x):
    b, h, t, hd = x.shape
    return x.transpose(1, 2).contiguous().view(b, t, h * hd)


def repeat_kv(x, n_rep):
    b, n_kv, t, hd = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, n_kv, n_rep, t, hd).reshape(b, n_kv * n_rep, t, hd)


def sees(i, j, window, sink_tokens):
    """Query i sees key j if j <= i and, on a local layer, i - window < j or j < sink_tokens
    (StreamingLLM's first tokens)."""
    return j <= i and (window is None or i < j + window or j < sink_tokens)


def hidden_mask(t, window=None, sink_tokens=0):
    return torch.tensor([[not sees(i, j, window, sink_tokens) for j in range(t)] for i in range(t)])


def visible(i, window, sink_tokens):
    """The keys query i sees, in order."""
    return torch.tensor([j for j in range(i + 1) if sees(i, j, window, sink_tokens)], dtype=torch.long)


def kept(k, v, window, sink_tokens):
    """The cache of keys and values 0..len-1: those the last of them sees."""
    seen = visible(k.shape[2] - 1, window, sink_tokens)
    return {"k": k[:, :, seen], "v": v[:, :, seen]}


def rows(layer, x):
    """layer(x) one token at a time: [b, t, d_in] -> [b, t, d_out]."""
    return torch.cat([layer(x[:, i:i + 1]) for i in range(x.shape[1])], dim=1)


def softcap(scores, cap):
    """cap * tanh(scores / cap), the tanh taken in float64 and rounded once to float32:
    float32 torch.tanh comes from a CPU library whose last bit varies (see the appendix)."""
    return cap * torch.tanh((scores / cap).double()).float()


def sigmoid(z):
    """1 / (1 + exp(-z)) in float64, rounded once to float32 (Qwen3-Next's output gate):
    float32 torch.sigmoid's last bit depends on the CPU routine, as tanh's does."""
    return torch.sigmoid(z.double()).float()


def softmax_with_sink(scores, sink):
    """gpt-oss: the sink logit of each head as one more column, softmax, column dropped.
    scores: [b, h, tq, tk]; sink: [h]."""
    b, h, tq, tk = scores.shape
    column = sink.reshape(1, h, 1, 1).expand(b, h, tq, 1)
    return torch.softmax(torch.cat([scores, column], dim=-1), dim=-1)[..., :-1]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_query = nn.Linear(D_MODEL, N_HEADS * HEAD_DIM, bias=False)
        self.W_key = nn.Linear(D_MODEL, N_KV_HEADS * HEAD_DIM, bias=False)
        self.W_value = nn.Linear(D_MODEL, N_KV_HEADS * HEAD_DIM, bias=False)
        self.out_proj = nn.Linear(N_HEADS * HEAD_DIM, D_MODEL, bias=False)
        self.q_norm = nn.RMSNorm(HEAD_DIM, eps=EPS)
        self.k_norm = nn.RMSNorm(HEAD_DIM, eps=EPS)
        self.sinks = nn.Parameter(torch.randn(N_HEADS))
        self.W_gate = nn.Linear(D_MODEL, N_HEADS * HEAD_DIM, bias=False)

    def qkv(self, x, positions, recipe, row_by_row=False):
        """Projections, head split, QK-norm, RoPE: q [b, h, t, hd], k and v [b, n_kv, t, hd]."""
        project = (lambda layer: rows(layer, x)) if row_by_row else (lambda layer: layer(x))
        q = split_heads(project(self.W_query), N_HEADS)
        k = split_heads(project(self.W_key), N_KV_HEADS)
        v = split_heads(project(self.W_value), N_KV_HEADS)
        if recipe.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        cos, sin = rope_tables(positions, HEAD_DIM, recipe.theta, recipe.llama31_scaling)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def weights(self, q, k, recipe, hidden=None):
        """Scores q·kᵀ/√hd, softcapped, masked, softmaxed (with the sink column)."""
        scores = q @ repeat_kv(k, N_HEADS // N_KV_HEADS).transpose(2, 3) * (1.0 / math.sqrt(HEAD_DIM))
        if recipe.softcap is not None:
            scores = softcap(scores, recipe.softcap)
        if hidden is not None:
            scores = scores.masked_fill(hidden, -torch.inf)
        if recipe.sinks:
            return softmax_with_sink(scores, self.sinks)
        return torch.softmax(scores, dim=-1)

    def forward(self, x, recipe, window, row_by_row=False):
        """x: [b, t, d], positions 0..t-1. Returns the output and the keys and values."""
        t = x.shape[1]
        q, k, v = self.qkv(x, list(range(t)), recipe, row_by_row)
        v_rep = repeat_kv(v, N_HEADS // N_KV_HEADS)
        if row_by_row:
            context = []
            for i in range(t):
                seen = visible(i, window, recipe.sink_tokens)
                w = self.weights(q[:, :, i:i + 1], k[:, :, seen], recipe)
                context.append(w @ v_rep[:, :, seen])
            context = torch.cat(context, dim=2)
        else:
            context = self.weights(q, k, recipe, hidden_mask(t, window, recipe.sink_tokens)) @ v_rep
        out = self.gated(merge_heads(context), x, recipe, row_by_row)
        out = rows(self.out_proj, out) if row_by_row else self.out_proj(out)
        return out, k, v

    def gated(self, heads, x, recipe, row_by_row=False):
        """The merged heads times sigmoid(W_g x) if the recipe has the output gate."""
        if not recipe.output_gate:
            return heads
        return heads * sigmoid(rows(self.W_gate, x) if row_by_row else self.W_gate(x))

    def step(self, x_new, position, cache, recipe, window):
        """One token at `position`: its rotated key and value appended to the cache (the
        last `window` kept, and the sink tokens), its query against every cached key."""
        q, k, v = self.qkv(x_new, [position], recipe)
        cache.update(kept(torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2),
                          window, recipe.sink_tokens))
        k, v = cache["k"], cache["v"]
        w = self.weights(q, k, recipe)
        context = w @ repeat_kv(v, N_HEADS // N_KV_HEADS)
        return self.out_proj(self.gated(merge_heads(context), x_new, recipe))


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_gate = nn.Linear(D_MODEL, D_FF, bias=False)
        self.W_up = nn.Linear(D_MODEL, D_FF, bias=False)
        self.W_down = nn.Linear(D_FF, D_MODEL, bias=False)

    def forward(self, x, row_by_row=False):
        project = (lambda layer, y: rows(layer, y)) if row_by_row else (lambda layer, y: layer(y))
        return project(self.W_down, F.silu(project(self.W_gate, x)) * project(self.W_up, x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = nn.RMSNorm(D_MODEL, eps=EPS)
        self.attn = Attention()
        self.ffn_norm = nn.RMSNorm(D_MODEL, eps=EPS)
        self.ffn = SwiGLU()

    def forward(self, x, recipe, window, row_by_row=False):
        out, k, v = self.attn(self.attn_norm(x), recipe, window, row_by_row)
        h = x + out
        return h + self.ffn(self.ffn_norm(h), row_by_row), kept(k, v, window, recipe.sink_tokens)

    def step(self, x_new, position, cache, recipe, window):
        h = x_new + self.attn.step(self.attn_norm(x_new), position, cache, recipe, window)
        return h + self.ffn(self.ffn_norm(h))


class TinyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.layers = nn.ModuleList([Layer() for _ in range(N_LAYERS)])
        self.final_norm = nn.RMSNorm(D_MODEL, eps=EPS)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def window_of(self, layer, recipe):
        return recipe.window if layer_is_local(layer, recipe.local_per_global) else None

    def forward(self, ids, recipe, row_by_row=False):
        x = self.tok_emb(ids)
        caches = []
        for i, layer in enumerate(self.layers):
            x, cache = layer(x, recipe, self.window_of(i, recipe), row_by_row)
            caches.append(cache)
        x = self.final_norm(x)
        return (rows(self.lm_head, x) if row_by_row else self.lm_head(x)), caches

    def step(self, token, position, caches, recipe):
        x = self.tok_emb(token)
        for i, layer in enumerate(self.layers):
            x = layer.step(x, position, caches[i], recipe, self.window_of(i, recipe))
        return self.lm_head(self.final_norm(x))[:, -1]


def generate_recomputing(model, prompt, n_new, recipe, row_by_row=False):
    ids, steps = prompt, []
    for _ in range(n_new):
        logits, _ = model(ids, recipe, row_by_row)
        last = logits[:, -1]
        ids = torch.cat([ids, last.argmax(dim=-1, keepdim=True)], dim=1)
        steps.append(last)
    return ids, torch.cat(steps)


def generate_cached(model, prompt, n_new, recipe, row_by_row=False):
    logits, caches = model(prompt, recipe, row_by_row)
    last = logits[:, -1]
    ids = torch.cat([prompt, last.argmax(dim=-1, keepdim=True)], dim=1)
    steps = [last]
    for _ in range(1, n_new):
        position = ids.shape[1] - 1
        last = model.step(ids[:, position:], position, caches, recipe)
        ids = torch.cat([ids, last.argmax(dim=-1, keepdim=True)], dim=1)
        steps.append(last)
    return ids, torch.cat(steps), caches


# ---- logit transforms before sampling ------------------------------------------------

def with_temperature(logits, tau):
    return torch.softmax(logits / tau, dim=-1)


def top_k(logits, k):
    kth = torch.topk(logits, k).values[k - 1]
    return torch.softmax(logits.masked_fill(logits < kth, -torch.inf), dim=-1)


def top_p(logits, p):
    probs = torch.softmax(logits, dim=-1)
    sorted_probs, order = probs.sort(descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs  # the mass of the likelier tokens
    drop = torch.zeros(logits.shape, dtype=torch.bool)
    drop[order] = before >= p
    return torch.softmax(logits.masked_fill(drop, -torch.inf), dim=-1)


def min_p(logits, p_base):
    probs = torch.softmax(logits, dim=-1)
    return torch.softmax(logits.masked_fill(probs < p_base * probs.max(), -torch.inf), dim=-1)


def repetition_penalty(logits, seen, penalty):
    """CTRL's penalty on the tokens already in the sequence: a positive logit divided by
    it, a negative one multiplied."""
    out = logits.clone()
    for token in sorted(set(seen)):
        value = out[token]
        out[token] = value * penalty if value < 0 else value / penalty
    return out


def next_token_probs(logits, seen, temperature=1.0, top_k_=None, top_p_=None, min_p_=None,
                     penalty=None):
    """The penalty on the seen tokens, the temperature, then top-k, top-p and min-p, each
    on the tokens the one before kept (a token a filter gives probability 0 is dropped)."""
    if penalty is not None:
        logits = repetition_penalty(logits, seen, penalty)
    logits = logits / temperature
    if top_k_ is not None:
        logits = logits.masked_fill(top_k(logits, top_k_) == 0, -torch.inf)
    if top_p_ is not None:
        logits = logits.masked_fill(top_p(logits, top_p_) == 0, -torch.inf)
    if min_p_ is not None:
        logits = logits.masked_fill(min_p(logits, min_p_) == 0, -torch.inf)
    return torch.softmax(logits, dim=-1)


def draw(logits, ids, sampler):
    """One token per row of logits [b, vocab], drawn with torch.multinomial: [b, 1]."""
    probs = torch.stack([next_token_probs(logits[b], ids[b].tolist(), **sampler)
                         for b in range(logits.shape[0])])
    return torch.multinomial(probs, 1)


def generate_sampled(model, prompt, n_new, recipe, sampler):
    """generate_cached, each new token drawn instead of picked greedily."""
    logits, caches = model(prompt, recipe)
    last = logits[:, -1]
    ids = torch.cat([prompt, draw(last, prompt, sampler)], dim=1)
    for _ in range(1, n_new):
        position = ids.shape[1] - 1
        last = model.step(ids[:, position:], position, caches, recipe)
        ids = torch.cat([ids, draw(last, ids, sampler)], dim=1)
    return ids


def print_kept(name, probs):
    """The tokens left with a probability, then their probabilities."""
    ids = probs.nonzero().flatten()
    print(f"{name} keeps {ids.tolist()}:")
    print(probs[ids])


# ---- the story ----------------------------------------------------------------------

print("# Chapter 15: The decoder layer of a 2026 open model")
print()

torch.manual_seed(seed_or(2026))
model = TinyModel()
recipe = Recipe()
prompt = torch.tensor([PROMPT])

print(f"## A tiny model (manual_seed({seed_or(2026)}))")
print(f"vocab {VOCAB}, d_model {D_MODEL}, {N_LAYERS} layers, {N_HEADS} query heads, "
      f"{N_KV_HEADS} key/value heads, head_dim {HEAD_DIM}, d_ff {D_FF}")
print(f"layers: {schedule(N_LAYERS, recipe.local_per_global)} (L = local, window {WINDOW}; G = global)")
print(f"switches: RoPE theta {recipe.theta:g}, QK-norm, softcap {recipe.softcap:g}, sinks")
print(f"prompt: {prompt}")
print()

layer0 = model.layers[0]
x = model.tok_emb(prompt)
print("## RMSNorm before attention")
x_norm = layer0.attn_norm(x)
print("x[0, :3, :6]:")
print(x[0, :3, :6])
print("RMSNorm(x)[0, :3, :6]:")
print(x_norm[0, :3, :6])
print()

print("## Queries, keys and values, grouped")
q = split_heads(layer0.attn.W_query(x_norm), N_HEADS)
k = split_heads(layer0.attn.W_key(x_norm), N_KV_HEADS)
v = split_heads(layer0.attn.W_value(x_norm), N_KV_HEADS)
print("q.shape:", q.shape)
print("k.shape:", k.shape)
print("v.shape:", v.shape)
print(f"query heads 0-1 read key/value head 0, heads 2-3 read head 1")
print()

print("## QK-norm: every head's q and k scaled to unit RMS")
q_n, k_n = layer0.attn.q_norm(q), layer0.attn.k_norm(k)
print("q[0, 0, :3]:")
print(q[0, 0, :3])
print("q_norm(q)[0, 0, :3]:")
print(q_n[0, 0, :3])
print()

print("## RoPE frequencies")
for theta, scaled, name in [(10000.0, False, "theta 10000"), (500000.0, False, "theta 500000"),
                            (500000.0, True, "theta 500000, Llama 3.1 scaling")]:
    print(f"{name}:")
    print(inv_freq(HEAD_DIM, theta, scaled).float())
cos, sin = rope_tables(list(range(len(PROMPT))), HEAD_DIM, recipe.theta)
print("cos[:, :4]:")
print(cos[:, :4])
print()

print("## RoPE on q and k, after the head split")
q_r, k_r = apply_rope(q_n, cos, sin), apply_rope(k_n, cos, sin)
print("rotated q[0, 0, :3]:")
print(q_r[0, 0, :3])
print("the first position turns by 0:", torch.equal(q_r[:, :, 0], q_n[:, :, 0]))
print()

scale = 1.0 / math.sqrt(HEAD_DIM)
scores = q_r @ repeat_kv(k_r, N_HEADS // N_KV_HEADS).transpose(2, 3) * scale
capped = softcap(scores, recipe.softcap)
print(f"## Softcapping the scores: {recipe.softcap:g} * tanh(s / {recipe.softcap:g})")
print("scores[0, 0]:")
print(scores[0, 0])
print("capped[0, 0]:")
print(capped[0, 0])
print()

print("## Attention sinks: one more column, dropped after the softmax")
hidden = hidden_mask(len(PROMPT), WINDOW)
masked = capped.masked_fill(hidden, -torch.inf)
print("sinks:", layer0.attn.sinks.detach())
plain = torch.softmax(masked, dim=-1)
sunk = softmax_with_sink(masked, layer0.attn.sinks)
print("without sinks, weights[0, 0]:")
print(plain[0, 0])
print("with sinks, weights[0, 0]:")
print(sunk[0, 0])
print("row sums with sinks, head 0:", sunk[0, 0].sum(dim=-1))
print()

print("## Local and global layers")
print(f"a local layer's mask (window {WINDOW}), 1 = hidden:")
print(hidden.float())
print("gpt-oss, alternating:", schedule(12, 1))
print("Gemma 3, 5 local to 1 global:", schedule(12, 5))
print()

print("## One layer: attention and SwiGLU with residuals")
out, _, _ = layer0.attn(x_norm, recipe, WINDOW)
h = x + out
y = h + layer0.ffn(layer0.ffn_norm(h))
print("h = x + attention(RMSNorm(x)), h[0, :3, :6]:")
print(h[0, :3, :6])
print("y = h + SwiGLU(RMSNorm(h)), y[0, :3, :6]:")
print(y[0, :3, :6])
print()

print("## The model: greedy decoding, recomputing")
ids, logits = generate_recomputing(model, prompt, N_NEW, recipe)
print("ids:", ids)
print("logits of the first step:")
print(logits[0])
print()

print("## Greedy decoding with a KV cache of rotated keys")
ids_c, logits_c, caches = generate_cached(model, prompt, N_NEW, recipe)
print("ids:", ids_c)
for i, cache in enumerate(caches):
    kind = "local" if layer_is_local(i, recipe.local_per_global) else "global"
    print(f"layer {i} ({kind}) cache k.shape: {cache['k'].shape}")
print("same ids:", torch.equal(ids, ids_c))
print("max |cached - recomputed| < 1e-5:", ((logits_c - logits).abs().max() < 1e-5).item())
print()

print("## Cached and recomputed, one query row at a time")
ids_r, logits_r = generate_recomputing(model, prompt, N_NEW, recipe, row_by_row=True)
ids_rc, logits_rc, caches_r = generate_cached(model, prompt, N_NEW, recipe, row_by_row=True)
print("ids:", ids_r)
print("torch.equal:", torch.equal(logits_rc, logits_r))
print()

def cache_bytes(n_layers, kv_heads, head_dim, bytes_per_value, window, local_per_global, tokens):
    """Per layer 2 * kv_heads * head_dim * cached * bytes, cached = tokens on a global layer,
    min(tokens, window) on a local one."""
    return sum(2 * kv_heads * head_dim * bytes_per_value
               * (min(tokens, window) if layer_is_local(i, local_per_global) else tokens)
               for i in range(n_layers))


print("## The size of the KV cache")
fed = len(PROMPT) + N_NEW - 1
real = sum(c["k"].numel() + c["v"].numel() for c in caches_r) * 4
print(f"the tiny model after {fed} tokens: {real} bytes")
print("predicted from its recipe card:",
      cache_bytes(N_LAYERS, N_KV_HEADS, HEAD_DIM, 4, WINDOW, recipe.local_per_global, fed), "bytes")
print("with every layer global:", cache_bytes(N_LAYERS, N_KV_HEADS, HEAD_DIM, 4, WINDOW, None, fed), "bytes")
print()

streaming = Recipe(sink_tokens=2)
ids_s, logits_s = generate_recomputing(model, prompt, N_NEW, streaming, row_by_row=True)
_, logits_sc, caches_s = generate_cached(model, prompt, N_NEW, streaming, row_by_row=True)
print(f"## StreamingLLM: the first {streaming.sink_tokens} tokens kept beside the window")
print(f"a local layer's mask (window {streaming.window}, {streaming.sink_tokens} sink tokens), 1 = hidden:")
print(hidden_mask(8, streaming.window, streaming.sink_tokens).float())
print("ids:", ids_s)
for i, cache in enumerate(caches_s):
    kind = "local" if layer_is_local(i, streaming.local_per_global) else "global"
    print(f"layer {i} ({kind}) cache k.shape: {cache['k'].shape}")
print("cached equals recomputed, torch.equal:", torch.equal(logits_sc, logits_s))
print()

print("## What each switch changes")
for name, changes in [("all on", {}), ("theta 500000", {"theta": 500000.0}),
                      ("Llama 3.1 scaling", {"theta": 500000.0, "llama31_scaling": True}),
                      ("no QK-norm", {"qk_norm": False}), ("no softcap", {"softcap": None}),
                      ("no sinks", {"sinks": False}),
                      ("StreamingLLM, 2 sink tokens", {"sink_tokens": 2}),
                      ("output gate", {"output_gate": True}), ("all global", {"local_per_global": None})]:
    r = Recipe(**changes)
    lg, _ = model(prompt, r)
    print(f"{name}: next token {lg[0, -1].argmax().item()}")
    print("  logits[:4]:", lg[0, -1, :4])
print()

print("## Logit transforms before sampling")
last = logits[-1]
print("softmax, the largest probability:", torch.softmax(last, dim=-1).max())
print("temperature 0.5, the largest probability:", with_temperature(last, 0.5).max())
print("temperature 2, the largest probability:", with_temperature(last, 2.0).max())
print_kept("top-k 3", top_k(last, 3))
print_kept("top-p 0.5", top_p(last, 0.5))
print_kept("min-p 0.5", min_p(last, 0.5))
seen = sorted(set(ids[0, :-1].tolist()))
penalized = repetition_penalty(last, seen, 1.5)
print("the logits of the tokens already seen", seen)
print("before:")
print(last[seen])
print("after a repetition penalty of 1.5:")
print(penalized[seen])
print()

print(f"## Sampling with multinomial (manual_seed({seed_or(2026)}) before each)")
sampled = []
for name, sampler in [("temperature 1", {}),
                      ("temperature 0.7, top-k 5", {"temperature": 0.7, "top_k_": 5}),
                      ("top-p 0.9", {"top_p_": 0.9}),
                      ("temperature 1.5, min-p 0.1", {"temperature": 1.5, "min_p_": 0.1}),
                      ("repetition penalty 1.3", {"penalty": 1.3}),
                      ("top-k 1", {"top_k_": 1})]:
    torch.manual_seed(seed_or(2026))
    sampled.append(generate_sampled(model, prompt, N_NEW, recipe, sampler))
    print(f"{name}:", sampled[-1])
print("top-k 1 is greedy decoding:", torch.equal(sampled[-1], ids))
print()


# ---- a mixture of experts -------------------------------------------------------------

D_EXPERT, N_EXPERTS, TOP_K, MOE_TOKENS, ROUTED_SCALING = 16, 8, 2, 6, 2.5


class Expert(nn.Module):
    """A SwiGLU network of width D_EXPERT."""

    def __init__(self):
        super().__init__()
        self.W_gate = nn.Linear(D_MODEL, D_EXPERT, bias=False)
        self.W_up = nn.Linear(D_MODEL, D_EXPERT, bias=False)
        self.W_down = nn.Linear(D_EXPERT, D_MODEL, bias=False)

    def forward(self, x):
        return self.W_down(F.silu(self.W_gate(x)) * self.W_up(x))


class Moe(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D_MODEL, N_EXPERTS, bias=False)
        self.experts = nn.ModuleList([Expert() for _ in range(N_EXPERTS)])
        self.shared_expert = Expert()
        self.selection_bias = torch.randn(N_EXPERTS) * 0.1

    def routed(self, x, experts, weights):
        """Dispatch every token to its experts, combine their outputs with the weights."""
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = (experts == e).nonzero(as_tuple=True)
            if len(token) == 0:
                continue
            out.index_add_(0, token, expert(x[token]) * weights[token, slot, None])
        return out


def route_softmax_top_k(logits, k):
    """Qwen3: softmax over the experts, the k largest kept and renormalised."""
    kept, experts = torch.softmax(logits, dim=-1).topk(k, dim=-1)
    return experts, kept / kept.sum(-1, keepdim=True)


def route_sigmoid_biased(logits, bias, k, scale):
    """DeepSeek-V3: sigmoid scores; chosen by score + bias, weighted by the scores."""
    scores = sigmoid(logits)
    _, experts = (scores + bias).topk(k, dim=-1)
    chosen = scores.gather(-1, experts)
    return experts, chosen / chosen.sum(-1, keepdim=True) * scale


def print_route(experts, weights):
    print("experts per token:", experts.tolist())
    print("weights:")
    print(weights)
    print("load per expert:", torch.bincount(experts.flatten(), minlength=N_EXPERTS).tolist())


torch.manual_seed(seed_or(2026))
x = torch.randn(MOE_TOKENS, D_MODEL)
moe = Moe()
logits = moe.router(x)
qwen3 = route_softmax_top_k(logits, TOP_K)
qwen3_out = moe.routed(x, *qwen3)
deepseek = route_sigmoid_biased(logits, moe.selection_bias, TOP_K, ROUTED_SCALING)
deepseek_out = moe.routed(x, *deepseek) + moe.shared_expert(x)
print(f"## A mixture of experts (manual_seed({seed_or(2026)}))")
print(f"{N_EXPERTS} experts of width {D_EXPERT} and a shared expert, {TOP_K} per token; "
      f"{MOE_TOKENS} tokens of {D_MODEL} features")
print("router probabilities, token 0:")
print(torch.softmax(logits, dim=-1)[0])
print("Qwen3: softmax, top-2, renormalised")
print_route(*qwen3)
print("output[:3, :6]:")
print(qwen3_out[:3, :6])
print(f"DeepSeek-V3: sigmoid scores, top-2 of score + bias, renormalised, times {ROUTED_SCALING:g}")
print("selection bias:")
print(moe.selection_bias)
print_route(*deepseek)
print("output with the shared expert[:3, :6]:")
print(deepseek_out[:3, :6])
print()

_, second, third = moe.router(x)[0].argsort(descending=True)[:3].tolist()
moe.router.weight[third] = moe.router.weight[second]
tied_logits = moe.router(x)
tied = route_softmax_top_k(tied_logits, TOP_K)
moe.router.weight[third] = moe.router.weight[second] + x[0] * 1e-6
raised = route_softmax_top_k(moe.router(x), TOP_K)
moe.router.weight[third] = moe.router.weight[second] - x[0] * 1e-6
lowered = route_softmax_top_k(moe.router(x), TOP_K)
print("## A near tie: two experts' scores within a rounding error")
print(f"token 0's experts: {qwen3[0][0].tolist()}; its second and third: {second}, {third}")
print(f"expert {third} given expert {second}'s router row: token 0's logits of the two")
print(tied_logits[0][[second, third]])
print("token 0's experts:", tied[0][0].tolist())
print(f"expert {third}'s row raised by 1e-6 x[0]: {raised[0][0].tolist()}; "
      f"lowered: {lowered[0][0].tolist()}")
moved = (moe.routed(x, *raised) - moe.routed(x, *lowered))[0].abs().max()
print(f"token 0's output, raised against lowered, moves by {moved.item():.4f}")
print()
