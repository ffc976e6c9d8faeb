// Runs every chapter's narrative inside the book's WebAssembly module (under Node) and
// compares it byte for byte with what the chapter's native binary prints, for the
// articles' seeds and two others. A chapter whose page replays one saved run (chapter 19
// trains its model for any seed but its own, too long for a page; `page_run = "seed N"` in
// its chapter.toml) runs here from that run only, and another seed must answer a message
// that gives the `cargo run --release` command.
//
//   node scripts/check-wasm-narratives.mjs --wasm book/src/widgets/book_widgets.wasm --bin target/debug
//
// No npm packages: the module is loaded by the book's own loader (book/theme/widgets.js).

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chapters, savedSeed } from "./chapters.mjs";

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
// The chapters whose page runs their narrative (`page_run` in chapter.toml), and the seeds
// each is run with: a page that replays one saved run, with that run's seed only.
const runnable = chapters().filter((c) => c.page_run !== "none");
const packages = runnable.map((c) => c.package);
const seedsOf = (name) => {
  const saved = savedSeed(runnable.find((c) => c.package === name));
  return saved === null ? seeds : [null, saved];
};

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
// A page that replays a saved run, with another seed: no training in the page, the command
// that runs it natively instead.
for (const chapter of runnable.filter((c) => savedSeed(c) !== null)) {
  const other = String(BigInt(savedSeed(chapter)) + 1n);
  const label = `${chapter.package} --seed ${other}`;
  const trains = request({ run: chapter.number, seed: other });
  const command = `cargo run --release -p ${chapter.package} -- --seed ${other}`;
  if (trains.ok || !trains.text.includes(command)) {
    console.error(`FAIL ${label}: the module should answer a message with \`${command}\`, not ${JSON.stringify(trains.text.slice(0, 200))}`);
    failures++;
  } else {
    console.log(`ok   ${label}: the module gives the command to run it on the reader's machine`);
  }
}
if (failures) {
  console.error(`${failures} narratives differ between the module and the native binaries`);
  process.exit(1);
}
console.log(`all ${runs} narratives equal, byte for byte`);
