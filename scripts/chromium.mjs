// Headless Chromium for the book's browser checks, driven over the DevTools protocol on a
// pipe: no request can leave the machine (background networking off, and every host but the
// book's own server resolves to nothing), and the profile is a fresh temporary folder.
//   const browser = launchChromium("/usr/bin/chromium", "127.0.0.1", "book-chromium-");
//   await browser.send("Target.createTarget", { url: "about:blank" });
// `listeners` receives every event the browser sends (console messages, requests).

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `{ webgpu: true }` launches it with WebGPU on (chapter 21's page): without `--disable-gpu`
// and with `--enable-unsafe-webgpu`, which a headless Chromium needs for `requestAdapter()`
// to answer (it then runs the kernels on its software GPU, SwiftShader).
export function launchChromium(chromiumPath, hostname, profilePrefix, { webgpu = false } = {}) {
  const profile = mkdtempSync(join(tmpdir(), profilePrefix));
  const gpuFlags = webgpu ? ["--enable-unsafe-webgpu"] : ["--disable-gpu"];
  const chrome = spawn(
    chromiumPath,
    [
      "--headless",
      "--no-sandbox",
      ...gpuFlags,
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-default-apps",
      "--disable-extensions",
      "--no-first-run",
      "--no-default-browser-check",
      "--metrics-recording-only",
      "--hide-scrollbars",
      "--font-render-hinting=none",
      // Belt and braces: even if a page asked for a remote host, it could not resolve it.
      `--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE ${hostname}`,
      `--user-data-dir=${profile}`,
      "--remote-debugging-pipe",
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  );
  let log = "";
  chrome.stderr.on("data", (d) => (log += d));
  const toChrome = chrome.stdio[3];
  const fromChrome = chrome.stdio[4];

  let nextId = 1;
  const pending = new Map();
  const listeners = [];
  let buffer = Buffer.alloc(0);
  fromChrome.on("data", (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    let end;
    while ((end = buffer.indexOf(0)) !== -1) {
      const message = JSON.parse(buffer.subarray(0, end).toString("utf8"));
      buffer = buffer.subarray(end + 1);
      if (message.id !== undefined && pending.has(message.id)) {
        const { resolve, reject, method } = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result);
      } else if (message.method) {
        for (const listener of listeners) listener(message);
      }
    }
  });

  function send(method, params = {}, sessionId = undefined) {
    const id = nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, method });
      toChrome.write(JSON.stringify(message) + "\0");
    });
  }

  function waitFor(method, sessionId, ms = 30000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${method}`)), ms);
      const listener = (m) => {
        if (m.method === method && m.sessionId === sessionId) {
          clearTimeout(timer);
          listeners.splice(listeners.indexOf(listener), 1);
          resolve(m.params);
        }
      };
      listeners.push(listener);
    });
  }

  async function evaluate(expression, sessionId) {
    const { result, exceptionDetails } = await send(
      "Runtime.evaluate",
      { expression, awaitPromise: true, returnByValue: true },
      sessionId,
    );
    if (exceptionDetails) throw new Error(`page script failed: ${exceptionDetails.text}`);
    return result.value;
  }

  // Stops the browser (waiting at most 5 s for it to exit) and removes its profile.
  async function close() {
    if (chrome.exitCode === null) {
      const exited = new Promise((resolve) => chrome.once("exit", resolve));
      chrome.kill();
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    }
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch {
      // a temporary profile left behind is harmless
    }
  }

  return { chrome, send, waitFor, evaluate, listeners, close, log: () => log };
}
