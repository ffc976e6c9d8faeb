#!/usr/bin/env bash
# Chapter 20 against llama.cpp and transformers, in turns, on the same threads: a prefill of
# 128 tokens and 128 greedy decoding steps after a 128-token context, on 1 and 2 threads, for
# llama.cpp on the quantised file (Q4_1) and on the same weights as float32 (F32), chapter 20
# on its float32 path and on its quantised path, and transformers (float32, eager); the
# memory bandwidth measured in the same run and the bound it sets on decoding for each
# weight format (every weight read once per token). Then each engine's greedy answer to one
# chat question, and transformers' logits for the answer's first token: llama.cpp's Q4_1
# product rounds the activations to 8 bits, which can change a near tie. Not in CI: it
# builds llama.cpp.
#
#   PYTHON=/path/to/python bash perf/scripts/bench-llamacpp.sh [ROUNDS]   # 3 by default; 0: the answers only
#
# Needs the model (bash scripts/get-model.sh), a Python with the packages of
# reference/requirements.txt, a C++ compiler and the package index (PyPI). llama.cpp has no
# Debian package: the PyPI source archive of its Python bindings (llama-cpp-python 0.3.36,
# checked by its sha256) carries it, and cmake and ninja come from PyPI too. The build (about
# 6 minutes on an idle 2-core machine) and the float32 file (540 MB) are kept in
# $ATTN_LLAMACPP_CACHE (default ~/.cache/attention-llamacpp) and reused by later runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
cache="${ATTN_LLAMACPP_CACHE:-$HOME/.cache/attention-llamacpp}"
model=models/SmolLM2-135M-Instruct.Q4_1.gguf
version=0.3.36
sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
if [ ! -f "$model" ]; then
  echo "bench-llamacpp.sh: $model is missing: run bash scripts/get-model.sh first" >&2
  exit 1
fi
mkdir -p "$cache"

bin="$cache/build/bin"
if [ ! -x "$bin/llama-bench" ] || [ ! -x "$bin/llama-quantize" ] || [ ! -x "$bin/llama-completion" ]; then
  echo "==> llama.cpp: fetching llama-cpp-python $version's source archive, cmake and ninja from PyPI" >&2
  "$PYTHON" -m venv "$cache/venv"
  "$cache/venv/bin/pip" install -q cmake ninja
  archive="$cache/llama_cpp_python-$version.tar.gz"
  if [ ! -f "$archive" ]; then
    "$cache/venv/bin/pip" download -q --no-deps "llama-cpp-python==$version" -d "$cache"
  fi
  echo "$sha256  $archive" | sha256sum --check --quiet || {
    echo "bench-llamacpp.sh: $archive does not have the expected sha256; delete it and run again" >&2
    exit 1
  }
  rm -rf "$cache/source"
  mkdir -p "$cache/source"
  tar -xzf "$archive" -C "$cache/source" --strip-components=1
  echo "==> llama.cpp: building llama-bench, llama-completion and llama-quantize (several minutes)" >&2
  PATH="$cache/venv/bin:$PATH" cmake -S "$cache/source/vendor/llama.cpp" -B "$cache/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DBUILD_SHARED_LIBS=OFF >/dev/null
  PATH="$cache/venv/bin:$PATH" ninja -C "$cache/build" llama-bench llama-completion llama-quantize >/dev/null
  rm -rf "$cache/source"
fi

f32="$cache/SmolLM2-135M-Instruct.F32.gguf"
if [ ! -f "$f32" ]; then
  echo "==> llama.cpp: the same weights as float32 (540 MB)" >&2
  "$bin/llama-quantize" --allow-requantize "$model" "$f32.tmp" F32 >/dev/null 2>&1
  mv "$f32.tmp" "$f32"
fi

# The dev profile, as a reader runs the chapter (see bench-real-model.sh).
cargo build -q -p attention-perf --features real-model --example speed_real_model
exec "$PYTHON" perf/scripts/bench_llamacpp.py --llama-bench "$bin/llama-bench" \
  --llama-completion "$bin/llama-completion" --model "$model" \
  --model-f32 "$f32" --ours "${CARGO_TARGET_DIR:-target}/debug/examples/speed_real_model" \
  --rounds "${1:-3}"
