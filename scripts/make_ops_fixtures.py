"""Makes tests/fixtures/ops_fixtures.json with real PyTorch 2.13.0: the operations the
chapters use (matmul in all its rank rules, softmax, masked_fill, triu/tril, einsum,
Linear and Embedding forward, reductions, views, cat/stack, scalar division), on inputs
drawn from torch's own generator, then many more cases of softmax, log_softmax, sum and mean
(long and odd rows, -inf/inf/NaN, every dim of rank 1-4 tensors, transposed views, sums
large enough to be split across threads). Each case stores its inputs and PyTorch's result
as float32 bit patterns, and the exact text of print(result). A large input is stored as
the seed and distribution that draw it (`"generator": {"seed": s, "dist": "rand"}`: it is
`torch.manual_seed(s); torch.rand(shape)`), which our generator reproduces bit for bit.

    python scripts/make_ops_fixtures.py   # needs torch==2.13.0 (reference/requirements.txt)

The file records the CPU capability and thread count PyTorch ran with: softmax results
depend on both (AVX-512 sums a row in 16 lanes, AVX2 in 8; a softmax over a non-last dim is
cut into one piece per thread), so the Rust side computes as that machine did. Values are
compared bit for bit, except the cases marked `"ulp": 1`: elementwise `torch.exp` comes from
MKL's closed vector library, whose last bit we cannot reproduce; and the matrix products,
marked `"atol_of_max": 1e-6` (within 1e-6 of the result's largest magnitude): they come from
MKL's sgemm, whose order of additions changes with the processor.
"""
import json
import sys
from pathlib import Path

import torch

from fixture_json import enc, processor

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)


cases = []


# The matrix products: MKL's sgemm adds in an order of its own, which changes with the processor.
MATRIX_PRODUCTS = {"matmul", "bmm", "matmul_t", "einsum", "linear"}


def case(name, op, inputs, result, ulp=None, **args):
    c = {"name": name, "op": op, "args": args,
         "inputs": [i if isinstance(i, dict) else enc(i) for i in inputs],
         "expected": enc(result), "expected_repr": repr(result)}
    if ulp is not None:
        c["ulp"] = ulp
    if op in MATRIX_PRODUCTS:
        c["atol_of_max"] = 1e-6
    cases.append(c)


def drawn(seed, dist, *shape):
    """A large input stored as the draw that makes it: (its encoding, the tensor).
    PyTorch's AVX2 and AVX-512 builds draw the same numbers, which our generator reproduces;
    its portable DEFAULT build draws others (its vectorised normal sampler uses the C
    library's log/sin/cos), so under DEFAULT the values themselves are stored."""
    torch.manual_seed(seed)
    t = getattr(torch, dist)(*shape)
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        return enc(t), t
    return {"shape": list(shape), "dtype": "float32", "generator": {"seed": seed, "dist": dist}}, t


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
case("exp", "exp", [x * 4 - 2], torch.exp(x * 4 - 2), ulp=1)
y = torch.rand(2, 6, 4)
case("view then transpose then contiguous", "split_heads", [y],
     y.view(2, 6, 2, 2).transpose(1, 2).contiguous(), shape=[2, 6, 2, 2])
case("cat dim=-1", "cat", [y, y * 2], torch.cat([y, y * 2], dim=-1), dim=-1)
case("stack dim=0", "stack", [x, x + 1], torch.stack([x, x + 1], dim=0), dim=0)
case("repeat(3, 1, 1)", "repeat", [x.T], x.T.repeat(3, 1, 1), repeats=[3, 1, 1])
case("permute(0, 2, 1)", "permute", [y], y.permute(0, 2, 1).contiguous(), dims=[0, 2, 1])

# ---- PyTorch's CPU kernels bit for bit: softmax, log_softmax, sum, mean ----
# Drawn after everything above, from their own seed, so the cases above keep their values.
torch.manual_seed(4242)
FAMILIES = {
    "randn": lambda r, n: torch.randn(r, n),
    "randn*30": lambda r, n: torch.randn(r, n) * 30,
    "randn*0.01": lambda r, n: torch.randn(r, n) * 0.01,
    "randn*4+1000": lambda r, n: torch.randn(r, n) * 4 + 1000,
}
names = list(FAMILIES)
for fn, op in [(torch.softmax, "softmax"), (torch.log_softmax, "log_softmax")]:
    # Rows of every length up to 100 and around the vector widths: two families per length.
    for n in list(range(1, 101)) + [127, 128, 129, 255, 257]:
        pick = [names[n % 4], names[(n + 1) % 4]]
        x = torch.cat([FAMILIES[f](1, n) for f in pick])
        case(f"{op} rows of {n} ({', '.join(pick)}) dim=-1", op, [x], fn(x, dim=-1), dim=-1)
    for n in [1000, 1023, 4096, 4099]:
        x = torch.randn(1, n) * 3
        case(f"{op} a row of {n} dim=-1", op, [x], fn(x, dim=-1), dim=-1)
    # -inf (some rows all -inf), +inf, NaN, and scores that overflow/underflow exp.
    for n in [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 100]:
        some_inf = torch.randn(n) * 3
        some_inf[torch.rand(n) < 0.4] = -torch.inf
        some_inf[0] = 0.5
        all_inf = torch.full((n,), -torch.inf)
        plus_inf = torch.randn(n); plus_inf[n // 2] = torch.inf
        nan = torch.randn(n); nan[(n - 1) // 3] = torch.nan
        wide = torch.rand(n) * 200 - 100
        x = torch.stack([some_inf, all_inf, plus_inf, nan, wide])
        case(f"{op} rows of {n} with -inf, all -inf, +inf, NaN, +-100 dim=-1", op, [x],
             fn(x, dim=-1), dim=-1)
    # Other dims: columns split across threads, vector and scalar columns, rank 2 to 4.
    for shape, dim in [((6,), 0), ((5, 16), 0), ((2, 40), 0), ((7, 17), 0), ((10, 100), 0),
                       ((100, 37), 0), ((2, 3, 4), 0), ((2, 3, 4), 1), ((4, 5, 3), 1),
                       ((3, 7, 20), 1), ((2, 9, 33), 0), ((2, 9, 33), 1), ((6, 5, 17), 1),
                       ((3, 4, 1), 1), ((3, 1, 4), 1), ((2, 3, 4, 5), 0), ((2, 3, 4, 5), 1),
                       ((2, 3, 4, 5), 2), ((2, 2, 6, 6), 1), ((3, 4, 19, 2), 2)]:
        x = torch.randn(*shape) * 3
        x.view(-1)[::7] = x.view(-1)[::7] - 1000  # scores far below the others
        case(f"{op} {shape} dim={dim}", op, [x], fn(x, dim=dim), dim=dim)
    x = torch.randn(5, 9)
    x[:, 2] = -torch.inf
    x[1:3, 4] = torch.nan
    case(f"{op} (5, 9) dim=0 with -inf and NaN columns", op, [x], fn(x, dim=0), dim=0)
x_in, x = drawn(77, "randn", 2049, 17)
# Long columns: log_softmax cuts each row of columns into chunks of about 128 KiB.
case("log_softmax (2049, 17) dim=0", "log_softmax", [x_in], torch.log_softmax(x, dim=0), dim=0)
for fn, op in [(torch.softmax, "softmax"), (torch.log_softmax, "log_softmax")]:
    x = torch.tensor(1.5)
    case(f"{op} of a 0-d tensor", op, [x], fn(x, dim=0), dim=0)
    x = torch.randn(3, 0)
    case(f"{op} of an empty tensor", op, [x], fn(x, dim=0), dim=0)

# sum and mean over every dim of rank 1-4 tensors, keepdim or not, and over everything.
for i, shape in enumerate([(7,), (1000,), (6, 7), (39, 70), (15, 33), (5, 3), (9, 1), (1, 9),
                           (2, 3, 4), (4, 40, 9), (3, 50, 40), (2, 3, 4, 5), (3, 8, 33, 2),
                           (2, 1, 70, 3)]):
    if torch.Size(shape).numel() > 200:
        x_in, x = drawn(100 + i, "randn", *shape)
    else:
        x = torch.randn(*shape) * 10
        x_in = x
    case(f"sum all {shape}", "sum", [x_in], x.sum())
    case(f"mean all {shape}", "mean", [x_in], x.mean())
    for dim in range(len(shape)):
        keepdim = dim % 2 == 1
        case(f"sum {shape} dim={dim} keepdim={keepdim}", "sum_dim", [x_in],
             x.sum(dim=dim, keepdim=keepdim), dim=dim, keepdim=keepdim)
        case(f"mean {shape} dim={dim}", "mean_dim", [x_in], x.mean(dim=dim), dim=dim,
             keepdim=False)
x = torch.tensor(-0.0)
case("sum of a 0-d -0.", "sum", [x], x.sum())
for shape, dim in [((0,), 0), ((3, 0), 0), ((3, 0), 1), ((0, 4), 0)]:
    x = torch.randn(*shape)
    case(f"sum of an empty {shape}", "sum", [x], x.sum())
    case(f"mean of an empty {shape}", "mean", [x], x.mean())
    case(f"sum {shape} dim={dim}", "sum_dim", [x], x.sum(dim=dim), dim=dim, keepdim=False)
    case(f"mean {shape} dim={dim}", "mean_dim", [x], x.mean(dim=dim), dim=dim, keepdim=False)

# Views: PyTorch walks memory, not the logical shape (op `sum_view`: permute, then maybe
# narrow, then sum or mean over `dim`, or everything when `dim` is null).
def view_case(name, x, permute, narrow, reduce, dim, keepdim=False, x_in=None):
    v = x.permute(*permute)
    if narrow is not None:
        v = v.narrow(*narrow)
    if dim is None:
        r = v.sum() if reduce == "sum" else v.mean()
    else:
        r = v.sum(dim=dim, keepdim=keepdim) if reduce == "sum" else v.mean(dim=dim, keepdim=keepdim)
    case(name, "sum_view", [x if x_in is None else x_in], r, permute=list(permute), narrow=narrow, reduce=reduce,
         dim=dim, keepdim=keepdim)


x_in, x = drawn(20, "randn", 40, 70)
for reduce in ["sum", "mean"]:
    for dim in [None, 0, 1]:
        view_case(f"{reduce} of (40, 70).T dim={dim}", x, (1, 0), None, reduce, dim, x_in=x_in)
    for dim in [None, 0, 1]:
        view_case(f"{reduce} of (40, 70)[:, 3:60] dim={dim}", x, (0, 1), [1, 3, 57], reduce, dim,
                  x_in=x_in)
x_in, x = drawn(19, "randn", 3, 20, 17)
for perm in [(2, 0, 1), (1, 2, 0), (0, 2, 1)]:
    for dim in [None, 0, 1, 2]:
        view_case(f"sum of (3, 20, 17).permute{perm} dim={dim}", x, perm, None, "sum", dim, True,
                  x_in)

# Large sums, split into one piece per thread (inputs stored as their draw).
for seed, dist, shape in [(11, "rand", (1000,)), (12, "rand", (40000,)), (13, "randn", (100001,)),
                          (14, "rand", (300000,)), (15, "randn", (300, 200)), (16, "rand", (200, 300)),
                          (17, "randn", (8, 70, 90))]:
    enc_x, x = drawn(seed, dist, *shape)
    case(f"sum all of {dist}{shape}", "sum", [enc_x], x.sum())
    case(f"mean all of {dist}{shape}", "mean", [enc_x], x.mean())
    for dim in range(len(shape)) if len(shape) > 1 else []:
        case(f"sum of {dist}{shape} dim={dim}", "sum_dim", [enc_x], x.sum(dim=dim), dim=dim,
             keepdim=False)
enc_x, x = drawn(18, "randn", 300, 200)
for dim in [None, 0, 1]:
    r = x.T.sum() if dim is None else x.T.sum(dim=dim)
    case(f"sum of randn(300, 200).T dim={dim}", "sum_view", [enc_x], r, permute=[1, 0],
         narrow=None, reduce="sum", dim=dim, keepdim=False)

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ops_fixtures.json"
# One case per line keeps diffs of regenerated fixtures readable.
body = ",\n".join(json.dumps(c) for c in cases)
header = {"torch_version": torch.__version__, "made_on": processor(),
          "cpu_capability": torch.backends.cpu.get_cpu_capability(),
          "num_threads": torch.get_num_threads()}
out.write_text(json.dumps(header)[:-1] + f', "cases": [\n{body}\n]}}\n')
print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
