#!/usr/bin/env bash
# Chapter 22's training step against PyTorch's, in turns, on the same threads: the chapter's
# `--train` and the reference script's, on 1 and 2 threads, both architectures; the time
# of a step from two run lengths, and the peak resident memory of each side.
#   PYTHON=/path/to/python bash perf/scripts/bench-pretraining.sh [ROUNDS]
# Needs the text (bash scripts/get-shakespeare.sh) and a Python with the packages of
# reference/requirements.txt. Prints Markdown tables for the appendix.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
# The profile the chapter's page trains in (`cargo run --release`).
cargo build -q --release -p ch22-pretraining
exec "$PYTHON" perf/scripts/bench_pretraining.py --python "$PYTHON" \
    --ours "${CARGO_TARGET_DIR:-target}/release/ch22-pretraining" --rounds "${1:-3}"
