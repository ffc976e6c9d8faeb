#!/usr/bin/env bash
# Installs the pinned mdbook and mdbook-katex with `cargo install --locked` into $BOOK_TOOLS
# (default ~/.cache/attention-book-tools) if they are not there yet; scripts/build-book.sh
# runs it first. Takes a few minutes once, nothing after.
#   bash scripts/install-book-tools.sh
set -euo pipefail

MDBOOK_VERSION=0.5.3          # the mdBook that mdbook-katex 0.10.0 is built against (--locked)
MDBOOK_KATEX_VERSION=0.10.0   # renders with KaTeX 0.16.4, the version of book/src/katex
BOOK_TOOLS=${BOOK_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/attention-book-tools}

# Built with light optimisation (opt-level 1): the book is small, and the tools build in
# about half the time of a full release build.
install_tool() { # crate version [cargo install's options]
  if ! "$BOOK_TOOLS/bin/$1" --version 2>/dev/null | grep -qF "$2"; then
    echo "installing $1 $2 into $BOOK_TOOLS (once; takes a few minutes)"
    CARGO_TARGET_DIR="$BOOK_TOOLS/target" CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
      cargo install --locked --quiet --root "$BOOK_TOOLS" "$1" --version "$2" "${@:3}"
  fi
}
# `mdbook build`, and `mdbook serve` for scripts/check-book-browser.sh (as a reader serves
# the book): without its `watch` (a file watcher).
install_tool mdbook "$MDBOOK_VERSION" --no-default-features --features search,serve
install_tool mdbook-katex "$MDBOOK_KATEX_VERSION"
rm -rf "$BOOK_TOOLS/target"
