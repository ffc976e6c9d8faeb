// Chapter 21's live widget in headless Chromium with WebGPU on (no `--disable-gpu`,
// `--enable-unsafe-webgpu`: Chromium's software GPU runs the kernels): the page fetches the
// chapter's own .wgsl files, runs kernels 1 to 3 at two sizes of its slider, and each
// result lies within the tolerance of chapter 9's result on the CPU (computed by the
// book's WebAssembly module); no request leaves the machine, no error in the console.
//
//   node scripts/check-gpu-widget.mjs --base http://127.0.0.1:PORT/ --chromium /usr/bin/chromium \
//        --out book/build/screenshots
//
// No npm packages: Chromium is driven over the DevTools protocol on a pipe (scripts/chromium.mjs).

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "./chromium.mjs";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => {
    if (a.startsWith("--")) pairs.push([a.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const base = new URL(args.base ?? "http://127.0.0.1:3000/");
const chromiumPath = args.chromium ?? "/usr/bin/chromium";
const outDir = args.out ?? "book/build/screenshots";
const timeoutMs = Number(args.timeout ?? 240000);
const page = "ch21-webgpu";
// The slider's sizes to check: 2^6 and 2^8 tokens.
const sizes = [6, 8];

const browser = launchChromium(chromiumPath, base.hostname, "book-gpu-chromium-", { webgpu: true });
const { send, waitFor, evaluate, listeners, close } = browser;
let failures = 0;
function fail(message) {
  console.error(`gpu widget check: ${message}`);
  failures++;
  process.exitCode = 1;
}

// Waits until the widget is neither starting nor running, and returns what it wrote.
const settled = `(async () => {
  const w = document.querySelector(".gpu-widget");
  const deadline = Date.now() + 120000;
  while (Date.now() < deadline) {
    const state = w && w.dataset.state;
    if (state && state !== "running") return { state, result: w.dataset.result || null, adapter: w.dataset.adapter || "", text: w.textContent };
    await new Promise((r) => setTimeout(r, 200));
  }
  return { state: w ? w.dataset.state || "never started" : "no widget", result: null, text: w ? w.textContent : "" };
})()`;

let watchdog;
async function main() {
  watchdog = setTimeout(() => {
    fail(`timed out after ${timeoutMs} ms`);
    browser.chrome.kill("SIGKILL");
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
    if (m.method === "Network.loadingFailed" && !m.params.canceled) problems.push(`request failed (${m.params.errorText})`);
    if (m.method === "Runtime.exceptionThrown") {
      problems.push(`script error: ${m.params.exceptionDetails.exception?.description ?? m.params.exceptionDetails.text}`);
    }
    if (m.method === "Runtime.consoleAPICalled" && ["error", "assert"].includes(m.params.type)) {
      problems.push(`console ${m.params.type}: ${m.params.args.map((a) => a.value ?? a.description).join(" ")}`);
    }
  });
  await send("Network.enable", {}, sessionId);
  await send("Page.enable", {}, sessionId);
  await send("Runtime.enable", {}, sessionId);
  await send("Emulation.setDeviceMetricsOverride", { width: 1280, height: 1000, deviceScaleFactor: 1, mobile: false }, sessionId);
  const loaded = waitFor("Page.loadEventFired", sessionId);
  await send("Page.navigate", { url: new URL(`${page}.html`, base).href }, sessionId);
  await loaded;
  for (const log2n of sizes) {
    await evaluate(`(async () => { const w = document.querySelector(".gpu-widget");
      const deadline = Date.now() + 60000;
      while (!w.run && !["no-webgpu", "error"].includes(w.dataset.state) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (!w.run) return false;
      while (w.dataset.state === "running") await new Promise((r) => setTimeout(r, 100));
      w.querySelector('[data-knob="log2n"]').value = "${log2n}";
      await w.run(); return true; })()`, sessionId);
    const seen = await evaluate(settled, sessionId);
    if (seen.state !== "done") {
      fail(`${page}: the widget ended in state ${seen.state}: ${seen.text.slice(0, 400)}`);
      break;
    }
    const result = JSON.parse(seen.result);
    if (result.n !== 2 ** log2n) fail(`asked for ${2 ** log2n} tokens, the widget ran ${result.n}`);
    for (const k of result.kernels) {
      if (k.skipped) {
        fail(`${k.name} at ${result.n} tokens: ${k.skipped}`);
      } else if (!k.within) {
        fail(`${k.name} at ${result.n} tokens: ${k.ratio} times the tolerance from the CPU's result (largest difference ${k.largest})`);
      } else {
        console.log(`ok   ${k.name} at ${result.n} tokens: ${k.ms.toFixed(1)} ms, largest difference ${k.largest.toExponential(2)}, ${k.ratio.toFixed(3)} of the tolerance (${seen.adapter || "adapter"})`);
      }
    }
  }
  await evaluate(`(async () => { document.querySelector(".gpu-widget").scrollIntoView(); return true; })()`, sessionId);
  const { data } = await send("Page.captureScreenshot", { format: "png" }, sessionId);
  writeFileSync(join(outDir, `${page}-gpu-widget.png`), Buffer.from(data, "base64"));
  const remote = [...new Set(requests.filter((u) => new URL(u).host !== base.host && !/^(data|blob|about):/.test(u)))];
  for (const u of remote) fail(`a request left the machine: ${u}`);
  for (const p of [...new Set(problems)]) fail(p);
  if (failures === 0) console.log(`${page}: the kernels ran in the browser and agree with the CPU; screenshot in ${outDir}`);
  clearTimeout(watchdog);
  await send("Browser.close").catch(() => {});
}

main()
  .catch((e) => {
    fail(e.message);
    if (browser.log()) console.error(browser.log().slice(-2000));
  })
  .finally(() => {
    clearTimeout(watchdog);
    return close();
  });
