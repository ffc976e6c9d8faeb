// Runs every chapter's narrative inside the book's WebAssembly module (under Node) and
// compares it byte for byte with what the chapter's native binary prints, for the
// articles' seeds and two others. Chapter 19 trains its model for any seed but its own
// (too long for a page): it runs here from its saved run only, and another seed must
// answer a message that gives the `cargo run --release` command.
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
  "ch14-generation", "ch15-modern-layer", "ch16-flex-attention", "ch17-inference", "ch18-linear-attention",
  "ch19-induction-heads",
];
// The seeds each chapter is run with: chapter 19 only from its saved run (its seed, 7).
const seedsOf = (name) => (name === "ch19-induction-heads" ? [null, "7"] : seeds);

const request = await bookWidgetsInstantiate(readFileSync(wasm));
let failures = 0;
let runs = 0;
for (const name of packages) {
  const chapter = Number(name.slice(2, 4));
  for (const seed of seedsOf(name)) {
    runs++;
    const flags = seed === null ? [] : ["--seed", seed];
    const native = execFileSync(join(binDir, name), flags, { encoding: "utf8", maxBuffer: 1 << 26 });
    const started = performance.now();
    const answer = request(seed === null ? { run: chapter } : { run: chapter, seed });
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
// Chapter 19 with another seed: no training in the page, the command instead.
const trains = request({ run: 19, seed: "8" });
const command = "cargo run --release -p ch19-induction-heads -- --seed 8";
if (trains.ok || !trains.text.includes(command)) {
  console.error(`FAIL ch19-induction-heads --seed 8: the module should answer a message with \`${command}\`, not ${JSON.stringify(trains.text.slice(0, 200))}`);
  failures++;
} else {
  console.log("ok   ch19-induction-heads --seed 8: the module gives the command to train on the reader's machine");
}
if (failures) {
  console.error(`${failures} narratives differ between the module and the native binaries`);
  process.exit(1);
}
console.log(`all ${runs} narratives equal, byte for byte`);
