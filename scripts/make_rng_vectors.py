"""Makes tests/fixtures/rng_vectors.json with real PyTorch 2.13.0: the generator's corner
cases, each from a fresh seed, in the random-number fixture format (tests/fixtures/README.md).

Each case is chosen because a plausible implementation gets it wrong: a seed above 2^32 or
below 0, the normal draws' scalar path (fewer than 16 values, with a cached spare) and block
path (16 or more, with a tail block), a cached spare that survives a block-path call,
nn.Linear's fused multiply-add (rows where rounding twice gives other bits), dropout's masks.

    python scripts/make_rng_vectors.py   # needs torch==2.13.0 (reference/requirements.txt)
"""
import json
import struct
import sys
from pathlib import Path

import torch

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)


def enc(t):
    t = t.contiguous()
    values = [f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08x}" for v in t.flatten().tolist()]
    return {"shape": list(t.shape), "values": values}


def run(call):
    op = call["op"]
    if op == "rand":
        return enc(torch.rand(*call["shape"]))
    if op == "randn":
        return enc(torch.randn(*call["shape"]))
    if op == "normal":
        return enc(torch.empty(*call["shape"]).normal_(call["mean"], call["std"]))
    if op == "linear":
        layer = torch.nn.Linear(call["in_features"], call["out_features"], bias=call["bias"])
        out = {"weight": enc(layer.weight)}
        if call["bias"]:
            out["bias"] = enc(layer.bias)
        return out
    if op == "embedding":
        return enc(torch.nn.Embedding(call["num_embeddings"], call["embedding_dim"]).weight)
    if op == "dropout":
        return enc(torch.nn.Dropout(call["p"]).train()(torch.ones(*call["shape"])))
    raise ValueError(op)


cases = []


def case(name, seed, *calls):
    torch.manual_seed(seed)
    cases.append({"name": name, "seed": seed, "calls": list(calls),
                  "expected": [run(c) for c in calls]})


def rand(*shape):
    return {"op": "rand", "shape": list(shape)}


def randn(*shape):
    return {"op": "randn", "shape": list(shape)}


def linear(i, o, bias):
    return {"op": "linear", "in_features": i, "out_features": o, "bias": bias}


for seed in (0, 123, 789):
    case(f"rand(24, 16), seed {seed}", seed, rand(24, 16))
    case(f"randn(3, 2): the scalar path, seed {seed}", seed, randn(3, 2))
    case(f"randn(16): the block path, seed {seed}", seed, randn(16))
    case(f"randn(20): a block and a tail block, seed {seed}", seed, randn(20))
case("only the low 32 bits of a seed matter", 2**32 + 123, randn(3, 2))
case("a negative seed is its two's complement", -1, rand(4))
case("the largest seed", 2**64 - 1, rand(4))
case("the third randn(3, 2) uses the stream and the cached spare", 123,
     randn(3, 2), randn(3, 2), randn(3, 2))
case("randn(33): two blocks and a tail", 0, randn(33))
case("randn(1000)", 123, randn(1000))
case("a cached spare survives a block-path call", 123, randn(3), randn(20), randn(1))
case("nn.Embedding(3, 4): the scalar path", 123, {"op": "embedding", "num_embeddings": 3, "embedding_dim": 4})
case("nn.Embedding(6, 16): the block path", 123, {"op": "embedding", "num_embeddings": 6, "embedding_dim": 16})
case("normal_(0.5, 2.0) on 5 values", 123, {"op": "normal", "shape": [5], "mean": 0.5, "std": 2.0})
case("normal_(0, 0.02) on 40 values", 123, {"op": "normal", "shape": [40], "mean": 0.0, "std": 0.02})
for seed in (123, 789):
    case(f"nn.Linear(3, 2) without bias: fused multiply-add rows, seed {seed}", seed, linear(3, 2, False))
case("three nn.Linear(3, 2) in a row", 789, linear(3, 2, False), linear(3, 2, False), linear(3, 2, False))
case("nn.Linear(4, 4) with bias", 123, linear(4, 4, True))
case("Dropout(0.5) on a 6x6", 123, {"op": "dropout", "p": 0.5, "shape": [6, 6]})
case("Dropout(0.1) on a 2x6x6", 123, {"op": "dropout", "p": 0.1, "shape": [2, 6, 6]})

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rng_vectors.json"
body = ",\n".join(json.dumps(c) for c in cases)
out.write_text(f'{{"torch_version": "{torch.__version__}", "cases": [\n{body}\n]}}\n')
print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
