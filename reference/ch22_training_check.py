"""Chapter 22: the two models and their training, checked (PyTorch reference).

Builds chapter 22's two models of one size from the course's layers, as the chapter does,
and trains them as nanoGPT trains its baby GPT, on one thread (torch.set_num_threads(1)):

  gpt2   token and position tables; blocks of x + attn(ln_1(x)), x + mlp(ln_2(x)) with
         chapter 7's attention (W_query, W_key, W_value, out_proj; the keys projected
         first), LayerNorm and Linear without bias, the tanh GELU MLP of 4·d_model; a
         last LayerNorm; the token table as the head.
  llama  a token table; layers of x + attn(RMSNorm(x)), x + SwiGLU(RMSNorm(x)) with RoPE
         (base 10 000, tables in float64 rounded to float32) on the queries and keys, the
         hand-written RMSNorm x * rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
         SwiGLU of width 8·d_model/3 rounded up to a multiple of 8; a last RMSNorm; the
         token table as the head.

The attention core is chapter 10's, written out (not SDPA): scores q @ kᵀ, the future
masked with -inf, divided by math.sqrt(head_dim), softmax, @ v.

After torch.manual_seed(S) (S = 1337 unless --seed S) the modules are built in order
(PyTorch's default draws), then every matrix is drawn again in named_parameters() order,
normal(0, 0.02), the projections into the residual stream (out_proj, c_proj, w_down)
normal(0, 0.02/sqrt(2·n_layers)) (nanoGPT's initialisation). Then one batch per step,
nanoGPT's get_batch: torch.randint(len(data) - context, (batch,)).

Training: F.cross_entropy over every position; clip_grad_norm_(1.0); AdamW(betas=(0.9,
0.99), fused=True) with weight decay 0.1 on the matrices and none on the norms' weights;
the learning rate warms up for 10 steps to 1e-3, then a cosine down to 1e-4 at the last
step (nanoGPT's get_lr). The data is a fixed text (Shakespeare's sonnet 18) as character
ids, the vocabulary its sorted distinct characters.

Writes (--json PATH, default the chapter's tests/fixtures/training.json) for the tiny
size (2 layers, 2 heads, width 32, context 16, batch 4): the loss of the first step and
every parameter's gradient there (float32 bits), a checksum of the initial weights, and the
losses of 60 steps (bits and :.4f); for the baby size (4 layers, 4 heads, width 128,
context 64, batch 12), the losses of its first steps. The processor and PyTorch's CPU
build are recorded: the bits are those of that platform.
"""
import argparse
import json
import math
import os
import platform
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = """Shall I compare thee to a summer's day?
Thou art more lovely and more temperate:
Rough winds do shake the darling buds of May,
And summer's lease hath all too short a date;
Sometime too hot the eye of heaven shines,
And often is his gold complexion dimm'd;
And every fair from fair sometime declines,
By chance or nature's changing course untrimm'd;
But thy eternal summer shall not fade,
Nor lose possession of that fair thou ow'st;
Nor shall death brag thou wander'st in his shade,
When in eternal lines to time thou grow'st:
So long as men can breathe or eyes can see,
So long lives this, and this gives life to thee.
"""

SIZES = {
    "tiny": dict(context=16, d_model=32, n_layers=2, n_heads=2, batch=4),
    "baby": dict(context=64, d_model=128, n_layers=4, n_heads=4, batch=12),
}
STEPS = {"tiny": 60, "baby": 8}
LR, MIN_LR, WARMUP, WEIGHT_DECAY, BETAS, GRAD_CLIP = 1e-3, 1e-4, 10, 0.1, (0.9, 0.99), 1.0


def seed_value(text):
    value = int(text, 0)
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 2**64 - 1")
    return value


def made_on():
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return name


def split_heads(x, heads):
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def merge_heads(x):
    b, h, t, hd = x.shape
    return x.transpose(1, 2).contiguous().view(b, t, h * hd)


def attention_core(q, k, v, hidden):
    """Chapter 10's core: mask, then divide by sqrt(head_dim), softmax, mix the values."""
    scores = q @ k.transpose(-2, -1)
    scores = scores.masked_fill(hidden, float("-inf"))
    weights = torch.softmax(scores / math.sqrt(k.size(-1)), dim=-1)
    return weights @ v


def causal(n):
    return torch.ones(n, n).triu(1).bool()


class MultiHeadAttention(nn.Module):
    """Chapter 7's attention without biases."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.W_query = nn.Linear(d, d, bias=False)
        self.W_key = nn.Linear(d, d, bias=False)
        self.W_value = nn.Linear(d, d, bias=False)
        self.out_proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        keys = split_heads(self.W_key(x), self.heads)
        queries = split_heads(self.W_query(x), self.heads)
        values = split_heads(self.W_value(x), self.heads)
        context = attention_core(queries, keys, values, causal(x.size(1)))
        return self.out_proj(merge_heads(context))


class Mlp(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d, bias=False)
        self.c_proj = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, bias=False)
        self.attn = MultiHeadAttention(d, heads)
        self.ln_2 = nn.LayerNorm(d, bias=False)
        self.mlp = Mlp(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt2(nn.Module):
    def __init__(self, vocab, c):
        super().__init__()
        d = c["d_model"]
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(c["context"], d)
        self.blocks = nn.ModuleList(Block(d, c["n_heads"]) for _ in range(c["n_layers"]))
        self.ln_f = nn.LayerNorm(d, bias=False)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.size(1)))
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(tokens, head_dim, theta=10000.0):
    freqs = [1.0 / theta ** ((2 * i) / head_dim) for i in range(head_dim // 2)]
    cos, sin = [], []
    for p in range(tokens):
        for _half in range(2):
            for f in freqs:
                cos.append(math.cos(p * f))
                sin.append(math.sin(p * f))
    shape = (tokens, head_dim)
    return (torch.tensor(cos, dtype=torch.float32).view(shape),
            torch.tensor(sin, dtype=torch.float32).view(shape))


def rotate_half(x):
    half = x.size(-1) // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, cos, sin):
    return x * cos + rotate_half(x) * sin


class LlamaAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.w_query = nn.Linear(d, d, bias=False)
        self.w_key = nn.Linear(d, d, bias=False)
        self.w_value = nn.Linear(d, d, bias=False)
        self.out_proj = nn.Linear(d, d, bias=False)

    def forward(self, x):
        t = x.size(1)
        q = split_heads(self.w_query(x), self.heads)
        k = split_heads(self.w_key(x), self.heads)
        v = split_heads(self.w_value(x), self.heads)
        cos, sin = rope_tables(t, q.size(-1))
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        return self.out_proj(merge_heads(attention_core(q, k, v, causal(t))))


class SwiGLU(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.w_gate = nn.Linear(d, d_ff, bias=False)
        self.w_up = nn.Linear(d, d_ff, bias=False)
        self.w_down = nn.Linear(d_ff, d, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Layer(nn.Module):
    def __init__(self, d, heads, d_ff):
        super().__init__()
        self.attn_norm = RMSNorm(d)
        self.attn = LlamaAttention(d, heads)
        self.ffn_norm = RMSNorm(d)
        self.ffn = SwiGLU(d, d_ff)

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.ffn(self.ffn_norm(x))


def swiglu_width(d):
    """8·d/3 rounded up, then up to a multiple of 8 (344 for a width of 128)."""
    width = -(-8 * d // 3)
    return -(-width // 8) * 8


class Llama(nn.Module):
    def __init__(self, vocab, c):
        super().__init__()
        d = c["d_model"]
        self.wte = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(
            Layer(d, c["n_heads"], swiglu_width(d)) for _ in range(c["n_layers"]))
        self.norm = RMSNorm(d)

    def forward(self, ids):
        x = self.wte(ids)
        for layer in self.layers:
            x = layer(x)
        return F.linear(self.norm(x), self.wte.weight)


def build(arch, vocab, c):
    model = (Gpt2 if arch == "gpt2" else Llama)(vocab, c)
    residual = 0.02 / math.sqrt(2 * c["n_layers"])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() < 2:
                continue
            stream = name.endswith(("out_proj.weight", "c_proj.weight", "w_down.weight"))
            p.normal_(0.0, residual if stream else 0.02)
    return model


def sequential_sum(values):
    """The float64 sum from left to right (Python's sum() compensates since 3.12)."""
    total = 0.0
    for v in values:
        total += v
    return total


def get_lr(step, steps):
    if step < WARMUP:
        return LR * (step + 1) / (WARMUP + 1)
    if step > steps:
        return MIN_LR
    ratio = (step - WARMUP) / (steps - WARMUP)
    coeff = 0.5 * (1.0 + math.cos(math.pi * ratio))
    return MIN_LR + coeff * (LR - MIN_LR)


def bits(t):
    """A float32 tensor as one hex string, 8 digits a value, in row-major order."""
    words = t.detach().contiguous().view(-1).view(torch.int32).tolist()
    return "".join(f"{w & 0xFFFFFFFF:08x}" for w in words)


def f32_bits(x):
    return f"{struct.unpack('<I', struct.pack('<f', x))[0]:08x}"


def run(arch, size, seed, ids, vocab, with_grads):
    c = SIZES[size]
    steps = STEPS[size]
    torch.manual_seed(seed)
    model = build(arch, vocab, c)
    checksum = {name: struct.pack(">d", sequential_sum(p.detach().double().view(-1).tolist())).hex()
                for name, p in model.named_parameters()}
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": WEIGHT_DECAY},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=LR, betas=BETAS, fused=True)
    data = torch.tensor(ids, dtype=torch.long)
    out = {"config": dict(c, vocab_size=vocab), "steps": steps, "init_sums": checksum}
    losses, norms = [], []
    start = time.perf_counter()
    for step in range(steps):
        lr = get_lr(step, steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        starts = torch.randint(len(data) - c["context"], (c["batch"],))
        x = torch.stack([data[s:s + c["context"]] for s in starts])
        y = torch.stack([data[s + 1:s + 1 + c["context"]] for s in starts])
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        if step == 0:
            out["loss0"] = f32_bits(loss.item())
            if with_grads:
                out["grads"] = {name: {"shape": list(p.shape), "bits": bits(p.grad)}
                                for name, p in model.named_parameters()}
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
        norms.append(f32_bits(norm.item()))
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    out["seconds"] = round(time.perf_counter() - start, 3)
    out["losses"] = [f32_bits(v) for v in losses]
    out["printed"] = [f"{v:.4f}" for v in losses]
    out["grad_norms"] = norms
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=seed_value, default=1337, metavar="S")
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "chapters", "ch22-pretraining", "tests", "fixtures",
                           "training.json")
    parser.add_argument("--json", default=default, metavar="PATH")
    parser.add_argument("--no-baby", action="store_true", help="the tiny size only")
    args = parser.parse_args()
    torch.set_num_threads(1)
    vocab = sorted(set(TEXT))
    ids = [vocab.index(ch) for ch in TEXT]
    fixture = {
        "seed": args.seed,
        "text": TEXT,
        "made_on": made_on(),
        "capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
        "settings": {"lr": LR, "min_lr": MIN_LR, "warmup": WARMUP,
                     "weight_decay": WEIGHT_DECAY, "betas": BETAS, "grad_clip": GRAD_CLIP},
        "runs": {},
    }
    for size in ["tiny"] + ([] if args.no_baby else ["baby"]):
        for arch in ["gpt2", "llama"]:
            result = run(arch, size, args.seed, ids, len(vocab), size == "tiny")
            fixture["runs"][f"{arch}-{size}"] = result
            print(f"{arch} {size}: loss {result['printed'][0]} -> {result['printed'][-1]} "
                  f"in {result['steps']} steps, {result['seconds']} s")
    with open(args.json, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
