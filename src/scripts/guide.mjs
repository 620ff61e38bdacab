// The manual as pages the Worker serves (src/docs/development.md, "OpenAPI and docs"): README.md and
// src/docs/*.md rendered to HTML under public/guide/ (ignored by git) by marked, so each operation of
// the API reference can link its topic page on the same origin, with no Worker CPU (static assets).
// Headings get the ids GitHub gives them, so the same #anchors work on GitHub and here.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Marked } from "marked";

const root = path.resolve(import.meta.dirname, "../..");
export const GUIDE_DIR = path.join(root, "public", "guide");

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(/** @type {string} */ text) {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

/** A link between pages of the repo, as it resolves under /guide/. */
function guideHref(/** @type {string} */ href) {
  const m = /^(?:\.\.\/)*(?:src\/docs\/)?([\w-]+)\.md(#.*)?$/.exec(href);
  if (!m) return href;
  if (href.includes("bench/")) return href;
  const page = m[1] === "README" ? "index" : m[1];
  return `${page}.html${m[2] ?? ""}`;
}

const marked = new Marked({
  gfm: true,
  renderer: {
    heading({ tokens, depth }) {
      const inner = this.parser.parseInline(tokens);
      return `<h${depth} id="${slug(inner)}">${inner}</h${depth}>\n`;
    },
    link({ href, title, tokens }) {
      const t = title ? ` title="${title}"` : "";
      return `<a href="${guideHref(href)}"${t}>${this.parser.parseInline(tokens)}</a>`;
    },
    // The README shows the pages' images by their repo path; under /guide/ they sit beside the pages.
    image({ href, title, text }) {
      const t = title ? ` title="${title}"` : "";
      return `<img src="${href.replace(/^src\/docs\//, "")}" alt="${text}"${t}>`;
    },
  },
});

const page = (/** @type {string} */ title, /** @type {string} */ body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · edge-store</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
pre{background:#f6f8fa;padding:.8rem;overflow:auto}code{font-size:90%}table{border-collapse:collapse}
td,th{border:1px solid #d0d7de;padding:.3rem .5rem;vertical-align:top}nav{margin-bottom:1rem}</style>
</head><body><nav><a href="index.html">edge-store</a> · <a href="/docs">API reference</a></nav>
${body}</body></html>
`;

/** Renders README.md and every src/docs/*.md page into public/guide/; returns the pages written. */
export function renderGuide() {
  mkdirSync(GUIDE_DIR, { recursive: true });
  const sources = [
    ["index", path.join(root, "README.md")],
    ...readdirSync(path.join(root, "src", "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => [f.slice(0, -3), path.join(root, "src", "docs", f)]),
  ];
  // The pages' images (src/docs/*.png) sit next to them, as on GitHub.
  for (const f of readdirSync(path.join(root, "src", "docs")).filter((f) => f.endsWith(".png"))) {
    copyFileSync(path.join(root, "src", "docs", f), path.join(GUIDE_DIR, f));
  }
  for (const [name, file] of sources) {
    const md = readFileSync(file, "utf8");
    const title = /^# (.+)$/m.exec(md)?.[1] ?? name;
    writeFileSync(path.join(GUIDE_DIR, `${name}.html`), page(title, /** @type {string} */ (marked.parse(md))));
  }
  return sources.map(([name]) => name);
}
