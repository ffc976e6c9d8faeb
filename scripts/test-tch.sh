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
# The chapters whose manifest says `libtorch = false` are left out (scripts/libtorch-env.sh's
# `tch_selection`), each for the reason its chapter.toml gives (chapter 19 trains for
# thousands of steps per seed with operations the other chapters already check on libtorch;
# chapter 20 is judged against transformers; chapter 21 runs its kernels through wgpu, never
# through the tensor back-end). So is attention-perf: its tests compare faster versions with
# the chapters' listings on our own back-end, and its benchmarks time libtorch through their
# own `tch` feature (perf/scripts/bench-vs-torch.sh).
cargo build -q "${tch_selection[@]}" --features shared/tch --bin platform
"$CARGO_TARGET_DIR/debug/platform"
cargo test "${tch_selection[@]}" --exclude attention-perf --features shared/tch "$@"
