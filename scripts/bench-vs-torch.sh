#!/usr/bin/env bash
# Chapter 9's benchmarks next to PyTorch's, in one run: criterion times the chapters'
# attention variants and the flash kernel (chapters/ch09-flash-attention/benches), then
# PyTorch 2.13.0 times F.scaled_dot_product_attention and the plain matmul/mask/softmax path
# on the same shapes with the same statistic (scripts/bench_torch.py), the peak-memory
# example measures resident memory, and scripts/bench_table.py prints the tables, writes
# book/src/bench/ch09-flash-attention.{md,svg}, and ends with the line
#   flash/sdpa time ratio: n=1024 X.XX, n=4096 Y.YY
# (below 1: the Rust kernel is faster). Everything runs on one thread except the `threads`
# group and the memory measurement.
#
#   bash scripts/bench-vs-torch.sh                      # everything (about 15 minutes)
#   CH09_BENCH_NS="1024 4096" CH09_BENCH_GROUPS="core_causal core_full" bash scripts/bench-vs-torch.sh
#
# PYTHON: an interpreter with torch==2.13.0 (default .venv/bin/python if it exists, else
# python3; see reference/requirements.txt). Numbers taken while other programs run are
# noisy: the table records the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
if ! version="$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)"; then
  echo "bench-vs-torch.sh: $PYTHON cannot import torch (set PYTHON, see reference/requirements.txt)" >&2
  exit 1
fi
case "$version" in
  2.13.0*) ;;
  *) echo "bench-vs-torch.sh: need torch 2.13.0, $PYTHON has torch $version" >&2; exit 1 ;;
esac

ns=${CH09_BENCH_NS:-"128 512 1024 2048 4096"}
groups=${CH09_BENCH_GROUPS:-"core_causal core_full module threads"}
out=target/ch09-bench
mkdir -p "$out"
rm -rf target/criterion/{core_causal,core_full,module,threads}
load_before=$(cut -d' ' -f1 /proc/loadavg)

echo "==> criterion: $groups at n = $ns" >&2
filter="^($(echo "$groups" | tr ' ' '|'))/"
CH09_BENCH_NS="$ns" cargo bench -q -p ch09-flash-attention --bench attention -- "$filter" \
  | grep -E '^[a-z_0-9]+/|time:' >&2

echo "==> peak memory (flash at b = 8 and b = 1, materialised at b = 1)" >&2
cargo build --release -q -p ch09-flash-attention --example peak_memory
memory_runs=("flash 8 4096" "flash 1 4096" "materialised 1 4096")
for run in "${memory_runs[@]}"; do
  # shellcheck disable=SC2086 # the run's words are its arguments
  target/release/examples/peak_memory $run
done > "$out/memory.jsonl"
cat "$out/memory.jsonl" >&2

echo "==> PyTorch $version: $groups at n = $ns" >&2
# shellcheck disable=SC2086 # lists of words
"$PYTHON" scripts/bench_torch.py --ns $ns --groups $groups --out "$out/torch.json"
load_after=$(cut -d' ' -f1 /proc/loadavg)

isa=$(cargo run --release -q -p ch09-flash-attention --example peak_memory -- isa 2>/dev/null || echo "?")
"$PYTHON" - "$out/meta.json" "$load_before" "$load_after" "$isa" <<'PY'
import datetime, json, platform, subprocess, sys
path, before, after, isa = sys.argv[1:5]
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "?"
cpu = "?"
for line in run("lscpu").splitlines():
    if line.startswith("Model name:"):
        cpu = line.split(":", 1)[1].strip()
import torch
json.dump({
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    "cpu": cpu, "cores": run("nproc"), "rustc": run("rustc", "--version"),
    "torch_cpu": f"CPU capability {torch.backends.cpu.get_cpu_capability()}, MKL {torch.backends.mkl.is_available()}",
    "isa": isa, "load_before": before, "load_after": after,
    "commit": run("git", "rev-parse", "--short", "HEAD"),
}, open(path, "w"))
PY

"$PYTHON" scripts/bench_table.py --criterion target/criterion --torch "$out/torch.json" \
  --memory "$out/memory.jsonl" --meta "$out/meta.json" \
  --md book/src/bench/ch09-flash-attention.md --svg book/src/bench/ch09-flash-attention.svg
