#!/usr/bin/env bash
# Builds the book into book/build, offline, and fails on any warning.
#
# - Installs the pinned mdbook and mdbook-katex into $BOOK_TOOLS (default
#   ~/.cache/attention-book-tools) if they are not there yet (scripts/install-book-tools.sh).
# - Builds without network where the machine allows it (a network namespace of its own):
#   the math is rendered at build time and KaTeX's stylesheet and fonts ship in book/src.
# - Fails on any WARN or ERROR line of mdBook or its preprocessors (mdBook only logs a
#   missing include, and mdbook-katex only warns about LaTeX it cannot render), on an
#   include marker left in the HTML, and on any page that links a file from the network.
# - Builds the widgets' WebAssembly module first when it can (scripts/build-wasm.sh), and
#   checks that the pages ask for it if and only if it is there.
# - Runs the include test first (tests/tests/book_includes.rs): mdBook itself renders a
#   missing anchor as an empty block and says nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

BOOK_TOOLS=${BOOK_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/attention-book-tools}
export PATH="$BOOK_TOOLS/bin:$PATH"
bash scripts/install-book-tools.sh
mdbook --version
mdbook-katex --version

# mdBook renders a missing anchor as nothing, without a word: check every include first.
cargo test --quiet -p workspace-tests --test book_includes

# The widgets' WebAssembly module (book/src/widgets/book_widgets.wasm, see
# scripts/build-wasm.sh); mdBook copies it into the book. Without it the pages show their
# static figures only, so a machine that cannot build it still gets a whole book.
if ! bash scripts/build-wasm.sh; then
  echo "note: no WebAssembly module; the book's pages will show their static figures only"
fi
# The kernels of the chapters whose page runs them on the reader's GPU (`widget = "gpu"` in
# chapter.toml; theme/gpu.js): the very files the chapter compiles, copied into the book
# (not committed).
source scripts/chapters.sh
rm -rf book/src/widgets/kernels
mkdir -p book/src/widgets/kernels
for chapter in $(chapters_where widget gpu); do
  cp "chapters/$chapter"/kernels/*.wgsl book/src/widgets/kernels/
done
# The pages fetch the module where build-wasm.sh marked them (theme/header.hbs); without
# the module, no mark, so that they ask for nothing.
if [ ! -f book/src/widgets/book_widgets.wasm ]; then
  rm -f book/theme/header.hbs
fi

offline=()
if unshare --net true 2>/dev/null; then
  offline=(unshare --net)
  echo "building with no network (unshare --net)"
else
  echo "note: cannot drop the network here (unshare --net); building normally"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"${offline[@]}" mdbook build book >"$log" 2>&1 || status=$?
cat "$log"
if [ "$status" -ne 0 ]; then
  echo "book: mdbook build failed ($status)" >&2
  exit 1
fi
if grep -E '(^|[^A-Za-z])(WARN|ERROR)([^A-Za-z]|$)' "$log" >/dev/null; then
  echo "book: the build logged warnings or errors (see above)" >&2
  exit 1
fi

fail=0
if grep -rl --include='*.html' '{{#' book/build; then
  echo "book: include markers left in the HTML above (a missing file or anchor?)" >&2
  fail=1
fi
if grep -rhoE --include='*.html' '<(link|script|img|iframe|source)[^>]*(src|href)="(https?:)?//[^"]*"' book/build; then
  echo "book: pages load files from the network (above)" >&2
  fail=1
fi
for asset in katex/katex.min.css katex/fonts/KaTeX_Main-Regular.woff2 figures/ch05-causal-mask.svg; do
  [ -f "book/build/$asset" ] || { echo "book: book/build/$asset is missing" >&2; fail=1; }
done
if [ -f book/src/widgets/book_widgets.wasm ]; then
  if [ ! -f book/build/widgets/book_widgets.wasm ]; then
    echo "book: the widgets' module was built but is not in book/build/widgets" >&2
    fail=1
  fi
  if ! grep -q 'data-book-widgets-module=' book/build/ch05-causal.html; then
    echo "book: the pages lack the mark that makes them load the widgets (theme/header.hbs)" >&2
    fail=1
  fi
elif grep -rlq --include='*.html' 'data-book-widgets-module=' book/build; then
  echo "book: pages carry the widgets' mark, but there is no module for them to load" >&2
  fail=1
fi
pages_with_math=$(grep -rl --include='*.html' 'class="katex' book/build | wc -l)
if [ "$pages_with_math" -lt 9 ]; then
  echo "book: only $pages_with_math pages have rendered math" >&2
  fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "book: built in book/build ($pages_with_math pages with math), no warnings"
