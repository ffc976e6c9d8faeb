// The book's interactive widgets: a chapter's attention weights as a heatmap that follows
// the reader's settings, and a panel that runs the chapter and prints what `cargo run`
// prints. Both are computed by the chapters' own Rust code, compiled to WebAssembly
// (book/widgets, built by scripts/build-wasm.sh into widgets/book_widgets.wasm).
//
// A page marks where they go with <div class="attention-widget" data-chapter="N"> and
// <div class="run-chapter" data-chapter="N">. Without the module (or without JavaScript)
// those stay empty and the page reads as before, with its static figures.
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
  const VOCABULARY = ["Your", "journey", "starts", "with", "one", "step"];

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c);
    return node;
  }

  // One labelled control; `read` turns its value into the request's.
  function control(box, name, label, input) {
    input.setAttribute("data-knob", name);
    box.append(el("label", { class: "widget-knob" }, label + " ", input));
    return input;
  }

  function range(min, max, step, value) {
    return el("input", { type: "range", min, max, step, value });
  }

  // The default temperature: 1 before chapter 4, then √(head width).
  function defaultTemperature(chapter, heads, dOut) {
    return chapter <= 3 ? 1 : Math.sqrt(dOut / heads);
  }

  function heatmapWidget(root, request) {
    const chapter = Number(root.dataset.chapter);
    const knobs = el("div", { class: "widget-knobs" });
    const message = el("p", { class: "widget-message", role: "status" });
    const maps = el("div", { class: "widget-maps" });
    root.append(el("p", { class: "widget-title" }, "Try it: the attention weights, computed in your browser by the chapter's code"), knobs, maps, message);

    const inputs = {};
    if (chapter === 11) {
      inputs.step = control(knobs, "step", "training steps", range(0, 60, 1, 60));
    } else {
      inputs.words = control(knobs, "words", chapter === 8 ? "queries from" : "sentence", el("input", { type: "text", value: VOCABULARY.join(" "), size: 36 }));
      if (chapter >= 4) {
        inputs.d_out = control(knobs, "d_out", "d_out", el("select", {}));
      }
      if (chapter >= 6) {
        inputs.heads = control(knobs, "heads", "heads", el("select", {}));
        for (const h of [1, 2, 3, 4]) inputs.heads.append(el("option", { value: h }, String(h)));
        inputs.heads.value = "2";
      }
      if (inputs.d_out) {
        for (let d = 1; d <= 16; d++) inputs.d_out.append(el("option", { value: d }, String(d)));
        inputs.d_out.value = chapter >= 6 ? "4" : "2";
      }
      const t0 = defaultTemperature(chapter, inputs.heads ? 2 : 1, inputs.d_out ? Number(inputs.d_out.value) : 1);
      inputs.temperature = control(knobs, "temperature", "temperature", range(0.05, 4, 0.01, t0.toFixed(2)));
      if (chapter !== 8) {
        // Chapter 8 attends across two sequences: no causal mask there.
        inputs.causal = control(knobs, "causal", "causal mask", el("input", { type: "checkbox" }));
        inputs.causal.checked = chapter >= 5;
      }
      if (chapter === 12) {
        inputs.rope = control(knobs, "rope", "RoPE", el("input", { type: "checkbox" }));
        inputs.rope.checked = true;
      }
      if (chapter === 14) {
        inputs.window = control(knobs, "window", "sliding window (0: none)", range(0, 6, 1, 0));
        inputs.decoded = control(knobs, "decoded", "decoded tokens", range(1, 6, 1, 6));
      }
      inputs.dropout = control(knobs, "dropout", "dropout p", range(0, 0.9, 0.1, 0));
    }
    if (chapter >= 4) {
      inputs.seed = control(knobs, "seed", "seed", el("input", { type: "text", value: "123", size: 8, inputmode: "numeric" }));
    }

    function settings() {
      const s = { chapter };
      if (inputs.step) s.step = Number(inputs.step.value);
      if (inputs.words) s.words = inputs.words.value.split(/\s+/).filter((w) => w);
      if (inputs.d_out) s.d_out = Number(inputs.d_out.value);
      if (inputs.heads) s.heads = Number(inputs.heads.value);
      if (inputs.temperature) s.temperature = Number(inputs.temperature.value);
      if (inputs.causal) s.causal = inputs.causal.checked;
      if (inputs.rope) s.rope = inputs.rope.checked;
      if (inputs.window && Number(inputs.window.value) > 0) s.window = Number(inputs.window.value);
      if (inputs.decoded) {
        // The cache fills up to the sentence's length.
        inputs.decoded.max = String(Math.max(1, s.words.length));
        s.decoded = Math.min(Number(inputs.decoded.value), Math.max(1, s.words.length));
      }
      if (inputs.dropout) s.dropout = Number(inputs.dropout.value);
      if (inputs.seed) s.seed = inputs.seed.value.trim();
      return s;
    }

    function draw() {
      const s = settings();
      root.dataset.settings = JSON.stringify(s);
      for (const [name, input] of Object.entries(inputs)) {
        if (input.type === "range") input.title = input.value;
        const shown = input.parentElement.querySelector("output");
        if (input.type === "range") {
          const out = shown || input.parentElement.appendChild(el("output"));
          out.textContent = name === "temperature" ? Number(input.value).toFixed(2) : input.value;
        }
      }
      const answer = request({ heatmap: s });
      if (!answer.ok) {
        message.textContent = answer.text;
        root.dataset.weights = "";
        maps.replaceChildren();
        return;
      }
      message.textContent = "";
      const map = JSON.parse(answer.text);
      root.dataset.weights = JSON.stringify(map.heads);
      maps.replaceChildren(...map.heads.map((head, h) => table(map, head, h)));
    }

    function table(map, head, h) {
      const t = el("table", { class: "widget-heatmap" });
      if (map.heads.length > 1) t.append(el("caption", {}, `head ${h}`));
      t.append(el("tr", {}, el("th", {}), ...map.keys.map((k) => el("th", { scope: "col" }, k))));
      head.forEach((row, i) => {
        t.append(el("tr", {}, el("th", { scope: "row" }, map.queries[i]), ...row.map((w) => {
          const cell = el("td", { title: String(w) }, w.toFixed(2));
          cell.style.background = `rgba(37, 99, 235, ${Math.min(w, 1)})`;
          cell.style.color = w > 0.5 ? "white" : "inherit";
          return cell;
        })));
      });
      return t;
    }

    for (const input of Object.values(inputs)) input.addEventListener("input", draw);
    draw();
  }

  function runPanel(root, request) {
    const chapter = Number(root.dataset.chapter);
    const seed = el("input", { type: "text", size: 22, placeholder: "the articles' seeds", inputmode: "numeric", "data-knob": "seed" });
    const button = el("button", { type: "button" }, "Run this chapter");
    const output = el("pre", { class: "widget-output" });
    const command = `cargo run -p ${root.dataset.package}`;
    const code = (text) => el("code", {}, text);
    root.append(
      el("h2", {}, "Run it here"),
      el("p", {}, "This panel runs the chapter in your browser and prints what ", code(command),
        " prints, byte for byte; with a seed, what ", code(`${command} -- --seed S`), " prints."),
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

  async function start() {
    const widgets = document.querySelectorAll(".attention-widget[data-chapter]");
    const panels = document.querySelectorAll(".run-chapter[data-chapter]");
    if (widgets.length === 0 && panels.length === 0) return;
    let request;
    try {
      const root = typeof path_to_root === "string" ? path_to_root : "";
      const response = await fetch(root + "widgets/book_widgets.wasm");
      if (!response.ok) return; // no module in this copy of the book: the figures remain
      request = await bookWidgetsInstantiate(await response.arrayBuffer());
    } catch (e) {
      return; // an old browser or no module: the page reads as before
    }
    for (const w of widgets) heatmapWidget(w, request);
    for (const p of panels) runPanel(p, request);
    document.documentElement.dataset.widgets = "ready";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
