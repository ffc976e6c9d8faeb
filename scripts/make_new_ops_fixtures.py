"""Makes tests/fixtures/new_ops_fixtures.json with real PyTorch 2.13.0: the tensor ops a
learner reaches for beyond the chapters' own (comparisons, where, isinf/isnan, allclose,
max/min/argmax/argmin, flatten, expand, split/chunk/unbind, gather, index_select, eye,
randint, bernoulli_, einsum with any number of operands and `...`), with NaN, infinities,
ties, empty and 0-d tensors, negative dims, broadcasting, and the errors PyTorch raises.

    python scripts/make_new_ops_fixtures.py   # needs torch==2.13.0 (reference/requirements.txt)

Same format as scripts/make_ops_fixtures.py. An error case stores a part of PyTorch's own
message (`expected_error`), checked here against the message PyTorch raised. The Rust side
is tests/src/parity/ops_cases/new_ops.rs.
"""
import json
import sys
from pathlib import Path

import torch

from fixture_json import enc, num

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)


def as_tensor(result):
    """A Python bool (allclose) becomes a 0-d bool tensor."""
    return torch.tensor(result) if isinstance(result, bool) else result


cases = []


def case(name, op, inputs, result, **args):
    if isinstance(result, (tuple, list)):
        expected = [enc(as_tensor(r)) for r in result]
        reprs = [repr(as_tensor(r)) for r in result]
    else:
        expected, reprs = enc(as_tensor(result)), repr(as_tensor(result))
    cases.append({"name": name, "op": op, "args": {k: num(v) for k, v in args.items()},
                  "inputs": [enc(t) for t in inputs], "expected": expected, "expected_repr": reprs})


def error(name, op, inputs, call, fragment, **args):
    try:
        call()
    except (RuntimeError, IndexError, ValueError) as e:
        assert fragment in str(e), f"{name}: {fragment!r} not in {str(e)!r}"
    else:
        raise AssertionError(f"{name}: PyTorch raised no error")
    cases.append({"name": name, "op": op, "args": {k: num(v) for k, v in args.items()},
                  "inputs": [enc(t) for t in inputs], "expected_error": fragment})


nan, inf = float("nan"), float("inf")
torch.manual_seed(11)

# --- comparisons, where, isinf/isnan, allclose -------------------------------------------
special = torch.tensor([[1.0, -0.0, nan, inf], [-inf, 0.0, 2.5, nan]])
other = torch.tensor([1.0, 0.0, nan, -inf])
for op in ["gt", "lt", "ge", "le", "ne", "eq"]:
    f = getattr(torch, op)
    case(f"{op} with NaN, ±inf, ±0, broadcast row", op, [special, other], f(special, other))
    case(f"{op} scalar 0", f"{op}_scalar", [special], f(special, 0.0), scalar=0.0)
    case(f"{op} scalar inf", f"{op}_scalar", [special], f(special, inf), scalar=inf)
    case(f"{op} scalar nan", f"{op}_scalar", [special], f(special, nan), scalar=nan)
a, b = torch.randn(3, 1, 4), torch.randn(2, 1)
case("gt broadcasts [3, 1, 4] with [2, 1]", "gt", [a, b], a > b)
case("lt of empty tensors", "lt", [torch.zeros(0, 3), torch.zeros(3)], torch.zeros(0, 3) < torch.zeros(3))
case("ge of 0-d tensors", "ge", [torch.tensor(1.0), torch.tensor(1.0)], torch.tensor(1.0) >= torch.tensor(1.0))
error("gt shapes do not broadcast", "gt", [torch.zeros(2), torch.zeros(3)],
      lambda: torch.zeros(2) > torch.zeros(3), "must match the size of tensor b (3) at non-singleton dimension 0")

cond = torch.tensor([[True], [False], [True]])
x, y = torch.randn(4), torch.tensor(-1.0)
case("where broadcasts all three", "where", [cond, x, y], torch.where(cond, x, y))
cond = torch.tensor([True, False, True, False])
case("where keeps NaN and inf of the chosen side", "where", [cond, special, special.flip(1)],
     torch.where(cond, special, special.flip(1)))
case("where on empty", "where", [torch.zeros(0, dtype=torch.bool), torch.zeros(0), torch.zeros(1)],
     torch.where(torch.zeros(0, dtype=torch.bool), torch.zeros(0), torch.zeros(1)))
error("where shapes do not broadcast", "where", [torch.ones(2, dtype=torch.bool), torch.zeros(3), torch.zeros(2)],
      lambda: torch.where(torch.ones(2, dtype=torch.bool), torch.zeros(3), torch.zeros(2)),
      "must match the size of tensor b")

case("isinf", "isinf", [special], torch.isinf(special))
case("isnan", "isnan", [special], torch.isnan(special))
case("isinf of 0-d", "isinf", [torch.tensor(-inf)], torch.isinf(torch.tensor(-inf)))
case("isnan of empty", "isnan", [torch.zeros(2, 0)], torch.isnan(torch.zeros(2, 0)))

want = torch.tensor([1000.0, 1.0, 0.0, inf, -inf])
for name, got in [("within rtol", torch.tensor([1000.009, 1.0, 1e-9, inf, -inf])),
                  ("beyond rtol", torch.tensor([1000.02, 1.0, 0.0, inf, -inf])),
                  ("beyond atol at zero", torch.tensor([1000.0, 1.0, 1e-7, inf, -inf])),
                  ("opposite infinities", torch.tensor([1000.0, 1.0, 0.0, -inf, -inf])),
                  ("finite against inf", torch.tensor([1000.0, 1.0, 0.0, 3e38, -inf]))]:
    case(f"allclose defaults: {name}", "allclose", [got, want], torch.allclose(got, want),
         rtol=1e-5, atol=1e-8, equal_nan=False)
n1 = torch.tensor([1.0, nan])
case("allclose NaN without equal_nan", "allclose", [n1, n1], torch.allclose(n1, n1), rtol=1e-5, atol=1e-8, equal_nan=False)
case("allclose NaN with equal_nan", "allclose", [n1, n1], torch.allclose(n1, n1, equal_nan=True), rtol=1e-5, atol=1e-8, equal_nan=True)
p, q = torch.tensor([1.0, 2.0]), torch.tensor([1.1, 2.2])
case("allclose rtol=0.1 is not symmetric (a, b)", "allclose", [p, q], torch.allclose(p, q, rtol=0.1, atol=0.0), rtol=0.1, atol=0.0, equal_nan=False)
case("allclose rtol=0.1 is not symmetric (b, a)", "allclose", [q, p], torch.allclose(q, p, rtol=0.1, atol=0.0), rtol=0.1, atol=0.0, equal_nan=False)
case("allclose broadcasts", "allclose", [torch.ones(2, 3), torch.ones(3)], torch.allclose(torch.ones(2, 3), torch.ones(3)), rtol=1e-5, atol=1e-8, equal_nan=False)
case("allclose of empty", "allclose", [torch.zeros(0), torch.zeros(0)], torch.allclose(torch.zeros(0), torch.zeros(0)), rtol=1e-5, atol=1e-8, equal_nan=False)
error("allclose negative rtol", "allclose", [p, q], lambda: torch.allclose(p, q, rtol=-1.0),
      "rtol must be greater than or equal to zero, but got -1", rtol=-1.0, atol=1e-8, equal_nan=False)
error("allclose shapes do not broadcast", "allclose", [torch.zeros(2), torch.zeros(3)],
      lambda: torch.allclose(torch.zeros(2), torch.zeros(3)), "must match the size of tensor b (3)",
      rtol=1e-5, atol=1e-8, equal_nan=False)

# --- max, min, argmax, argmin ----------------------------------------------------------
ties = torch.tensor([[1.0, 3.0, 3.0, 2.0], [5.0, -1.0, 5.0, -1.0], [nan, 1.0, nan, 9.0], [-0.0, 0.0, 0.0, -0.0]])
r = torch.randn(3, 4, 5)
for t, label in [(ties, "ties, NaN, ±0"), (r, "random [3, 4, 5]")]:
    for dim in range(-t.dim(), t.dim()):
        for keepdim in [False, True]:
            for op in ["max", "min"]:
                v, i = getattr(t, op)(dim=dim, keepdim=keepdim)
                case(f"{op}(dim={dim}, keepdim={keepdim}) of {label}", f"{op}_dim", [t], (v, i), dim=dim, keepdim=keepdim)
            for op in ["argmax", "argmin"]:
                case(f"{op}(dim={dim}, keepdim={keepdim}) of {label}", f"{op}_dim", [t],
                     getattr(t, op)(dim=dim, keepdim=keepdim), dim=dim, keepdim=keepdim)
    for op in ["max", "min", "argmax", "argmin"]:
        case(f"{op}() of {label}", op, [t], getattr(t, op)())
for t, label in [(torch.tensor([0.0, -0.0]), "[0., -0.]"), (torch.tensor([-0.0, 0.0]), "[-0., 0.]"),
                 (torch.tensor([-inf, -inf]), "[-inf, -inf]"), (torch.tensor([2.0, nan, 3.0]), "[2., nan, 3.]"),
                 (torch.tensor(7.0), "0-d")]:
    for op in ["max", "min", "argmax", "argmin"]:
        case(f"{op}() of {label}", op, [t], getattr(t, op)())
s = torch.tensor(2.5)
for dim in [0, -1]:
    case(f"max(dim={dim}) of 0-d", "max_dim", [s], s.max(dim=dim), dim=dim, keepdim=False)
    case(f"argmin(dim={dim}, keepdim) of 0-d", "argmin_dim", [s], s.argmin(dim=dim, keepdim=True), dim=dim, keepdim=True)
case("max(dim=1) of [0, 3]", "max_dim", [torch.zeros(0, 3)], torch.zeros(0, 3).max(dim=1), dim=1, keepdim=False)
error("max() of empty", "max", [torch.zeros(0)], lambda: torch.zeros(0).max(),
      "Expected reduction dim to be specified for input.numel() == 0")
error("min() of empty", "min", [torch.zeros(2, 0)], lambda: torch.zeros(2, 0).min(),
      "Expected reduction dim to be specified for input.numel() == 0")
error("argmax() of empty", "argmax", [torch.zeros(0)], lambda: torch.zeros(0).argmax(),
      "Expected reduction dim to be specified for input.numel() == 0")
error("max(dim=-1) over an empty dim", "max_dim", [torch.zeros(2, 0)], lambda: torch.zeros(2, 0).max(-1),
      "Expected reduction dim 1 to have non-zero size", dim=-1, keepdim=False)
error("argmin(dim=0) over an empty dim", "argmin_dim", [torch.zeros(0, 2)], lambda: torch.zeros(0, 2).argmin(0),
      "Expected reduction dim 0 to have non-zero size", dim=0, keepdim=False)
error("max(dim=2) of a matrix", "max_dim", [torch.zeros(2, 3)], lambda: torch.zeros(2, 3).max(2),
      "out of range", dim=2, keepdim=False)
error("argmax(dim=1) of 0-d", "argmax_dim", [s], lambda: s.argmax(1), "out of range", dim=1, keepdim=False)

a, b = torch.tensor([[1.0, nan, -inf, 2.0], [0.0, 3.0, inf, -0.0]]), torch.tensor([2.0, 1.0, 0.0, 0.0])
for op in ["maximum", "minimum"]:
    case(f"{op} with NaN, ±inf, broadcast row", op, [a, b], getattr(torch, op)(a, b))
    error(f"{op} shapes do not broadcast", op, [torch.zeros(2), torch.zeros(3)],
          lambda: getattr(torch, op)(torch.zeros(2), torch.zeros(3)), "must match the size of tensor b (3)")

# --- flatten, expand ---------------------------------------------------------------------
x = torch.randn(2, 3, 4)
for start, end in [(0, -1), (1, 2), (0, 1), (-2, -1), (1, 1), (2, 2)]:
    case(f"flatten({start}, {end}) of [2, 3, 4]", "flatten", [x], x.flatten(start, end), start_dim=start, end_dim=end)
case("flatten of a transposed view", "flatten_t", [x], x.transpose(0, 2).flatten(0, 1), start_dim=0, end_dim=1)
case("flatten of 0-d", "flatten", [s], s.flatten(), start_dim=0, end_dim=-1)
case("flatten of [2, 0, 3]", "flatten", [torch.zeros(2, 0, 3)], torch.zeros(2, 0, 3).flatten(1), start_dim=1, end_dim=-1)
error("flatten start after end", "flatten", [x], lambda: x.flatten(2, 1),
      "start_dim cannot come after end_dim", start_dim=2, end_dim=1)
error("flatten dim out of range", "flatten", [x], lambda: x.flatten(0, 3), "out of range", start_dim=0, end_dim=3)

col = torch.randn(3, 1)
for sizes in [[3, 4], [-1, 4], [2, 3, 4], [2, -1, -1], [3, 0], [0, 3, 1]]:
    case(f"expand [3, 1] to {sizes}", "expand", [col], col.expand(*sizes), sizes=sizes)
case("expand 0-d to [2, 2]", "expand", [s], s.expand(2, 2), sizes=[2, 2])
row = torch.randn(1, 3)
case("expand of a transposed column", "expand_t", [row], row.t().expand(3, 2), sizes=[3, 2])
error("expand a non-singleton dim", "expand", [torch.zeros(2, 3)], lambda: torch.zeros(2, 3).expand(3, 2),
      "must match the existing size (3) at non-singleton dimension 1", sizes=[3, 2])
error("expand with fewer sizes than dims", "expand", [torch.zeros(2, 3)], lambda: torch.zeros(2, 3).expand(3),
      "the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)", sizes=[3])
error("expand -1 in a new leading dim", "expand", [col], lambda: col.expand(-1, 3, 1),
      "isn't allowed in a leading, non-existing dimension 0", sizes=[-1, 3, 1])

# --- split, chunk, unbind ----------------------------------------------------------------
x = torch.randn(5, 6)
for size, dim in [(2, 0), (2, -1), (4, 1), (6, 1), (10, 0), (1, 0)]:
    case(f"split({size}, dim={dim}) of [5, 6]", "split", [x], x.split(size, dim), size=size, dim=dim)
case("split(0) of an empty dim", "split", [torch.zeros(0, 2)], torch.zeros(0, 2).split(0), size=0, dim=0)
case("split(2) of an empty dim", "split", [torch.zeros(0, 2)], torch.zeros(0, 2).split(2), size=2, dim=0)
for sizes, dim in [([1, 4], 0), ([0, 6], 1), ([2, 2, 2], -1)]:
    case(f"split({sizes}, dim={dim}) of [5, 6]", "split_sizes", [x], x.split(sizes, dim), sizes=sizes, dim=dim)
for n, dim in [(1, 0), (2, 0), (3, 1), (4, 1), (5, 1), (6, 0), (7, 0)]:
    case(f"chunk({n}, dim={dim}) of [5, 6]", "chunk", [x], x.chunk(n, dim), chunks=n, dim=dim)
case("chunk(3) of an empty dim", "chunk", [torch.zeros(0)], torch.zeros(0).chunk(3), chunks=3, dim=0)
for dim in [0, 1, -1]:
    case(f"unbind(dim={dim}) of [5, 6]", "unbind", [x], x.unbind(dim), dim=dim)
case("unbind of [0, 2]", "unbind", [torch.zeros(0, 2)], torch.zeros(0, 2).unbind(0), dim=0)
error("split(0) of a non-empty dim", "split", [x], lambda: x.split(0), "split_size can only be 0 if dimension size is 0, but got dimension size of 5", size=0, dim=0)
error("split sizes that do not add up", "split_sizes", [x], lambda: x.split([2, 2]),
      "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0), but got split_sizes=[2, 2]",
      sizes=[2, 2], dim=0)
error("chunk(0)", "chunk", [x], lambda: x.chunk(0), "chunk expects `chunks` to be greater than 0, got: 0", chunks=0, dim=0)
error("chunk of 0-d", "chunk", [s], lambda: s.chunk(2), "chunk expects at least a 1-dimensional tensor", chunks=2, dim=0)
error("split of 0-d", "split", [s], lambda: s.split(1), "split expects at least a 1-dimensional tensor", size=1, dim=0)
error("unbind of 0-d", "unbind", [s], lambda: s.unbind(0), "Dimension specified as 0 but tensor has no dimensions", dim=0)
error("unbind dim out of range", "unbind", [x], lambda: x.unbind(2), "out of range", dim=2)

# --- gather, index_select ----------------------------------------------------------------
x = torch.randn(3, 4)
for dim, index in [(0, [[0, 1, 2, 0], [2, 2, 2, 2]]), (1, [[3], [0], [1]]), (-1, [[0, 0, 1, 1, 3]] * 2),
                   (0, [[1, 1]]), (1, [[2, 0], [1, 3], [0, 0]])]:
    index = torch.tensor(index)
    case(f"gather(dim={dim}) with index {list(index.shape)}", "gather", [x, index], x.gather(dim, index), dim=dim)
case("gather with an empty index", "gather", [x, torch.zeros(0, 4, dtype=torch.long)],
     x.gather(0, torch.zeros(0, 4, dtype=torch.long)), dim=0)
case("gather of 0-d", "gather", [s, torch.tensor(0)], s.gather(0, torch.tensor(0)), dim=0)
case("gather with a 0-d index from a vector", "gather", [torch.arange(4.0), torch.tensor(2)],
     torch.arange(4.0).gather(0, torch.tensor(2)), dim=0)
error("gather index out of range", "gather", [x, torch.tensor([[4]])], lambda: x.gather(1, torch.tensor([[4]])),
      "index 4 is out of bounds for dimension 1 with size 4", dim=1)
error("gather negative index", "gather", [x, torch.tensor([[-1]])], lambda: x.gather(1, torch.tensor([[-1]])),
      "index -1 is out of bounds for dimension 1 with size 4", dim=1)
error("gather index with another rank", "gather", [x, torch.tensor([1])], lambda: x.gather(1, torch.tensor([1])),
      "Index tensor must have the same number of dimensions as input tensor", dim=1)
error("gather index larger than self", "gather", [x, torch.zeros(3, 5, dtype=torch.long)],
      lambda: x.gather(0, torch.zeros(3, 5, dtype=torch.long)), "Size does not match at dimension 1", dim=0)
for dim, index in [(0, [2, 0, 2]), (1, [3, 0]), (-1, []), (0, [1])]:
    index = torch.tensor(index, dtype=torch.long)
    case(f"index_select(dim={dim}) with {index.tolist()}", "index_select", [x, index], x.index_select(dim, index), dim=dim)
case("index_select with a 0-d index", "index_select", [x, torch.tensor(1)], x.index_select(1, torch.tensor(1)), dim=1)
case("index_select of 0-d", "index_select", [s, torch.tensor([0])], s.index_select(0, torch.tensor([0])), dim=0)
error("index_select index out of range", "index_select", [x, torch.tensor([4])],
      lambda: x.index_select(1, torch.tensor([4])), "out of", dim=1)
error("index_select negative index", "index_select", [x, torch.tensor([-1])],
      lambda: x.index_select(1, torch.tensor([-1])), "out of", dim=1)
error("index_select matrix index", "index_select", [x, torch.tensor([[1]])],
      lambda: x.index_select(1, torch.tensor([[1]])), "Index is supposed to be a vector", dim=1)

# --- eye, randint, bernoulli_ ------------------------------------------------------------
for n, m in [(0, 0), (1, 1), (3, 3), (2, 4), (4, 2), (0, 3)]:
    case(f"eye({n}, {m})", "eye", [], torch.eye(n, m), n=n, m=m)
for seed in [0, 1, 42, 123, 2024]:
    for low, high, shape in [(0, 10, [2, 5]), (-3, 3, [7]), (0, 50257, [4, 8]), (5, 6, [3]),
                             (0, 2 ** 28 + 1, [5]), (0, 2 ** 31, [5]), (-(2 ** 31), 2 ** 31, [5]),
                             (0, 2 ** 40, [3]), (-(2 ** 62), 2 ** 62, [3]), (0, 10, [0])]:
        torch.manual_seed(seed)
        case(f"randint({low}, {high}, {shape}) seed {seed}", "randint", [], torch.randint(low, high, shape),
             seed=seed, low=low, high=high, shape=shape)
    for p, shape in [(0.5, [4, 5]), (0.1, [20]), (0.0, [3]), (1.0, [3]), (0.73, [2, 3, 4])]:
        torch.manual_seed(seed)
        case(f"bernoulli_({p}) on {shape} seed {seed}", "bernoulli_", [], torch.empty(shape).bernoulli_(p),
             seed=seed, p=p, shape=shape)
    torch.manual_seed(seed)
    t = torch.empty(3, 4).t()
    case(f"bernoulli_(0.5) on a transposed view seed {seed}", "bernoulli_t", [], t.bernoulli_(0.5), seed=seed, p=0.5, shape=[3, 4])
    torch.manual_seed(seed)
    first = torch.randint(0, 100, (3,))
    second = torch.empty(4).bernoulli_(0.5)
    third = torch.rand(2)
    case(f"randint, bernoulli_ then rand share the stream, seed {seed}", "randint_bernoulli_rand", [],
         (first, second, third), seed=seed)
error("randint low == high", "randint", [], lambda: torch.randint(5, 5, (2,)),
      "random_ expects 'from' to be less than 'to', but got from=5 >= to=5", seed=0, low=5, high=5, shape=[2])
error("bernoulli_ p > 1", "bernoulli_", [], lambda: torch.empty(2).bernoulli_(1.5),
      "bernoulli_ expects p to be in [0, 1], but got p=1.5", seed=0, p=1.5, shape=[2])

# --- einsum ------------------------------------------------------------------------------
def ein(name, equation, *operands):
    case(f"einsum {equation}: {name}", "einsum_n", list(operands), torch.einsum(equation, *operands), equation=equation)


def ein_error(name, equation, operands, fragment):
    error(f"einsum {equation}: {name}", "einsum_n", list(operands),
          lambda: torch.einsum(equation, *operands), fragment, equation=equation)


r = torch.randn
ein("matmul", "ij,jk->ik", r(5, 16), r(16, 4))
ein("implicit output", "ij,jk", r(3, 4), r(4, 2))
ein("one-column matmul (a bmm, not mm, in PyTorch)", "ij,jk->ik", r(5, 5), r(5, 1))
ein("batched one-column matmul", "bij,bjk->bik", r(3, 4, 5), r(3, 5, 1))
ein("per-head projection", "sd,hde->hse", r(5, 16), r(4, 16, 4))
ein("batched scores", "bhqd,bhkd->bhqk", r(2, 3, 5, 8), r(2, 3, 6, 8))
ein("transpose", "ij->ji", r(3, 4))
ein("sum all", "ij->", r(3, 4))
ein("row sums", "ij->i", r(3, 7))
ein("trace", "ii->", r(4, 4))
ein("diagonal", "ii->i", r(4, 4))
ein("outer product", "i,j->ij", r(3), r(4))
ein("dot product", "i,i->", r(6), r(6))
ein("elementwise product", "ij,ij->ij", r(3, 4), r(3, 4))
ein("ellipsis batch matmul", "...ij,...jk->...ik", r(2, 3, 4, 5), r(2, 3, 5, 2))
ein("ellipsis broadcasts", "...ij,...jk->...ik", r(2, 1, 4, 5), r(3, 5, 2))
ein("ellipsis in the middle", "i...j->j...i", r(2, 3, 4, 5))
ein("implicit output with ellipsis", "...ij,...jk", r(2, 4, 5), r(5, 3))
ein("ellipsis covering no dims", "...ij,jk->...ik", r(4, 5), r(5, 3))
ein("letter of size 1 broadcasts", "ij,ij->ij", r(3, 1), r(1, 4))
ein("contracted letter of size 1 broadcasts", "ij,jk->ik", r(3, 1), r(5, 2))
ein("three operands", "ij,jk,kl->il", r(3, 4), r(4, 5), r(5, 2))
ein("three operands, attention", "bqd,bkd,bkv->bqv", r(2, 3, 4), r(2, 5, 4), r(2, 5, 6))
ein("four operands", "i,ij,jk,k->", r(3), r(3, 4), r(4, 2), r(2))
ein("one operand, permute and sum", "bij->jb", r(2, 3, 4))
ein("spaces", "i j , j k -> i k", r(2, 3), r(3, 2))
ein("empty operand", "ij,jk->ik", r(3, 0), r(0, 4))
ein_error("sizes disagree", "ij,jk->ik", [r(2, 3), r(2, 3)],
          "subscript j has size 2 for operand 1 which does not broadcast with previously seen size 3")
ein_error("unknown output letter", "ij->k", [r(2, 3)], "output subscript k does not appear in the equation for any input operand")
ein_error("too few operands", "ij,jk", [r(2, 3)], "fewer operands were provided than specified in the equation")
ein_error("too many operands", "ij", [r(2, 3), r(3, 2)], "more operands were provided than specified in the equation")
ein_error("rank does not match", "ijk->ij", [r(2, 3)],
          "the number of subscripts in the equation (3) does not match the number of dimensions (2) for operand 0 and no ellipsis was given")
ein_error("repeated letter of two sizes", "ii->i", [r(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2")
ein_error("two ellipses", "i...->...i...", [r(2, 3)], "found '.' for output but an ellipsis (...) was already found")
ein_error("digit", "i1->i", [r(2, 3)], "invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]")
ein_error("repeated output letter", "ij->ii", [r(2, 3)], "output subscript i appears more than once in the output")
ein("ellipsis in the output only", "ij->...ij", r(2, 3))

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "new_ops_fixtures.json"
# One case per line keeps diffs of regenerated fixtures readable.
body = ",\n".join(json.dumps(c) for c in cases)
out.write_text(f'{{"torch_version": "{torch.__version__}", "cases": [\n{body}\n]}}\n')
print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
