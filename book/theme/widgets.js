// The book's interactive widgets: a chapter's attention weights as a heatmap that follows
// the reader's settings, and a panel that runs the chapter and prints what `cargo run`
// prints. Both are computed by the chapters' own Rust code, compiled to WebAssembly
// (book/widgets, built by scripts/build-wasm.sh into widgets/book_widgets.wasm).
//
// A page marks where they go with <div class="attention-widget" data-chapter="N"> and
// <div class="run-chapter" data-chapter="N"> (chapter 17's block pool: <div
// class="block-widget">); the module says which controls each
// chapter's heatmap has and where they start (the chapter's own values). Without the
// module (or without JavaScript) those stay empty and the page reads as before, with its
// static figures.
"use strict";

// Loads the module from its bytes and returns `request(object) -> {ok, text}`: the same
// JSON requests as book/widgets/src/request.rs describes. Also used by the Node check.
async function bookWidgetsInstantiate(bytes) {
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const m = instance.exports;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return function request(object) {
    const input = encoder.encode(JSON.stringify(object));
    const ptr = m.widgets_alloc(input.length);
    new Uint8Array(m.memory.buffer, ptr, input.length).set(input);
    const ok = m.widgets_request(ptr, input.length) === 1;
    const answer = new Uint8Array(m.memory.buffer, m.widgets_answer_ptr(), m.widgets_answer_len());
    return { ok, text: decoder.decode(answer) };
  };
}

if (typeof module === "object" && module.exports) {
  module.exports = { bookWidgetsInstantiate };
}

(function () {
  if (typeof document === "undefined") return;

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c);
    return node;
  }

  // One control as the module declares it (book/widgets/src/controls.rs), drawn in `box`:
  // its input, and `read()`, the value the request sends for it.
  function control(box, c) {
    let input;
    let read = () => Number(input.value);
    if (c.input === "range") {
      // No step: the slider stops anywhere, so it can start at a value such as √2.
      input = el("input", { type: "range", min: c.min, max: c.max, step: c.step ?? "any", value: c.value });
    } else if (c.input === "select") {
      input = el("select", {}, ...c.options.map((o) => el("option", { value: o }, String(o))));
      input.value = String(c.value);
    } else if (c.input === "choice") {
      // Named options: the request sends the name.
      input = el("select", {}, ...c.options.map((o) => el("option", { value: o }, o)));
      input.value = c.value;
      read = () => input.value;
    } else if (c.input === "checkbox") {
      input = el("input", { type: "checkbox" });
      input.checked = c.value;
      read = () => input.checked;
    } else if (c.input === "words") {
      input = el("input", { type: "text", value: c.value, size: 36 });
      read = () => input.value.split(/\s+/).filter((w) => w);
    } else {
      // A seed travels as text: JavaScript's numbers cannot hold every u64.
      input = el("input", { type: "text", value: c.value, size: 8, inputmode: "numeric" });
      read = () => input.value.trim();
    }
    input.setAttribute("data-knob", c.knob);
    const label = el("label", { class: "widget-knob" }, c.label + " ", input);
    if (c.input === "range") {
      // The slider's value beside it, with as many decimals as its step has.
      const shown = el("output");
      const decimals = c.step === null ? 2 : (String(c.step).split(".")[1] ?? "").length;
      const show = () => {
        shown.textContent = Number(input.value).toFixed(decimals);
        input.title = input.value;
      };
      input.addEventListener("input", show);
      show();
      label.append(shown);
    }
    box.append(label);
    return { knob: c.knob, input, read };
  }

  function heatmapWidget(root, request) {
    const chapter = Number(root.dataset.chapter);
    const declared = request({ controls: chapter });
    if (!declared.ok) return; // no widget for this chapter: the page reads as before
    const knobs = el("div", { class: "widget-knobs" });
    const caption = el("p", { class: "widget-caption" });
    const message = el("p", { class: "widget-message", role: "status" });
    const maps = el("div", { class: "widget-maps" });
    root.append(el("p", { class: "widget-title" }, "Try it: the attention weights, computed in your browser by the chapter's code"), knobs, caption, maps, message);
    const controls = JSON.parse(declared.text).map((c) => control(knobs, c));

    function settings() {
      const s = { chapter };
      for (const c of controls) s[c.knob] = c.read();
      return s;
    }

    function draw() {
      const s = settings();
      root.dataset.settings = JSON.stringify(s);
      const answer = request({ heatmap: s });
      if (!answer.ok) {
        message.textContent = answer.text;
        caption.textContent = "";
        root.dataset.weights = "";
        maps.replaceChildren();
        return;
      }
      message.textContent = "";
      const map = JSON.parse(answer.text);
      caption.textContent = map.caption ?? "";
      root.dataset.weights = JSON.stringify(map.heads);
      maps.replaceChildren(...map.heads.map((head, h) => table(map, head, h)));
    }

    function table(map, head, h) {
      const t = el("table", { class: "widget-heatmap" });
      if (map.titles) t.append(el("caption", {}, map.titles[h]));
      else if (map.heads.length > 1) t.append(el("caption", {}, `head ${h}`));
      t.append(el("tr", {}, el("th", {}), ...map.keys.map((k) => el("th", { scope: "col" }, k))));
      head.forEach((row, i) => {
        t.append(el("tr", {}, el("th", { scope: "row" }, map.queries[i]), ...row.map((w, j) => {
          const cell = el("td", { title: String(w) }, w.toFixed(2));
          cell.style.background = `rgba(37, 99, 235, ${Math.min(w, 1)})`;
          cell.style.color = w > 0.5 ? "white" : "inherit";
          if (map.tiles) tile(cell, map.tiles, i, j, head.length, row.length);
          return cell;
        })));
      });
      return t;
    }

    // A block mask over the weights: each tile outlined, solid where it is full (no mask
    // needed), dashed where it is partial (masked inside); an empty tile (skipped, every
    // weight 0) is greyed.
    function tile(cell, tiles, i, j, rows, columns) {
      const size = tiles.size;
      const kind = tiles.kinds[Math.floor(i / size)][Math.floor(j / size)];
      cell.dataset.tile = kind;
      if (kind === ".") {
        cell.classList.add("widget-tile-empty");
        cell.style.background = "";
        return;
      }
      const line = `2px ${kind === "F" ? "solid" : "dashed"} var(--fg)`;
      if (i % size === 0) cell.style.borderTop = line;
      if (j % size === 0) cell.style.borderLeft = line;
      if (i % size === size - 1 || i === rows - 1) cell.style.borderBottom = line;
      if (j % size === size - 1 || j === columns - 1) cell.style.borderRight = line;
    }

    for (const c of controls) c.input.addEventListener("input", draw);
    draw();
  }

  function runPanel(root, request) {
    const chapter = Number(root.dataset.chapter);
    const seed = el("input", { type: "text", size: 22, placeholder: "the articles' seeds", inputmode: "numeric", "data-knob": "seed" });
    const button = el("button", { type: "button" }, "Run this chapter");
    const output = el("pre", { class: "widget-output" });
    const command = `cargo run -p ${root.dataset.package}`;
    const code = (text) => el("code", {}, text);
    // A chapter that trains (data-saved-seed) runs here only from its saved run: any
    // other seed would train for minutes, and the panel gives the command for that.
    const saved = root.dataset.savedSeed;
    const seeds = saved === undefined
      ? ["; with a seed, what ", code(`${command} -- --seed S`), " prints."]
      : [", from the saved training run of its seed, ", code(saved), ". Any other seed trains the model from the start, ",
        "which takes a while: run ", code(`cargo run --release -p ${root.dataset.package} -- --seed S`), " on your machine for that."];
    root.append(
      el("h2", {}, "Run it here"),
      el("p", {}, "This panel runs the chapter in your browser and prints what ", code(command),
        " prints, byte for byte", ...seeds),
      el("div", { class: "widget-knobs" }, el("label", { class: "widget-knob" }, "--seed ", seed), button),
      output,
    );
    button.addEventListener("click", () => {
      const r = { run: chapter };
      if (seed.value.trim() !== "") r.seed = seed.value.trim();
      output.textContent = "running…";
      // Let the page draw "running…" before the chapter takes the main thread.
      setTimeout(() => {
        const answer = request(r);
        output.textContent = answer.text;
        output.dataset.ok = String(answer.ok);
      }, 0);
    });
  }

  // Chapter 17's block pool (book/widgets/src/blocks.rs): the chapter's batch arriving
  // request by request in a pool of blocks, decoded token by token, forked; every step
  // replayed by the chapter's BlockPool from an empty pool.
  function blockWidget(root, request) {
    const steps = [];
    const size = el("select", { "data-knob": "block_size" });
    const button = (step, text) => el("button", { type: "button", "data-step": step }, text);
    const buttons = [button("request", "next request"), button("token", "next token"),
      button("fork", "fork the last request"), button("reset", "start again")];
    const caption = el("p", { class: "widget-caption" });
    const message = el("p", { class: "widget-message", role: "status" });
    const blocks = el("div", { class: "block-pool" });
    const tables = el("table", { class: "block-tables" });
    const legend = el("p", { class: "block-legend" }, ...["free", "used", "shared", "copied"].map((s) =>
      el("span", { class: "block-chip", "data-state": s }, s)));
    root.append(el("p", { class: "widget-title" }, "Try it: the block pool as requests arrive, run in your browser by the chapter's BlockPool"),
      el("p", {}, "Let the requests arrive one by one and watch the system prompt's blocks turn shared: smaller blocks ",
        "find more of the prompt in the cache, larger ones leave more room empty in each sequence's last block, and a ",
        "request forked while its last block is partly full has that block copied at the next token."),
      el("div", { class: "widget-knobs" }, el("label", { class: "widget-knob" }, "tokens per block ", size), ...buttons),
      caption, legend, blocks, tables, message);

    // Draws the pool after `steps`; a step the pool refuses is shown and taken back.
    function draw(step) {
      if (step) steps.push(step);
      const s = { block_size: Number(size.value || 4), steps: [...steps] };
      const answer = request({ blocks: s });
      if (!answer.ok) {
        if (step) steps.pop();
        message.textContent = answer.text;
        root.dataset.settings = JSON.stringify(s);
        root.dataset.pool = "";
        return;
      }
      message.textContent = "";
      root.dataset.settings = JSON.stringify(s);
      root.dataset.pool = answer.text;
      const pool = JSON.parse(answer.text);
      if (size.options.length === 0) {
        for (let b = 1; b <= pool.max_block_size; b++) size.append(el("option", { value: b }, String(b)));
        size.value = String(pool.block_size);
      }
      caption.textContent = pool.caption;
      buttons[0].disabled = pool.waiting === 0;
      blocks.replaceChildren(...pool.blocks.map((b, id) => el("div", { class: "block-cell", "data-state": b.state },
        el("span", { class: "block-id" }, `#${id}`),
        el("span", { class: "block-tokens" }, b.tokens.join(" ")),
        el("span", { class: "block-refs" }, b.refs ? `refs ${b.refs}` : ""))));
      tables.replaceChildren(...pool.sequences.map((q) => el("tr", {},
        el("th", { scope: "row" }, q.name),
        el("td", { class: "block-table" }, ...q.table.map((id) =>
          el("span", { class: "block-chip", "data-state": pool.blocks[id].state }, String(id)))),
        el("td", { class: "block-seq-tokens" }, q.tokens.join(" ")))));
    }

    size.addEventListener("input", () => draw());
    for (const b of buttons) {
      b.addEventListener("click", () => {
        if (b.dataset.step === "reset") {
          steps.length = 0;
          draw();
        } else draw(b.dataset.step);
      });
    }
    draw();
  }

  async function start() {
    const widgets = document.querySelectorAll(".attention-widget[data-chapter]");
    const panels = document.querySelectorAll(".run-chapter[data-chapter]");
    const pools = document.querySelectorAll(".block-widget");
    if (widgets.length === 0 && panels.length === 0 && pools.length === 0) return;
    // The book marks its pages when it was built with the module (scripts/build-wasm.sh
    // writes the mark, theme/header.hbs): without the mark there is nothing to fetch, so
    // a copy of the book without the module asks for nothing and logs no error.
    const mark = document.querySelector("[data-book-widgets-module]");
    if (!mark) return;
    let request;
    try {
      const root = typeof path_to_root === "string" ? path_to_root : "";
      const response = await fetch(root + mark.dataset.bookWidgetsModule);
      if (!response.ok) return; // the module went missing since the build: the figures remain
      request = await bookWidgetsInstantiate(await response.arrayBuffer());
    } catch (e) {
      return; // an old browser or no module: the page reads as before
    }
    for (const w of widgets) heatmapWidget(w, request);
    for (const p of panels) runPanel(p, request);
    for (const p of pools) blockWidget(p, request);
    document.documentElement.dataset.widgets = "ready";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
