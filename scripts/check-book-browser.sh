#!/usr/bin/env bash
# Serves the book with `mdbook serve` on 127.0.0.1 (as a reader does) and checks its pages
# in headless Chromium (scripts/check-book-browser.mjs): math rendered by KaTeX, figures
# loaded, no request leaving the machine; then the widgets (scripts/check-widgets-browser.mjs):
# their controls moved, their numbers against the native code's. Screenshots:
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

port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
log=$(mktemp)
mdbook serve book --hostname 127.0.0.1 --port "$port" >"$log" 2>&1 &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"; }
trap cleanup EXIT

# Wait until the server answers with the built book.
node -e '
  const url = process.argv[1];
  const deadline = Date.now() + 180000;
  (async function poll() {
    try { const r = await fetch(url); if (r.ok) return; } catch {}
    if (Date.now() > deadline) { console.error("mdbook serve did not answer"); process.exit(1); }
    setTimeout(poll, 500);
  })();' "http://127.0.0.1:$port/index.html" || { cat "$log"; exit 1; }

status=0
node scripts/check-book-browser.mjs --base "http://127.0.0.1:$port/" --chromium "$chromium" \
  --out book/build/screenshots || status=$?
# The widgets: each chapter's controls moved, the page's numbers against the native code's
# (widget-numbers, book/widgets). Needs the module in the book (scripts/build-book.sh).
if [ -f book/src/widgets/book_widgets.wasm ]; then
  cargo build -q -p book-widgets --bin widget-numbers
  numbers="${CARGO_TARGET_DIR:-target}/debug/widget-numbers"
  node scripts/check-widgets-browser.mjs --base "http://127.0.0.1:$port/" --chromium "$chromium" \
    --numbers "$numbers" --out book/build/screenshots || status=$?
else
  echo "check-book-browser: no widgets module (book/src/widgets/book_widgets.wasm): widgets not checked"
fi
if grep -E '(^|[^A-Za-z])(WARN|ERROR)([^A-Za-z]|$)' "$log"; then
  echo "check-book-browser: mdbook serve logged warnings or errors (above)" >&2
  status=1
fi
exit "$status"
