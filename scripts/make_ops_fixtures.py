"""Makes tests/fixtures/ops_fixtures.json with real PyTorch 2.13.0: the operations the
chapters use (matmul in all its rank rules, softmax, masked_fill, triu/tril, einsum,
Linear and Embedding forward, reductions, views, cat/stack, scalar division), on inputs
drawn from torch's own generator. Each case stores its inputs and PyTorch's result as
float32 bit patterns, and the exact text of print(result).

    python scripts/make_ops_fixtures.py   # needs torch==2.13.0 (reference/requirements.txt)

The Rust side (tests/tests/ops_parity.rs) checks values within 1e-6 relative and the
printed text exactly.
"""
import json
import struct
import sys
from pathlib import Path

import torch

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)


def bits(t):
    t = t.contiguous()
    if t.dtype == torch.float32:
        return [f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08x}" for v in t.flatten().tolist()]
    if t.dtype == torch.bool:
        return [bool(v) for v in t.flatten().tolist()]
    return [int(v) for v in t.flatten().tolist()]


def enc(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "values": bits(t)}


cases = []


def case(name, op, inputs, result, **args):
    cases.append({"name": name, "op": op, "args": args,
                  "inputs": [enc(t) for t in inputs],
                  "expected": enc(result), "expected_repr": repr(result)})


torch.manual_seed(2024)
# matmul: every rank rule of torch.matmul
for sa, sb in [((3,), (3,)), ((6, 3), (3, 2)), ((3,), (3, 4)), ((5, 3), (3,)),
               ((2, 6, 3), (3, 2)), ((2, 6, 3), (2, 3, 6)), ((2, 1, 6, 3), (4, 3, 2)),
               ((3, 6, 16), (16, 4)), ((2, 2, 6, 2), (2, 2, 2, 6)), ((17, 33), (33, 9))]:
    a, b = torch.randn(*sa), torch.randn(*sb)
    case(f"matmul {sa} @ {sb}", "matmul", [a, b], a @ b)
a, b = torch.randn(3, 4, 5), torch.randn(3, 5, 2)
case("bmm", "bmm", [a, b], torch.bmm(a, b))
a = torch.randn(6, 4)
case("matmul with a transposed operand", "matmul_t", [a], a @ a.T)

# softmax over each dim, with scaling and -inf masks
for shape, dim in [((6,), 0), ((6, 6), -1), ((6, 6), 0), ((2, 3, 4), 1), ((2, 2, 6, 6), -1)]:
    x = torch.randn(*shape) * 3
    case(f"softmax {shape} dim={dim}", "softmax", [x], torch.softmax(x, dim=dim), dim=dim)
x = torch.randn(6, 6)
mask = torch.triu(torch.ones(6, 6), diagonal=1).bool()
masked = x.masked_fill(mask, -torch.inf)
case("masked_fill -inf", "masked_fill", [x, mask], masked, value="-inf")
case("softmax of masked scores scaled by sqrt(2)", "scaled_softmax", [masked],
     torch.softmax(masked / 2 ** 0.5, dim=-1), scale=2 ** 0.5, dim=-1)
case("triu diagonal=1", "triu", [torch.ones(4, 5)], torch.triu(torch.ones(4, 5), diagonal=1), diagonal=1)
t = torch.randn(2, 4, 4)
case("tril diagonal=0", "tril", [t], torch.tril(t), diagonal=0)
case("tril diagonal=-1", "tril", [t], torch.tril(t, diagonal=-1), diagonal=-1)

# einsum: the equations of seed 001
x, w = torch.rand(5, 16), torch.rand(4, 16, 4)
case("einsum sd,hde->hse", "einsum", [x, w], torch.einsum("sd,hde->hse", x, w), equation="sd,hde->hse")
q, k = torch.rand(4, 5, 4), torch.rand(4, 4, 5)
case("einsum hse,hek->hsk", "einsum", [q, k], torch.einsum("hse,hek->hsk", q, k), equation="hse,hek->hsk")
a, v = torch.softmax(torch.rand(4, 5, 5), -1), torch.rand(4, 5, 4)
case("einsum hij,hjk->hik", "einsum", [a, v], torch.einsum("hij,hjk->hik", a, v), equation="hij,hjk->hik")

# Linear and Embedding forward with their PyTorch parameters
for d_in, d_out, bias, shape in [(3, 2, False, (6, 3)), (16, 24, True, (2, 6, 16)), (4, 4, True, (4,))]:
    layer = torch.nn.Linear(d_in, d_out, bias=bias)
    x = torch.randn(*shape)
    inputs = [x, layer.weight] + ([layer.bias] if bias else [])
    case(f"linear {d_in}->{d_out} bias={bias} on {shape}", "linear", inputs, layer(x))
embed = torch.nn.Embedding(10, 8)
ids = torch.tensor([[2, 6, 8], [3, 1, 1]])
case("embedding forward", "embedding", [embed.weight, ids], embed(ids))

# reductions, scalar arithmetic, views and joins
x = torch.rand(6, 7)
case("sum all", "sum", [x], x.sum())
case("sum dim=-1 keepdim", "sum_dim", [x], x.sum(dim=-1, keepdim=True), dim=-1, keepdim=True)
case("sum dim=0", "sum_dim", [x], x.sum(dim=0), dim=0, keepdim=False)
case("mean dim=1", "mean_dim", [x], x.mean(dim=1), dim=1, keepdim=False)
case("divide rows by their sums", "div", [x, x.sum(dim=-1, keepdim=True)], x / x.sum(dim=-1, keepdim=True))
case("divide by sqrt(d_k)", "div_scalar", [x], x / 24 ** 0.5, scalar=24 ** 0.5)
case("exp", "exp", [x * 4 - 2], torch.exp(x * 4 - 2))
y = torch.rand(2, 6, 4)
case("view then transpose then contiguous", "split_heads", [y],
     y.view(2, 6, 2, 2).transpose(1, 2).contiguous(), shape=[2, 6, 2, 2])
case("cat dim=-1", "cat", [y, y * 2], torch.cat([y, y * 2], dim=-1), dim=-1)
case("stack dim=0", "stack", [x, x + 1], torch.stack([x, x + 1], dim=0), dim=0)
case("repeat(3, 1, 1)", "repeat", [x.T], x.T.repeat(3, 1, 1), repeats=[3, 1, 1])
case("permute(0, 2, 1)", "permute", [y], y.permute(0, 2, 1).contiguous(), dims=[0, 2, 1])

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ops_fixtures.json"
# One case per line keeps diffs of regenerated fixtures readable.
body = ",\n".join(json.dumps(c) for c in cases)
out.write_text(f'{{"torch_version": "{torch.__version__}", "cases": [\n{body}\n]}}\n')
print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
