#!/usr/bin/env bash
# Chapter 21's kernels against chapter 9's FlashAttention on the CPU, timed in turns on the
# adapter wgpu finds, as ratios, naming the adapter (examples/bench_gpu.rs, built in release).
#
#   bash perf/scripts/bench-gpu.sh                 # n = 256 and 1024, 12 heads of 64, causal
#   GPU_BENCH_NS="512 2048" GPU_BENCH_TURNS=9 bash perf/scripts/bench-gpu.sh
#   bash perf/scripts/bench-gpu.sh --cpu-adapter   # the software adapter, even beside a GPU
#
# On a software adapter (lavapipe) the "GPU" is this CPU: the ratios say nothing about
# GPUs. Check what Vulkan sees first with `vulkaninfo --summary` (Debian: vulkan-tools).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
  # Mesa's drivers want a private runtime folder; without one they warn on every run.
  XDG_RUNTIME_DIR=$(mktemp -d)
  export XDG_RUNTIME_DIR
fi
cargo run --release -q -p attention-perf --features gpu --example bench_gpu -- "$@"
