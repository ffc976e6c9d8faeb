"""Chapter 10: the backward pass by hand (PyTorch reference).

The chapter computes, by hand, the gradients that `loss.backward()` leaves in
`.grad`; this script lets autograd compute them. Inputs: the articles' batch
(`torch.stack((inputs, inputs))`) and `loss = out.square().sum()`, through
(a) CausalAttention(d_in=3, d_out=2, context_length=6, dropout=0.0),
(b) the same with dropout=0.5 (training mode: the mask is drawn in the forward
pass, after the init), (c) MultiHeadAttention(d_in=3, d_out=4,
context_length=6, dropout=0.0, num_heads=2), each made right after
manual_seed(123). The modules are those of chapters 5 and 7.

Autograd is on (this chapter is about gradients); the loss is printed detached,
so no `grad_fn=...` appears. Each step prints a `## ...` heading, its output and
one empty line.

`--json` prints, instead of the text, every printed tensor at full precision
as float32 bit patterns, for the chapter's bit-for-bit test, and for each module
the inputs and gradients of its attention core (queries, keys and values as the
projections return them, and the gradient arriving at the core's output),
caught with hooks so that the modules' code stays as in chapters 5 and 7.
"""
import argparse
import json

import torch
import torch.nn as nn

torch.set_grad_enabled(True)  # this chapter is about gradients (the other scripts turn it off)

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
parser.add_argument("--json", action="store_true",
                    help="print every gradient as float32 bits (JSON) instead of the text")
ARGS = parser.parse_args()
SEED = ARGS.seed


def seed_or(article_seed):
    """The seed where the article uses `article_seed`: S if --seed S was given."""
    return article_seed if SEED is None else SEED


class CausalAttention(nn.Module):
    """Chapter 5's module (Raschka's, with its layer order query, value, key)."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
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

        attn_scores = queries @ keys.transpose(1, 2)
        attn_scores.masked_fill_(
            self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = attn_weights @ values
        return context_vec


class MultiHeadAttention(nn.Module):
    """Chapter 7's module (Raschka's, with the article's two typos fixed)."""

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
            'mask', torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape

        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)

        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        context_vec = self.out_proj(context_vec)
        return context_vec


inputs = torch.tensor(
    [[0.43, 0.15, 0.89],    # Your
    [0.55, 0.87, 0.66],     # journey
    [0.57, 0.85, 0.64],     # starts
    [0.22, 0.58, 0.33],     # with
    [0.77, 0.25, 0.10],     # one
    [0.05, 0.80, 0.55]]     # step
)
d_in = inputs.shape[1]
context_length = inputs.shape[0]

steps = []  # (title, tensors) in printing order
cores = []  # (title, tensors) of the attention cores, for --json only


def step(title, value):
    steps.append((title, value))


# One row of softmax and its backward for a loss that only looks at the first weight.
scores = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
weights = torch.softmax(scores, dim=-1)
weights.backward(torch.tensor([1.0, 0.0, 0.0]))
step("Softmax of [1.0, 2.0, 0.5] and the gradient of its scores for dP = [1, 0, 0]",
     [weights.detach(), scores.grad])


def watch(module, core_input):
    """Keeps the outputs of the module's three projections and the input `core_input`
    (a layer, or None for the module's own output) whose gradient the core receives,
    each with its gradient after backward()."""
    seen = {}

    def keep(name):
        def hook(_layer, _inputs, output):
            output.retain_grad()
            seen[name] = output
        return hook

    for name in ("W_query", "W_key", "W_value"):
        getattr(module, name).register_forward_hook(keep(name))
    if core_input is None:
        module.register_forward_hook(keep("core_output"))
    else:
        def pre(_layer, args):
            args[0].retain_grad()
            seen["core_output"] = args[0]
        core_input.register_forward_pre_hook(pre)
    return seen


def core_record(title, seen):
    cores.append((title, [seen[n].detach() for n in ("W_query", "W_key", "W_value")]
                  + [seen["core_output"].grad]
                  + [seen[n].grad for n in ("W_query", "W_key", "W_value")]))


def run_causal(dropout):
    torch.manual_seed(seed_or(123))
    ca = CausalAttention(d_in, 2, context_length, dropout)
    seen = watch(ca, None)
    batch = torch.stack((inputs, inputs)).requires_grad_()
    out = ca(batch)
    loss = out.square().sum()
    loss.backward()
    title = f"CausalAttention, dropout {dropout} (manual_seed({seed_or(123)}))"
    core_record(title, seen)
    step(f"{title}: loss", [loss.detach()])
    step(f"{title}: W_query.weight.grad", [ca.W_query.weight.grad])
    step(f"{title}: W_key.weight.grad", [ca.W_key.weight.grad])
    step(f"{title}: W_value.weight.grad", [ca.W_value.weight.grad])
    step(f"{title}: batch.grad", [batch.grad])


run_causal(0.0)
run_causal(0.5)

torch.manual_seed(seed_or(123))
mha = MultiHeadAttention(d_in, 4, context_length, 0.0, num_heads=2)
seen = watch(mha, mha.out_proj)
batch = torch.stack((inputs, inputs)).requires_grad_()
out = mha(batch)
loss = out.square().sum()
loss.backward()
title = f"MultiHeadAttention, 2 heads (manual_seed({seed_or(123)}))"
core_record(title, seen)
step(f"{title}: loss", [loss.detach()])
step(f"{title}: W_query.weight.grad", [mha.W_query.weight.grad])
step(f"{title}: W_key.weight.grad", [mha.W_key.weight.grad])
step(f"{title}: W_value.weight.grad", [mha.W_value.weight.grad])
step(f"{title}: out_proj.weight.grad", [mha.out_proj.weight.grad])
step(f"{title}: out_proj.bias.grad", [mha.out_proj.bias.grad])
step(f"{title}: batch.grad", [batch.grad])

if ARGS.json:
    # Every printed tensor as its float32 bit patterns, row-major, under its step title;
    # each core as [queries, keys, values, grad of the core's output, grads of queries,
    # keys, values].
    def bits(entries):
        return {
            title: [{"shape": list(t.shape),
                     "bits": t.contiguous().view(torch.int32).flatten().tolist()}
                    for t in values]
            for title, values in entries
        }
    print(json.dumps({"steps": bits(steps), "cores": bits(cores)}, indent=1))
else:
    print("# Chapter 10: The backward pass by hand")
    print()
    for title, values in steps:
        print(f"## {title}")
        for value in values:
            print(value)
        print()
