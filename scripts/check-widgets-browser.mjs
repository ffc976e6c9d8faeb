// Moves the controls of every chapter's widget in headless Chromium and checks that the
// page shows the native code's numbers for the same settings.
//
//   node scripts/check-widgets-browser.mjs --base http://127.0.0.1:PORT/ --chromium /usr/bin/chromium \
//        --numbers target/debug/widget-numbers --out book/build/screenshots
//
// On each chapter page (2 to 16, 18 and 19; 17's run panel): the module loads, each move of a control redraws the
// heatmap, and the weights the page holds (and the two decimals it prints in each cell)
// are those `widget-numbers` (book/widgets, native) answers for the settings the page
// sent, with the caption and the block mask (chapter 16) it draws. The "run this chapter"
// panel, run with a seed, prints what the native code prints; chapter 19's runs with its
// own seed (its saved run) and, with another, shows the message that gives the command.
// Chapter 17's block pool: its buttons pressed and its block size changed, the blocks, tables and
// caption it draws against the native code's pool for the same steps.
// Fails on a console error, a script error, a failed request or one that leaves the machine.
// Screenshots of the widgets go to --out.
//
// No npm packages: Chromium is driven over the DevTools protocol on a pipe, as in
// scripts/check-book-browser.mjs.

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chapters, savedSeed } from "./chapters.mjs";
import { launchChromium } from "./chromium.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const base = new URL(args.base ?? "http://127.0.0.1:3000/");
const chromiumPath = args.chromium ?? "/usr/bin/chromium";
const numbers = args.numbers ?? "target/debug/widget-numbers";
const outDir = args.out ?? "book/build/screenshots";
const timeoutMs = Number(args.timeout ?? 180000);

// The pages with a widget (`widget` in each chapter.toml) that the module drives: a heatmap,
// or a block diagram beside the run panel (no heatmap to move).
const manifests = chapters().filter((c) => c.widget === "heatmap" || c.widget === "block");
const pages = manifests.map((c) => c.package);
const runOnly = new Set(manifests.filter((c) => c.widget === "block").map((c) => c.package));
const manifestOf = (page) => manifests.find((c) => c.package === page);
// The seed the run panel is checked with: a page that replays a saved run, that run's seed
// (chapter 19 trains for any other); chapter 11's short run, 7.
const runSeed = (page) => savedSeed(manifestOf(page)) ?? (page === "ch11-training" ? "7" : "2024");

// The moves, one after the other, each a set of knob values; a knob the page does not
// have (the module declares each chapter's, book/widgets/src/controls.rs), or a value its
// list does not offer, is skipped.
function movesOf(chapter) {
  if (chapter === 11) return [{}, { step: "0" }, { step: "10" }, { seed: "7" }, { step: "60" }];
  // Chapter 19: the step slider through the plateau and the drop, on the chapter's example
  // and on drawn sequences; each step's maps and caption against the native code's.
  if (chapter === 19) {
    return [
      {}, { step: "0" }, { step: "1000" }, { step: "1600" }, { step: "1800" }, { step: "2000" },
      { step: "2200" }, { input: "drawn from the seed" }, { seed: "2024" }, { step: "1700" },
      { seed: "18446744073709551615", step: "3000" }, { input: "the chapter's example", step: "2500" },
    ];
  }
  const moves = [
    {},
    { temperature: "0.5" },
    { causal: true },
    { causal: false, temperature: "3.2" },
    { words: "step one with journey" },
    { dropout: "0.5", seed: "7" },
    { seed: "18446744073709551615" },
    { dropout: "0" },
  ];
  if (chapter >= 4) moves.push({ d_out: "6" });
  if (chapter >= 6) moves.push({ heads: "3" }, { heads: "1", d_out: "4" }, { heads: "4", d_out: "8" });
  if (chapter === 12) moves.push({ rope: false }, { rope: true, words: "Your journey starts with one step" });
  if (chapter === 13) moves.push({ pre_norm: false }, { pre_norm: true, d_out: "16", heads: "4" });
  if (chapter === 14) {
    moves.push(
      { window: "2" },
      { decoded: "3" },
      { window: "0", decoded: "5" },
      { kv_heads: "1" },
      { heads: "2", kv_heads: "4" }, // 4 key/value heads cannot serve 2 query heads: the page says so
      { heads: "4", kv_heads: "2" },
      { prompt: "3 1 4 1 5", decoded: "11" },
      { prompt: "0 6 12 99" }, // not a token id: the page says so
      { prompt: "0 6 12", decoded: "5" },
    );
  }
  if (chapter === 16) {
    moves.push(
      { recipe: "sliding window" },
      { window: "2" },
      { tile: "2" },
      { recipe: "causal window", window: "6" },
      { recipe: "document mask", tile: "8" },
      { recipe: "prefix-LM", tile: "3" },
      { recipe: "ALiBi", tile: "4" },
      { recipe: "softcap" },
      { recipe: "no mask", tile: "5" },
      { recipe: "sliding window", window: "0" }, // no key for any query: the page says so
      { window: "3", tile: "4" },
      { recipe: "document mask", seed: "16" },
    );
  }
  if (chapter === 18) {
    moves.push(
      { top_k: "1" },
      { top_k: "8" },
      { top_k: "16" },
      { top_k: "0" }, // no key kept: the page says so
      { top_k: "4", seed: "18" },
    );
  }
  if (chapter === 15) {
    moves.push(
      { sinks: false },
      { softcap: false },
      { qk_norm: false },
      { window: "0" },
      { window: "2", sinks: true, softcap: true, qk_norm: true },
      { prompt: "1 2 3 4 5 6 7 8" },
      { prompt: "0 7 99" }, // not a token id: the page says so
      { prompt: "0 7 14 21 28 3", window: "4" },
    );
  }
  moves.push({ d_out: "5", heads: "2" }); // not a multiple: the page says so
  moves.push({ d_out: "4", temperature: "1", causal: true }); // and draws again once fixed
  return moves;
}

function fail(message) {
  console.error(`widgets check: ${message}`);
  process.exitCode = 1;
}

// --- the browser (scripts/chromium.mjs) ---------------------------------------------------

const { chrome, send, waitFor, evaluate, listeners, close, log: chromeLog } = launchChromium(
  chromiumPath,
  base.hostname,
  "widgets-chromium-",
);

// --- the page's side: wait for the module, move a control, read what is drawn ------------

const ready = `(async () => {
  const deadline = Date.now() + 30000;
  while (document.documentElement.dataset.widgets !== "ready") {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
})()`;

const move = (knobs) => `(() => {
  const root = document.querySelector(".attention-widget");
  for (const [name, value] of Object.entries(${JSON.stringify(knobs)})) {
    const input = root.querySelector('[data-knob="' + name + '"]');
    if (!input) continue;
    if (input.tagName === "SELECT" && ![...input.options].some((o) => o.value === value)) continue;
    if (input.type === "checkbox") input.checked = value; else input.value = value;
    input.dispatchEvent(new Event("input"));
  }
  return {
    settings: JSON.parse(root.dataset.settings),
    weights: root.dataset.weights,
    cells: [...root.querySelectorAll("table.widget-heatmap")].map((t) =>
      [...t.querySelectorAll("tr")].slice(1).map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent))),
    message: root.querySelector(".widget-message").textContent,
    caption: root.querySelector(".widget-caption").textContent,
    tiles: [...root.querySelectorAll("table.widget-heatmap")].map((t) =>
      [...t.querySelectorAll("tr")].slice(1).map((tr) => [...tr.querySelectorAll("td")].map((td) => td.dataset.tile ?? "").join(""))),
  };
})()`;

const runPanel = (seed) => `(async () => {
  const root = document.querySelector(".run-chapter");
  const input = root.querySelector('[data-knob="seed"]');
  input.value = ${JSON.stringify(seed)};
  root.querySelector("button").click();
  const out = root.querySelector("pre");
  const deadline = Date.now() + 30000;
  delete out.dataset.ok;
  while (out.dataset.ok === undefined) {
    if (Date.now() > deadline) return null;
    await new Promise((r) => setTimeout(r, 50));
  }
  return out.textContent;
})()`;

// Chapter 17's block pool: one move (a button pressed, or the block size changed), then
// what the widget holds and draws.
const poolMoves = [
  {}, { click: "request" }, { click: "token" }, { click: "fork" }, { click: "token" },
  { click: "request" }, { click: "request" }, { click: "request" },
  { click: "request" }, // every request has arrived: the button does nothing
  { block_size: "1" }, { click: "token" }, { click: "token" },
  { click: "token" }, // no free block left: the page says so and takes the step back
  { block_size: "8" }, { click: "reset" }, { block_size: "3" }, { click: "request" },
];
const poolMove = (m) => `(() => {
  const root = document.querySelector(".block-widget");
  const m = ${JSON.stringify(m)};
  if (m.block_size) {
    const size = root.querySelector('[data-knob="block_size"]');
    size.value = m.block_size;
    size.dispatchEvent(new Event("input"));
  }
  if (m.click) root.querySelector('[data-step="' + m.click + '"]').click();
  return {
    settings: JSON.parse(root.dataset.settings),
    pool: root.dataset.pool,
    message: root.querySelector(".widget-message").textContent,
    caption: root.querySelector(".widget-caption").textContent,
    blocks: [...root.querySelectorAll(".block-cell")].map((c) =>
      [c.dataset.state, c.querySelector(".block-tokens").textContent, c.querySelector(".block-refs").textContent]),
    tables: [...root.querySelectorAll("table.block-tables tr")].map((tr) =>
      [tr.querySelector("th").textContent, [...tr.querySelectorAll(".block-chip")].map((c) => c.textContent + ":" + c.dataset.state).join(" ")]),
  };
})()`;

// The pool moves against the native code's pools; returns the problems and the number of
// distinct pools drawn.
function comparePools(seen, native) {
  const errors = [];
  seen.forEach((s, i) => {
    const answer = native[i];
    if (answer.error !== undefined) {
      if (s.message !== answer.error) errors.push(`pool move ${i}: the page says ${JSON.stringify(s.message)}, native ${JSON.stringify(answer.error)}`);
      return;
    }
    if (s.message !== "") errors.push(`pool move ${i}: the page says ${JSON.stringify(s.message)}, native answers a pool`);
    if (s.pool !== answer.ok) errors.push(`pool move ${i} ${JSON.stringify(s.settings)}: the pool differs from the native code's`);
    const pool = JSON.parse(answer.ok);
    if (s.caption !== pool.caption) errors.push(`pool move ${i}: the caption says ${JSON.stringify(s.caption)}, native ${JSON.stringify(pool.caption)}`);
    const blocks = pool.blocks.map((b) => [b.state, b.tokens.join(" "), b.refs ? `refs ${b.refs}` : ""]);
    if (JSON.stringify(s.blocks) !== JSON.stringify(blocks)) errors.push(`pool move ${i}: the blocks drawn differ from the native pool`);
    const tables = pool.sequences.map((q) => [q.name, q.table.map((id) => `${id}:${pool.blocks[id].state}`).join(" ")]);
    if (JSON.stringify(s.tables) !== JSON.stringify(tables)) errors.push(`pool move ${i}: the block tables drawn differ from the native pool`);
  });
  if (!native.some((a) => a.error?.includes("blocks are in use"))) errors.push("the pool never ran out of blocks");
  if (!seen.some((s) => s.blocks.some((b) => b[0] === "copied"))) errors.push("no block was drawn as copied on write");
  return { errors, distinct: new Set(seen.map((s) => s.pool)).size };
}

// The native answers, all requests at once through one run of widget-numbers.
function nativeAnswers(requests) {
  const input = requests.map((r) => JSON.stringify(r)).join("\n") + "\n";
  const out = execFileSync(numbers, [], { input, encoding: "utf8", maxBuffer: 1 << 26 });
  return out.trim().split("\n").map((line) => JSON.parse(line));
}

async function main() {
  const watchdog = setTimeout(() => {
    fail(`timed out after ${timeoutMs} ms`);
    chrome.kill("SIGKILL");
    process.exit(1);
  }, timeoutMs);
  mkdirSync(outDir, { recursive: true });
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });

  const requests = [];
  const problems = [];
  listeners.push((m) => {
    if (m.sessionId !== sessionId) return;
    if (m.method === "Network.requestWillBeSent") requests.push(m.params.request.url);
    if (m.method === "Network.responseReceived" && m.params.response.status >= 400) {
      problems.push(`${m.params.response.status} for ${m.params.response.url}`);
    }
    if (m.method === "Network.loadingFailed" && !m.params.canceled) {
      problems.push(`request failed (${m.params.errorText})`);
    }
    if (m.method === "Runtime.exceptionThrown") {
      problems.push(`script error: ${m.params.exceptionDetails.exception?.description ?? m.params.exceptionDetails.text}`);
    }
    if (m.method === "Runtime.consoleAPICalled" && ["error", "assert"].includes(m.params.type)) {
      problems.push(`console ${m.params.type}: ${m.params.args.map((a) => a.value ?? a.description).join(" ")}`);
    }
    if (m.method === "Log.entryAdded" && m.params.entry.level === "error") {
      problems.push(`console error: ${m.params.entry.text}`);
    }
  });
  await send("Network.enable", {}, sessionId);
  await send("Page.enable", {}, sessionId);
  await send("Runtime.enable", {}, sessionId);
  await send("Log.enable", {}, sessionId);
  await send("Emulation.setDeviceMetricsOverride", { width: 1280, height: 1000, deviceScaleFactor: 1, mobile: false }, sessionId);

  let compared = 0;
  for (const page of pages) {
    const chapter = Number(page.slice(2, 4));
    const loaded = waitFor("Page.loadEventFired", sessionId);
    await send("Page.navigate", { url: new URL(`${page}.html`, base).href }, sessionId);
    await loaded;
    if (!(await evaluate(ready, sessionId))) {
      fail(`${page}: the widgets' module did not load`);
      continue;
    }
    const seen = [];
    if (!runOnly.has(page)) {
      for (const knobs of movesOf(chapter)) seen.push(await evaluate(move(knobs), sessionId));
    }
    const seed = runSeed(page);
    const printed = await evaluate(runPanel(seed), sessionId);
    const runs = [{ run: chapter, seed }];
    // A saved run's page with another seed: the panel shows the message with the command.
    const saved = savedSeed(manifestOf(page));
    const other = saved === null ? null : String(BigInt(saved) + 1n);
    const trains = other === null ? null : await evaluate(runPanel(other), sessionId);
    if (other !== null) runs.push({ run: chapter, seed: other });
    const native = nativeAnswers([...seen.map((s) => ({ heatmap: s.settings })), ...runs]);
    const errors = [];
    seen.forEach((s, i) => {
      const answer = native[i];
      if (answer.error !== undefined) {
        if (s.cells.length) errors.push(`move ${i}: a heatmap is still drawn beside the message`);
        if (s.message !== answer.error) errors.push(`move ${i}: the page says ${JSON.stringify(s.message)}, native ${JSON.stringify(answer.error)}`);
        return;
      }
      if (s.message !== "") errors.push(`move ${i}: the page says ${JSON.stringify(s.message)}, native answers weights`);
      const heads = JSON.parse(answer.ok).heads;
      if (s.weights !== JSON.stringify(heads)) errors.push(`move ${i} ${JSON.stringify(s.settings)}: weights differ from the native code's`);
      const cells = heads.map((head) => head.map((row) => row.map((w) => w.toFixed(2))));
      if (JSON.stringify(s.cells) !== JSON.stringify(cells)) errors.push(`move ${i}: printed cells differ from the native weights`);
      const map = JSON.parse(answer.ok);
      if (s.caption !== (map.caption ?? "")) errors.push(`move ${i}: the caption says ${JSON.stringify(s.caption)}, native ${JSON.stringify(map.caption)}`);
      // The block mask: every cell marked with its tile's kind (none without one).
      const kinds = heads.map((head) => head.map((row, r) => row.map((_, c) =>
        map.tiles ? map.tiles.kinds[Math.floor(r / map.tiles.size)][Math.floor(c / map.tiles.size)] : "").join("")));
      if (JSON.stringify(s.tiles) !== JSON.stringify(kinds)) errors.push(`move ${i}: the tiles drawn differ from the native block mask`);
      compared++;
    });
    // Chapter 17's block pool, where the page has one.
    let pools = "";
    if (await evaluate(`document.querySelector(".block-widget") !== null`, sessionId)) {
      const moved = [];
      for (const m of poolMoves) moved.push(await evaluate(poolMove(m), sessionId));
      const compared = comparePools(moved, nativeAnswers(moved.map((s) => ({ blocks: s.settings }))));
      errors.push(...compared.errors);
      if (compared.distinct < 5) errors.push(`the pool changed only ${compared.distinct} times`);
      pools = `, ${moved.length} pool moves, ${compared.distinct} distinct pools`;
    }
    const distinct = new Set(seen.map((s) => s.weights)).size;
    if (!runOnly.has(page) && distinct < 3) errors.push(`the controls changed the heatmap only ${distinct} times`);
    const printedNative = native[seen.length];
    if (printed !== printedNative.ok) errors.push(`the run panel (--seed ${seed}) prints other text than the native code`);
    if (trains !== null) {
      const message = native[seen.length + 1].error;
      if (message === undefined || !message.includes("cargo run --release")) errors.push(`--seed ${other}: the native code gives no command to run`);
      if (trains !== message) errors.push(`the run panel (--seed ${other}) shows ${JSON.stringify(trains?.slice(0, 120))}, not the message that gives the command`);
    }
    for (const e of errors) fail(`${page}: ${e}`);
    console.log(`${errors.length ? "FAIL" : "ok  "} ${page}: ${seen.length} moves, ${distinct} distinct heatmaps, run panel ${printed?.length ?? 0} bytes${pools}`);

    await evaluate(`(async () => { document.querySelector(".attention-widget, .block-widget, .run-chapter").scrollIntoView(); window.scrollBy(0, -20);
       await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); return true; })()`, sessionId);
    const { data } = await send("Page.captureScreenshot", { format: "png" }, sessionId);
    writeFileSync(join(outDir, `${page}-widget.png`), Buffer.from(data, "base64"));
  }

  const remote = [...new Set(requests.filter((u) => new URL(u).host !== base.host && !/^(data|blob|about):/.test(u)))];
  for (const u of remote) fail(`a request left the machine: ${u}`);
  for (const p of [...new Set(problems)]) fail(p);
  console.log(`${pages.length} pages, ${compared} heatmaps equal to the native code's; screenshots in ${outDir}`);
  clearTimeout(watchdog);
  await send("Browser.close").catch(() => {});
}

main()
  .catch((e) => {
    fail(e.message);
    if (chromeLog()) console.error(chromeLog().slice(-2000));
  })
  .finally(close);
