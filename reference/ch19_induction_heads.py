"""Chapter 19: induction heads: what trained heads do (PyTorch reference).

A two-layer, attention-only transformer (token and learned position embeddings, two
blocks of `x = x + attention(x)` with fused QKV, two causal heads each, no LayerNorm, no
MLP, an unembedding) learns to continue repeats: every sequence of 32 random tokens
(24 ids) ends with a copy of the k tokens just before it, k from 6 to 15 drawn per
sequence. The loss sits on a plateau, then falls within a few hundred steps while a
previous-token head forms in layer 0 and an induction head in layer 1 (Olsson et al.,
"In-context Learning and Induction Heads", 2022).

Every number comes from the default generator after torch.manual_seed(S) (S = 7 unless
--seed S), in this order: the parameters (tok, pos, block 0's qkv and proj, block 1's qkv
and proj, unembed), the evaluation batch (256 sequences: randint ids, then randint
lengths), the shown sequence, then one batch per training step. The fixed-offset run
(every sequence a random half of 16 tokens twice) reseeds with S + 1 and draws its model,
its evaluation batch and its batches the same way.

Training: F.cross_entropy over every next token, AdamW(lr=3e-3, weight_decay=0,
fused=True), batch 64, one thread. The fused CPU kernel is AdamW's update written out in
float32 with the correctly rounded square root (the for-loop version takes MKL's vector
square root, 1 ulp off on a few values in a thousand), so the chapter can reproduce every
bit of it.

The scores are computed in float64 from the float32 attention weights and log-probabilities
and printed with :.4f, so the order of the float64 sums cannot reach the text:
  repeated-token loss: mean -log p of the repeat's tokens, its first token left out
  previous-token score: a layer-0 head's mean weight from position i to i - 1
  induction score: a layer-1 head's mean weight from a query i in the repeat to i - k + 1
--dump PATH writes every step's training loss as its float32 bits (one hex word a line),
for measuring how long another implementation stays bit-identical.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def seed_value(text):
    """A seed as torch.manual_seed accepts it and the chapter binary too: 0 to 2**64 - 2."""
    seed = int(text)
    if not 0 <= seed < 2**64 - 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 2")
    return seed


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--seed", type=seed_value, metavar="S",
                    help="use S for the manual_seed call instead of 7")
parser.add_argument("--steps", type=int, default=3000, metavar="N",
                    help="train the variable-length run N steps (default 3000)")
parser.add_argument("--fixed-steps", type=int, default=300, metavar="N",
                    help="train the fixed-offset run N steps (default 300)")
parser.add_argument("--dump", metavar="PATH", help="write every step's loss bits to PATH")
parser.add_argument("--threads", type=int, default=1, metavar="T",
                    help="PyTorch's threads (default 1, the run the chapter prints; more are "
                         "for timing)")
ARGS = parser.parse_args()
SEED = 7 if ARGS.seed is None else ARGS.seed

torch.set_num_threads(ARGS.threads)

VOCAB, TOKENS, D_MODEL, HEADS = 24, 32, 32, 2
HEAD_DIM = D_MODEL // HEADS
BATCH, LR = 64, 3e-3
K_MIN, K_MAX = 6, 15
HALF = TOKENS // 2
EVAL = 256
LOG_EVERY = 100


class Attention(nn.Module):
    """Causal multi-head attention with one fused projection for queries, keys and values."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.register_buffer("hidden", torch.triu(torch.ones(TOKENS, TOKENS, dtype=torch.bool), 1))
        self.weights = None

    def forward(self, x, ablate=None):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(D_MODEL, dim=-1)
        q, k, v = (z.view(b, t, HEADS, HEAD_DIM).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(2, 3)
        scores = scores.masked_fill(self.hidden[:t, :t], -torch.inf)
        weights = torch.softmax(scores / HEAD_DIM**0.5, dim=-1)
        self.weights = weights.detach()
        heads = weights @ v
        if ablate is not None:
            heads = heads.clone()
            heads[:, ablate] = 0.0
        return self.proj(heads.transpose(1, 2).reshape(b, t, D_MODEL))


class AttentionOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(TOKENS, D_MODEL)
        self.blocks = nn.ModuleList([Attention(), Attention()])
        self.unembed = nn.Linear(D_MODEL, VOCAB)

    def forward(self, ids, ablate=(None, None)):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        for block, head in zip(self.blocks, ablate):
            x = x + block(x, head)
        return self.unembed(x)


def variable_batch(n):
    """n sequences whose last k tokens repeat the k before them, k drawn per sequence."""
    ids = torch.randint(0, VOCAB, (n, TOKENS))
    ks = torch.randint(K_MIN, K_MAX + 1, (n,))
    for i, k in enumerate(ks.tolist()):
        ids[i, TOKENS - k:] = ids[i, TOKENS - 2 * k:TOKENS - k]
    return ids, ks


def fixed_batch(n):
    """n sequences made of a random half of 16 tokens, twice."""
    half = torch.randint(0, VOCAB, (n, HALF))
    return torch.cat([half, half], dim=1), torch.full((n,), HALF)


def scores(model, ids, ks, ablate=(None, None)):
    """Repeated-token loss, previous-token score per layer-0 head, induction score per
    layer-1 head, in float64."""
    with torch.no_grad():
        log_probs = F.log_softmax(model(ids, ablate), dim=-1).double()
        w0 = model.blocks[0].weights.double()
        w1 = model.blocks[1].weights.double()
    loss, count = 0.0, 0
    induction = torch.zeros(HEADS, dtype=torch.float64)
    for i, k in enumerate(ks.tolist()):
        targets = torch.arange(TOKENS - k + 1, TOKENS)
        loss -= log_probs[i, targets - 1, ids[i, targets]].sum().item()
        count += k - 1
        queries = torch.arange(TOKENS - k, TOKENS)
        induction += w1[i, :, queries, queries - k + 1].mean(dim=-1)
    positions = torch.arange(1, TOKENS)
    previous = w0[:, :, positions, positions - 1].mean(dim=(0, 2))
    return loss / count, previous.tolist(), (induction / len(ks)).tolist()


def train(model, draw, steps, eval_ids, eval_ks, losses):
    """Trains `steps` steps; returns the log lines (every LOG_EVERY steps)."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0, fused=True)
    lines = []
    for step in range(1, steps + 1):
        ids, _ = draw(BATCH)
        logits = model(ids)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % LOG_EVERY == 0:
            rep, prev, ind = scores(model, eval_ids, eval_ks)
            lines.append(f"{step:5d}  {loss.item():.4f}  {rep:.4f}   {prev[0]:.4f} {prev[1]:.4f}"
                         f"   {ind[0]:.4f} {ind[1]:.4f}")
    return lines


HEADER = " step    loss  repeat   prev h0 prev h1   ind h0  ind h1"


def strongest_keys(weights, k):
    """For every query of the repeat, the key it weighs most and that weight."""
    out = []
    for q in range(TOKENS - k, TOKENS):
        w, key = weights[q, : q + 1].max(dim=-1)
        out.append(f"{q}->{key.item()} {w.item():.2f}")
    return out


print("# Chapter 19: Induction heads: what trained heads do")
print()

torch.manual_seed(SEED)
model = AttentionOnly()
eval_ids, eval_ks = variable_batch(EVAL)
shown_ids, shown_ks = variable_batch(1)
k = shown_ks[0].item()

print("## The data: a repeat of varying length at the end")
print(f"segment length k = {k}")
print("tokens:")
print(" ".join(str(t) for t in shown_ids[0].tolist()))
print(f"the last {k} tokens repeat tokens {TOKENS - 2 * k} to {TOKENS - k - 1}")
print()

rep, prev, ind = scores(model, eval_ids, eval_ks)
print("## Before training")
print(f"repeated-token loss: {rep:.4f} (ln 24 = {math.log(VOCAB):.4f})")
print(f"previous-token score: {prev[0]:.4f} {prev[1]:.4f}")
print(f"induction score: {ind[0]:.4f} {ind[1]:.4f}")
print()

losses = []
lines = train(model, variable_batch, ARGS.steps, eval_ids, eval_ks, losses)
print("## Training: a plateau, then a sudden drop")
print(HEADER)
for line in lines:
    print(line)
print()

with torch.no_grad():
    model(shown_ids)
print("## Where the heads look in the repeat")
for layer in range(2):
    for h in range(HEADS):
        weights = model.blocks[layer].weights[0, h]
        print(f"layer {layer} head {h}:", " ".join(strongest_keys(weights, k)))
print()

print("## Zeroing one head at a time")
rep, _, _ = scores(model, eval_ids, eval_ks)
print(f"no head zeroed: repeated-token loss {rep:.4f}")
for layer in range(2):
    for h in range(HEADS):
        ablate = (h, None) if layer == 0 else (None, h)
        rep, _, _ = scores(model, eval_ids, eval_ks, ablate)
        print(f"layer {layer} head {h} zeroed: repeated-token loss {rep:.4f}")
print()

print("## What the heads look for and what they write")
with torch.no_grad():
    pos = model.pos.weight
    qkv0 = model.blocks[0].qkv
    q0 = pos @ qkv0.weight[:D_MODEL].T + qkv0.bias[:D_MODEL]
    k0 = pos @ qkv0.weight[D_MODEL:2 * D_MODEL].T + qkv0.bias[D_MODEL:2 * D_MODEL]
    for h in range(HEADS):
        cols = slice(h * HEAD_DIM, (h + 1) * HEAD_DIM)
        qk = q0[:, cols] @ k0[:, cols].T
        back = sum(1 for i in range(1, TOKENS) if qk[i, : i + 1].argmax().item() == i - 1)
        print(f"layer 0 head {h}: position's query finds the position one back "
              f"for {back} of {TOKENS - 1} positions")
    emb = model.tok.weight
    for layer in range(2):
        block = model.blocks[layer]
        for h in range(HEADS):
            rows = slice(2 * D_MODEL + h * HEAD_DIM, 2 * D_MODEL + (h + 1) * HEAD_DIM)
            cols = slice(h * HEAD_DIM, (h + 1) * HEAD_DIM)
            ov = emb @ block.qkv.weight[rows].T @ block.proj.weight[:, cols].T
            logits = ov @ model.unembed.weight.T
            copied = sum(1 for t in range(VOCAB) if logits[t].argmax().item() == t)
            print(f"layer {layer} head {h}: its likeliest output is the token it reads, "
                  f"for {copied} of {VOCAB} tokens")
print()

torch.manual_seed(SEED + 1)
fixed = AttentionOnly()
fixed_eval_ids, fixed_eval_ks = fixed_batch(EVAL)
fixed_losses = []
lines = train(fixed, fixed_batch, ARGS.fixed_steps, fixed_eval_ids, fixed_eval_ks, fixed_losses)
print("## The shortcut: repeats that always start at position 16")
print(HEADER)
for line in lines:
    print(line)
print()

if ARGS.dump:
    import struct
    with open(ARGS.dump, "w") as f:
        for loss in losses:
            f.write(struct.pack(">f", loss).hex() + "\n")
