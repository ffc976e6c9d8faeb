#!/usr/bin/env bash
# Times a 1024x1024 f32 matmul with `shared` (criterion) and with PyTorch's torch.matmul
# (one thread, like ours) in one run, and prints both throughputs and their ratio.
#   PYTHON=.venv/bin/python bash scripts/bench-matmul-vs-torch.sh
# Needs torch==2.13.0 for $PYTHON (see reference/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
n=1024

cargo bench -q -p shared --bench ops -- "matmul_2d/$n\$" --noplot >/dev/null
ours_ns=$("$PYTHON" -c "import json; print(json.load(open('target/criterion/matmul_2d/$n/new/estimates.json'))['median']['point_estimate'])")

torch_ns=$("$PYTHON" - "$n" <<'PY'
import sys, timeit, torch
n = int(sys.argv[1])
torch.set_num_threads(1)
torch.manual_seed(0)
a, b = torch.randn(n, n), torch.randn(n, n)
for _ in range(3):
    a @ b
runs = [timeit.timeit(lambda: a @ b, number=5) / 5 for _ in range(7)]
print(sorted(runs)[len(runs) // 2] * 1e9)
PY
)

"$PYTHON" - "$n" "$ours_ns" "$torch_ns" <<'PY'
import sys
n, ours, torch_ns = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
flop = 2 * n ** 3
print(f"matmul {n}x{n} f32, one thread")
print(f"  shared (ndarray/matrixmultiply): {flop / ours:7.1f} GFLOP/s  ({ours / 1e6:.2f} ms)")
print(f"  torch.matmul (PyTorch CPU):      {flop / torch_ns:7.1f} GFLOP/s  ({torch_ns / 1e6:.2f} ms)")
print(f"shared/torch throughput ratio: {torch_ns / ours:.2f}")
PY
