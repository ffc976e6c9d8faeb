#!/usr/bin/env bash
# Builds the book's widgets (book/widgets) as a WebAssembly module and puts it where the
# book's pages load it from: book/src/widgets/book_widgets.wasm (not committed; mdBook
# copies it into the built book, and `mdbook serve` picks it up). With the module there, it
# marks the pages (book/theme/header.hbs, not committed either): the pages fetch the module
# only where they carry the mark, so a book built without it makes no request for it.
#
# Two ways to get the wasm32-unknown-unknown target:
# - rustup: `rustup target add wasm32-unknown-unknown` (done here when rustup is present);
# - Debian's packages, where rustup cannot fetch a target: `apt-get install rustc-web
#   rust-web-src lld` gives a compiler that knows the target and the standard library's
#   source; the standard library is then built along (`-Zbuild-std`, allowed on a stable
#   compiler by RUSTC_BOOTSTRAP=1) and linked by `wasm-ld`. Set WASM_WITH=debian to force it.
#   Debian's rustc must be at least the workspace's rust-version (1.89: trixie's
#   backports or later, not bookworm's 1.85).
#
# Usage: bash scripts/build-wasm.sh [--out DIR]   (default book/src/widgets)
set -euo pipefail
cd "$(dirname "$0")/.."

out=book/src/widgets
if [ "${1:-}" = "--out" ]; then out=$2; fi
target=wasm32-unknown-unknown
target_dir=${CARGO_TARGET_DIR:-target}

with=${WASM_WITH:-}
if [ -z "$with" ]; then
  if command -v rustup >/dev/null && rustup target add "$target" >/dev/null 2>&1; then
    with=rustup
  elif dpkg -s rustc-web rust-web-src lld >/dev/null 2>&1; then
    with=debian
  else
    echo "build-wasm: no $target target: run \`rustup target add $target\`, or install" \
      "Debian's rustc-web, rust-web-src and lld" >&2
    exit 1
  fi
fi

# The library only: `--crate-type cdylib` makes a module (the crate is a plain library
# for the native workspace build). Release: the module is smaller and the chapters run
# at full speed in the page.
build=(rustc -p book-widgets --lib --release --target "$target" --crate-type cdylib)
case "$with" in
  rustup)
    cargo "${build[@]}"
    ;;
  debian)
    # rustc-web is Debian's /usr/bin/rustc with the wasm targets; rust-web-src puts the
    # standard library's source in its sysroot, where -Zbuild-std looks for it.
    RUSTC=${RUSTC_WEB:-/usr/bin/rustc} RUSTC_BOOTSTRAP=1 \
      CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld \
      cargo "${build[@]}" -Zbuild-std=std,panic_abort
    ;;
  *)
    echo "build-wasm: WASM_WITH is rustup or debian, not $with" >&2
    exit 1
    ;;
esac

mkdir -p "$out"
cp "$target_dir/$target/release/book_widgets.wasm" "$out/book_widgets.wasm"
if [ "$out" = book/src/widgets ]; then
  # mdBook puts theme/header.hbs at the top of every page; theme/widgets.js looks for it.
  echo '<div hidden data-book-widgets-module="widgets/book_widgets.wasm"></div>' >book/theme/header.hbs
fi
echo "build-wasm: $out/book_widgets.wasm ($(du -h "$out/book_widgets.wasm" | cut -f1), with $with)"
