#!/usr/bin/env bash
# Serves the book with `mdbook serve` on 127.0.0.1 (as a reader does) and checks its pages
# in headless Chromium (scripts/check-book-browser.mjs): math rendered by KaTeX, figures
# loaded, every diagram of book/src/diagrams on a page, loaded and screenshot in the light
# and the dark theme, no request leaving the machine, no error in the console; then the widgets
# (scripts/check-widgets-browser.mjs): their controls moved, their numbers against the
# native code's. Then the pages once more as a book built without the widgets' module
# shows them: no request for it, no error, the widgets' places empty. Screenshots:
# book/build/screenshots/*.png.
#
# Needs mdbook (scripts/build-book.sh installs it), Node.js 18+ and Chromium. With CI=true
# (or CHECK_BOOK_INSTALL=1) and root, missing Chromium or Node come from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/.."

BOOK_TOOLS=${BOOK_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/attention-book-tools}
export PATH="$BOOK_TOOLS/bin:$PATH"

may_install() { [ "${CI:-}" = "true" ] || [ "${CHECK_BOOK_INSTALL:-}" = "1" ]; }
apt_install() {
  if ! may_install || [ "$(id -u)" -ne 0 ]; then
    echo "check-book-browser: $1 is missing; install Debian's package: apt-get install $*" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  apt_install chromium
  chromium=$(command -v chromium)
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' 2>/dev/null; then
  apt_install nodejs
fi
command -v mdbook >/dev/null || { echo "check-book-browser: run scripts/build-book.sh first" >&2; exit 1; }
"$chromium" --version

# `mdbook serve` of the book on a free port of 127.0.0.1, into book/build or the folder
# $2; waits until it answers. Sets $port.
servers=()
logs=()
serve() { # name [dest-dir]
  port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
  local log
  log=$(mktemp)
  logs+=("$log")
  mdbook serve book --hostname 127.0.0.1 --port "$port" ${2:+--dest-dir "$2"} >"$log" 2>&1 &
  servers+=($!)
  # Wait until the server answers with the built book.
  node -e '
    const url = process.argv[1];
    const deadline = Date.now() + 180000;
    (async function poll() {
      try { const r = await fetch(url); if (r.ok) return; } catch {}
      if (Date.now() > deadline) { console.error("mdbook serve did not answer"); process.exit(1); }
      setTimeout(poll, 500);
    })();' "http://127.0.0.1:$port/index.html" || { cat "$log"; echo "check-book-browser: $1: no server" >&2; exit 1; }
}
scratch=$(mktemp -d)
cleanup() {
  for server in "${servers[@]}"; do kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; done
  rm -rf "$scratch" "${logs[@]}"
}
trap cleanup EXIT

status=0
module=book/src/widgets/book_widgets.wasm
serve "the book"
if [ -f "$module" ]; then
  node scripts/check-book-browser.mjs --base "http://127.0.0.1:$port/" --chromium "$chromium" \
    --out book/build/screenshots || status=$?
  # The widgets: each chapter's controls moved, the page's numbers against the native
  # code's (widget-numbers, book/widgets).
  cargo build -q -p book-widgets --bin widget-numbers
  numbers="${CARGO_TARGET_DIR:-target}/debug/widget-numbers"
  node scripts/check-widgets-browser.mjs --base "http://127.0.0.1:$port/" --chromium "$chromium" \
    --numbers "$numbers" --out book/build/screenshots || status=$?
  # Chapter 21's kernels in the page, on Chromium's software GPU (WebGPU on, no --disable-gpu).
  node scripts/check-gpu-widget.mjs --base "http://127.0.0.1:$port/" --chromium "$chromium" \
    --out book/build/screenshots || status=$?
  # The same pages as a book built without the module shows them: its pages carry no mark
  # (theme/header.hbs, written by build-wasm.sh), so a theme without it stands for that.
  mkdir "$scratch/theme"
  for file in book/theme/*; do
    [ "$(basename "$file")" = header.hbs ] || cp "$file" "$scratch/theme/"
  done
  MDBOOK_OUTPUT__HTML__THEME="$scratch/theme" serve "the book without the module" "$scratch/build"
  node scripts/check-book-browser.mjs --base "http://127.0.0.1:$port/" --chromium "$chromium" \
    --out "$scratch/screenshots" --without-widgets || status=$?
else
  echo "check-book-browser: no widgets module ($module): the pages as they are without it"
  node scripts/check-book-browser.mjs --base "http://127.0.0.1:$port/" --chromium "$chromium" \
    --out book/build/screenshots --without-widgets || status=$?
fi
for log in "${logs[@]}"; do
  if grep -E '(^|[^A-Za-z])(WARN|ERROR)([^A-Za-z]|$)' "$log"; then
    echo "check-book-browser: mdbook serve logged warnings or errors (above)" >&2
    status=1
  fi
done
exit "$status"
