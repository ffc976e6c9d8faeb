"""Chapter 18: beyond softmax: linear attention and Gated DeltaNet (PyTorch reference).

One head, no batch, float32, random queries, keys and values (manual_seed(18)):

  * causal softmax attention, the starting point;
  * linear attention (Katharopoulos et al., "Transformers are RNNs"): the softmax's
    exp(q.k) replaced by phi(q).phi(k) with phi(x) = elu(x) + 1, computed in three
    forms: parallel (a masked T x T product), recurrent (a d x d state and a d normaliser
    updated per token) and chunked (parallel inside a chunk of 16, the state carried
    from chunk to chunk); each form in its own order, and whether they agree up to rounding;
  * the delta rule: what a key written twice keeps, summed (linear attention) or
    replaced (delta rule);
  * Gated DeltaNet (Yang, Kautz and Hatamizadeh, "Gated Delta Networks"):
    S_t = a_t S_{t-1} (I - b_t k_t k_t^T) + b_t v_t k_t^T, o_t = S_t q_t, with q and k
    L2-normalised, in a token loop and in chunks (the WY / UT form of Songlin Yang's
    "DeltaNet Explained"), and whether they agree up to rounding;
  * DeepSeek Sparse Attention (DeepSeek-V3.2): a small indexer scores every visible key,
    I[t, s] = sum_h w[t, h] relu(q_I[t, h] . k_I[s]), each query keeps its top 4 and
    softmax attention runs over those only (float32, one sequence, random index weights);
    then the kept keys in tiles of 4 x 4, as create_block_mask records a mask_mod that
    keeps them (chapter 16's block mask): how many tiles a tiled kernel reads, for the top 4
    keys per query and for block selection (the index scores pooled by their maximum per
    tile, the top 2 tiles of keys per tile of queries, as NSA and MoBA select blocks);
  * associative recall with fixed weights: n random key-value pairs written into a
    16 x 16 state (summed, or by the delta rule) or kept for softmax attention, every key
    read back: the state forgets as n grows past 16, softmax attention recalls;
  * the memory of the state against a KV cache;
  * a Gated DeltaNet layer as Qwen3-Next builds it: q, k and v each through a causal
    depthwise convolution of 4 taps and SiLU (q and k then L2-normalised), the gates
    projected from the layer's input, and the recurrence's output RMS-normalised and
    multiplied by SiLU(W_g h); token by token (the convolution keeping its last 3 inputs)
    and in chunks of 16, and whether they agree up to rounding;
  * a hybrid stack, as Qwen3-Next and Kimi Linear stack their layers: three Gated
    DeltaNet layers (the layer above) then one causal softmax layer, each
    x + out_proj(mixer(RMSNorm(x))) (one head, 16 features, 64 tokens, weights drawn as
    nn.Linear's and nn.Conv1d's), its output and the numbers each layer keeps per sequence.

elu, sigmoid, SiLU, log-sigmoid, exp and the square root of the L2 norm are computed in float64 and rounded once to float32
(as chapter 15's gate), so their digits do not depend on the CPU routine. Gradients are
off. Each step prints a `## ...` heading, its output and one empty line.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask

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


T, D, CHUNK = 64, 16, 16


def elu_plus_one(x):
    """phi(x) = elu(x) + 1, positive everywhere: x + 1 above 0, exp(x) below."""
    return (F.elu(x.double()) + 1).float()


def sigmoid(x):
    return torch.sigmoid(x.double()).float()


def log_sigmoid(x):
    return F.logsigmoid(x.double()).float()


def exp(x):
    return torch.exp(x.double()).float()


def silu(x):
    return F.silu(x.double()).float()


def l2_normalize(x):
    """Every row divided by its length; the square root in float64 rounded once (the
    correctly rounded float32 square root)."""
    return x / torch.sqrt((x * x).sum(-1, keepdim=True).double()).float()


def agree(a, b):
    """Whether two forms of the same output agree up to float32 rounding: every entry within
    1e-5. They add the same terms in other orders, so they are not equal bit for bit, and by
    how much they differ depends on the order each processor adds in; the chapter's tests
    measure the gaps."""
    return torch.allclose(a, b, rtol=0, atol=1e-5)


def causal_ones(t):
    return torch.tril(torch.ones(t, t))


# ---- linear attention ---------------------------------------------------------------

def softmax_attention(q, k, v):
    """softmax(mask(Q K^T) / sqrt(d)) V, chapter 5's causal attention."""
    t = q.shape[0]
    hidden = torch.triu(torch.ones(t, t), diagonal=1).bool()
    return torch.softmax((q @ k.T).masked_fill(hidden, -torch.inf) / D**0.5, dim=-1) @ v


def linear_parallel(q, k, v):
    """O = ((phi(Q) phi(K)^T) * M) V, each row divided by its row sum."""
    weights = (elu_plus_one(q) @ elu_plus_one(k).T) * causal_ones(q.shape[0])
    return (weights @ v) / weights.sum(-1, keepdim=True)


def linear_recurrent(q, k, v):
    """S_t = S_{t-1} + phi(k_t) v_t^T, z_t = z_{t-1} + phi(k_t), o_t = phi(q_t) S_t / phi(q_t).z_t."""
    fq, fk = elu_plus_one(q), elu_plus_one(k)
    s = torch.zeros(D, D)
    z = torch.zeros(D)
    out = []
    for t in range(q.shape[0]):
        s = s + torch.outer(fk[t], v[t])
        z = z + fk[t]
        out.append((fq[t] @ s) / (fq[t] @ z))
    return torch.stack(out)


def linear_chunked(q, k, v, chunk):
    """Inside a chunk the parallel form, plus what the state holds of the chunks before."""
    fq, fk = elu_plus_one(q), elu_plus_one(k)
    s = torch.zeros(D, D)
    z = torch.zeros(D)
    mask = causal_ones(chunk)
    out = []
    for qc, kc, vc in zip(fq.split(chunk), fk.split(chunk), v.split(chunk)):
        weights = (qc @ kc.T) * mask
        numerator = qc @ s + weights @ vc
        denominator = qc @ z + weights.sum(-1)
        out.append(numerator / denominator[:, None])
        s = s + kc.T @ vc
        z = z + kc.sum(0)
    return torch.cat(out)


# ---- the delta rule and Gated DeltaNet ----------------------------------------------

def gated_delta_recurrent(q, k, v, alpha, beta):
    """S_t = a_t S_{t-1} + b_t (v_t - a_t S_{t-1} k_t) k_t^T, o_t = S_t q_t; S is [d_v, d_k]."""
    s = torch.zeros(v.shape[1], k.shape[1])
    out = []
    for t in range(q.shape[0]):
        s = alpha[t] * s
        v_old = s @ k[t]
        s = s + beta[t] * torch.outer(v[t] - v_old, k[t])
        out.append(s @ q[t])
    return torch.stack(out)


def ut_transform(k_beta, k, decay):
    """T = (I + strictly_lower(diag(b) K K^T * decay))^-1 by forward substitution."""
    c = k.shape[0]
    a = -torch.tril((k_beta @ k.T) * decay, diagonal=-1)
    for i in range(1, c):
        a[i, :i] = a[i, :i] + a[i, :i] @ a[:i, :i]
    return a + torch.eye(c)


def gated_delta_chunked(q, k, v, log_alpha, beta, chunk):
    """The same outputs, a chunk at a time; the state is kept as S^T, [d_k, d_v]."""
    s = torch.zeros(k.shape[1], v.shape[1])
    out = []
    for qc, kc, vc, gc, bc in zip(q.split(chunk), k.split(chunk), v.split(chunk),
                                  log_alpha.split(chunk), beta.split(chunk)):
        g = torch.cumsum(gc, 0)
        decay = torch.tril(exp(g[:, None] - g[None, :]))
        t_inv = ut_transform(kc * bc[:, None], kc, decay)
        w = t_inv @ (kc * (bc * exp(g))[:, None])
        u = t_inv @ (vc * bc[:, None])
        v_new = u - w @ s
        inner = torch.tril((qc @ kc.T) * decay)
        out.append((qc * exp(g)[:, None]) @ s + inner @ v_new)
        s = exp(g[-1]) * s + (kc * exp(g[-1] - g)[:, None]).T @ v_new
    return torch.cat(out)


# ---- DeepSeek Sparse Attention: an indexer picks the keys -------------------------

T_SPARSE, INDEX_HEADS, D_INDEX, TOP_K = 16, 2, 8, 4


def index_scores(q_index, k_index, w):
    """I[t, s] = sum_h w[t, h] * relu(q_index[t, h] . k_index[s]), one index head at a time."""
    scores = torch.zeros(q_index.shape[0], k_index.shape[0])
    for h in range(q_index.shape[1]):
        scores = scores + w[:, h:h + 1] * torch.relu(q_index[:, h] @ k_index.T)
    return scores


def top_k_kept(scores, top_k):
    """True where key s is among the top_k index scores of query t's visible keys."""
    t = scores.shape[0]
    hidden = torch.triu(torch.ones(t, t), diagonal=1).bool()
    top = scores.masked_fill(hidden, -torch.inf).topk(min(top_k, t), dim=-1).indices
    return torch.zeros(t, t, dtype=torch.bool).scatter_(-1, top, True) & ~hidden


def sparse_attention(q, k, v, kept):
    """Softmax attention over the kept keys only."""
    return torch.softmax((q @ k.T).masked_fill(~kept, -torch.inf) / D**0.5, dim=-1) @ v


TILE, TOP_TILES = 4, 2


def tile_scores(scores, tile):
    """The best visible index score in each tile of queries x tile of keys."""
    t = scores.shape[0]
    hidden = torch.triu(torch.ones(t, t), diagonal=1).bool()
    n = t // tile
    return scores.masked_fill(hidden, -torch.inf).view(n, tile, n, tile).amax(dim=(1, 3))


def top_k_tiles_kept(scores, tile, top_tiles):
    """Each tile of queries keeps its top_tiles tiles of keys; a query reads their visible keys."""
    t = scores.shape[0]
    pooled = tile_scores(scores, tile)
    n = pooled.shape[0]
    top = pooled.topk(min(top_tiles, n), dim=-1).indices
    chosen = torch.zeros(n, n, dtype=torch.bool).scatter_(-1, top, True)
    hidden = torch.triu(torch.ones(t, t), diagonal=1).bool()
    return chosen.repeat_interleave(tile, 0).repeat_interleave(tile, 1) & ~hidden


def block_mask_of(kept):
    """create_block_mask of a mask_mod that keeps the kept keys."""
    t = kept.shape[0]
    return create_block_mask(lambda b, h, q_idx, kv_idx: kept[q_idx, kv_idx], None, None, t, t,
                             device="cpu", BLOCK_SIZE=TILE)


def tile_grid(block_mask, n):
    """Head 0's tiles as create_block_mask records them: F full, P partial, . empty."""
    rows = []
    for r in range(n):
        row = ["."] * n
        for i in block_mask.kv_indices[0, 0, r, :block_mask.kv_num_blocks[0, 0, r]].tolist():
            row[i] = "P"
        for i in block_mask.full_kv_indices[0, 0, r, :block_mask.full_kv_num_blocks[0, 0, r]].tolist():
            row[i] = "F"
        rows.append(row)
    return rows


def tiles_read(kept):
    """The tiles a tiled kernel reads: every tile the block mask does not mark empty."""
    grid = tile_grid(block_mask_of(kept), kept.shape[0] // TILE)
    return grid, sum(x != "." for row in grid for x in row)


# ---- associative recall: what a state of fixed size forgets ------------------------

RECALL_PAIRS = (4, 8, 16, 32, 64, 128)
SHARPNESS = 16.0


def pairs_recalled(recalled, values, rows):
    """How many of `rows` read back a vector nearer to their own value than to any other."""
    distances = ((recalled[rows, None, :] - values[None, :, :]) ** 2).sum(-1)
    return (distances.argmin(-1) == torch.arange(values.shape[0])[rows]).sum().item()


def recall(keys, values):
    """Write every pair, then read every key back: linear attention's state, the delta
    rule's, and softmax attention over all the pairs (scores sharpened by SHARPNESS)."""
    summed = torch.zeros(values.shape[1], keys.shape[1])
    replaced = torch.zeros(values.shape[1], keys.shape[1])
    for key, value in zip(keys, values):
        summed = summed + torch.outer(value, key)
        replaced = replaced + torch.outer(value - replaced @ key, key)
    softmax = torch.softmax(keys @ keys.T * SHARPNESS, dim=-1) @ values
    return keys @ summed.T, keys @ replaced.T, softmax


# ---- the story ----------------------------------------------------------------------

torch.manual_seed(seed_or(18))
q, k, v = torch.randn(T, D), torch.randn(T, D), torch.randn(T, D)
print("# Chapter 18: Beyond softmax")
print()
print(f"## Queries, keys and values (manual_seed({seed_or(18)}))")
print(f"q, k, v: {T} tokens x {D} features each")
print("q[:2, :6]:")
print(q[:2, :6])
print()

print("## Causal softmax attention, the starting point")
soft = softmax_attention(q, k, v)
print("softmax(q k^T / 4, causal) v, rows 0-2, first 6 features:")
print(soft[:3, :6])
print()

print("## The feature map phi(x) = elu(x) + 1")
print("q[0, :6]:")
print(q[0, :6])
print("phi(q)[0, :6]:")
print(elu_plus_one(q)[0, :6])
print(f"every phi(q), phi(k) > 0: {bool((elu_plus_one(q) > 0).all() and (elu_plus_one(k) > 0).all())}")
print()

parallel = linear_parallel(q, k, v)
recurrent = linear_recurrent(q, k, v)
chunked = linear_chunked(q, k, v, CHUNK)
print("## Linear attention in three forms")
print("parallel, rows 0-2, first 6 features:")
print(parallel[:3, :6])
print("recurrent, rows 0-2, first 6 features:")
print(recurrent[:3, :6])
print(f"chunked (chunks of {CHUNK}), rows 0-2, first 6 features:")
print(chunked[:3, :6])
print("the last row, parallel and recurrent:")
print(parallel[-1, :6])
print(recurrent[-1, :6])
print()

print("## The gaps between the forms")
for name, a, b in (("parallel vs recurrent", parallel, recurrent),
                   ("chunked vs recurrent", chunked, recurrent),
                   ("chunked vs parallel", chunked, parallel)):
    print(f"{name}: agree within 1e-5: {agree(a, b)}")
print(f"max |output| {recurrent.abs().max()!s}")
print()

print("## A key written twice")
key = l2_normalize(torch.tensor([[1.0, 2.0, 0.0, 2.0]]))[0]
first, second = torch.tensor([1.0, 0.0, 0.0, 0.0]), torch.tensor([0.0, 0.0, 3.0, 0.0])
summed = torch.zeros(4, 4)
replaced = torch.zeros(4, 4)
for value in (first, second):
    summed = summed + torch.outer(value, key)
    replaced = replaced + torch.outer(value - replaced @ key, key)
print(f"key {key}")
print(f"written: {first}, then {second}")
print(f"linear attention reads back {summed @ key}")
print(f"the delta rule reads back   {replaced @ key}")
print()

gq, gk, gv = torch.randn(T, D), torch.randn(T, D), torch.randn(T, D)
gq, gk = l2_normalize(gq), l2_normalize(gk)
beta = sigmoid(torch.randn(T))
log_alpha = log_sigmoid(torch.randn(T) + 3.0)
alpha = exp(log_alpha)
print("## Gated DeltaNet's inputs (drawn next)")
print("|q_t| = |k_t| = 1, rows 0-2 of k, first 6 features:")
print(gk[:3, :6])
print("write strengths b_t = sigmoid(.), first 8:")
print(beta[:8])
print("decays a_t = sigmoid(. + 3), first 8:")
print(alpha[:8])
print()

gated_recurrent = gated_delta_recurrent(gq, gk, gv, alpha, beta)
gated_chunked = gated_delta_chunked(gq, gk, gv, log_alpha, beta, CHUNK)
print("## Gated DeltaNet, token by token and chunk by chunk")
print("recurrent, rows 0-2, first 6 features:")
print(gated_recurrent[:3, :6])
print(f"chunked (chunks of {CHUNK}), rows 0-2, first 6 features:")
print(gated_chunked[:3, :6])
print("the last row, recurrent and chunked:")
print(gated_recurrent[-1, :6])
print(gated_chunked[-1, :6])
print(f"recurrent and chunked agree within 1e-5: {agree(gated_chunked, gated_recurrent)}")
print(f"max |output| {gated_recurrent.abs().max()!s}")
print()

sq, sk, sv = q[:T_SPARSE], k[:T_SPARSE], v[:T_SPARSE]
q_index = torch.randn(T_SPARSE, INDEX_HEADS, D_INDEX)
k_index = torch.randn(T_SPARSE, D_INDEX)
w_index = torch.randn(T_SPARSE, INDEX_HEADS)
scores = index_scores(q_index, k_index, w_index)
kept = top_k_kept(scores, TOP_K)
print("## DeepSeek's indexer picks the keys")
print(f"the first {T_SPARSE} tokens; {INDEX_HEADS} index heads of {D_INDEX} features; top {TOP_K}")
print(f"index scores of query {T_SPARSE - 1}:")
print(scores[-1])
print(f"keys kept (1) by queries 8-{T_SPARSE - 1}:")
for t in range(8, T_SPARSE):
    print(f"  {t:2d}: " + "".join("1" if x else "." for x in kept[t].tolist()))
print()

sparse = sparse_attention(sq, sk, sv, kept)
dense = softmax_attention(sq, sk, sv)
print("## Softmax over the kept keys only")
print(f"sparse, rows 12-{T_SPARSE - 1}, first 6 features:")
print(sparse[12:, :6])
print(f"dense (every visible key), rows 12-{T_SPARSE - 1}, first 6 features:")
print(dense[12:, :6])
print(f"rows 0-{TOP_K - 1} (every visible key kept) equal dense: {torch.equal(sparse[:TOP_K], dense[:TOP_K])}")
print()

tiles = (T_SPARSE // TILE) ** 2
causal_kept = torch.tril(torch.ones(T_SPARSE, T_SPARSE)).bool()
print("## The kept keys in tiles: chapter 16's kernel")
print(f"tiles of {TILE} x {TILE}; the causal mask alone leaves {tiles_read(causal_kept)[1]} of {tiles} to read")
print(f"top {TOP_K} keys per query: the kernel reads {tiles_read(kept)[1]} tiles")
block_kept = top_k_tiles_kept(scores, TILE, TOP_TILES)
grid, read = tiles_read(block_kept)
by_blocks = sparse_attention(sq, sk, sv, block_kept)
print(f"top {TOP_TILES} tiles of keys per tile of queries (F: full, P: partial, .: empty):")
for row in grid:
    print("  " + " ".join(row))
print(f"the kernel reads {read} tiles of {tiles}")
print(f"softmax over their keys, rows 12-{T_SPARSE - 1}, first 6 features:")
print(by_blocks[12:, :6])
print()

print(f"## Associative recall: n pairs, a {D} x {D} state")
print(f"keys of length 1 and random values in {D} features; a pair is recalled when its key")
print("reads back a vector nearer to its own value than to any other")
print("      n   linear   delta   softmax   last 4 written: linear, delta")
for n in RECALL_PAIRS:
    keys, values = l2_normalize(torch.randn(n, D)), torch.randn(n, D)
    answers = recall(keys, values)
    every, last = slice(0, n), slice(n - 4, n)
    counts = [pairs_recalled(r, values, every) for r in answers]
    lasts = [pairs_recalled(r, values, last) for r in answers[:2]]
    print(f"  {n:5d}  {counts[0]:7d}  {counts[1]:6d}  {counts[2]:8d}   {lasts[0]}/4, {lasts[1]}/4")
print()

print("## The state against a KV cache")
print("numbers kept per head, d_k = d_v = 128:")
for n in (1024, 32768, 262144):
    print(f"  n = {n:6d}: KV cache {2 * n * 128:9d}, state {128 * 128}")
print()

# ---- a Gated DeltaNet layer: short convolution, norm and output gate ---------------

EPS = 1e-6  # chapter 15's RMSNorm epsilon
KERNEL = 4


def short_conv(x, w):
    """y_t = sum_i w[:, i] * x_{t-3+i}, zeros before the first token. Written as shifted
    products added in tap order, the Rust listing's order, rather than F.conv1d: F.conv1d
    adds the taps in another order and does not give these bits (checked on 64 x 16
    inputs)."""
    t = x.shape[0]
    padded = torch.cat([torch.zeros(KERNEL - 1, x.shape[1]), x])
    y = padded[0:t] * w[:, 0]
    for i in range(1, KERNEL):
        y = y + padded[i:i + t] * w[:, i]
    return y


def short_conv_decode(x, w):
    """The same token by token: the last 3 inputs of every channel kept between tokens."""
    last_three = torch.zeros(KERNEL - 1, x.shape[1])
    out = []
    for t in range(x.shape[0]):
        window = torch.cat([last_three, x[t:t + 1]])
        y = window[0] * w[:, 0]
        for i in range(1, KERNEL):
            y = y + window[i] * w[:, i]
        out.append(y)
        last_three = window[1:]
    return torch.stack(out)


class GatedDeltaNet(nn.Module):
    """What a Gated DeltaNet layer adds to its projections of q, k and v."""

    def __init__(self, d_model):
        super().__init__()
        self.W_beta = nn.Linear(d_model, 1, bias=False)
        self.W_alpha = nn.Linear(d_model, 1, bias=False)
        self.conv_query = nn.Conv1d(d_model, d_model, KERNEL, groups=d_model, bias=False)
        self.conv_key = nn.Conv1d(d_model, d_model, KERNEL, groups=d_model, bias=False)
        self.conv_value = nn.Conv1d(d_model, d_model, KERNEL, groups=d_model, bias=False)
        self.W_gate = nn.Linear(d_model, d_model, bias=False)
        self.out_norm = nn.RMSNorm(d_model, eps=EPS)

    def gates(self, h):
        """b_t = sigmoid(w_b . h_t), log a_t = log sigmoid(w_a . h_t + 3); each dot product a
        row sum of h * w, the formula as written (nn.Linear with one output adds in another
        order)."""
        beta = sigmoid((h * self.W_beta.weight[0]).sum(-1))
        return beta, log_sigmoid((h * self.W_alpha.weight[0]).sum(-1) + 3)

    def forward(self, h, q, k, v, chunk=None):
        """Token by token (chunk None), or a chunk at a time."""
        conv = short_conv_decode if chunk is None else short_conv
        q = l2_normalize(silu(conv(q, self.conv_query.weight[:, 0])))
        k = l2_normalize(silu(conv(k, self.conv_key.weight[:, 0])))
        v = silu(conv(v, self.conv_value.weight[:, 0]))
        beta, log_alpha = self.gates(h)
        if chunk is None:
            o = gated_delta_recurrent(q, k, v, exp(log_alpha), beta)
        else:
            o = gated_delta_chunked(q, k, v, log_alpha, beta, chunk)
        return self.out_norm(o) * silu(self.W_gate(h))


h = torch.randn(T, D)
w_query, w_key, w_value = (nn.Linear(D, D, bias=False) for _ in range(3))
layer = GatedDeltaNet(D)
lq, lk, lv = w_query(h), w_key(h), w_value(h)
token_by_token = layer(h, lq, lk, lv)
layer_chunked = layer(h, lq, lk, lv, chunk=CHUNK)
conv_weight = layer.conv_query.weight[:, 0].detach()
print("## A Gated DeltaNet layer: convolution, norm and gate")
print("conv weights of q, channels 0-2 (taps t-3, t-2, t-1, t):")
print(conv_weight[:3, :4])
whole = torch.equal(short_conv(lq, conv_weight), short_conv_decode(lq, conv_weight))
print(f"conv(q) all at once equals token by token: {whole}")
print("token by token, rows 0-2, first 6 features:")
print(token_by_token[:3, :6])
print(f"the last row, token by token and chunked (chunks of {CHUNK}):")
print(token_by_token[-1, :6])
print(layer_chunked[-1, :6])
print(f"token by token and chunked agree within 1e-5: {agree(layer_chunked, token_by_token)}")
print(f"max |output| {token_by_token.abs().max()!s}")
print()

# ---- a hybrid stack: three Gated DeltaNet layers, one softmax layer -----------------

PATTERN = ("gated delta", "gated delta", "gated delta", "softmax")


class HybridLayer(nn.Module):
    """x + out_proj(mixer(RMSNorm(x))), the mixer Gated DeltaNet or causal softmax attention."""

    def __init__(self, mixer, d_model):
        super().__init__()
        self.mixer = mixer
        self.norm = nn.RMSNorm(d_model, eps=EPS)
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, d_model, bias=False)
        self.W_value = nn.Linear(d_model, d_model, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)
        self.delta = GatedDeltaNet(d_model) if mixer == "gated delta" else None

    def forward(self, x):
        h = self.norm(x)
        q, k, v = self.W_query(h), self.W_key(h), self.W_value(h)
        if self.delta is not None:
            mixed = self.delta(h, q, k, v)
        else:
            mixed = softmax_attention(q, k, v)
        return x + self.out_proj(mixed)

    def numbers_kept(self, tokens):
        d = self.W_query.out_features
        # a delta layer: its state and the last 3 inputs of its 3 convolutions
        return d * d + (KERNEL - 1) * 3 * d if self.mixer == "gated delta" else tokens * (d + d)


layers = [HybridLayer(mixer, D) for mixer in PATTERN]
x = torch.randn(T, D)
out = x
for layer in layers:
    out = layer(out)
print("## A hybrid stack: three Gated DeltaNet layers, one softmax layer")
print(f"layers: {', '.join(PATTERN)}")
print(f"each pre-norm and residual; {T} tokens x {D} features")
print("output, rows 0-2, first 6 features:")
print(out[:3, :6])
print("the last row, first 6 features:")
print(out[-1, :6])
print(f"max |output| {out.abs().max()!s}")
print(f"numbers kept per sequence, d_k = d_v = {D}:")
for n in (64, 1024, 32768):
    kept = [layer.numbers_kept(n) for layer in layers]
    print(f"  n = {n:5d}: layers {kept}, stack {sum(kept)}")
print()
