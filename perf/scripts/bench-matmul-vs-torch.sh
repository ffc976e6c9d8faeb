#!/usr/bin/env bash
# Times `shared`'s large matrix products (criterion) and PyTorch's (one thread, like ours) in
# one run: a 1024x1024 matmul, and the products of a multi-head attention module with
# d_model = 768 (`x·Wᵀ` as nn.Linear computes it, W of [768, 768] and [2304, 768], 1024 and
# 4096 tokens). Prints each throughput, the ratio ours/PyTorch (above 1: ours is faster), and
# the fraction of one core's FMA peak (measured by chapter 9's fma_peak example) each reaches.
#   PYTHON=.venv/bin/python bash perf/scripts/bench-matmul-vs-torch.sh
# Needs torch==2.13.0 for $PYTHON (see reference/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
criterion=${CARGO_TARGET_DIR:-target}/criterion

cargo build -q --release -p attention-perf --example fma_peak
peak=$("${CARGO_TARGET_DIR:-target}"/release/examples/fma_peak | sed -n 's/^fma peak: \([0-9.]*\) GFLOP.*/\1/p')

cargo bench -q -p attention-perf --bench ops -- '^(matmul_2d/1024|matmul_module/.*)$' --noplot 2>&1 |
  grep -E '^[a-z_0-9]+/.*time:|time:' >&2

# One line per product: name, m, k, n, our median in ns.
ours=$("$PYTHON" - "$criterion" <<'PY'
import json, sys
root = sys.argv[1]
def median(path):
    return json.load(open(f"{root}/{path}/new/estimates.json"))["median"]["point_estimate"]
print("matmul", 1024, 1024, 1024, median("matmul_2d/1024"))
for n, out in [(1024, 768), (1024, 2304), (4096, 768), (4096, 2304)]:
    print("linear", n, 768, out, median(f"matmul_module/{n}x768_{out}/{n}"))
PY
)

"$PYTHON" - "$peak" <<PY
import sys, timeit, torch
torch.set_num_threads(1)
torch.manual_seed(0)
peak = float(sys.argv[1])
rows = """$ours""".strip().splitlines()
print(f"one thread; FMA peak of one core: {peak:.1f} GFLOP/s")
print(f"{'product':<28} {'shared':>14} {'PyTorch':>14} {'ratio':>6}")
for row in rows:
    kind, m, k, n, ours_ns = row.split()
    m, k, n, ours_ns = int(m), int(k), int(n), float(ours_ns)
    a = torch.randn(m, k)
    if kind == "matmul":
        b = torch.randn(k, n)
        call, name = (lambda: a @ b), f"matmul {m}x{k} @ {k}x{n}"
    else:
        w = torch.randn(n, k)
        call, name = (lambda: torch.nn.functional.linear(a, w)), f"linear x {m}x{k}, W {n}x{k}"
    for _ in range(3):
        call()
    runs = [timeit.timeit(call, number=3) / 3 for _ in range(7)]
    torch_ns = sorted(runs)[len(runs) // 2] * 1e9
    flop = 2 * m * k * n
    ours, theirs = flop / ours_ns, flop / torch_ns
    print(f"{name:<28} {ours:6.1f} ({ours / peak:3.0%}) {theirs:6.1f} ({theirs / peak:3.0%}) {torch_ns / ours_ns:6.2f}")
print("GFLOP/s (fraction of the FMA peak); ratio: shared's throughput / PyTorch's")
PY
