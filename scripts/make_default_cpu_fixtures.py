"""Makes tests/fixtures/ops_fixtures_default_cpu.json: softmax, log_softmax, sum and mean as
PyTorch 2.13.0 computes them with its portable CPU kernels (ATEN_CPU_CAPABILITY=default),
the build a processor without AVX2 runs. Those kernels combine a row's 8 lanes one after the
other and call the C library's expf and logf; `shared` reproduces them when its capability
is DEFAULT (the file records it, and the Rust side computes as it says).

    python scripts/make_default_cpu_fixtures.py   # needs torch==2.13.0, Linux with glibc

Every value is stored (the portable build's randn draws other numbers than the vectorised
builds, which our generator follows), so the cases stay small.
"""
import json
import os
import struct
import sys
from pathlib import Path

os.environ["ATEN_CPU_CAPABILITY"] = "default"  # read once, when torch loads
import torch  # noqa: E402

assert torch.__version__.startswith("2.13.0"), torch.__version__
assert torch.backends.cpu.get_cpu_capability() == "DEFAULT"
torch.set_grad_enabled(False)


def enc(t):
    bits = [f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08x}" for v in t.contiguous().flatten().tolist()]
    return {"shape": list(t.shape), "dtype": "float32", "values": bits}


cases = []


def case(name, op, x, result, **args):
    cases.append({"name": name, "op": op, "args": args, "inputs": [enc(x)],
                  "expected": enc(result), "expected_repr": repr(result)})


torch.manual_seed(77)
for fn, op in [(torch.softmax, "softmax"), (torch.log_softmax, "log_softmax")]:
    for n in list(range(1, 34)) + [64, 100, 127, 1000]:
        x = torch.cat([torch.randn(1, n) * 3, torch.randn(1, n) * 30])
        case(f"{op} rows of {n} dim=-1", op, x, fn(x, dim=-1), dim=-1)
    x = torch.randn(4, 9)
    x[0, 3] = -torch.inf
    x[1] = -torch.inf
    x[2, 5] = torch.nan
    case(f"{op} rows with -inf, all -inf, NaN dim=-1", op, x, fn(x, dim=-1), dim=-1)
    for shape, dim in [((5, 16), 0), ((7, 17), 0), ((100, 37), 0), ((4, 5, 3), 1),
                       ((2, 9, 33), 1), ((2, 3, 4, 5), 2)]:
        x = torch.randn(*shape) * 3
        case(f"{op} {shape} dim={dim}", op, x, fn(x, dim=dim), dim=dim)
for shape in [(1000,), (39, 70), (4, 40, 9)]:
    x = torch.randn(*shape)
    case(f"sum all {shape}", "sum", x, x.sum())
    for dim in range(len(shape)):
        case(f"mean {shape} dim={dim}", "mean_dim", x, x.mean(dim=dim), dim=dim, keepdim=False)

out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ops_fixtures_default_cpu.json"
header = {"torch_version": torch.__version__, "cpu_capability": "DEFAULT",
          "num_threads": torch.get_num_threads()}
body = ",\n".join(json.dumps(c) for c in cases)
out.write_text(json.dumps(header)[:-1] + f', "cases": [\n{body}\n]}}\n')
print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
