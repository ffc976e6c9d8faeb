"""Makes tests/fixtures/norm_fixtures.json with real PyTorch 2.13.0: the elementwise maths
(abs, clamp, relu, tanh, log), GELU in both forms, var/std, layer_norm and rms_norm (as
functions and as nn.LayerNorm / nn.RMSNorm), on random rows of every length from 1 to 100
and some long ones, constant rows, large offsets, signed zeros, infinities, NaN,
subnormals, empty and 0-d tensors, ranks 1 to 4, and the errors of bad shapes and dims.

    python scripts/make_norm_fixtures.py   # needs torch==2.13.0 (reference/requirements.txt)

Values are stored as float32 bit patterns and compared bit for bit, except tanh and log
(`"ulp": 1`): PyTorch takes those from MKL's closed vector library, `shared` rounds the
exact value. Long inputs are not stored but described as a ramp (`start + i * step` in
float32, as `torch.arange(n) * step + start` computes it).

GELU depends on the CPU (oneDNN's "none" kernel differs with and without AVX-512, ATen's
kernels on the vector width) and, for long tensors, on the thread count: the file records
both, and those cases carry `"depends_on_cpu": true`.
"""
import json
import math
import sys
from pathlib import Path

import torch

from fixture_json import enc, num
import torch.nn.functional as F

assert torch.__version__.startswith("2.13.0"), torch.__version__
torch.set_grad_enabled(False)


cases = []


def windows(n):
    """The parts of a long result that are kept: both ends and the middle, where the
    threads' ranges meet (each range has its own vector blocks and tail)."""
    return [[0, 64], [n // 2 - 96, n // 2 + 96], [n - 96, n]]


def case(name, op, inputs, fn, ulp=0, cpu=False, ramp=None, error_part=None, **args):
    """Runs `fn()` and records its result, or the message of the error it raises. A case
    whose input is a `ramp` keeps only `windows(n)` of its flattened result. `error_part`
    keeps only that part of PyTorch's message (which must contain it)."""
    c = {"name": name, "op": op, "args": {k: num(v) for k, v in args.items()}}
    if ramp is not None:
        c["args"]["ramp"] = ramp
        c["args"]["keep"] = windows(ramp["n"])
    c["inputs"] = [enc(t) for t in inputs]
    try:
        result = fn()
        if ramp is not None and result.numel() > 1:
            flat = result.flatten()
            result = torch.cat([flat[a:b] for a, b in c["args"]["keep"]])
        c["expected"] = enc(result)
        if result.numel() <= 100:  # printing is tested elsewhere; short texts suffice here
            c["expected_repr"] = repr(result)
    except (RuntimeError, IndexError, ValueError) as e:
        message = str(e).split("\n")[0]
        assert error_part is None or error_part in message, (error_part, message)
        c["expected_error"] = error_part or message
    if ulp:
        c["ulp"] = ulp
    if cpu:
        c["depends_on_cpu"] = True
    cases.append(c)


def ramp(n, start, step):
    return torch.arange(n, dtype=torch.float32) * step + start


torch.manual_seed(11)
tiny = 1.1754944e-38
specials = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, math.inf, -math.inf, math.nan,
                         1e-40, -1e-40, 1.4e-45, tiny, 3.4028235e38, -3.4028235e38, 1e-30, 1e30,
                         5.5425944, -5.5425944, 8.6643397, -8.6643397, 88.7, -87.4, 20.0, -20.0,
                         0.15625, 0.1875, 3.0, -3.75, 12.0])

# ---- elementwise: abs, clamp, relu, tanh, log
case("abs of special values", "abs", [specials], lambda: torch.abs(specials))
x = torch.randn(3, 4) * 2
case("abs 3x4", "abs", [x], lambda: x.abs())
for lo, hi in [(-0.5, 1.0), (0.0, None), (None, 0.0), (2.0, 1.0), (math.nan, 1.0), (0.0, math.nan),
               (-0.0, 0.0), (0.0, -0.0), (-math.inf, math.inf), (None, None)]:
    case(f"clamp min={lo} max={hi}", "clamp", [specials],
         lambda: torch.clamp(specials, lo, hi), min=lo, max=hi,
         error_part="At least one of 'min' or 'max' must not be None")
x = torch.randn(2, 3, 4)
case("clamp_min 0.1 on 2x3x4", "clamp_min", [x], lambda: torch.clamp_min(x, 0.1), min=0.1)
case("clamp_max -0.2 on 2x3x4", "clamp_max", [x], lambda: torch.clamp_max(x, -0.2), max=-0.2)
case("relu of special values", "relu", [specials], lambda: torch.relu(specials))
case("relu 2x3x4", "relu", [x], lambda: torch.relu(x))
case("relu of a 0-d tensor", "relu", [torch.tensor(-3.0)], lambda: torch.relu(torch.tensor(-3.0)))
case("relu of an empty tensor", "relu", [torch.ones(0, 3)], lambda: torch.relu(torch.ones(0, 3)))
for scale in [0.01, 1.0, 5.0, 30.0]:
    x = torch.randn(500) * scale
    case(f"tanh of randn*{scale}", "tanh", [x], lambda: torch.tanh(x), ulp=1)
case("tanh of special values", "tanh", [specials], lambda: torch.tanh(specials), ulp=1)
for scale in [1e-3, 1.0, 1e3, 1e30]:
    x = torch.rand(500) * scale
    case(f"log of rand*{scale}", "log", [x], lambda: torch.log(x), ulp=1)
case("log of special values", "log", [specials], lambda: torch.log(specials), ulp=1)
x = torch.rand(2, 3, 4) + 0.5
case("log 2x3x4", "log", [x], lambda: torch.log(x), ulp=1)

# ---- GELU, both forms
for approximate in ["none", "tanh"]:
    for n in list(range(1, 101)) + [127, 255, 1000, 1023]:
        x = torch.randn(n) * 3
        case(f"gelu {approximate} n={n}", "gelu", [x], lambda: F.gelu(x, approximate=approximate),
             cpu=True, approximate=approximate)
    case(f"gelu {approximate} of special values", "gelu", [specials],
         lambda: F.gelu(specials, approximate=approximate), cpu=True, approximate=approximate)
    x = torch.randn(2, 3, 4, 5)
    case(f"gelu {approximate} 2x3x4x5", "gelu", [x], lambda: F.gelu(x, approximate=approximate),
         cpu=True, approximate=approximate)
    case(f"gelu {approximate} of a 0-d tensor", "gelu", [torch.tensor(-0.75)],
         lambda: F.gelu(torch.tensor(-0.75), approximate=approximate), approximate=approximate)
    case(f"gelu {approximate} of an empty tensor", "gelu", [torch.ones(2, 0)],
         lambda: F.gelu(torch.ones(2, 0), approximate=approximate), approximate=approximate)
    x = torch.randn(24, 100) * 3
    case(f"gelu {approximate} of a transposed 24x100", "gelu_t", [x],
         lambda: F.gelu(x.T, approximate=approximate), cpu=True, approximate=approximate)
    # A view with gaps: ATen's loop runs row by row, each row with its own tail.
    x = torch.randn(24, 100) * 3
    case(f"gelu {approximate} of a 24x100 narrowed to 24x50", "gelu_narrow", [x],
         lambda: F.gelu(x.narrow(1, 0, 50), approximate=approximate), cpu=True,
         approximate=approximate, dim=1, start=0, length=50)
    # One-element tensors take ATen's scalar path (the C library's erff or tanhf).
    x = torch.cat([torch.randn(300) * 3, specials])
    case(f"gelu {approximate} one element at a time", "gelu_each", [x],
         lambda: torch.cat([F.gelu(v.reshape(1), approximate=approximate) for v in x]),
         approximate=approximate)
    # Long tensors are split between threads, each range with its own tail.
    for n in [16384, 16385, 20001, 40001]:
        r = dict(n=n, start=-7.0, step=14.0 / n)
        x = ramp(**r)
        case(f"gelu {approximate} of a ramp of {n}", "gelu", [], lambda: F.gelu(x, approximate=approximate),
             cpu=True, ramp=r, approximate=approximate)
case("gelu with an unknown approximation", "gelu", [specials],
     lambda: F.gelu(specials, approximate="erf"), approximate="erf")

# ---- var and std
def spread(name, x, dim, correction, keepdim, stored=True, r=None):
    for op, f in [("var", torch.var), ("std", torch.std)]:
        case(f"{op} {name} dim={dim} correction={correction} keepdim={keepdim}", op,
             [x] if stored else [], lambda: f(x, dim=dim, correction=correction, keepdim=keepdim),
             ramp=r, error_part="out of range", dim=dim, correction=correction, keepdim=keepdim)


for n in list(range(1, 41)) + [63, 64, 65, 100, 1000, 4099]:
    spread(f"randn({n})", torch.randn(n), None, 1, False)
x = torch.randn(4, 37) * 10
for dim in [None, 0, 1, -1]:
    for correction in [0, 1, 2]:
        spread("4x37", x, dim, correction, dim == 1)
x = torch.randn(3, 5, 7) + 1000
for dim in [None, 0, 1, 2]:
    spread("3x5x7 + 1000", x, dim, 1, False)
x = torch.randn(2, 3, 4, 5) * 1e-3
for dim in [-4, -2, 3]:
    spread("2x3x4x5 * 1e-3", x, dim, 1, True)
x = torch.full((3, 8), 2.5)
spread("constant 3x8", x, 1, 1, False)
spread("constant 3x8", x, None, 0, False)
spread("special values", specials[:6], None, 1, False)
spread("one inf", torch.tensor([1.0, math.inf, 2.0]), None, 1, False)
spread("subnormals", torch.tensor([1e-40, 3e-40, -2e-40, 1.4e-45]), 0, 1, False)
spread("0-d", torch.tensor(2.0), None, 1, False)
spread("0-d", torch.tensor(2.0), -1, 0, True)
spread("one element", torch.tensor([[4.0]]), 1, 1, False)
spread("empty 0x3", torch.ones(0, 3), 0, 1, False)
spread("empty 0x3", torch.ones(0, 3), 1, 1, True)
spread("empty 0x3", torch.ones(0, 3), None, 1, False)
spread("2x3 correction > n", torch.randn(2, 3), 1, 5, False)
spread("2x3 correction -1", torch.randn(2, 3), 1, -1, False)
spread("2x3", torch.randn(2, 3), 2, 1, False)
spread("2x3", torch.randn(2, 3), -3, 1, False)
r = dict(n=40000, start=1000.0, step=0.001)
spread("ramp of 40000 from 1000", ramp(**r), None, 1, False, stored=False, r=r)
r = dict(n=100000, start=-3.0, step=1e-4)
spread("ramp of 100000", ramp(**r), 0, 0, False, stored=False, r=r)

# ---- layer_norm and rms_norm
def ln_case(name, x, shape, weight, bias, eps=1e-5):
    inputs = [x] + [p for p in (weight, bias) if p is not None]
    case(f"layer_norm {name}", "layer_norm", inputs,
         lambda: F.layer_norm(x, shape, weight, bias, eps),
         normalized_shape=list(shape), weight=weight is not None, bias=bias is not None, eps=eps)


def rms_case(name, x, shape, weight, eps=None):
    inputs = [x] + ([weight] if weight is not None else [])
    case(f"rms_norm {name}", "rms_norm", inputs, lambda: F.rms_norm(x, shape, weight, eps),
         error_part=f"Given normalized_shape={list(shape)}, expected input with shape [*"
         if name == "wrong normalized_shape" else None,
         normalized_shape=list(shape), weight=weight is not None, eps=eps)


for n in list(range(1, 101)) + [127, 128, 129, 255, 256, 257, 511, 512, 513, 768, 1000, 1024]:
    rows = 2 if n <= 100 else 1
    x = torch.randn(rows, n) * (1 + n % 5) + (3.7 if n % 3 == 0 else 0.0)
    w, b = torch.randn(n), torch.randn(n)
    variant = n % 4
    ln_case(f"N={n} variant {variant}", x, (n,), w if variant in (0, 1) else None,
            b if variant in (0, 2) else None)
    rms_case(f"N={n}", x, (n,), w if n % 2 else None, [None, 1e-5, 1e-6][n % 3])
x = torch.randn(4, 768) * 0.01 + 3.7
ln_case("mean 3.7 sigma 0.01", x, (768,), None, None)
x = torch.randn(3, 64) * torch.tensor([[1e-3], [1.0], [1e3]])
ln_case("rows at scales 1e-3 to 1e3", x, (64,), torch.randn(64), torch.randn(64))
rms_case("rows at scales 1e-3 to 1e3", x, (64,), torch.randn(64), 1e-6)
for eps in [1e-12, 0.1]:
    ln_case(f"eps={eps}", torch.randn(3, 33), (33,), None, None, eps)
x = torch.cat([torch.full((1, 20), 5.0), torch.full((1, 20), -0.0), torch.randn(1, 20)])
ln_case("constant rows", x, (20,), torch.randn(20), torch.randn(20))
ln_case("constant rows, no affine", x, (20,), None, None)
rms_case("a zero row", x, (20,), None, 1e-6)
x = torch.tensor([[0.0, -0.0, 1e-40, -1e-40, 1.4e-45, 2e-39, 0.0, 0.0, 3e-40],
                  [1.0, math.inf, 2.0, 3.0, 0.0, 1.0, 1.0, 1.0, 1.0],
                  [1.0, math.nan, 2.0, 3.0, 0.0, 1.0, 1.0, 1.0, 1.0]])
ln_case("subnormals, inf, NaN", x, (9,), None, None)
rms_case("subnormals, inf, NaN", x, (9,), None, 1e-6)
x = torch.randn(2, 3, 4, 5)
ln_case("2x3x4x5 over (4, 5)", x, (4, 5), torch.randn(4, 5), torch.randn(4, 5))
ln_case("2x3x4x5 over (3, 4, 5)", x, (3, 4, 5), None, None)
rms_case("2x3x4x5 over (4, 5)", x, (4, 5), torch.randn(4, 5))
x = torch.randn(3, 10) + 1e4
ln_case("large offset 1e4", x, (10,), None, None)
rms_case("large offset 1e4", x, (10,), None)
ln_case("a 1-d input", torch.randn(12), (12,), None, None)
rms_case("a 1-d input", torch.randn(12), (12,), None)
ln_case("empty rows", torch.ones(0, 6), (6,), None, None)
ln_case("empty vectors", torch.ones(3, 0), (0,), None, None)
rms_case("empty rows", torch.ones(0, 6), (6,), None)
r = dict(n=4097, start=-2.0, step=1e-3)
case("layer_norm of 1x4097", "layer_norm", [], lambda: F.layer_norm(ramp(**r).reshape(1, -1), (4097,)),
     ramp=r, normalized_shape=[4097], weight=False, bias=False, eps=1e-5)
case("rms_norm of 1x4097", "rms_norm", [], lambda: F.rms_norm(ramp(**r).reshape(1, -1), (4097,), eps=1e-5),
     ramp=r, normalized_shape=[4097], weight=False, eps=1e-5)
r = dict(n=40000, start=-2.0, step=1e-4)
case("rms_norm of one row of 40000", "rms_norm", [], lambda: F.rms_norm(ramp(**r).reshape(1, -1), (40000,)),
     ramp=r, normalized_shape=[40000], weight=False, eps=None)
case("layer_norm of one row of 40000", "layer_norm", [], lambda: F.layer_norm(ramp(**r).reshape(1, -1), (40000,)),
     ramp=r, normalized_shape=[40000], weight=False, bias=False, eps=1e-5)
x = torch.randn(2, 3)
ln_case("wrong normalized_shape", x, (4,), None, None)
ln_case("normalized_shape longer than the input", torch.randn(3), (2, 3), None, None)
ln_case("empty normalized_shape", x, (), None, None)
ln_case("wrong weight", x, (3,), torch.ones(4), None)
ln_case("wrong bias", x, (3,), torch.ones(3), torch.ones(2))
ln_case("0-d input", torch.tensor(1.0), (1,), None, None)
rms_case("wrong normalized_shape", x, (4,), None)
rms_case("wrong weight", x, (3,), torch.ones(4))

# ---- the modules, fresh from their constructors
x = torch.randn(2, 5, 16)
case("nn.LayerNorm(16)", "LayerNorm", [x], lambda: torch.nn.LayerNorm(16)(x), normalized_shape=[16])
case("nn.RMSNorm(16)", "RMSNorm", [x], lambda: torch.nn.RMSNorm(16)(x), normalized_shape=[16])
case("nn.LayerNorm((5, 16))", "LayerNorm", [x], lambda: torch.nn.LayerNorm((5, 16))(x), normalized_shape=[5, 16])

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "norm_fixtures.json"
header = {"torch_version": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
          "num_threads": torch.get_num_threads()}
body = ",\n".join(json.dumps(c) for c in cases)
head = json.dumps(header)[1:-1]
out.write_text(f'{{{head}, "cases": [\n{body}\n]}}\n')
print(f"wrote {len(cases)} cases ({out.stat().st_size} bytes) to {out}", file=sys.stderr)
