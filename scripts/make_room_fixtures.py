"""Makes tests/fixtures/room_fixtures.json with real PyTorch 2.13.0: the behaviours where the
rule an operation follows is easy to get subtly wrong. Which zero `maximum` and `minimum`
return for `-0.` against `0.` (the first operand's one element at a time, the second's in
whole vectors of 16 on AVX-512), `cat` of empty 1-D tensors only, whatever the dim, and
`F.linear` with a bias on 2-D, 3-D and 4-D inputs (PyTorch's `addmm` for the first two, a
product then an addition for the last: the same bits while the product over the input
features is one block, up to 384 features), and `F.linear` with one to three outputs (MKL
takes another order for each).

    python scripts/make_room_fixtures.py   # needs torch==2.13.0 (reference/requirements.txt)

The cases use the formats of tests/fixtures/README.md (operation fixtures); the Rust side is
tests/src/parity/ops_cases (`maximum`, `minimum`, `room_maximum_t`, `room_minimum_t`,
`edge_cat`).
"""
import json
from pathlib import Path

import torch

from fixture_json import enc, processor

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)
cases = []


def result(name, op, inputs, out, **args):
    cases.append({"name": name, "op": op, "args": args, "inputs": [enc(t) for t in inputs],
                  "expected": enc(out), "expected_repr": repr(out)})


def zeros_of_both_signs(shape, generator):
    """Zeros whose signs are drawn at random, with a few ones among them."""
    signs = torch.randint(0, 2, shape, generator=generator).float() * 2 - 1
    ones = torch.rand(shape, generator=generator) < 0.1
    return torch.where(ones, signs, signs * 0.0)


g = torch.Generator().manual_seed(31)
# ---- maximum and minimum: which zero wins a tie ----
for op in ["maximum", "minimum"]:
    f = getattr(torch, op)
    for n in [1, 3, 8, 15, 16, 17, 31, 32, 33, 40, 47, 48, 64, 65]:
        a, b = torch.full([n], -0.0), torch.zeros(n)
        result(f"{op}(-0., 0.) of length {n}", op, [a, b], f(a, b))
        result(f"{op}(0., -0.) of length {n}", op, [b, a], f(b, a))
    for sa, sb in [([2, 17], [2, 17]), ([3, 20], [20]), ([20], [1]), ([20], []), ([], [20]), ([4, 1, 18], [5, 1]),
                   ([2, 3, 16], [2, 3, 16]), ([2, 1, 33], [1, 1, 33]), ([5, 7], [5, 7]), ([40, 1], [40, 1])]:
        a, b = zeros_of_both_signs(sa, g), zeros_of_both_signs(sb, g)
        result(f"{op} of signed zeros {sa} and {sb}", op, [a, b], f(a, b))
    # the first operand transposed: PyTorch compares one element at a time
    a, b = torch.full([20, 3], -0.0), torch.zeros(3, 20)
    result(f"{op} of a transposed -0. and 0.", f"room_{op}_t", [a, b], f(a.t(), b))

# ---- cat of empty 1-D tensors only: PyTorch's legacy rule skips them, any dim goes ----
e = torch.randn(0)
for dim in [0, 1, -2, 5]:
    result(f"cat of empty 1-D tensors along dim {dim}", "edge_cat", [e, e], torch.cat([e, e], dim), dim=dim)

# ---- F.linear with a bias: addmm (2-D, contiguous 3-D) or matmul then add (4-D) ----
for shape, n in [([5, 16], 8), ([2, 6, 3], 2), ([2, 6, 16], 32), ([4, 8, 64], 48), ([2, 12, 200], 24),
                 ([2, 12, 256], 64), ([2, 2, 5, 64], 24)]:
    x = torch.randn(shape, generator=g)
    w = torch.randn(n, shape[-1], generator=g)
    b = torch.randn(n, generator=g)
    result(f"linear with a bias, input {shape}, {n} outputs", "linear", [x, w, b],
           torch.nn.functional.linear(x, w, b))

# ---- F.linear with one to three outputs: one output is MKL's matrix-vector product; two or
# three take 16 lanes while the result has at most 30 elements, a fused chain after ----
for rows, k, n in [(64, 16, 1), (5, 16, 1), (3, 256, 1), (40, 64, 1), (15, 8, 2), (16, 8, 2), (64, 16, 2),
                   (10, 16, 3), (11, 16, 3), (4, 4, 3), (32, 12, 3)]:
    x = torch.randn(rows, k, generator=g)
    w = torch.randn(n, k, generator=g)
    result(f"linear without a bias, input [{rows}, {k}], {n} outputs", "linear", [x, w],
           torch.nn.functional.linear(x, w))
w = torch.randn(16, 1, generator=g)
x = torch.randn(24, 16, generator=g)
result("matmul of [24, 16] by a [16, 1] column", "matmul", [x, w], x @ w)

out = {"torch_version": torch.__version__, "made_on": processor(), "cpu_capability": torch.backends.cpu.get_cpu_capability(),
       "num_threads": torch.get_num_threads(), "cases": cases}
path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "room_fixtures.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"{len(cases)} cases written to {path}")
