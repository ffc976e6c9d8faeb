"""Chapter 17: attention at inference time (PyTorch reference).

Chapter 15's tiny model (every layer global: RMSNorm, GQA, QK-norm, RoPE, softcap 5,
sinks, SwiGLU; no biases) serving requests:

  * a paged KV cache: a pool of fixed-size blocks, a block table per sequence; a
    token's key and value live in block table[t // B] at offset t % B; decoding gathers
    every layer's cache through the table, takes the model's cached step, and appends
    the new key and value (a fresh block when the last is full, a copy when the last is
    shared: copy-on-write);
  * prefix caching: a full block is keyed by its tokens and the key of the prefix before
    it; a request reuses the longest run of its prompt's full blocks (the last prompt
    token is always computed); the rest of the prompt goes through the model in one
    pass when nothing was found, token by token after a hit; freed blocks keep their
    contents until the pool hands them out again (free list: first in, first out);
  * every product one row at a time (batch-invariant), so decoding through the blocks
    gives the logits of decoding alone with a contiguous cache, bit for bit;
  * greedy speculative decoding: a draft (the target's embedding, first layers and
    head) proposes k tokens with its cached generation (batched products); the target,
    whose cache holds every written token but the last, runs that token and the
    proposals in one pass (one query row at a time) and gives its choice after each;
    the longest run it agrees with is kept, plus its own next token, and the rejected
    proposals are dropped from its cache; speculative sampling: the draft draws its tokens from
    softmax(logits) with multinomial, each is kept if torch.rand(1) falls below
    p(x)/q(x), the first rejected one is replaced by a draw from max(0, p - q)
    (multinomial normalises), and after k kept tokens the target's next token is drawn
    from p;
  * multi-head latent attention: a latent and a RoPE key shared by the heads per token;
    the naive path expands every latent to every head's key and value, the absorbed
    path folds W_UK into the query and W_UV after the weights, over a cache of latents;
    each path is printed, and the order of magnitude of their gap (its digits depend
    on the order in which the CPU's matrix products add, so they are not printed);
  * the bytes per token of the caches of published models (MHA, GQA, MQA, MLA), from
    their config.json files.

`--fixture PATH` writes the float32 bits of both MLA paths (outputs, latent and RoPE-key
caches) for a few seeds as JSON, and prints nothing else: the chapter's test `mla_bits`
compares each of our paths with PyTorch's bit for bit.

Gradients are off. Each step prints a `## ...` heading, its output and one empty line.
"""
import argparse
import json
import math
import platform

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
parser.add_argument("--fixture", metavar="PATH",
                    help="write the bits of both MLA paths' outputs and caches for a few seeds "
                         "to PATH as JSON")
ARGS = parser.parse_args()
SEED = ARGS.seed


def seed_or(default_seed):
    return default_seed if SEED is None else SEED


VOCAB, D_MODEL, N_HEADS, N_KV_HEADS, D_FF, N_LAYERS = 32, 32, 4, 2, 64, 4
HEAD_DIM = D_MODEL // N_HEADS
EPS = 1e-6
THETA, CAP = 10000.0, 5.0
DRAFT_LAYERS = 2
BLOCK_SIZE, N_BLOCKS = 4, 16
SYSTEM = [1, 5, 9, 13, 17, 21, 25, 29, 2, 6]
USER = [[3, 7], [11, 15, 19], [3, 7], [4]]
PROMPT = [0, 7, 14, 21, 28, 3]
N_NEW = 4
N_SPECULATE = 12
K = 3
MLA_D, MLA_HEADS, NOPE, ROPE, V_DIM, LATENT = 32, 4, 8, 4, 8, 16
MLA_TOKENS = 6
FIXTURE_SEEDS = [2026, 3, 7]


# ---- chapter 15's model, every layer global -------------------------------------------

def rope_tables(positions, head_dim):
    freqs = torch.tensor([1.0 / THETA ** (2 * i / head_dim) for i in range(head_dim // 2)],
                         dtype=torch.float64)
    angles = torch.tensor(positions, dtype=torch.float64)[:, None] * freqs[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().float(), angles.sin().float()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x, cos, sin):
    return x * cos + rotate_half(x) * sin


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


def rows(layer, x):
    return torch.cat([layer(x[:, i:i + 1]) for i in range(x.shape[1])], dim=1)


def softcap(scores, cap):
    return cap * torch.tanh((scores / cap).double()).float()


def softmax_with_sink(scores, sink):
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
        self.W_gate = nn.Linear(D_MODEL, N_HEADS * HEAD_DIM, bias=False)  # drawn, unused

    def qkv(self, x, positions, row_by_row=False):
        project = (lambda layer: rows(layer, x)) if row_by_row else (lambda layer: layer(x))
        q = self.q_norm(split_heads(project(self.W_query), N_HEADS))
        k = self.k_norm(split_heads(project(self.W_key), N_KV_HEADS))
        v = split_heads(project(self.W_value), N_KV_HEADS)
        cos, sin = rope_tables(positions, HEAD_DIM)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def weights(self, q, k):
        scores = q @ repeat_kv(k, N_HEADS // N_KV_HEADS).transpose(2, 3) * (1.0 / math.sqrt(HEAD_DIM))
        return softmax_with_sink(softcap(scores, CAP), self.sinks)

    def weights_masked(self, q, k, hidden):
        scores = q @ repeat_kv(k, N_HEADS // N_KV_HEADS).transpose(2, 3) * (1.0 / math.sqrt(HEAD_DIM))
        return softmax_with_sink(softcap(scores, CAP).masked_fill(hidden, -torch.inf), self.sinks)

    def forward(self, x, row_by_row=True):
        """Row by row: every query against exactly the keys it sees; or batched, masked."""
        t = x.shape[1]
        q, k, v = self.qkv(x, list(range(t)), row_by_row)
        v_rep = repeat_kv(v, N_HEADS // N_KV_HEADS)
        if not row_by_row:
            hidden = torch.tensor([[j > i for j in range(t)] for i in range(t)])
            return self.out_proj(merge_heads(self.weights_masked(q, k, hidden) @ v_rep)), k, v
        context = torch.cat([self.weights(q[:, :, i:i + 1], k[:, :, :i + 1]) @ v_rep[:, :, :i + 1]
                             for i in range(t)], dim=2)
        return rows(self.out_proj, merge_heads(context)), k, v

    def step(self, x_new, position, cache):
        q, k, v = self.qkv(x_new, [position])
        cache["k"] = torch.cat([cache["k"], k], dim=2)
        cache["v"] = torch.cat([cache["v"], v], dim=2)
        context = self.weights(q, cache["k"]) @ repeat_kv(cache["v"], N_HEADS // N_KV_HEADS)
        return self.out_proj(merge_heads(context))


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

    def forward(self, x, row_by_row=True):
        out, k, v = self.attn(self.attn_norm(x), row_by_row)
        h = x + out
        return h + self.ffn(self.ffn_norm(h), row_by_row), {"k": k, "v": v}

    def step(self, x_new, position, cache):
        h = x_new + self.attn.step(self.attn_norm(x_new), position, cache)
        return h + self.ffn(self.ffn_norm(h))


class TinyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.layers = nn.ModuleList([Layer() for _ in range(N_LAYERS)])
        self.final_norm = nn.RMSNorm(D_MODEL, eps=EPS)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, ids, row_by_row=True):
        """Logits [b, t, vocab] and every layer's cache; row by row (batch-invariant) or
        with PyTorch's batched products."""
        x = self.tok_emb(ids)
        caches = []
        for layer in self.layers:
            x, cache = layer(x, row_by_row)
            caches.append(cache)
        x = self.final_norm(x)
        return (rows(self.lm_head, x) if row_by_row else self.lm_head(x)), caches

    def step(self, token, position, caches):
        x = self.tok_emb(token)
        for layer, cache in zip(self.layers, caches):
            x = layer.step(x, position, cache)
        return self.lm_head(self.final_norm(x))[:, -1]


def generate_cached(model, prompt, n_new, row_by_row=True):
    logits, caches = model(prompt, row_by_row)
    last = logits[:, -1]
    ids = torch.cat([prompt, last.argmax(dim=-1, keepdim=True)], dim=1)
    steps = [last]
    for _ in range(1, n_new):
        position = ids.shape[1] - 1
        last = model.step(ids[:, position:], position, caches)
        ids = torch.cat([ids, last.argmax(dim=-1, keepdim=True)], dim=1)
        steps.append(last)
    return ids, torch.cat(steps)


# ---- the paged cache --------------------------------------------------------------------

class Block:
    def __init__(self):
        self.refs = 0
        self.tokens = []
        self.key = None
        self.slots = [[] for _ in range(N_LAYERS)]  # per layer: (key, value) per token


class Sequence:
    def __init__(self):
        self.tokens = []
        self.table = []


class BlockPool:
    def __init__(self, n_blocks, block_size):
        self.block_size = block_size
        self.blocks = [Block() for _ in range(n_blocks)]
        self.free = list(range(n_blocks))
        self.cached = {}
        self.lookups = self.hits = self.copies = 0

    def used(self):
        return len(self.blocks) - len(self.free)

    def allocate(self):
        if not self.free:
            raise RuntimeError(f"all {len(self.blocks)} blocks are in use")
        i = self.free.pop(0)
        key = self.blocks[i].key
        if key is not None and self.cached.get(key) == i:
            del self.cached[key]
        self.blocks[i] = Block()
        self.blocks[i].refs = 1
        return i

    def admit(self, prompt):
        seq, prefix = Sequence(), None
        before_last = prompt[:len(prompt) - 1]
        n_full = len(before_last) // self.block_size
        self.lookups += n_full
        for b in range(n_full):
            tokens = before_last[b * self.block_size:(b + 1) * self.block_size]
            key = (prefix, tuple(tokens))
            i = self.cached.get(key)
            if i is None:
                break
            if self.blocks[i].refs == 0:
                self.free.remove(i)
            self.blocks[i].refs += 1
            self.hits += 1
            seq.table.append(i)
            seq.tokens += tokens
            prefix = key
        return seq

    def append(self, seq, token, kv):
        position = len(seq.tokens)
        if not seq.table or position % self.block_size == 0:
            seq.table.append(self.allocate())
        elif self.blocks[seq.table[-1]].refs > 1:  # copy-on-write
            shared, copy = seq.table[-1], self.allocate()
            self.blocks[copy].tokens = list(self.blocks[shared].tokens)
            self.blocks[copy].slots = [list(s) for s in self.blocks[shared].slots]
            self.blocks[shared].refs -= 1
            seq.table[-1] = copy
            self.copies += 1
        block = self.blocks[seq.table[position // self.block_size]]
        block.tokens.append(token)
        for layer, pair in zip(block.slots, kv):
            layer.append(pair)
        seq.tokens.append(token)
        if len(block.tokens) == self.block_size:
            prefix = self.blocks[seq.table[-2]].key if len(seq.table) >= 2 else None
            block.key = (prefix, tuple(block.tokens))
            self.cached.setdefault(block.key, seq.table[-1])

    def fork(self, seq):
        for i in seq.table:
            self.blocks[i].refs += 1
        other = Sequence()
        other.tokens, other.table = list(seq.tokens), list(seq.table)
        return other

    def release(self, seq):
        for i in reversed(seq.table):
            self.blocks[i].refs -= 1
            if self.blocks[i].refs == 0:
                self.free.append(i)

    def gather(self, seq, layer):
        pairs = [self.blocks[seq.table[t // self.block_size]].slots[layer][t % self.block_size]
                 for t in range(len(seq.tokens))]
        return {"k": torch.cat([k for k, _ in pairs], dim=2), "v": torch.cat([v for _, v in pairs], dim=2)}


def step_paged(model, pool, seq, token):
    position = len(seq.tokens)
    caches = [pool.gather(seq, layer) for layer in range(len(model.layers))]
    logits = model.step(torch.tensor([[token]]), position, caches)
    pool.append(seq, token, [(c["k"][:, :, position:position + 1], c["v"][:, :, position:position + 1])
                             for c in caches])
    return logits


def prefill_paged(model, pool, prompt):
    seq = pool.admit(prompt)
    if not seq.tokens:
        logits, caches = model(torch.tensor([prompt]))
        for position, token in enumerate(prompt):
            pool.append(seq, token, [(c["k"][:, :, position:position + 1], c["v"][:, :, position:position + 1])
                                     for c in caches])
        return seq, logits[:, -1]
    logits = None
    for token in prompt[len(seq.tokens):]:
        logits = step_paged(model, pool, seq, token)
    return seq, logits


# ---- speculative decoding ---------------------------------------------------------------

def empty_caches():
    return [{"k": torch.zeros(1, N_KV_HEADS, 0, HEAD_DIM), "v": torch.zeros(1, N_KV_HEADS, 0, HEAD_DIM)}
            for _ in range(N_LAYERS)]


def target_pass(model, tokens, start, caches):
    """The logits after each of `tokens` at positions start.., against the caches (which
    hold the `start` tokens before them and receive theirs), one query row at a time."""
    n = tokens.shape[1]
    x = model.tok_emb(tokens)
    for layer, cache in zip(model.layers, caches):
        x_norm = layer.attn_norm(x)
        q, k, v = layer.attn.qkv(x_norm, list(range(start, start + n)), row_by_row=True)
        cache["k"] = torch.cat([cache["k"], k], dim=2)
        cache["v"] = torch.cat([cache["v"], v], dim=2)
        v_rep = repeat_kv(cache["v"], N_HEADS // N_KV_HEADS)
        seen = lambda i: torch.arange(start + i + 1)
        context = torch.cat([layer.attn.weights(q[:, :, i:i + 1], cache["k"][:, :, seen(i)]) @ v_rep[:, :, seen(i)]
                             for i in range(n)], dim=2)
        h = x + rows(layer.attn.out_proj, merge_heads(context))
        x = h + layer.ffn(layer.ffn_norm(h), row_by_row=True)
    return rows(model.lm_head, model.final_norm(x))


def truncate(caches, length):
    for cache in caches:
        cache["k"], cache["v"] = cache["k"][:, :, :length], cache["v"][:, :, :length]


def accepted(drafted, target):
    n = 0
    while n < len(drafted) and drafted[n] == target[n]:
        n += 1
    return n


def prefilled(target, prompt):
    """The target's caches holding every prompt token but the last."""
    caches = empty_caches()
    if prompt.shape[1] > 1:
        target_pass(target, prompt[:, :-1], 0, caches)
    return caches


def speculate_greedy(draft, target, prompt, n_new, k):
    ids, rounds = prompt, []
    caches = prefilled(target, prompt)
    while ids.shape[1] < prompt.shape[1] + n_new:
        length = ids.shape[1]
        k_now = min(k, prompt.shape[1] + n_new - length - 1)
        proposal = generate_cached(draft, ids, k_now, row_by_row=False)[0] if k_now > 0 else ids
        tokens = proposal[:, length - 1:length + k_now]
        choices = target_pass(target, tokens, length - 1, caches).argmax(dim=-1)
        drafted = tokens[0, 1:].tolist()
        n = accepted(drafted, choices[0].tolist())
        ids = torch.cat([ids, choices[:, :n + 1]], dim=1)
        truncate(caches, length + n)
        rounds.append((drafted, choices[0].tolist(), n))
    return ids, rounds


def accept_or_replace(p, q, drafted):
    """None if a uniform draw falls below p(x)/q(x), else a draw from max(0, p - q)."""
    ratio = p[0, drafted] / q[0, drafted]
    r = torch.rand(1)
    if r[0] < ratio:
        return None
    return (p - q).clamp_min(0.0).multinomial(1).item()


def speculate_sampled(draft, target, prompt, n_new, k):
    ids, rounds = prompt, []
    caches = prefilled(target, prompt)
    while ids.shape[1] < prompt.shape[1] + n_new:
        length = ids.shape[1]
        k_now = min(k, prompt.shape[1] + n_new - length - 1)
        candidate, qs = ids, []
        for _ in range(k_now):
            logits, _ = draft(candidate, row_by_row=False)
            q = torch.softmax(logits[:, -1], dim=-1)
            candidate = torch.cat([candidate, q.multinomial(1)], dim=1)
            qs.append(q)
        tokens = candidate[:, length - 1:length + k_now]
        ps = torch.softmax(target_pass(target, tokens, length - 1, caches), dim=-1)
        drafted = tokens[0, 1:].tolist()
        written, replaced = [], None
        for i, q in enumerate(qs):
            replaced = accept_or_replace(ps[:, i], q, drafted[i])
            written.append(drafted[i] if replaced is None else replaced)
            if replaced is not None:
                break
        if replaced is None:
            written.append(ps[:, k_now].multinomial(1).item())
        ids = torch.cat([ids, torch.tensor([written])], dim=1)
        truncate(caches, length + len(written) - 1)
        rounds.append((drafted, written, len(written) - 1))
    return ids, rounds


def rates(rounds):
    drafted = sum(len(d) for d, _, _ in rounds)
    kept = sum(n for _, _, n in rounds)
    return kept / drafted, sum(n + 1 for _, _, n in rounds) / len(rounds)


# ---- multi-head latent attention ----------------------------------------------------------

class MLA(nn.Module):
    """DeepSeek-V3's reference layout without query compression: wq, wkv_a (latent and
    RoPE key), kv_norm, wkv_b (per head W_UK rows then W_UV rows), wo."""

    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(MLA_D, MLA_HEADS * (NOPE + ROPE), bias=False)
        self.wkv_a = nn.Linear(MLA_D, LATENT + ROPE, bias=False)
        self.kv_norm = nn.RMSNorm(LATENT, eps=EPS)
        self.wkv_b = nn.Linear(LATENT, MLA_HEADS * (NOPE + V_DIM), bias=False)
        self.wo = nn.Linear(MLA_HEADS * V_DIM, MLA_D, bias=False)
        self.scale = 1.0 / math.sqrt(NOPE + ROPE)

    def queries(self, x, positions):
        q = split_heads(self.wq(x), MLA_HEADS)
        cos, sin = rope_tables(positions, ROPE)
        return q[..., :NOPE], apply_rope(q[..., NOPE:], cos, sin)

    def compress(self, x, positions):
        kv = self.wkv_a(x)
        cos, sin = rope_tables(positions, ROPE)
        return self.kv_norm(kv[..., :LATENT]), apply_rope(kv[..., LATENT:], cos, sin)

    def forward_naive(self, x):
        t = x.shape[1]
        q_nope, q_pe = self.queries(x, list(range(t)))
        latent, rope_key = self.compress(x, list(range(t)))
        kv = split_heads(self.wkv_b(latent), MLA_HEADS)
        k_nope, v = kv[..., :NOPE], kv[..., NOPE:]
        k_pe = rope_key.unsqueeze(1).expand(x.shape[0], MLA_HEADS, t, ROPE)
        q = torch.cat([q_nope, q_pe], dim=-1)
        k = torch.cat([k_nope, k_pe], dim=-1)
        scores = q @ k.transpose(2, 3) * self.scale
        future = torch.tensor([[j > i for j in range(t)] for i in range(t)])
        scores = scores.masked_fill(future, -torch.inf)
        return self.wo(merge_heads(torch.softmax(scores, dim=-1) @ v))

    def step_absorbed(self, x_new, position, cache):
        q_nope, q_pe = self.queries(x_new, [position])
        latent, rope_key = self.compress(x_new, [position])
        if cache:
            latent = torch.cat([cache["latent"], latent], dim=1)
            rope_key = torch.cat([cache["rope_key"], rope_key], dim=1)
        cache["latent"], cache["rope_key"] = latent, rope_key
        w = self.wkv_b.weight.view(MLA_HEADS, NOPE + V_DIM, LATENT)
        w_uk, w_uv = w[:, :NOPE], w[:, NOPE:]
        q_latent = q_nope @ w_uk
        latent, rope_key = latent.unsqueeze(1), rope_key.unsqueeze(1)
        scores = (q_latent @ latent.transpose(2, 3) + q_pe @ rope_key.transpose(2, 3)) * self.scale
        mixed = torch.softmax(scores, dim=-1) @ latent
        return self.wo(merge_heads(mixed @ w_uv.transpose(1, 2)))


# ---- the fixture of bits -----------------------------------------------------------------

def bits(t):
    """The float32 bit patterns of t in row-major order, as unsigned 32-bit ints."""
    return [b & 0xFFFFFFFF for b in t.contiguous().view(torch.int32).flatten().tolist()]


def cpu_name():
    """The processor's model name, as Linux reports it (or the platform's word for it)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


if ARGS.fixture:
    cases = []
    for seed in FIXTURE_SEEDS:
        torch.manual_seed(seed)
        mla = MLA()
        x = torch.randn(1, MLA_TOKENS, MLA_D)
        cache = {}
        absorbed = torch.cat([mla.step_absorbed(x[:, t:t + 1], t, cache)
                              for t in range(MLA_TOKENS)], dim=1)
        cases.append({
            "seed": seed,
            "naive": bits(mla.forward_naive(x)),
            "absorbed": bits(absorbed),
            "latent": bits(cache["latent"]),
            "rope_key": bits(cache["rope_key"]),
        })
    with open(ARGS.fixture, "w") as f:
        json.dump({
            "made_by": "python reference/ch17_inference.py --fixture "
                       "chapters/ch17-inference/tests/fixtures/mla_bits.json, "
                       f"PyTorch {torch.__version__} on {cpu_name()} "
                       f"(PyTorch's CPU capability: {torch.backends.cpu.get_cpu_capability()})",
            "torch": torch.__version__,
            "shapes": {"naive": [1, MLA_TOKENS, MLA_D], "absorbed": [1, MLA_TOKENS, MLA_D],
                       "latent": [1, MLA_TOKENS, LATENT], "rope_key": [1, MLA_TOKENS, ROPE]},
            "cases": cases,
        }, f)
        f.write("\n")
    raise SystemExit(0)


# ---- the story ----------------------------------------------------------------------------

print("# Chapter 17: Attention at inference time")
print()

torch.manual_seed(seed_or(2026))
target = TinyModel()
torch.manual_seed(seed_or(2026))
draft = TinyModel()
del draft.layers[DRAFT_LAYERS:]
print(f"## Two models (manual_seed({seed_or(2026)}))")
print(f"target: vocab {VOCAB}, d_model {D_MODEL}, {N_LAYERS} layers, all global")
print(f"        {N_HEADS} query heads, {N_KV_HEADS} key/value heads, d_ff {D_FF}")
print(f"draft: the target's embedding, its first {DRAFT_LAYERS} of {N_LAYERS} layers, final norm and head")
print()

pool = BlockPool(N_BLOCKS, BLOCK_SIZE)
prompts = [SYSTEM + user for user in USER]
seqs, nexts, logits = [], [], []
for prompt in prompts:
    seq, last = prefill_paged(target, pool, prompt)
    nexts.append(last.argmax(dim=-1).item())
    logits.append([last])
    seqs.append(seq)
print(f"## A paged cache: {N_BLOCKS} blocks of {BLOCK_SIZE} tokens, four requests with one system prompt")
print(f"system prompt: {SYSTEM}")
for r, (prompt, seq) in enumerate(zip(prompts, seqs)):
    print(f"request {r}: {len(prompt)} tokens, block table {seq.table}")
print(f"prefix cache: {pool.hits} of {pool.lookups} full prompt blocks found "
      f"(hit rate {pool.hits / pool.lookups:.2f})")
print(f"blocks in use: {pool.used()} of {N_BLOCKS}")
print()

for _ in range(1, N_NEW):
    for r, seq in enumerate(seqs):
        last = step_paged(target, pool, seq, nexts[r])
        nexts[r] = last.argmax(dim=-1).item()
        logits[r].append(last)
print(f"## Decoding the batch, {N_NEW} tokens each, through the block tables")
all_equal = True
for r, (prompt, seq) in enumerate(zip(prompts, seqs)):
    alone_ids, alone_logits = generate_cached(target, torch.tensor([prompt]), N_NEW)
    tokens = seq.tokens[len(prompt):] + [nexts[r]]
    all_equal &= tokens == alone_ids[0, len(prompt):].tolist() and torch.equal(torch.cat(logits[r]), alone_logits)
    print(f"request {r}: new tokens {tokens}, block table {seq.table}")
unshared = sum(-(-len(s.tokens) // BLOCK_SIZE) for s in seqs)
print(f"blocks in use: {pool.used()} (without sharing: {unshared})")
print(f"tokens and logits equal to decoding each request alone with a contiguous cache: {all_equal}")
for seq in seqs:
    pool.release(seq)
print(f"after the batch ends: {pool.used()} blocks in use")
again = pool.admit(prompts[0])
print(f"request 0 again: {len(again.tokens)} of its prompt tokens found in the freed blocks, table {again.table}")
pool.release(again)
print()

pool = BlockPool(N_BLOCKS, BLOCK_SIZE)
first, last = prefill_paged(target, pool, PROMPT)
second = pool.fork(first)
token = last.argmax(dim=-1).item()
other = (token + 1) % VOCAB
print("## Copy-on-write: two answers to one prompt")
print(f"prompt {PROMPT}: table {first.table}, forked: table {second.table}")
print(f"references per block: {[pool.blocks[b].refs for b in first.table]}")
step_paged(target, pool, first, token)
print(f"first answer appends {token}: table {first.table} (copies so far: {pool.copies})")
step_paged(target, pool, second, other)
print(f"second answer appends {other}: table {second.table} (copies so far: {pool.copies})")
same = torch.equal(pool.gather(first, 0)["k"][:, :, :len(PROMPT)], pool.gather(second, 0)["k"][:, :, :len(PROMPT)])
print(f"both still read the prompt's keys, bit for bit: {same}")
print()

prompt = torch.tensor([PROMPT])
spec_ids, rounds = speculate_greedy(draft, target, prompt, N_SPECULATE, K)
plain_ids, _ = generate_cached(target, prompt, N_SPECULATE)
print(f"## Greedy speculative decoding, {K} draft tokens per target pass")
for i, (drafted, choices, n) in enumerate(rounds):
    print(f"pass {i + 1}: draft {drafted}, target {choices}, kept {n} + 1")
print("speculative:")
print(spec_ids)
print("plain greedy:")
print(plain_ids)
print(f"equal: {torch.equal(spec_ids, plain_ids)}")
rate, per_pass = rates(rounds)
print(f"acceptance rate {rate:.2f}, {per_pass:.2f} tokens per target pass "
      f"({len(rounds)} passes for {N_SPECULATE} tokens)")
print()

torch.manual_seed(seed_or(17))
sampled_ids, rounds = speculate_sampled(draft, target, prompt, N_SPECULATE, K)
print(f"## Speculative sampling, {K} draft tokens per target pass (manual_seed({seed_or(17)}))")
for i, (drafted, written, n) in enumerate(rounds):
    print(f"pass {i + 1}: draft {drafted}, kept {n}, wrote {written}")
print("sampled:")
print(sampled_ids)
rate, per_pass = rates(rounds)
print(f"acceptance rate {rate:.2f}, {per_pass:.2f} tokens per target pass")
print()

print("## Draft length against target passes")
for k in range(1, 5):
    rate, per_pass = rates(speculate_greedy(draft, target, prompt, N_SPECULATE, k)[1])
    print(f"k = {k}: acceptance rate {rate:.2f}, {per_pass:.2f} tokens per target pass")
print()


torch.manual_seed(seed_or(2026))
mla = MLA()
x = torch.randn(1, MLA_TOKENS, MLA_D)
naive = mla.forward_naive(x)
cache = {}
absorbed = torch.cat([mla.step_absorbed(x[:, t:t + 1], t, cache) for t in range(MLA_TOKENS)], dim=1)
print(f"## Multi-head latent attention (manual_seed({seed_or(2026)}))")
print(f"d_model {MLA_D}, {MLA_HEADS} heads, query/key {NOPE} + RoPE {ROPE} per head, "
      f"value {V_DIM} per head, latent {LATENT}")
print(f"naive cache per token: {MLA_HEADS} heads x ({NOPE} + {ROPE}) key + {MLA_HEADS} heads x {V_DIM} value "
      f"= {MLA_HEADS * (NOPE + ROPE + V_DIM)} values")
print(f"latent cache per token: latent {LATENT} + RoPE key {ROPE} = {LATENT + ROPE} values")
print(f"cached latent: {cache['latent'].shape}")
print(f"cached RoPE key: {cache['rope_key'].shape}")
print()

print("## The naive path and the absorbed path")
print("naive (every latent expanded), last token, first 6 features:")
print(naive[:, -1, :6])
print("absorbed (W_UK in the query, W_UV after the weights), last token, first 6 features:")
print(absorbed[:, -1, :6])
print(f"equal: {torch.equal(naive, absorbed)}")
gap = (naive - absorbed).abs().max().item()
order = math.floor(math.log10(gap))
print(f"largest difference over all tokens: between 1e{order} and 1e{order + 1}")
print()

# Hugging Face config.json: num_hidden_layers, num_key_value_heads (Falcon: multi_query),
# hidden_size / num_attention_heads; DeepSeek: kv_lora_rank, qk_rope_head_dim.
CARDS = [
    ("Llama 2 7B", "MHA", 32, ("kv", 32, 128)),
    ("Llama 3 8B", "GQA", 32, ("kv", 8, 128)),
    ("Llama 3 70B", "GQA", 80, ("kv", 8, 128)),
    ("Falcon 7B", "MQA", 32, ("kv", 1, 64)),
    ("DeepSeek-V2", "MLA", 60, ("latent", 512, 64)),
    ("DeepSeek-V3", "MLA", 61, ("latent", 512, 64)),
]
print("## Cache per token, bfloat16")
print("MHA, GQA, MQA: keys and values, 2 x key/value heads x head width per layer")
print("MLA: the latent and the shared RoPE key, kv_lora_rank + qk_rope_head_dim per layer")
for name, kind, layers, (what, a, b) in CARDS:
    if what == "kv":
        per_layer, values = f"(2 x {a} x {b})", 2 * a * b
    else:
        per_layer, values = f"({a} + {b})", a + b
    print(f"{name} ({kind}): {layers} layers x {per_layer} values x 2 bytes = {layers * values * 2} bytes")
print()
