#!/usr/bin/env bash
# Regenerate reference/expected/*.txt: the exact stdout of each chapter script, and
# reference/expected/seeds/chNN-slug.seed-S.txt: its stdout with `--seed S`, for each seed
# that the chapter's manifest lists (`seeds` in chapters/chNN-slug/chapter.toml, which the
# chapters' tests read too).
#
#   PYTHON=/path/to/python reference/regenerate.sh
#   CHAPTERS="ch05-causal ch22-pretraining" reference/regenerate.sh   # only these chapters
#
# The interpreter comes from $PYTHON (default: python3) and must have
# torch 2.13.0 (see requirements.txt); any other version is refused, because
# the expected files are tied to that version's RNG and print format.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../scripts/chapters.sh"

if ! version="$("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)"; then
    echo "regenerate.sh: $PYTHON cannot import torch (set PYTHON, see requirements.txt)" >&2
    exit 1
fi
case "$version" in
    2.13.0*) ;;
    *) echo "regenerate.sh: need torch 2.13.0, $PYTHON has torch $version" >&2; exit 1 ;;
esac

mkdir -p "$here/expected"

# Chapter 20: tiny checkpoints always (transformers builds them offline); the real model's
# fixtures and its expected texts when scripts/get-model.sh has fetched it. Skipped, with a
# message, when the interpreter lacks the packages of requirements.txt or the model is
# missing; with ATTN_REQUIRE_MODEL=1 (as in CI) a missing model is a failure.
ch20_model="${ATTN_MODEL:-$here/../models/SmolLM2-135M-Instruct.Q4_1.gguf}"
ch20_packages() {
    if ! "$PYTHON" -c 'import transformers, gguf, safetensors, accelerate' 2>/dev/null; then
        echo "regenerate.sh: chapter 20 skipped: $PYTHON lacks transformers, gguf, safetensors or accelerate (see requirements.txt)" >&2
        return 1
    fi
}
ch20_model_here() {
    if [ ! -f "$ch20_model" ]; then
        if [ "${ATTN_REQUIRE_MODEL:-}" = 1 ]; then
            echo "regenerate.sh: ATTN_REQUIRE_MODEL=1, but there is no $ch20_model (bash scripts/get-model.sh)" >&2
            exit 1
        fi
        echo "regenerate.sh: chapter 20's real-model fixtures and texts skipped: no $ch20_model (bash scripts/get-model.sh)" >&2
        return 1
    fi
}
regenerate_ch20() {
    ch20_packages || return 0
    "$PYTHON" "$1" --fixtures
    ch20_model_here || return 0
    "$PYTHON" "$1" --real "$ch20_model"
    local out="$here/expected/ch20-real-model.txt"
    PYTHONHASHSEED=0 "$PYTHON" "$1" --model "$ch20_model" > "$out.tmp"
    mv "$out.tmp" "$out"
    echo "wrote ${out#"$here"/}"
    # What `cargo run -p ch20-real-model -- --interventions` prints.
    out="$here/expected/ch20-real-model.interventions.txt"
    PYTHONHASHSEED=0 "$PYTHON" "$1" --interventions --model "$ch20_model" > "$out.tmp"
    mv "$out.tmp" "$out"
    echo "wrote ${out#"$here"/}"
}
# Whether CHAPTERS (a list of chapter folder names) is unset or names `chapter`.
chosen() { # chapter
    [ -z "${CHAPTERS:-}" ] || [[ " $CHAPTERS " == *" $1 "* ]]
}

# A chapter whose manifest says `needs_data` reads data/shakespeare.txt (bash
# scripts/get-shakespeare.sh) and trains Hugging Face's tokenizers: skipped, with a message,
# without them; with ATTN_REQUIRE_DATA=1 (as in CI) a missing text is a failure.
data_here() { # chapter
    [ "$(chapter_value "$1" needs_data)" = true ] || return 0
    if ! "$PYTHON" -c 'import tokenizers' 2>/dev/null; then
        echo "regenerate.sh: $1 skipped: $PYTHON lacks tokenizers (see requirements.txt)" >&2
        return 1
    fi
    if [ ! -f "$here/../data/shakespeare.txt" ]; then
        if [ "${ATTN_REQUIRE_DATA:-}" = 1 ]; then
            echo "regenerate.sh: ATTN_REQUIRE_DATA=1, but there is no data/shakespeare.txt (bash scripts/get-shakespeare.sh)" >&2
            exit 1
        fi
        echo "regenerate.sh: $1 skipped: no data/shakespeare.txt (bash scripts/get-shakespeare.sh)" >&2
        return 1
    fi
}

# chNN_slug.py -> expected/chNN-slug.txt
for script in "$here"/ch[0-9][0-9]_*.py; do
    name="$(basename "$script" .py)"
    # Chapter 22's export check: transformers reads a small model the chapter saves (the
    # script runs cargo); what it prints is the chapter's test fixture.
    if [ "$name" = ch22_export_check ]; then
        chosen ch22-pretraining || continue
        if ! "$PYTHON" -c 'import transformers' 2>/dev/null; then
            echo "regenerate.sh: $name skipped: $PYTHON lacks transformers (see requirements.txt)" >&2
            continue
        fi
        out="$here/../chapters/ch22-pretraining/tests/fixtures/export_check.txt"
        "$PYTHON" "$script" > "$out.tmp"
        mv "$out.tmp" "$out"
        echo "wrote ${out#"$here"/../}"
        continue
    fi
    chosen "${name//_/-}" || continue
    data_here "${name//_/-}" || continue
    # Chapter 20's script also writes fixtures, and needs transformers and the model.
    if [ "$name" = ch20_real_model ]; then
        regenerate_ch20 "$script"
        continue
    fi
    # Chapter 23's script needs peft; it also writes the chapter's test fixtures (running
    # cargo for the course's adapter), and with the model the first steps on SmolLM2 and
    # the committed adapter's greedy answers (run again whenever that adapter changes).
    if [ "$name" = ch23_lora ]; then
        if ! { ch20_packages && "$PYTHON" -c 'import peft' 2>/dev/null; }; then
            echo "regenerate.sh: $name skipped: $PYTHON lacks peft or transformers (see requirements.txt)" >&2
            continue
        fi
        "$PYTHON" "$script" --fixtures
        if ch20_model_here; then
            "$PYTHON" "$script" --real "$ch20_model"
            "$PYTHON" "$script" --answers "$ch20_model"
        fi
    fi
    out="$here/expected/${name//_/-}.txt"
    PYTHONHASHSEED=0 "$PYTHON" "$script" > "$out.tmp"
    mv "$out.tmp" "$out"
    echo "wrote ${out#"$here"/}"
done

# Each chapter's seeds, from its manifest.
for manifest in "$here"/../chapters/*/chapter.toml; do
    chapter="$(basename "$(dirname "$manifest")")"
    script="$here/${chapter//-/_}.py"
    if [ ! -f "$script" ]; then
        echo "regenerate.sh: chapters/$chapter has a manifest, but $script is missing" >&2
        exit 1
    fi
    chosen "$chapter" || continue
    if [ "$(chapter_value "$chapter" needs_model)" = true ] && ! { ch20_packages && ch20_model_here; }; then
        continue
    fi
    data_here "$chapter" || continue
    for seed in $(chapter_seeds "$chapter"); do
        out="$here/expected/seeds/$chapter.seed-$seed.txt"
        PYTHONHASHSEED=0 "$PYTHON" "$script" --seed "$seed" > "$out.tmp"
        mv "$out.tmp" "$out"
        echo "wrote ${out#"$here"/}"
    done
done

# The texts above are the reference platform's where this script runs on an Intel processor
# with AVX-512. Elsewhere MKL may add some matrix products in another order, and a printed
# last digit can move: compare a regenerated text with the committed one before committing
# it (course::platform explains which outputs are exact on which processors).
if ! grep -q GenuineIntel /proc/cpuinfo 2>/dev/null || ! grep -q avx512f /proc/cpuinfo 2>/dev/null; then
    echo "regenerate.sh: not an Intel processor with AVX-512: the files written are this processor's text, which can differ from the reference platform's in a last digit; check git diff" >&2
fi
