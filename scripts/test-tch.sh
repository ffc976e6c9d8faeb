#!/usr/bin/env bash
# Runs the whole snapshot suite on libtorch's CPU back-end (`--device torch-cpu` for every
# test thread), plus the tests that compare tch's own generator with ours.
#   bash scripts/test-tch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/libtorch-env.sh
export SHARED_DEVICE=torch-cpu
# Whether libtorch computes as the reference platform here (the Intel CPU with AVX-512 where
# PyTorch's reference outputs were made) is decided by the tests themselves: they compute a
# probe of committed results first (course::platform) and compare exactly where it holds,
# within the printed digits elsewhere. The first line the suite prints says which.
# A target directory of its own, so switching the feature on and off rebuilds nothing.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/tch}
# Chapter 19 trains for thousands of steps per seed with the operations the other chapters
# already check on libtorch; on a small machine that alone would take longer than the rest of
# the suite, so the suite leaves it out (its own tests run with `cargo test`). Chapter 20 runs
# a real model through the same operations, against transformers, not libtorch; chapter 21
# runs its kernels on a GPU through wgpu, never through the tensor back-end: both are left
# out too. So is attention-perf: its tests compare faster versions with the chapters'
# listings on our own back-end, and its benchmarks time libtorch through their own `tch`
# feature (perf/scripts/bench-vs-torch.sh).
cargo run -q -p course --features shared/tch --bin platform
cargo test --workspace --exclude ch19-induction-heads --exclude ch20-real-model \
  --exclude ch21-webgpu --exclude attention-perf --features shared/tch "$@"
