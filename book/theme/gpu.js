// Chapter 21's live widget: the chapter's own WGSL kernels (chapters/ch21-webgpu/kernels,
// copied into the book by scripts/build-book.sh) run on the reader's GPU through the
// browser's WebGPU, straight from JavaScript, and each result is compared with chapter 9's
// kernel on the CPU (the book's WebAssembly module, book/widgets/src/gpu.rs) within the
// tolerance chapter 21 derives from the inputs (src/tolerance.rs, written out again below).
//
// A page marks the place with <div class="gpu-widget" data-kernels="widgets/kernels/">.
// The widget writes what it found into data-state ("running", "done", "no-webgpu",
// "error") and data-result (JSON), which scripts/check-gpu-widget.mjs reads.
"use strict";

(function () {
  if (typeof document === "undefined") return;

  const KERNELS = [
    { name: "kernel 1 (naive)", files: ["01_naive.wgsl"], scratch: true },
    { name: "kernel 2 (row per workgroup)", files: ["02_row_per_workgroup.wgsl"] },
    { name: "kernel 3 (flash)", files: ["03_flash.wgsl", "causal_tiles.wgsl"] },
  ];
  const WORKGROUP = 64; // src/tiles.rs: invocations of kernel 2, queries per tile of kernel 3
  const TILE_K_MAX = 64;
  const HEADS = 2;
  const D = 64;

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) node.setAttribute(k, v);
    for (const c of children) node.append(c);
    return node;
  }

  // src/workgroup_memory/mod.rs: the largest power of two tile of keys that fits.
  function largestTileK(limit, d, dV) {
    let tileK = 1;
    while (tileK * 2 <= TILE_K_MAX && 4 * tileK * 2 * (d + dV) <= limit) tileK *= 2;
    return tileK;
  }

  // src/tolerance.rs: for every row, how far two correct results may lie apart.
  function tolerance(q, k, v, heads, n, d, rescales) {
    const U = 2 ** -24;
    const gamma = (m) => (m * U) / (1 - m * U);
    const scale = 1 / Math.sqrt(d);
    const out = new Float64Array(heads * n);
    const lse = new Float64Array(heads * n);
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < n; i++) {
        const visible = i + 1; // causal
        const qi = (h * n + i) * d;
        let magnitude = 0, low = Infinity, high = -Infinity, largest = 0;
        for (let j = 0; j < visible; j++) {
          const kj = (h * n + j) * d;
          let dot = 0, size = 0;
          for (let c = 0; c < d; c++) {
            const p = q[qi + c] * k[kj + c];
            dot += p;
            size += Math.abs(p);
          }
          magnitude = Math.max(magnitude, size * scale);
          low = Math.min(low, dot * scale);
          high = Math.max(high, dot * scale);
          for (let c = 0; c < d; c++) largest = Math.max(largest, Math.abs(v[kj + c]));
        }
        const eta = gamma(d + 2) * magnitude;
        const expError = (3 + 2 * (high - low + 2 * eta)) * 2 * U;
        const a = Math.exp(2 * eta) * (1 + expError) ** (rescales + 1) - 1;
        const sums = gamma(visible);
        const flushed = visible * 2 ** -126;
        out[h * n + i] = 2 * ((2 * a + 2 * sums + 5 * U) / (1 - a - sums) + flushed) * largest;
        const l = high + Math.log(visible);
        const logError = 2 ** -21 + 6 * U * Math.log(visible);
        lse[h * n + i] = 2 * (2 * eta + (a + sums) / (1 - a - sums) + logError + 2 * U * Math.abs(l));
      }
    }
    return { out, lse };
  }

  // The worst |gpu - cpu| / tolerance over outputs and log-sum-exps, and the largest
  // difference of the outputs.
  function compare(gpu, cpu, bound, d) {
    let worst = 0, largest = 0;
    for (let r = 0; r < bound.lse.length; r++) {
      for (let c = 0; c < d; c++) {
        const diff = Math.abs(gpu.out[r * d + c] - cpu.out[r * d + c]);
        const ratio = Number.isNaN(diff) ? Infinity : diff / bound.out[r];
        worst = Math.max(worst, ratio);
        largest = Math.max(largest, Number.isNaN(diff) ? Infinity : diff);
      }
      const diff = Math.abs(gpu.lse[r] - cpu.lse[r]);
      worst = Math.max(worst, Number.isNaN(diff) ? Infinity : diff / bound.lse[r]);
    }
    return { worst, largest };
  }

  // One kernel on the GPU: buffers, pipeline, bind group, dispatch, as src/launch.rs does.
  async function runKernel(device, kernel, source, inputs, n, tiles) {
    const { q, k, v } = inputs;
    const rows = HEADS * n;
    const storage = (data, label) => {
      const buffer = device.createBuffer({ label, size: data.byteLength, usage: GPUBufferUsage.STORAGE, mappedAtCreation: true });
      new Float32Array(buffer.getMappedRange()).set(data);
      buffer.unmap();
      return buffer;
    };
    const output = (floats, label) =>
      device.createBuffer({ label, size: 4 * Math.max(floats, 1), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const shape = new ArrayBuffer(32); // struct Shape of the WGSL files
    new Uint32Array(shape, 0, 6).set([HEADS, n, n, D, D, 1]);
    new Float32Array(shape, 24, 1)[0] = 1 / Math.sqrt(D);
    const uniform = device.createBuffer({ size: 32, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
    new Uint8Array(uniform.getMappedRange()).set(new Uint8Array(shape));
    uniform.unmap();
    const buffers = [uniform, storage(q, "q"), storage(k, "k"), storage(v, "v"), output(rows * D, "out"), output(rows, "lse")];
    if (kernel.scratch) buffers.push(output(rows * n, "scores"));
    let constants = {};
    let grid;
    if (kernel.name.startsWith("kernel 1")) grid = [Math.ceil(rows / WORKGROUP), 1, 1];
    else if (kernel.name.startsWith("kernel 2")) {
      constants = { ROW_CAPACITY: n };
      grid = [n, HEADS, 1];
    } else {
      constants = { TILE_Q: tiles.tileQ, TILE_K: tiles.tileK, K_TILE_FLOATS: tiles.tileK * D, V_TILE_FLOATS: tiles.tileK * D };
      grid = [Math.ceil(n / tiles.tileQ), HEADS, 1];
    }
    device.pushErrorScope("validation");
    const module = device.createShaderModule({ label: kernel.name, code: source });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main", constants } });
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const error = await device.popErrorScope();
    if (error) throw new Error(`${kernel.name}: the GPU rejected it: ${error.message}`);
    const dispatch = async () => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(...grid);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    };
    await dispatch(); // warm-up
    const times = [];
    for (let turn = 0; turn < 3; turn++) {
      const started = performance.now();
      await dispatch();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const read = async (buffer) => {
      const staging = device.createBuffer({ size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const values = new Float32Array(staging.getMappedRange().slice(0));
      staging.unmap();
      return values;
    };
    const result = { out: await read(buffers[4]), lse: await read(buffers[5]), ms: times[1] };
    for (const buffer of buffers) buffer.destroy();
    return result;
  }

  async function gpuWidget(root, request) {
    const base = (typeof path_to_root === "string" ? path_to_root : "") + (root.dataset.kernels || "widgets/kernels/");
    const slider = el("input", { type: "range", min: 6, max: 11, step: 1, value: 8, "data-knob": "log2n" });
    const shown = el("output");
    const button = el("button", { type: "button" }, "Run");
    const status = el("p", { class: "widget-caption", role: "status" });
    const table = el("table", { class: "gpu-results" });
    root.append(
      el("p", { class: "widget-title" }, `Try it: the chapter's kernels on your GPU (${HEADS} heads of ${D} features, causal)`),
      el("div", { class: "widget-knobs" }, el("label", { class: "widget-knob" }, "tokens ", slider, shown), button),
      status, table);
    const tokens = () => 2 ** Number(slider.value);
    const show = () => (shown.textContent = String(tokens()));
    slider.addEventListener("input", show);
    show();

    if (!navigator.gpu) {
      root.dataset.state = "no-webgpu";
      status.className = "widget-message";
      status.textContent = "This browser has no WebGPU (Chrome and Edge 113 or newer have it, Safari 26, Firefox 141 on Windows): the kernels cannot run here. `cargo run -p ch21-webgpu` runs them on your machine.";
      button.disabled = true;
      return;
    }
    let device, sources;
    try {
      const adapter = await navigator.gpu.requestAdapter();
      if (!adapter) throw new Error("the browser found no GPU adapter (WebGPU may be turned off)");
      const limits = adapter.limits;
      device = await adapter.requestDevice({
        requiredLimits: {
          maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
          maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
          maxBufferSize: limits.maxBufferSize,
        },
      });
      const info = adapter.info || {};
      root.dataset.adapter = [info.vendor, info.architecture, info.description].filter((x) => x).join(" ");
      const fetchText = async (file) => {
        const response = await fetch(base + file);
        if (!response.ok) throw new Error(`${file} not found (the book's build copies the kernels: scripts/build-book.sh)`);
        return response.text();
      };
      sources = await Promise.all(KERNELS.map(async (kernel) => (await Promise.all(kernel.files.map(fetchText))).join("\n")));
    } catch (e) {
      root.dataset.state = "no-webgpu";
      status.className = "widget-message";
      status.textContent = `WebGPU is not usable here: ${e.message}.`;
      button.disabled = true;
      return;
    }

    async function run() {
      const n = tokens();
      button.disabled = true;
      slider.disabled = true;
      root.dataset.state = "running";
      status.className = "widget-caption";
      status.textContent = `running at ${n} tokens…`;
      try {
        const answer = request({ gpu: { n, heads: HEADS, d: D, seed: "0" } });
        if (!answer.ok) throw new Error(answer.text);
        const parsed = JSON.parse(answer.text);
        const inputs = { q: Float32Array.from(parsed.q), k: Float32Array.from(parsed.k), v: Float32Array.from(parsed.v) };
        const cpu = { out: parsed.out, lse: parsed.lse };
        const tiles = { tileQ: WORKGROUP, tileK: largestTileK(device.limits.maxComputeWorkgroupStorageSize, D, D) };
        const rows = [];
        for (let i = 0; i < KERNELS.length; i++) {
          const kernel = KERNELS[i];
          if (i === 1 && n + WORKGROUP > device.limits.maxComputeWorkgroupStorageSize / 4) {
            rows.push({ name: kernel.name, skipped: "a row of scores does not fit in workgroup memory" });
            continue;
          }
          const got = await runKernel(device, kernel, sources[i], inputs, n, tiles);
          const rescales = i === 2 ? n : 0;
          const { worst, largest } = compare(got, cpu, tolerance(inputs.q, inputs.k, inputs.v, HEADS, n, D, rescales), D);
          rows.push({ name: kernel.name, ms: got.ms, largest, ratio: worst, within: worst <= 1 });
        }
        table.replaceChildren(
          el("tr", {}, ...["kernel", "time per call", "largest difference from the CPU", "within the tolerance"].map((t) => el("th", {}, t))),
          ...rows.map((r) => el("tr", {},
            el("td", {}, r.name),
            el("td", {}, r.skipped ? "—" : `${r.ms.toFixed(2)} ms`),
            el("td", {}, r.skipped ? r.skipped : r.largest.toExponential(2)),
            el("td", {}, r.skipped ? "" : r.within ? "yes" : "NO"))));
        status.textContent = `${n} tokens, tiles of ${tiles.tileQ} queries × ${tiles.tileK} keys; chapter 9's result computed on the CPU by the book's WebAssembly module.`;
        root.dataset.result = JSON.stringify({ n, tiles, kernels: rows });
        root.dataset.state = "done";
      } catch (e) {
        status.textContent = `error: ${e.message}`;
        status.className = "widget-message";
        root.dataset.state = "error";
      }
      button.disabled = false;
      slider.disabled = false;
    }
    button.addEventListener("click", run);
    slider.addEventListener("change", run);
    root.run = run;
    await run();
  }

  async function start() {
    const widgets = document.querySelectorAll(".gpu-widget");
    if (widgets.length === 0) return;
    const mark = document.querySelector("[data-book-widgets-module]");
    // Chapter 9's result comes from the book's WebAssembly module: without it (a book
    // built without the module) the place stays empty, as the other widgets' do.
    if (!mark || typeof bookWidgetsInstantiate !== "function") return;
    let request;
    try {
      const root = typeof path_to_root === "string" ? path_to_root : "";
      const response = await fetch(root + mark.dataset.bookWidgetsModule);
      if (!response.ok) return;
      request = await bookWidgetsInstantiate(await response.arrayBuffer());
    } catch (e) {
      return;
    }
    for (const w of widgets) gpuWidget(w, request);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
