// Runs every chapter's narrative inside the book's WebAssembly module (under Node) and
// compares it byte for byte with what the chapter's native binary prints, for the
// articles' seeds and two others.
//
//   node scripts/check-wasm-narratives.mjs --wasm book/src/widgets/book_widgets.wasm --bin target/debug
//
// No npm packages: the module is loaded by the book's own loader (book/theme/widgets.js).

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const { bookWidgetsInstantiate } = require("../book/theme/widgets.js");

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const wasm = args.wasm ?? "book/src/widgets/book_widgets.wasm";
const binDir = args.bin ?? "target/debug";
const seeds = [null, "7", "18446744073709551615"];
const packages = [
  "ch01-embeddings", "ch02-dot-product", "ch03-softmax", "ch04-trainable", "ch05-causal",
  "ch06-multihead-wrapper", "ch07-multihead-split", "ch08-cross-attention",
  "ch09-flash-attention", "ch10-backward", "ch11-training", "ch12-positions", "ch13-block",
  "ch14-generation", "ch15-modern-layer",
];

const request = await bookWidgetsInstantiate(readFileSync(wasm));
let failures = 0;
for (const [i, name] of packages.entries()) {
  for (const seed of seeds) {
    const flags = seed === null ? [] : ["--seed", seed];
    const native = execFileSync(join(binDir, name), flags, { encoding: "utf8", maxBuffer: 1 << 26 });
    const started = performance.now();
    const answer = request(seed === null ? { run: i + 1 } : { run: i + 1, seed });
    const ms = performance.now() - started;
    const label = `${name}${seed === null ? "" : ` --seed ${seed}`}`;
    if (!answer.ok) {
      console.error(`FAIL ${label}: the module answered an error: ${answer.text}`);
      failures++;
    } else if (answer.text !== native) {
      const a = answer.text.split("\n");
      const b = native.split("\n");
      const line = a.findIndex((l, k) => l !== b[k]);
      console.error(
        `FAIL ${label}: line ${line + 1} differs\n  module: ${JSON.stringify(a[line])}\n  native: ${JSON.stringify(b[line])}`,
      );
      failures++;
    } else {
      console.log(`ok   ${label}: ${native.length} bytes equal (module ${ms.toFixed(0)} ms)`);
    }
  }
}
if (failures) {
  console.error(`${failures} narratives differ between the module and the native binaries`);
  process.exit(1);
}
console.log(`all ${packages.length * seeds.length} narratives equal, byte for byte`);
