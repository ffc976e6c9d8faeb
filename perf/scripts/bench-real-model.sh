#!/usr/bin/env bash
# Chapter 20's speed and memory against transformers, in turns, on the same threads:
# a prefill of 128 tokens, then 128 greedy decoding steps with the KV cache, on 1 and 2
# threads; the memory bandwidth measured in the same run, and the bound it sets on decoding
# (every float32 weight read once per token); the peak resident memory of each side.
#   PYTHON=/path/to/python bash perf/scripts/bench-real-model.sh [ROUNDS]
# Needs the model (bash scripts/get-model.sh) and a Python with the packages of
# reference/requirements.txt. Prints a Markdown table for the appendix.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
# The dev profile, as a reader runs the chapter: the chapter and the layers it runs are
# built with opt-level 2 there, the tensor crate with 3 (see the workspace's Cargo.toml).
cargo build -q -p attention-perf --features real-model --example speed_real_model
exec "$PYTHON" perf/scripts/bench_real_model.py --ours "${CARGO_TARGET_DIR:-target}/debug/examples/speed_real_model" \
    --model models/SmolLM2-135M-Instruct.Q4_1.gguf --rounds "${1:-3}"
