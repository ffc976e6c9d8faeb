#!/usr/bin/env bash
# Chapter 23's LoRA training step on SmolLM2 against PyTorch + PEFT's, in turns, on the same
# threads: the recipe of the chapter's committed adapter (rank 8 beside the seven
# projections, batches of 8 sums), on 1 and 2 threads, a few steps after a warm-up; the
# time of a step (wall clock and processor time) and the peak resident memory of each side;
# and PyTorch's step with the same projections trained in full, against its LoRA step.
#   PYTHON=/path/to/python bash perf/scripts/bench-lora.sh [ROUNDS] [STEPS]
# Needs the model (bash scripts/get-model.sh) and a Python with the packages of
# reference/requirements.txt (peft among them). Prints Markdown tables for the appendix.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
# The profile the chapter's page trains in (`cargo run --release`).
cargo build -q --release -p attention-perf --features lora --example speed_lora
exec "$PYTHON" perf/scripts/bench_lora.py --python "$PYTHON" \
    --ours "${CARGO_TARGET_DIR:-target}/release/examples/speed_lora" \
    --rounds "${1:-3}" --steps "${2:-3}"
