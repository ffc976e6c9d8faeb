#!/usr/bin/env bash
# Redraws the book's attention heatmaps, book/src/figures/*.svg, from the chapters' own
# tensors (the crate book/figures; plotters is compiled only here, never by `cargo test`).
#
#   bash scripts/make-figures.sh           # redraw the figures that changed
#   bash scripts/make-figures.sh --check   # write nothing; fail if a figure is stale
#
# `cargo test --workspace` (test `book_includes`) also fails on a stale figure, by
# comparing the digest each SVG records with the chapters' tensors.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --quiet -p book-figures --features draw --bin make-figures -- "$@"
