// Renders the book's pages in headless Chromium and checks what a reader would see.
//
//   node scripts/check-book-browser.mjs --base http://127.0.0.1:PORT/ --chromium /usr/bin/chromium \
//        --out book/build/screenshots [--without-widgets]
//
// For every page of the book (from SUMMARY.md): the math was rendered by KaTeX (its markup
// is there, its stylesheet applied, its fonts loaded, and no raw `$$`, `\(` or `\)` is left
// in the text), every image loaded (naturalWidth > 0: the SVG heatmaps), no include marker
// is left, no request failed, and no request left the machine (every URL is on the local
// server, or data:/blob:/about:), and no code block is wider than its column (its
// scrollWidth exceeds its clientWidth: the reader would have to scroll sideways), and
// nothing was logged as an error in the console. Screenshots go to --out for a person to
// look at.
//
// The diagrams (every image from book/src/diagrams, and every inline <svg> marked as a
// diagram: `svg.diagram`, `.diagram svg` or `svg[data-diagram]`), found on every page, not
// listed here: each page shows as many as its source names (`diagrams/NAME.svg`), each one
// loaded with a size (naturalWidth > 0, or a drawn box for inline SVG), every file of
// book/src/diagrams is shown by some page, and each is screenshot on its own in the light
// and in the dark (navy) theme: DIAGRAM-light.png and DIAGRAM-dark.png.
//
// With --without-widgets (a book built without the widgets' module): no page asks for a
// WebAssembly module, and every widget's place stays empty, so the page reads as before.
//
// No npm packages: Chromium is driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ending in NUL, on file descriptors 3 and 4).

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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
const summary = args.summary ?? "book/src/SUMMARY.md";
const timeoutMs = Number(args.timeout ?? 120000);
const withoutWidgets = process.argv.includes("--without-widgets");

// The pages, in the book's order; and the ones that must show math or figures.
const pages = ["index.html"];
for (const m of readFileSync(summary, "utf8").matchAll(/\]\(([^)]+\.md)\)/g)) {
  pages.push(m[1].replace(/\.md$/, ".html"));
}
const mustHaveMath = (p) => /^ch0\d-[a-z-]+\.html$/.test(p) && !p.includes("exercises") || p.startsWith("appendix");
const figuresOf = (p) => {
  const source = p === "index.html" ? "introduction.md" : p.replace(/\.html$/, ".md");
  const md = readFileSync(join(summary, "..", source), "utf8");
  return [...md.matchAll(/figures\/[\w.-]+\.svg/g)].length;
};
const diagramsDir = join(summary, "..", "diagrams");
const diagramFiles = (() => {
  try {
    return readdirSync(diagramsDir).filter((f) => f.endsWith(".svg")).sort();
  } catch {
    return [];
  }
})();
const diagramsOf = (p) => {
  const source = p === "index.html" ? "introduction.md" : p.replace(/\.html$/, ".md");
  const md = readFileSync(join(summary, "..", source), "utf8");
  return [...md.matchAll(/diagrams\/([\w.-]+\.svg)/g)].map((m) => m[1]);
};
const screenshotPages = new Set(["ch04-trainable.html", "ch05-causal.html", "ch07-multihead-split.html"]);

function fail(message) {
  console.error(`browser check: ${message}`);
  process.exitCode = 1;
}

// --- the browser (scripts/chromium.mjs) ---------------------------------------------------

const { chrome, send, waitFor, evaluate, listeners, close, log: chromeLog } = launchChromium(
  chromiumPath,
  base.hostname,
  "book-chromium-",
);

// --- what a page must show --------------------------------------------------------------

// The page's diagrams, each with its name, whether it drew, and its box on the page.
const inspectDiagrams = `(async () => {
  const imgs = [...document.querySelectorAll("main img")].filter((i) => /(^|\\/)diagrams\\//.test(i.getAttribute("src") || ""));
  await Promise.all(imgs.map((img) => img.complete ? null : new Promise((r) => { img.onload = img.onerror = r; })));
  const inline = [...new Set([...document.querySelectorAll("main svg.diagram, main .diagram svg, main svg[data-diagram]")])];
  const box = (el) => { const r = el.getBoundingClientRect(); return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height }; };
  return [
    ...imgs.map((img) => ({ name: img.getAttribute("src").split("/").pop(), drawn: img.naturalWidth > 0 && img.getBoundingClientRect().width > 0, alt: img.getAttribute("alt") || "", box: box(img) })),
    ...inline.map((svg, i) => ({ name: svg.dataset.diagram || svg.id || "inline-" + i, drawn: svg.getBoundingClientRect().width > 0 && svg.childElementCount > 0, alt: svg.getAttribute("aria-label") || (svg.querySelector("title") || {}).textContent || "", box: box(svg) })),
  ];
})()`;

const inspect = `(async () => {
  await document.fonts.ready;
  const images = [...document.images];
  await Promise.all(images.map((img) => img.complete ? null : new Promise((r) => { img.onload = img.onerror = r; })));
  const main = document.querySelector("main") || document.body;
  const raw = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest("pre, code, .katex, script, style")) continue;
    const text = node.textContent;
    // Math the renderer did not take: $$, \\( \\) \\[ \\], or a LaTeX command (\\frac, \\text).
    if (/\\$\\$|\\\\[()[\\]]|\\\\[A-Za-z]{2,}/.test(text)) raw.push(text.trim().slice(0, 80));
  }
  const katex = main.querySelector(".katex");
  const katexFaces = [...document.fonts].filter((f) => f.family.replace(/"/g, "").startsWith("KaTeX"));
  return {
    title: document.title,
    katex: main.querySelectorAll(".katex").length,
    katexDisplay: main.querySelectorAll(".katex-display").length,
    katexStyled: katex ? getComputedStyle(katex).fontFamily.includes("KaTeX_Main") : null,
    katexFontsLoaded: katexFaces.filter((f) => f.status === "loaded").map((f) => f.family.replace(/"/g, "")),
    raw,
    includeMarker: main.innerHTML.includes("{{#"),
    images: images.map((img) => ({ src: img.getAttribute("src"), width: img.naturalWidth })),
    rustBlocks: main.querySelectorAll("pre code.language-rust").length,
    outputBlocks: main.querySelectorAll("pre code.language-text").length,
    details: main.querySelectorAll("details").length,
    widgetsDrawn: main.querySelectorAll(".attention-widget:not(:empty), .block-widget:not(:empty), .run-chapter:not(:empty)").length,
    // Code blocks wider than the column: the reader would have to scroll sideways, and
    // a printed page would clip them. One entry per block: its widest line, in characters.
    overflowing: [...main.querySelectorAll("pre")]
      .filter((pre) => {
        const code = pre.querySelector("code") || pre;
        return code.scrollWidth > code.clientWidth + 1 || pre.scrollWidth > pre.clientWidth + 1;
      })
      .map((pre) => {
        const lines = pre.textContent.split("\\n");
        const widest = lines.reduce((a, b) => (b.length > a.length ? b : a), "");
        return \`\${widest.length} chars: \${widest.trim().slice(0, 60)}\`;
      }),
    codeColumn: (() => {
      const code = main.querySelector("pre code");
      if (!code) return null;
      const probe = document.createElement("span");
      probe.textContent = "0".repeat(100);
      code.appendChild(probe);
      const charWidth = probe.getBoundingClientRect().width / 100;
      probe.remove();
      const style = getComputedStyle(code);
      const inner = code.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return { pixels: code.clientWidth, chars: Math.floor(inner / charWidth) };
    })(),
  };
})()`;

function isLocal(url) {
  const u = new URL(url);
  if (["data:", "blob:", "about:"].includes(u.protocol)) return true;
  return ["http:", "https:", "ws:", "wss:"].includes(u.protocol) && u.host === base.host;
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
    if (m.method === "Network.webSocketCreated") requests.push(m.params.url);
    if (m.method === "Network.responseReceived" && m.params.response.status >= 400) {
      problems.push(`${m.params.response.status} for ${m.params.response.url}`);
    }
    if (m.method === "Network.loadingFailed" && !m.params.canceled) {
      problems.push(`request failed (${m.params.errorText}) ${m.params.type ?? ""}`);
    }
    if (m.method === "Runtime.exceptionThrown") {
      problems.push(`script error: ${m.params.exceptionDetails.text}`);
    }
    if (m.method === "Runtime.consoleAPICalled" && ["error", "assert"].includes(m.params.type)) {
      problems.push(`console ${m.params.type}: ${m.params.args.map((a) => a.value ?? a.description).join(" ")}`);
    }
    if (m.method === "Log.entryAdded" && m.params.entry.level === "error") {
      problems.push(`console error: ${m.params.entry.text} ${m.params.entry.url ?? ""}`);
    }
  });
  await send("Network.enable", {}, sessionId);
  await send("Page.enable", {}, sessionId);
  await send("Runtime.enable", {}, sessionId);
  await send("Log.enable", {}, sessionId);
  await send(
    "Emulation.setDeviceMetricsOverride",
    { width: 1280, height: 1000, deviceScaleFactor: 1, mobile: false },
    sessionId,
  );

  const report = [];
  for (const page of pages) {
    const url = new URL(page, base).href;
    const loaded = waitFor("Page.loadEventFired", sessionId);
    const nav = await send("Page.navigate", { url }, sessionId);
    if (nav.errorText) {
      fail(`${page}: ${nav.errorText}`);
      continue;
    }
    await loaded;
    const seen = await evaluate(inspect, sessionId);
    const figures = figuresOf(page);
    const errors = [];
    if (mustHaveMath(page)) {
      if (seen.katex === 0) errors.push("no rendered math (.katex)");
      if (seen.katexStyled === false) errors.push("KaTeX's stylesheet is not applied");
      if (!seen.katexFontsLoaded.includes("KaTeX_Main")) errors.push("KaTeX's fonts did not load");
    }
    if (seen.raw.length) errors.push(`raw math delimiters left: ${JSON.stringify(seen.raw)}`);
    if (seen.includeMarker) errors.push("an include marker is left in the page");
    if (seen.overflowing.length) {
      errors.push(
        `${seen.overflowing.length} code blocks wider than the column ` +
          `(${seen.codeColumn?.chars} characters): ${JSON.stringify(seen.overflowing)}`,
      );
    }
    const broken = seen.images.filter((i) => !(i.width > 0));
    if (broken.length) errors.push(`images not loaded: ${broken.map((i) => i.src).join(", ")}`);
    const svgs = seen.images.filter((i) => i.src.endsWith(".svg") && i.width > 0).length;
    if (svgs < figures) errors.push(`${figures} figures in the page, ${svgs} loaded`);
    if (withoutWidgets && seen.widgetsDrawn) errors.push(`${seen.widgetsDrawn} widgets drawn without the module`);
    for (const e of errors) fail(`${page}: ${e}`);
    report.push({ page, ...seen, errors });
    console.log(
      `${errors.length ? "FAIL" : "ok  "} ${page}: ${seen.katex} formulas, ${svgs} figures, ` +
        `${seen.rustBlocks} code blocks, ${seen.outputBlocks} outputs, ${seen.details} details` +
        (seen.codeColumn ? `, code column ${seen.codeColumn.chars} characters` : ""),
    );
    if (screenshotPages.has(page)) {
      const shot = async (name) => {
        const { data } = await send("Page.captureScreenshot", { format: "png" }, sessionId);
        writeFileSync(join(outDir, name), Buffer.from(data, "base64"));
        console.log(`     screenshot ${join(outDir, name)}`);
      };
      await shot(page.replace(/\.html$/, ".png"));
      if (figures > 0) {
        await evaluate(
          `(async () => { document.querySelector("main figure").scrollIntoView(); window.scrollBy(0, -80);
             await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); return true; })()`,
          sessionId,
        );
        await shot(page.replace(/\.html$/, "-figure.png"));
      }
    }
  }

  // Every diagram, in the light and in the dark theme, each screenshot on its own.
  const diagramsShown = new Set();
  for (const page of pages) {
    const named = diagramsOf(page);
    for (const theme of ["light", "navy"]) {
      const url = new URL(page, base).href;
      let loaded = waitFor("Page.loadEventFired", sessionId);
      await send("Page.navigate", { url }, sessionId);
      await loaded;
      const found = await evaluate(inspectDiagrams, sessionId);
      if (named.length === 0 && found.length === 0) break;
      // mdBook keeps the reader's theme in localStorage and applies it as the page loads.
      await evaluate(`(() => { localStorage.setItem("mdbook-theme", "${theme}"); return true; })()`, sessionId);
      loaded = waitFor("Page.loadEventFired", sessionId);
      await send("Page.reload", {}, sessionId);
      await loaded;
      const diagrams = await evaluate(inspectDiagrams, sessionId);
      const themeOn = await evaluate(`document.documentElement.classList.contains("${theme}")`, sessionId);
      if (!themeOn) fail(`${page}: the ${theme} theme did not apply`);
      const names = diagrams.map((d) => d.name);
      for (const n of named) if (!names.includes(n)) fail(`${page} (${theme}): diagram ${n} is missing from the page`);
      for (const d of diagrams) {
        diagramsShown.add(d.name);
        if (!d.drawn) fail(`${page} (${theme}): diagram ${d.name} did not load`);
        if (!d.alt.trim()) fail(`${page}: diagram ${d.name} has no alt text`);
        if (!d.drawn || d.box.width < 1 || d.box.height < 1) continue;
        const shotName = `diagram-${d.name.replace(/\.svg$/, "")}-${theme === "light" ? "light" : "dark"}.png`;
        const { data } = await send(
          "Page.captureScreenshot",
          { format: "png", captureBeyondViewport: true, clip: { ...d.box, scale: 1 } },
          sessionId,
        );
        writeFileSync(join(outDir, shotName), Buffer.from(data, "base64"));
        console.log(`ok   ${page}: diagram ${d.name} (${theme}), screenshot ${join(outDir, shotName)}`);
      }
    }
  }
  await evaluate(`(() => { localStorage.removeItem("mdbook-theme"); return true; })()`, sessionId);
  for (const f of diagramFiles) if (!diagramsShown.has(f)) fail(`diagram ${f} (book/src/diagrams) is on no page`);

  // Open every hint on one exercises page and check it rendered as Markdown, not as text.
  const exercises = pages.find((p) => p.includes("exercises"));
  if (exercises) {
    const loaded = waitFor("Page.loadEventFired", sessionId);
    await send("Page.navigate", { url: new URL(exercises, base).href }, sessionId);
    await loaded;
    const hints = await evaluate(
      `(() => { const d = [...document.querySelectorAll("main details")]; d.forEach((x) => (x.open = true));
         return { details: d.length, withCode: d.filter((x) => x.querySelector("p code")).length }; })()`,
      sessionId,
    );
    if (hints.details === 0 || hints.withCode === 0) {
      fail(`${exercises}: hints did not render (${JSON.stringify(hints)})`);
    }
    const { data } = await send("Page.captureScreenshot", { format: "png" }, sessionId);
    const name = exercises.replace(/\.html$/, "-hints-open.png");
    writeFileSync(join(outDir, name), Buffer.from(data, "base64"));
    console.log(`     screenshot ${join(outDir, name)} (every hint open)`);
  }

  const remote = [...new Set(requests.filter((u) => !isLocal(u)))];
  for (const u of remote) fail(`a request left the machine: ${u}`);
  if (withoutWidgets) {
    for (const u of new Set(requests.filter((u) => new URL(u).pathname.endsWith(".wasm")))) {
      fail(`a page without the widgets' module asked for one: ${u}`);
    }
  }
  for (const p of [...new Set(problems)]) fail(p);
  writeFileSync(
    join(outDir, "report.json"),
    JSON.stringify({ base: base.href, pages: report, requests: [...new Set(requests)], remote, problems }, null, 2),
  );
  console.log(
    `${pages.length} pages${withoutWidgets ? " (without the widgets' module)" : ""}, ` +
      `${new Set(requests).size} distinct requests, ${remote.length} not local, ` +
      `${problems.length} failed or logged errors; report and screenshots in ${outDir}`,
  );
  clearTimeout(watchdog);
  await send("Browser.close").catch(() => {});
}

main()
  .catch((e) => {
    fail(e.message);
    if (chromeLog()) console.error(chromeLog().slice(-2000));
  })
  .finally(close);
