"""Makes tests/fixtures/sampling_fixtures.json with real PyTorch 2.13.0: what
`torch.multinomial` and `torch.randint` draw from the default CPU generator, in the
random-number fixture format (tests/fixtures/README.md).

Cases cover seeds over the whole range up to 2^64 - 1, 8 to 1000 ids, 1-d and 2-d
probabilities, both of PyTorch's paths (without replacement or with one sample: exponential
noise and argmax / topk; with replacement and several samples: the cumulative distribution),
weights that do not sum to 1, zeros (so that topk must order ties as PyTorch does), tiny and
huge weights, randint over small and huge ranges, and calls mixed with rand, randn and
dropout in one case, so that each call must leave the generator where PyTorch leaves it.

    python scripts/make_sampling_fixtures.py   # needs torch==2.13.0 (reference/requirements.txt)

The weights come from Python's own `random` module, so the script is deterministic and never
touches the generator it records.
"""
import json
import random
import struct
import sys
from pathlib import Path

import torch

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)

rng = random.Random(20260)


def f32_bits(x):
    return f"0x{struct.unpack('<I', struct.pack('<f', x))[0]:08x}"


def enc(t):
    t = t.contiguous()
    return {"shape": list(t.shape), "values": [f32_bits(v) for v in t.flatten().tolist()]}


def run(call):
    op = call["op"]
    if op == "multinomial":
        words = [int(h, 16) for h in call["probs"]]
        flat = [struct.unpack('<f', struct.pack('<I', w))[0] for w in words]
        probs = torch.tensor(flat, dtype=torch.float32).reshape(call["probs_shape"])
        return torch.multinomial(probs, call["num_samples"], call["replacement"]).flatten().tolist()
    if op == "randint":
        return torch.randint(call["low"], call["high"], call["shape"]).flatten().tolist()
    if op == "rand":
        return enc(torch.rand(*call["shape"]))
    if op == "randn":
        return enc(torch.randn(*call["shape"]))
    if op == "dropout":
        return enc(torch.nn.Dropout(call["p"]).train()(torch.ones(*call["shape"])))
    raise ValueError(op)


cases = []


def case(name, seed, *calls):
    torch.manual_seed(seed)
    cases.append({"name": name, "seed": seed, "calls": list(calls),
                  "expected": [run(c) for c in calls]})


# --- weights -------------------------------------------------------------------------------

def softmax(logits, temperature=1.0):
    t = torch.tensor(logits, dtype=torch.float32) / temperature
    return torch.softmax(t, dim=-1).tolist()


def weights(kind, n):
    """n float32 weights of one kind (each a Python float that is exactly a float32)."""
    if kind == "softmax":
        return softmax([rng.gauss(0, 2) for _ in range(n)], rng.choice([0.5, 1.0, 2.0]))
    if kind == "peaked":
        return softmax([rng.gauss(0, 6) for _ in range(n)], 0.7)
    if kind == "unnormalised":
        return [rng.uniform(0, 10) for _ in range(n)]
    if kind == "top_k":
        # A softmax with all but the k best set to zero, as top-k sampling leaves it.
        p = softmax([rng.gauss(0, 2) for _ in range(n)])
        k = rng.randint(1, max(1, n // 4))
        keep = sorted(range(n), key=lambda i: -p[i])[:k]
        return [p[i] if i in set(keep) else 0.0 for i in range(n)]
    if kind == "sparse":
        return [rng.uniform(0, 1) if rng.random() < 0.1 else 0.0 for _ in range(n)]
    if kind == "one_hot":
        p = [0.0] * n
        p[rng.randrange(n)] = 1.0
        return p
    if kind == "uniform":
        return [1.0] * n
    if kind == "ties":
        return [rng.choice([0.5, 1.0, 2.0]) for _ in range(n)]
    if kind == "tiny":
        return [rng.uniform(0, 1) * 1e-40 for _ in range(n)]
    if kind == "huge":
        return [rng.uniform(0, 1) * 1e37 for _ in range(n)]
    if kind == "wide":
        return [10 ** rng.uniform(-30, 10) for _ in range(n)]
    raise ValueError(kind)


KINDS = ["softmax", "peaked", "unnormalised", "top_k", "sparse", "one_hot", "uniform", "ties",
         "tiny", "huge", "wide"]


def row(kind, n):
    w = [struct.unpack('<f', struct.pack('<f', x))[0] for x in weights(kind, n)]
    if sum(w) == 0:  # a row of zeros is an error; keep one weight
        w[rng.randrange(n)] = 1.0
    return w


def nonzero(w):
    return sum(1 for x in w if x != 0)


def multinomial(rows, num_samples, replacement, one_d):
    flat = [x for r in rows for x in r]
    shape = [len(rows[0])] if one_d else [len(rows), len(rows[0])]
    return {"op": "multinomial", "probs_shape": shape, "probs": [f32_bits(x) for x in flat],
            "num_samples": num_samples, "replacement": replacement}


def random_multinomial(n=None, replacement=None):
    n = n or rng.choice([8, 10, 16, 17, 32, 50, 64, 100, 128, 257, 500, 1000, rng.randint(8, 1000)])
    one_d = rng.random() < 0.6
    rows_count = 1 if one_d else rng.randint(1, 4 if n > 300 else 8)
    kind = rng.choice(KINDS)
    rows = [row(kind, n) for _ in range(rows_count)]
    if replacement is None:
        replacement = rng.random() < 0.5
    if replacement:
        num_samples = rng.choice([1, 2, 5, rng.randint(2, 64), rng.randint(2, 2 * n)])
    else:
        most = min(nonzero(r) for r in rows)
        # Mostly no more samples than non-zero weights, sometimes more (ties among zeros).
        limit = n if rng.random() < 0.25 else most
        num_samples = rng.choice([1, 1, 2, rng.randint(1, limit), limit])
    return kind, multinomial(rows, num_samples, replacement, one_d)


def random_randint():
    low, high = rng.choice([
        (0, rng.randint(1, 60000)),
        (-rng.randint(0, 1000), rng.randint(1, 1000)),
        (0, 2 ** 28 - 1), (0, 2 ** 28), (0, 2 ** 28 + 1), (0, 2 ** 32), (0, 2 ** 32 + 7),
        (-(2 ** 40), 2 ** 40), (-(2 ** 63), 2 ** 63 - 1), (2 ** 62, 2 ** 63 - 1),
        (0, 1), (5, 6), (0, 50257), (0, 151936),
    ])
    shape = rng.choice([[], [1], [8], [3, 4], [2, 3, 5], [rng.randint(1, 300)], [0], [4, 0]])
    return {"op": "randint", "low": low, "high": high, "shape": shape}


def other_call():
    return rng.choice([
        {"op": "rand", "shape": [rng.randint(1, 40)]},
        {"op": "randn", "shape": [rng.randint(1, 40)]},
        {"op": "randn", "shape": [rng.randint(1, 3), rng.randint(1, 5)]},
        {"op": "dropout", "p": 0.1, "shape": [rng.randint(1, 20)]},
    ])


def seed():
    return rng.choice([rng.randrange(2 ** 64), rng.randrange(2 ** 32), rng.randrange(1000)])


# --- cases ---------------------------------------------------------------------------------

named_seeds = [0, 1, 123, 789, 2 ** 32 + 123, 2 ** 63 + 5, 2 ** 64 - 1]
for s in named_seeds:
    probs = [0.1, 0.2, 0.3, 0.4]
    case(f"one sample, eight times, seed {s}", s,
         *[multinomial([row("softmax", 50)], 1, False, True) for _ in range(8)])
    case(f"the doc example, seed {s}", s, multinomial([probs], 1, False, True),
         multinomial([probs], 4, False, True), multinomial([probs], 6, True, True))
    case(f"1000 ids without replacement, all of them, seed {s}", s,
         multinomial([row("softmax", 1000)], 1000, False, True))
    case(f"1000 ids with replacement, seed {s}", s,
         multinomial([row("softmax", 1000)], 300, True, True))
    case(f"randint over 2^28 - 1, 2^28 and 2^63 - 1 + 2^63 values, seed {s}", s,
         {"op": "randint", "low": 0, "high": 2 ** 28 - 1, "shape": [6]},
         {"op": "randint", "low": 0, "high": 2 ** 28, "shape": [6]},
         {"op": "randint", "low": -(2 ** 63), "high": 2 ** 63 - 1, "shape": [2, 3]})

case("more samples than non-zero weights: topk orders the tied zeros", 123,
     multinomial([[0.0, 1.0, 0.0, 0.0, 2.0] * 4], 20, False, True))
case("partial sort path (64 k <= n) with ties", 7,
     multinomial([[1.0 if i % 50 == 0 else 0.0 for i in range(1000)]], 15, False, True))
case("selection path (64 k > n) with ties", 7,
     multinomial([[1.0 if i % 50 == 0 else 0.0 for i in range(1000)]], 100, False, True))
case("2-d: the noise for every row is drawn before any row is sampled", 42,
     multinomial([row("softmax", 16) for _ in range(5)], 3, False, False), {"op": "rand", "shape": [3]})
case("2-d with replacement: rows draw one after another", 42,
     multinomial([row("softmax", 16) for _ in range(5)], 7, True, False), {"op": "rand", "shape": [3]})
case("a sum that overflows float32", 5, multinomial([[3e38, 3e38, 1e38]], 4, True, True),
     multinomial([[3e38, 3e38, 1e38]], 2, False, True))

for i in range(260):
    kind, call = random_multinomial()
    calls = [call]
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        calls.append(rng.choice([other_call, random_randint, lambda: random_multinomial()[1]])())
    rng.shuffle(calls)
    case(f"mixed {i}: {kind}, {'with' if call['replacement'] else 'without'} replacement", seed(), *calls)

for i in range(60):
    calls = [random_randint() for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.5:
        calls.append(other_call())
    case(f"randint {i}", seed(), *calls)

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sampling_fixtures.json"
body = ",\n".join(json.dumps(c) for c in cases)
out.write_text(f'{{"torch_version": "{torch.__version__}", "cases": [\n{body}\n]}}\n')
print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
