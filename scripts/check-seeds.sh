#!/usr/bin/env bash
# Every chapter against PyTorch for any seed, not only the committed ones.
#
#   bash scripts/check-seeds.sh [SEED...]      # default: 0 1 5 42 1234 18446744073709551615
#   CHAPTERS="ch05-causal ch08-cross-attention" bash scripts/check-seeds.sh 7
#
# For each chapter and seed it runs `cargo run -p chNN-slug -- --seed S` (the dev build)
# and `python reference/chNN_slug.py --seed S`, diffs the two outputs and prints the
# differing lines (chapter 21, on a GPU: each number within one unit of its last digit). Exits 1 if any output differs. The interpreter comes from $PYTHON
# (default .venv/bin/python) and must have torch 2.13.0.
#
# Chapter 22 reads Shakespeare's text (bash scripts/get-shakespeare.sh): without it, it is
# skipped with a message, unless ATTN_REQUIRE_DATA=1 (then that fails).
#
# Chapter 20 runs the real model (bash scripts/get-model.sh; $ATTN_MODEL names another file)
# through transformers, about a minute a seed: without the model, or without transformers
# in $PYTHON, it is skipped with a message, unless ATTN_REQUIRE_MODEL=1 (then that fails).
#
# The reference is PyTorch on an Intel CPU with AVX-512, whose MKL order of additions the
# matrix products follow. Elsewhere (an AMD CPU, another MKL path) MKL adds some products in
# another order, so a last digit can differ for PyTorch's own reason: there an output that
# differs only within one unit of each number's last printed digit (`compare-printed`, the
# rule of course::printed) is reported as "digits" and does not fail; on an Intel CPU with
# AVX-512 every output must be equal.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-.venv/bin/python}"
seeds=("$@")
if [ ${#seeds[@]} -eq 0 ]; then
    seeds=(0 1 5 42 1234 18446744073709551615)
fi

if ! version="$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)"; then
    echo "check-seeds.sh: $PYTHON cannot import torch (set PYTHON)" >&2
    exit 1
fi
case "$version" in
    2.13.0*) ;;
    *) echo "check-seeds.sh: need torch 2.13.0, $PYTHON has torch $version" >&2; exit 1 ;;
esac

# chNN_slug.py -> chNN-slug, the package and binary name.
chapters=()
for script in reference/ch[0-9][0-9]_*.py; do
    name="$(basename "$script" .py)"
    chapters+=("${name//_/-}")
done
if [ -n "${CHAPTERS:-}" ]; then
    read -r -a chapters <<<"$CHAPTERS"
fi

source scripts/chapters.sh
# A chapter that reads the model (`needs_model` in its chapter.toml) needs the file and
# transformers.
model_missing() {
    local model="${ATTN_MODEL:-models/SmolLM2-135M-Instruct.Q4_1.gguf}"
    if [ ! -f "$model" ]; then
        echo "no $model (bash scripts/get-model.sh)"
    elif ! "$PYTHON" -c 'import transformers, gguf, safetensors, accelerate' 2>/dev/null; then
        echo "$PYTHON lacks transformers, gguf, safetensors or accelerate (see reference/requirements.txt)"
    fi
}
# A chapter that reads a downloaded text (`needs_data`) needs the file.
data_missing() {
    if [ ! -f data/shakespeare.txt ]; then
        echo "no data/shakespeare.txt (bash scripts/get-shakespeare.sh)"
    fi
}
kept=()
for chapter in "${chapters[@]}"; do
    if [ "$(chapter_value "$chapter" needs_data)" = true ] && missing="$(data_missing)" &&
        [ -n "$missing" ]; then
        if [ "${ATTN_REQUIRE_DATA:-}" = 1 ]; then
            echo "check-seeds.sh: ATTN_REQUIRE_DATA=1, but $chapter cannot run: $missing" >&2
            exit 1
        fi
        echo "skipped $chapter: $missing"
        continue
    fi
    if [ "$(chapter_value "$chapter" needs_model)" = true ] && missing="$(model_missing)" &&
        [ -n "$missing" ]; then
        if [ "${ATTN_REQUIRE_MODEL:-}" = 1 ]; then
            echo "check-seeds.sh: ATTN_REQUIRE_MODEL=1, but $chapter cannot run: $missing" >&2
            exit 1
        fi
        echo "skipped $chapter: $missing"
        continue
    fi
    kept+=("$chapter")
done
chapters=("${kept[@]}")

packages=()
for chapter in "${chapters[@]}"; do
    packages+=(-p "$chapter")
done
cargo build -q --bins "${packages[@]}" -p course
bin_dir="${CARGO_TARGET_DIR:-$root/target}/debug"
reference_platform=0
if grep -q GenuineIntel /proc/cpuinfo 2>/dev/null && grep -q avx512f /proc/cpuinfo 2>/dev/null; then
    reference_platform=1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
within_digits=0
checked=0
for chapter in "${chapters[@]}"; do
    script="reference/${chapter//-/_}.py"
    for seed in "${seeds[@]}"; do
        "$bin_dir/$chapter" --seed "$seed" >"$tmp/ours.txt"
        PYTHONHASHSEED=0 "$PYTHON" "$script" --seed "$seed" >"$tmp/pytorch.txt"
        checked=$((checked + 1))
        if ! diff -u --label "pytorch $chapter --seed $seed" --label "ours" \
            "$tmp/pytorch.txt" "$tmp/ours.txt" >"$tmp/diff.txt"; then
            # Off the reference platform, and always for a chapter that runs on a GPU (which
            # rounds in its own order), within one unit of each number's last printed digit
            # is PyTorch's text.
            if { [ "$reference_platform" -eq 0 ] ||
                [ "$(chapter_value "$chapter" needs_gpu)" = true ]; } &&
                "$bin_dir/compare-printed" "$tmp/ours.txt" "$tmp/pytorch.txt" >"$tmp/digits.txt"; then
                within_digits=$((within_digits + 1))
                echo "digits  $chapter --seed $seed: $(cat "$tmp/digits.txt")"
                continue
            fi
            failed=$((failed + 1))
            echo "DIFFERS $chapter --seed $seed"
            cat "$tmp/diff.txt"
        else
            echo "same    $chapter --seed $seed"
        fi
    done
done

echo "$((checked - failed - within_digits)) of $checked outputs equal PyTorch's, $within_digits within its last printed digits"
[ "$failed" -eq 0 ]
