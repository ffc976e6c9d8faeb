#!/usr/bin/env bash
# Runs the whole snapshot suite on libtorch's CPU back-end (`--device torch-cpu` for every
# test thread), plus the tests that compare tch's own generator with ours.
#   bash scripts/test-tch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/libtorch-env.sh
export SHARED_DEVICE=torch-cpu
# A target directory of its own, so switching the feature on and off rebuilds nothing.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/tch}
cargo test --workspace --features shared/tch "$@"
