// Each chapter's manifest, chapters/chNN-slug/chapter.toml (its keys are explained in
// CONTRIBUTING.md), for the Node scripts: every key is on a line of its own, its value a
// boolean, a string or a list of strings.
//
//   import { chapters } from "./chapters.mjs";
//   chapters().filter((c) => c.widget === "heatmap").map((c) => c.package)

import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;

// One `key = value` line's value: true/false, "text", or ["a", "b"].
function value(text) {
  if (text === "true" || text === "false") return text === "true";
  if (text.startsWith("[")) return [...text.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
  const string = text.match(/^"([^"]*)"$/);
  if (string) return string[1];
  throw new Error(`chapter.toml: cannot read the value ${text}`);
}

// Every chapter with a manifest, in order: { package, number, needs_model, needs_data,
// needs_gpu, libtorch, page_run, widget, seeds }.
export function chapters() {
  const folder = join(root, "chapters");
  return readdirSync(folder)
    .filter((name) => existsSync(join(folder, name, "chapter.toml")))
    .sort()
    .map((name) => {
      const manifest = { package: name, number: Number(name.slice(2, 4)) };
      for (const line of readFileSync(join(folder, name, "chapter.toml"), "utf8").split("\n")) {
        const m = line.replace(/#.*$/, "").match(/^(\w+) = (.+?)\s*$/);
        if (m) manifest[m[1]] = value(m[2]);
      }
      return manifest;
    });
}

// The seed of a page that replays one saved run (`page_run = "seed N"`), or null.
export function savedSeed(chapter) {
  const m = /^seed (\d+)$/.exec(chapter.page_run);
  return m ? m[1] : null;
}
