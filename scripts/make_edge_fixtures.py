"""Makes tests/fixtures/edge_fixtures.json with real PyTorch 2.13.0: the edge cases of the
operations, where a tensor crate most easily panics or silently differs. Empty and 0-d
tensors, sizes whose product overflows, views of transposed and sliced tensors, negative
positions in narrow and slicing, arange's checks and values, pow's recipe for each exponent,
masked_fill's broadcasting, nn.Linear with no inputs, and the error of each bad input.

    python scripts/make_edge_fixtures.py   # needs torch==2.13.0 (reference/requirements.txt)

A result case stores PyTorch's result as bit patterns and the text of print(result). An
error case stores `expected_error`, a part of PyTorch's message that the Rust message must
contain too; this script checks that PyTorch's message really contains it. Where PyTorch's
wording cannot apply to the Rust API (`ours=True`), the part is the Rust crate's own words,
and PyTorch's full message is kept next to it in `pytorch_error` to show that PyTorch
raised too. The Rust side is tests/src/parity/ops_cases/edges.rs.
"""
import json
import math
import struct
from pathlib import Path

import warnings

import torch

from fixture_json import enc, processor

# nn.Linear(0, n) warns that initialising its empty weight does nothing: that is the point.
warnings.filterwarnings("ignore", message="Initializing zero-element tensors is a no-op")
assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)


def f64_hex(x):
    return f"0x{struct.unpack('<Q', struct.pack('<d', x))[0]:016x}"


cases = []


def result(name, op, inputs, fn, ulp=0, **args):
    """A case where PyTorch returns a tensor (or a tuple of tensors)."""
    out = fn()
    case = {"name": name, "op": op, "args": args, "inputs": [enc(t) for t in inputs]}
    if isinstance(out, (tuple, list)):
        case["expected"] = [enc(t) for t in out]
        case["expected_repr"] = [repr(t) for t in out]
    else:
        case["expected"] = enc(out)
        case["expected_repr"] = repr(out)
    if ulp:
        # Within `ulp` units in the last place the printed digits can differ too.
        case["ulp"] = ulp
        del case["expected_repr"]
    cases.append(case)


def error(name, op, inputs, fn, part, ours=False, **args):
    """A case where PyTorch raises; `part` is in PyTorch's message (or, with `ours`, only in
    the Rust message, where PyTorch's wording does not fit the Rust API)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any PyTorch error is the expected outcome
        message = str(e).split("\n")[0]
    else:
        raise AssertionError(f"{name}: PyTorch did not raise")
    if not ours:
        assert part in message, f"{name}: {part!r} not in PyTorch's {message!r}"
    case = {"name": name, "op": op, "args": args, "inputs": [enc(t) for t in inputs],
            "expected_error": part}
    if ours:
        case["pytorch_error"] = message
    cases.append(case)


def prepared(t, prep):
    for step in prep:
        if step[0] == "t":
            t = t.t()
        elif step[0] == "transpose":
            t = t.transpose(step[1], step[2])
        elif step[0] == "permute":
            t = t.permute(*step[1])
        elif step[0] == "slice":
            t = t.narrow(step[1], step[2], step[3] - step[2])
        elif step[0] == "expand":
            t = t.expand(*step[1])
        elif step[0] == "select":
            t = t.select(step[1], step[2])
    return t


torch.manual_seed(11)
BIG = 2 ** 62
scalar = torch.tensor(2.5)

# ---- empty dims: an inner dim of 0 gives zeros (or the bias) ----
for sa, sb in [((2, 0), (0, 3)), ((0, 3), (3, 2)), ((2, 3), (3, 0)), ((0,), (0,)), ((4, 2, 0), (0, 3)),
               ((0, 2, 3), (3, 4)), ((2, 0, 3), (2, 3, 5)), ((3, 0), (0,)), ((0,), (0, 4)),
               ((2, 1, 3, 0), (4, 0, 2))]:
    a, b = torch.randn(*sa), torch.randn(*sb)
    result(f"matmul {sa} @ {sb}", "edge_matmul", [a, b], lambda: a @ b)
a, b = torch.randn(2, 3, 0), torch.randn(2, 0, 4)
result("bmm with k = 0", "edge_bmm", [a, b], lambda: torch.bmm(a, b))
a, b = torch.randn(0, 3, 2), torch.randn(0, 2, 4)
result("bmm with no batch", "edge_bmm", [a, b], lambda: torch.bmm(a, b))
a, b = torch.randn(2, 0), torch.randn(0, 3)
result("mm with k = 0", "edge_mm", [a, b], lambda: torch.mm(a, b))
result("dot of two empty vectors", "edge_dot", [torch.randn(0), torch.randn(0)],
       lambda: torch.dot(torch.randn(0), torch.randn(0)))
for shape in [(0, 3), (3, 0), (2, 0, 4)]:
    x = torch.randn(*shape)
    result(f"triu of {shape}", "edge_triu", [x], lambda: torch.triu(x, 1), diagonal=1)
    result(f"transpose of {shape}", "edge_transpose", [x], lambda: x.transpose(0, -1), dim0=0, dim1=-1)
    result(f"repeat of {shape}", "edge_repeat", [x], lambda: x.repeat(2, 1, 3), repeats=[2, 1, 3])
x = torch.randn(2, 3)
result("repeat 0 times", "edge_repeat", [x], lambda: x.repeat(0, 2), repeats=[0, 2])
x, m = torch.randn(0, 3), torch.zeros(0, 3, dtype=torch.bool)
result("masked_fill of an empty tensor", "edge_masked_fill", [x, m], lambda: x.masked_fill(m, 1.0), value=1.0)
# cat skips 1-D tensors with no elements, whatever the rank of the others
a, e = torch.randn(2, 3), torch.randn(0)
result("cat skips an empty 1-D tensor (dim 0)", "edge_cat", [a, e], lambda: torch.cat([a, e], 0), dim=0)
result("cat skips an empty 1-D tensor (dim 1)", "edge_cat", [a, e], lambda: torch.cat([a, e], 1), dim=1)
result("cat with the empty 1-D tensor first", "edge_cat", [e, a], lambda: torch.cat([e, a], -1), dim=-1)
e2 = torch.randn(0, 3)
result("cat with a [0, 3] tensor", "edge_cat", [a, e2, a], lambda: torch.cat([a, e2, a], 0), dim=0)
result("cat of empty 1-D tensors only", "edge_cat", [e, e], lambda: torch.cat([e, e], 0), dim=0)
error("cat of an empty [0, 2] with [2, 3]", "edge_cat", [a, torch.randn(0, 2)],
      lambda: torch.cat([a, torch.randn(0, 2)], 0),
      "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1 in the list",
      dim=0)
result("stack of empty tensors", "edge_stack", [e2, e2], lambda: torch.stack([e2, e2], 1), dim=1)

# ---- nn.Linear with no inputs: the weight is not drawn, the bias is +0 and still drawn ----
for fan_in, fan_out, bias in [(0, 3, True), (0, 3, False), (3, 0, True), (0, 0, True), (4, 3, True)]:
    def make():
        torch.manual_seed(7)
        layer = torch.nn.Linear(fan_in, fan_out, bias=bias)
        parts = [layer.weight.detach()]
        if bias:
            parts.append(layer.bias.detach())
        return parts + [torch.rand(2)]
    result(f"Linear({fan_in}, {fan_out}, bias={bias}): weight, bias, the next two rand values",
           "edge_linear_new", [], make, seed=7, **{"in": fan_in, "out": fan_out, "bias": bias})
x = torch.randn(4, 0)
def forward():
    torch.manual_seed(7)
    return torch.nn.Linear(0, 3)(x).detach()
result("Linear(0, 3) of a [4, 0] input is the bias", "edge_linear_forward", [x], forward,
       seed=7, **{"in": 0, "out": 3, "bias": True})

# ---- sizes whose product overflows: an error, never a wrap-around ----
for kind in ["zeros", "ones", "empty", "full", "rand", "randn"]:
    for size in [[BIG, 4], [BIG], [2 ** 32, 2 ** 32], [3, BIG, BIG]]:
        fn = {"zeros": lambda: torch.zeros(size), "ones": lambda: torch.ones(size),
              "empty": lambda: torch.empty(size), "full": lambda: torch.full(size, 1.5),
              "rand": lambda: torch.rand(size), "randn": lambda: torch.randn(size)}[kind]
        error(f"{kind}({size}) overflows", "edge_full", [], fn,
              f"Storage size calculation overflowed with sizes={size}", kind=kind, size=size,
              value=1.5, seed=0)
error("zeros with a 0 among sizes that overflow", "edge_full", [], lambda: torch.zeros(0, BIG, BIG),
      "overflow", kind="zeros", size=[0, BIG, BIG])
error("zeros too large to allocate", "edge_full", [], lambda: torch.zeros(2 ** 50),
      f"you tried to allocate {4 * 2 ** 50} bytes", kind="zeros", size=[2 ** 50])
for kind, size in [("zeros", [0, 3]), ("ones", [2, 0]), ("full", [0]), ("rand", [0, 4]), ("randn", [3, 0, 2])]:
    fn = {"zeros": torch.zeros, "ones": torch.ones, "rand": torch.rand, "randn": torch.randn,
          "full": lambda s: torch.full(s, 1.5)}[kind]
    result(f"{kind}({size})", "edge_full", [], lambda: fn(size), kind=kind, size=size, value=1.5, seed=0)
# from_vec(values, shape) is torch.empty(shape) filled with the values: the same check
for size in [[BIG, 4], [2 ** 32, 2 ** 32, 0]]:
    error(f"from_vec with shape {size}", "edge_from_vec", [], lambda: torch.empty(size),
          "overflow", size=size)
x = torch.randn(2, 3)
for reps in [[BIG, BIG], [BIG, 1], [2 ** 32, 2 ** 32]]:
    error(f"repeat {reps} overflows", "edge_repeat", [x], lambda: x.repeat(*reps),
          "Storage size calculation overflowed", ours=True, repeats=reps)
e = torch.randn(0)
error("view of 0 elements as sizes that overflow", "edge_view", [e], lambda: e.view(BIG, BIG, 0),
      "numel: integer multiplication overflow", shape=[BIG, BIG, 0])
error("reshape of 0 elements as sizes that overflow", "edge_reshape", [e],
      lambda: e.reshape(BIG, BIG, 0), "numel: integer multiplication overflow", shape=[BIG, BIG, 0])
x = torch.randn(6)
error("view of 6 elements as sizes that overflow", "edge_view", [x], lambda: x.view(BIG, BIG),
      "is invalid for input of size 6", ours=True, shape=[BIG, BIG])
error("narrow with a start beyond any size", "edge_narrow", [x], lambda: x.narrow(0, BIG, BIG),
      f"start out of range (expected to be in range of [-6, 6], but got {BIG})",
      dim=0, start=BIG, length=BIG)
error("narrow with a length beyond any size", "edge_narrow", [x], lambda: x.narrow(0, 1, 2 ** 63 - 1),
      f"start (1) + length ({2 ** 63 - 1}) exceeds dimension size (6)", dim=0, start=1, length=2 ** 63 - 1)
error("arange of 2^62 integers", "edge_arange_int", [], lambda: torch.arange(0, BIG, 1),
      f"Storage size calculation overflowed with sizes=[{BIG}]", start=0, end=BIG, step=1)

# ---- arange: PyTorch's checks, and values counted in f64 ----
def arange_float(name, start, end, step):
    fn = lambda: torch.arange(start, end, step)
    args = dict(start=f64_hex(start), end=f64_hex(end), step=f64_hex(step))
    try:
        fn()
    except RuntimeError as e:
        part = str(e).split("\n")[0]
        for known in ["upper bound and lower bound inconsistent with step sign", "step must be nonzero",
                      "unsupported range", "invalid size, possible overflow?"]:
            if known in part:
                part = known
        error(name, "edge_arange_float", [], fn, part, **args)
        return
    result(name, "edge_arange_float", [], fn, **args)


arange_float("arange(0., 1., 0.1) ends in 0.9", 0.0, 1.0, 0.1)
for start, step in [(0.0, 0.1), (0.1, 0.3), (-3.7, 0.7), (1e5, 0.01), (0.3, 1 / 3), (-1.0, -0.7),
                    (2.0, -0.1), (1e-3, 2.5), (0.5, 1e-3), (-7.25, 0.125), (1e7, 0.1), (123.456, -0.37),
                    # values that cross 0, where one rounding (a fused multiply-add) shows
                    (0.7, -0.1), (-1.3, 0.1), (3.3, -0.3), (5.0, -1 / 3), (-2.0, 0.37), (0.9, -0.01)]:
    for n in [1, 3, 10, 16, 17, 31, 33, 100, 1000, 5000]:
        end = start + step * n - step * 0.5
        arange_float(f"arange({start}, {end}, {step})", start, end, step)
for start, end, step in [(0.0, 5.0, -1.0), (5.0, 0.0, 1.0), (0.0, 5.0, 0.0), (0.0, math.inf, 1.0),
                         (-math.inf, 0.0, 1.0), (0.0, math.nan, 1.0), (0.0, 1.0, math.nan),
                         (0.0, 1e30, 1.0), (1.0, 1.0, 0.5), (1.0, 1.0, -0.5), (0.0, 1.0, math.inf)]:
    arange_float(f"arange({start}, {end}, {step})", start, end, step)
for start, end, step in [(0, 5, 1), (5, 0, -1), (0, 10, 3), (-7, 8, 4), (3, 3, 1), (0, 5, -1),
                         (5, 0, 1), (0, 5, 0), (-(2 ** 62), 2 ** 62, 2 ** 61)]:
    fn = lambda: torch.arange(start, end, step)
    try:
        fn()
        result(f"arange({start}, {end}, {step}) of integers", "edge_arange_int", [], fn,
               start=start, end=end, step=step)
    except RuntimeError as e:
        part = str(e).split("\n")[0]
        error(f"arange({start}, {end}, {step}) of integers", "edge_arange_int", [], fn, part,
              start=start, end=end, step=step)

# ---- masked_fill: out of place, self broadcasts to the mask's shape; in place it cannot ----
for sx, sm in [((3,), (2, 3)), ((1, 3), (2, 1)), ((2, 3), (3,)), ((), (2, 2)), ((2, 1, 3), (4, 1)), ((), ())]:
    x = torch.randn(sx)
    m = torch.rand(sm) > 0.5
    result(f"masked_fill {sx} with a {sm} mask", "edge_masked_fill", [x, m], lambda: x.masked_fill(m, -1.5),
           value=-1.5)
    if torch.broadcast_shapes(sx, sm) != torch.Size(sx):
        error(f"masked_fill_ {sx} with a {sm} mask", "edge_masked_fill_", [x, m],
              lambda: x.clone().masked_fill_(m, -1.5),
              f"output with shape {list(sx)} doesn't match the broadcast shape", value=-1.5)
x, m = torch.randn(3), torch.rand(2) > 0.5
error("masked_fill with a mask that does not broadcast", "edge_masked_fill", [x, m],
      lambda: x.masked_fill(m, 0.0), "size of tensor a (2) must match the size of tensor b (3)", value=0.0)
for value in [math.inf, -math.inf, math.nan]:
    x, m = torch.randn(2, 3), torch.rand(2, 3) > 0.5
    result(f"masked_fill with {value}", "edge_masked_fill", [x, m], lambda: x.masked_fill(m, value),
           value=str(value))

# ---- 0-d tensors and dim 0 / -1 ----
s = scalar
for dim in [0, -1]:
    error(f"size({dim}) of a 0-d tensor", "edge_size", [s], lambda: s.size(dim),
          f"Dimension specified as {dim} but tensor has no dimensions", dim=dim)
    result(f"softmax({dim}) of a 0-d tensor", "softmax", [s], lambda: s.softmax(dim), dim=dim)
    result(f"unsqueeze({dim}) of a 0-d tensor", "edge_unsqueeze", [s], lambda: s.unsqueeze(dim), dim=dim)
    result(f"squeeze({dim}) of a 0-d tensor", "edge_squeeze_dim", [s], lambda: s.squeeze(dim), dim=dim)
    result(f"transpose(0, {dim}) of a 0-d tensor", "edge_transpose", [s], lambda: s.transpose(0, dim),
           dim0=0, dim1=dim)
    result(f"stack of 0-d tensors, dim {dim}", "edge_stack", [s, s], lambda: torch.stack([s, s], dim), dim=dim)
    error(f"cat of 0-d tensors, dim {dim}", "edge_cat", [s, s], lambda: torch.cat([s, s], dim),
          "zero-dimensional tensor (at position 0) cannot be concatenated", dim=dim)
    error(f"select({dim}, 0) of a 0-d tensor", "edge_select", [s], lambda: s.select(dim, 0),
          "select() cannot be applied to a 0-dim tensor", dim=dim, index=0)
    error(f"narrow({dim}, 0, 1) of a 0-d tensor", "edge_narrow", [s], lambda: s.narrow(dim, 0, 1),
          "narrow() cannot be applied to a 0-dim tensor", dim=dim, start=0, length=1)
for dim in [1, -2]:
    part = f"expected to be in range of [-1, 0], but got {dim}"
    error(f"softmax({dim}) of a 0-d tensor", "softmax", [s], lambda: s.softmax(dim), part, dim=dim)
    error(f"squeeze({dim}) of a 0-d tensor", "edge_squeeze_dim", [s], lambda: s.squeeze(dim), part, dim=dim)
    error(f"transpose(0, {dim}) of a 0-d tensor", "edge_transpose", [s], lambda: s.transpose(0, dim), part,
          dim0=0, dim1=dim)
    error(f"stack of 0-d tensors, dim {dim + 1 if dim > 0 else dim}", "edge_stack", [s, s],
          lambda: torch.stack([s, s], dim + 1 if dim > 0 else dim),
          f"expected to be in range of [-1, 0], but got {dim + 1 if dim > 0 else dim}",
          dim=dim + 1 if dim > 0 else dim)
error("unsqueeze(2) of a 0-d tensor", "edge_unsqueeze", [s], lambda: s.unsqueeze(2),
      "expected to be in range of [-1, 0], but got 2", dim=2)
error("slice of a 0-d tensor", "edge_slice", [s], lambda: s[0:1], "slice() cannot be applied to a 0-dim tensor",
      dim=0, start=0, end=1)
error("cat of a vector and a 0-d tensor", "edge_cat", [torch.randn(2), s], lambda: torch.cat([torch.randn(2), s]),
      "zero-dimensional tensor (at position 1) cannot be concatenated", dim=0)
result("t() of a 0-d tensor", "edge_t", [s], lambda: s.t())
result("permute() of a 0-d tensor", "edge_permute", [s], lambda: s.permute([]), dims=[])
for shape in [[1], [], [-1], [1, 1, -1]]:
    result(f"view of a 0-d tensor as {shape}", "edge_view", [s], lambda: s.view(shape), shape=shape)
result("repeat of a 0-d tensor", "edge_repeat", [s], lambda: s.repeat(2, 3), repeats=[2, 3])
error("matmul with a 0-d tensor", "edge_matmul", [torch.randn(3), s], lambda: torch.matmul(torch.randn(3), s),
      "both arguments to matmul need to be at least 1D, but they are 1D and 0D")
for e in [2.0, 0.5, -0.5, 3.0]:
    result(f"0-d ** {e}", "edge_pow", [s], lambda: s ** e, exponent=e, ulp=1 if e == 0.5 else 0)

# ---- dims out of range name the range, with the right rank words ----
x = torch.randn(3)
error("softmax(1) of a vector", "softmax", [x], lambda: x.softmax(1),
      "expected to be in range of [-1, 0], but got 1", dim=1)
x = torch.randn(3, 3)
error("unsqueeze(3) of a matrix", "edge_unsqueeze", [x], lambda: x.unsqueeze(3),
      "expected to be in range of [-3, 2], but got 3", dim=3)
error("unsqueeze(-4) of a matrix", "edge_unsqueeze", [x], lambda: x.unsqueeze(-4),
      "expected to be in range of [-3, 2], but got -4", dim=-4)
error("stack of vectors at dim 2", "edge_stack", [torch.randn(3), torch.randn(3)],
      lambda: torch.stack([torch.randn(3)] * 2, 2), "expected to be in range of [-2, 1], but got 2", dim=2)
error("cat at dim 2 of matrices", "edge_cat", [x, x], lambda: torch.cat([x, x], 2),
      "expected to be in range of [-2, 1], but got 2", dim=2)
error("permute with a dim out of range", "edge_permute", [x], lambda: x.permute(0, 2),
      "expected to be in range of [-2, 1], but got 2", dims=[0, 2])
error("permute with a repeated dim", "edge_permute", [x], lambda: x.permute(0, 0),
      "duplicate dims are not allowed", dims=[0, 0])
error("t() of a 3-D tensor", "edge_t", [torch.randn(2, 3, 4)], lambda: torch.randn(2, 3, 4).t(),
      "expects a tensor with <= 2 dimensions, but self is 3D")
error("select out of range", "edge_select", [torch.randn(3, 4)], lambda: torch.randn(3, 4).select(1, 4),
      "index 4 is out of bounds for dimension 1 with size 4", ours=True, dim=1, index=4)
error("select in an empty dim", "edge_select", [torch.randn(0, 4)], lambda: torch.randn(0, 4).select(0, 0),
      "index 0 is out of bounds for dimension 0 with size 0", ours=True, dim=0, index=0)
a, b = torch.randn(3, 2), torch.randn(3, 2)
error("mm of mismatched matrices", "edge_mm", [a, b], lambda: torch.mm(a, b),
      "mat1 and mat2 shapes cannot be multiplied (3x2 and 3x2)")
error("mm of a matrix and a vector", "edge_mm", [a, torch.randn(2)], lambda: torch.mm(a, torch.randn(2)),
      "mat2 must be a matrix")
error("bmm of matrices", "edge_bmm", [a, b], lambda: torch.bmm(a, b), "batch1 must be a 3D tensor")
a, b = torch.randn(3, 2, 2), torch.randn(2, 2, 2)
error("bmm with different batches", "edge_bmm", [a, b], lambda: torch.bmm(a, b),
      "Expected size for first two dimensions of batch2 tensor to be: [3, 2] but got: [2, 2]")
a, b = torch.randn(3), torch.randn(2)
error("dot of different lengths", "edge_dot", [a, b], lambda: torch.dot(a, b),
      "inconsistent tensor size, expected tensor [3] and src [2] to have the same number of elements")
error("matmul of vectors of different lengths", "edge_matmul", [a, b], lambda: torch.matmul(a, b),
      "inconsistent tensor size, expected tensor [3] and src [2] to have the same number of elements")
a, b = torch.randn(2, 3, 2), torch.randn(3, 2)
error("matmul of a batch and a matrix that do not fit", "edge_matmul", [a, b], lambda: a @ b,
      "mat1 and mat2 shapes cannot be multiplied (6x2 and 3x2)")
a, b = torch.randn(2, 3, 2), torch.randn(3, 2, 2)
error("matmul with batches that do not broadcast", "edge_matmul", [a, b], lambda: a @ b,
      "size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0")
error("cat of different ranks", "edge_cat", [torch.randn(2, 3), torch.randn(3)],
      lambda: torch.cat([torch.randn(2, 3), torch.randn(3)]), "Tensors must have same number of dimensions: got 2 and 1",
      dim=0)
error("stack of different shapes", "edge_stack", [torch.randn(2, 3), torch.randn(3)],
      lambda: torch.stack([torch.randn(2, 3), torch.randn(3)]),
      "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3] at entry 1", dim=0)
error("repeat with fewer repeats than dims", "edge_repeat", [torch.randn(2, 3)],
      lambda: torch.randn(2, 3).repeat(2),
      "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor", repeats=[2])

# ---- view: PyTorch's stride rule on tensors that are not contiguous ----
x6 = torch.arange(6.0).view(2, 3)
x24 = torch.randn(2, 3, 4)
views = [
    (x6, [["t"]], [3, 2]), (x6, [["t"]], [6]), (x6, [["t"]], [3, 1, 2]), (x6, [["t"]], [1, 3, 2, 1]),
    (x24, [["permute", [2, 0, 1]]], [4, 6]), (x24, [["permute", [2, 0, 1]]], [2, 2, 6]),
    (x24, [["permute", [2, 0, 1]]], [4, 2, 3]), (x24, [["permute", [2, 0, 1]]], [24]),
    (x24, [["permute", [1, 2, 0]]], [12, 2]), (x24, [["permute", [1, 2, 0]]], [3, 8]),
    (x24, [["slice", 1, 0, 2]], [4, 4]), (x24, [["slice", 1, 0, 2]], [2, 8]),
    (x24, [["slice", 2, 0, 2]], [2, 3, 2]), (x24, [["slice", 2, 0, 2]], [6, 2]),
    (x24, [["slice", 2, 0, 2]], [12]), (x24, [["slice", 2, 1, 3]], [6, -1]),
    (x24, [["transpose", 0, 1]], [3, 8]), (x24, [["transpose", 0, 1]], [3, 2, 2, 2]),
    (x24, [["transpose", 1, 2]], [2, 12]), (x24, [["transpose", 1, 2]], [-1, 3]),
    (x6, [["t"], ["slice", 0, 0, 1]], [2]), (x6, [["t"], ["slice", 0, 1, 2]], [1, 2]),
    (torch.randn(3, 0), [["t"]], [0, 3]), (torch.randn(3, 0), [["t"]], [-1]),
    (torch.randn(4, 1, 3), [["transpose", 0, 1]], [12]), (torch.randn(4, 1, 3), [["transpose", 0, 2]], [3, 4]),
    # expand is a view whose repeats step by 0: only some regroupings are views
    (torch.randn(3, 1), [["expand", [3, 4]]], [12]), (torch.randn(3, 1), [["expand", [3, 4]]], [3, 2, 2]),
    (torch.randn(3, 1), [["expand", [3, 4]]], [3, 4, 1]), (torch.randn(1, 4), [["expand", [3, 4]]], [12]),
    (torch.randn(1, 4), [["expand", [3, 4]]], [3, 2, 2]), (torch.randn(1, 4), [["expand", [2, 3, 4]]], [6, 4]),
    (torch.randn(2, 1, 3), [["expand", [2, 5, 3]]], [10, 3]), (torch.randn(2, 1, 3), [["expand", [2, 5, 3]]], [2, 15]),
    (torch.randn(3, 1), [["expand", [3, 4]], ["t"]], [2, 2, 3]), (torch.randn(3, 1), [["expand", [3, 4]], ["t"]], [12]),
    (torch.randn(3, 1), [["expand", [3, 0]]], [0]),
]
for base, prep, shape in views:
    t = prepared(base, prep)
    fn = lambda: t.view(shape)
    name = f"view of {list(base.shape)} after {prep} as {shape}"
    try:
        fn()
    except RuntimeError:
        error(name, "edge_view", [base], fn,
              "view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces)", prep=prep, shape=shape)
        # reshape copies where view cannot
        result(name.replace("view", "reshape", 1), "edge_reshape", [base], lambda: t.reshape(shape),
               prep=prep, shape=shape)
    else:
        result(name, "edge_view", [base], fn, prep=prep, shape=shape)
for base, shape, part in [
    (torch.randn(0, 3), [-1, 0], "cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified "
                                 "dimension size -1 can be any value and is ambiguous"),
    (torch.randn(6), [4, -1], "shape '[4, -1]' is invalid for input of size 6"),
    (torch.randn(6), [-2, 3], "invalid shape dimension -2 at index 0 of shape [-2, 3]"),
    (torch.randn(6), [-1, -1], "only one dimension can be inferred"),
    (torch.randn(6), [7], "shape '[7]' is invalid for input of size 6"),
]:
    error(f"view of {list(base.shape)} as {shape}", "edge_view", [base], lambda: base.view(shape), part, shape=shape)
result("view of 0 elements as [-1]", "edge_view", [torch.randn(0)], lambda: torch.randn(0).view(-1), shape=[-1])

# ---- expand: a view with stride 0, which later views keep ----
column, row = torch.randn(3, 1), torch.randn(1, 4)
for base, prep in [(column, [["expand", [3, 4]]]), (row, [["expand", [3, 4]]]), (column, [["expand", [3, 1]]]),
                   (column, [["expand", [3, 0]]]), (column, [["expand", [2, 3, 4]], ["transpose", 0, 1]]),
                   (row, [["expand", [3, 4]], ["slice", 1, 1, 3]]), (row, [["expand", [1, 4]]]),
                   (column, [["expand", [3, 4]], ["slice", 0, 1, 2]])]:
    t = prepared(base, prep)
    result(f"is_contiguous of {list(base.shape)} after {prep}", "edge_is_contiguous", [base],
           lambda: torch.tensor(t.is_contiguous()), prep=prep)
for base, prep, dim, index in [(column, [["expand", [3, 4]]], 0, 1), (column, [["expand", [3, 4]]], 1, 2),
                               (row, [["expand", [2, 3, 4]]], 1, -1)]:
    t = prepared(base, prep)
    result(f"select({dim}, {index}) of {list(base.shape)} after {prep}", "edge_select", [base],
           lambda: t.select(dim, index), prep=prep, dim=dim, index=index)
    result(f"is_contiguous of select({dim}, {index}) of {list(base.shape)} after {prep}", "edge_is_contiguous",
           [base], lambda: torch.tensor(t.select(dim, index).is_contiguous()),
           prep=prep + [["select", dim, index]])
result("sum of [3, 1] expanded to [3, 4]", "edge_expanded_sum", [column], lambda: column.expand(3, 4).sum(1),
       sizes=[3, 4], dim=1)
result("softmax of [1, 4] expanded to [3, 4]", "edge_expanded_softmax", [row],
       lambda: row.expand(3, 4).softmax(-1), sizes=[3, 4], dim=-1)
w = torch.randn(4, 2)
result("matmul of [1, 4] expanded to [3, 4] by [4, 2]", "edge_expanded_matmul", [row, w],
       lambda: row.expand(3, 4) @ w, sizes=[3, 4])

# ---- narrow and slicing: negative positions count from the end, slices clamp ----
v = torch.arange(6.0)
m = torch.randn(3, 5)
for t, dim, start, length in [(v, 0, -2, 2), (v, 0, -6, 6), (v, 0, 6, 0), (v, 0, 0, 6), (v, 0, -1, 1),
                              (m, 1, -3, 2), (m, -1, -5, 5), (m, 0, 3, 0), (m, 0, -3, 0)]:
    result(f"narrow({dim}, {start}, {length}) of {list(t.shape)}", "edge_narrow", [t],
           lambda: t.narrow(dim, start, length), dim=dim, start=start, length=length)
for t, dim, start, length in [(v, 0, -7, 1), (v, 0, 7, 0), (v, 0, 4, 3), (v, 0, -2, 3), (m, 1, 5, 1)]:
    fn = lambda: t.narrow(dim, start, length)
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        part = str(e).split("\n")[0].rstrip(".")
    error(f"narrow({dim}, {start}, {length}) of {list(t.shape)}", "edge_narrow", [t], fn, part,
          dim=dim, start=start, length=length)
for start, end in [(-2, None), (-10, 3), (4, 2), (None, -1), (-1, -3), (10, None), (None, -10), (1, 100),
                   (-100, 100), (None, None), (-6, -5), (3, -3), (2, 4)]:
    for t, dim in [(v, 0), (m, 1), (m, 0)]:
        idx = [slice(None)] * t.dim()
        idx[dim] = slice(start, end)
        result(f"slice [{start}:{end}] of dim {dim} of {list(t.shape)}", "edge_slice", [t],
               lambda: t[tuple(idx)], dim=dim, start=start, end=end)

# ---- pow: one recipe per exponent ----
torch.manual_seed(5)
specials = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40, 3e38, -3e38, 1.0, -1.0, 2.0,
                         0.5, -2.0, 1e-20, 1e20])
values = torch.cat([specials, torch.randn(300) * 3, torch.rand(300) * 100, torch.rand(21)])
for e in [0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -0.5]:
    result(f"x ** {e}", "edge_pow", [values], lambda: values ** e, exponent=e)
# sqrt comes from a vector library on PyTorch's side: within one unit in the last place
result("x ** 0.5", "edge_pow", [values], lambda: values ** 0.5, exponent=0.5, ulp=1)
roots = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, 4.0, -4.0, 0.25, 1e-40])
result("special values ** 0.5", "edge_pow", [roots], lambda: roots ** 0.5, exponent=0.5)
for e in [1.5, -3.0, 4.0, 0.3, 2.5, -1.5, 7.0]:
    # The general case: a vectorised powf in blocks of 8, correctly rounded powf for the rest
    result(f"x ** {e}", "edge_pow", [values], lambda: values ** e, exponent=e, ulp=1)

out = {"torch_version": torch.__version__, "made_on": processor(), "cases": cases}
path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "edge_fixtures.json"
path.write_text(json.dumps(out, indent=1) + "\n")
print(f"{len(cases)} cases written to {path}")
